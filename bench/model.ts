// Model-engine throughput, TF.js beside PyTorch on the same shapes. Prints one JSON object.
//   node bin/run-ts.mjs bench/model.ts [--steps N] [--quick] [--no-torch] [--backend wasm|cpu|...] [--shapes reference,larger]
//                                      [--workers N (data-parallel worker threads for an extra training measurement)] [--torch-threads N (default 1)]
//                                      [--rounds R (default 1)]
// --rounds R > 1 interleaves the sides in time, for a loaded machine: each round runs --steps
// training steps of TF.js on one thread, then of the data-parallel trainer (with --workers), then
// a PyTorch process (--steps steps, one generation run); the medians are over every round's steps
// and `roundRatios` holds each round's own ratios (TF.js / PyTorch measured minutes apart, not
// one side early and the other late), with their median.
// Training tokens/s = batch x context / (forward + backward + AdamW step time), from the MEDIAN step
// (wall clock and CPU time separately; the build machine is shared, so per-CPU-second figures are
// the steadier comparison). Generation tokens/s = batch x new tokens / time, K/V cache, sampling
// at temperature 1 (median of --gen-runs runs, default 3). PyTorch runs with one thread by
// default: on this loaded 2-core machine its OpenMP + OpenBLAS threads oversubscribe the cores.
import * as tf from '@tensorflow/tfjs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { initBackend, parseBackendRequest } from '../core/model/backend.js';
import { parseModelConfig } from '../core/model/config.js';
import { CausalLM } from '../core/model/transformer.js';
import { Trainer } from '../core/model/trainer.js';
import { generate } from '../core/model/generate.js';
import { DataParallelTrainer } from '../core/model/workers/data-parallel.js';
import { buildCharTokenizer } from '../core/model/tokenizer.js';
import { linearGemm } from '../core/model/kernels.js';
import { gemmInfo, gemmOptions } from '../core/model/gemm-wasm.js';

interface Shape {
  name: string; vocab: number; hidden: number; intermediate: number; layers: number; heads: number; kvHeads: number;
  context: number; batch: number; genBatch: number; genPrompt: number; genTokens: number;
}

const SHAPES: Shape[] = [
  // The reference shape: vocab 64, width 128, 4 layers, 4 heads, context 256, batch 16.
  { name: 'reference', vocab: 64, hidden: 128, intermediate: 352, layers: 4, heads: 4, kvHeads: 4, context: 256, batch: 16, genBatch: 16, genPrompt: 16, genTokens: 240 },
  // Larger: ~4.8M parameters, GQA 8:4.
  { name: 'larger', vocab: 256, hidden: 256, intermediate: 704, layers: 6, heads: 8, kvHeads: 4, context: 256, batch: 8, genBatch: 8, genPrompt: 16, genTokens: 112 },
];

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const quick = process.argv.includes('--quick');
const steps = Number(arg('--steps') ?? (quick ? 2 : 4));
const wanted = (arg('--shapes') ?? 'reference,larger').split(',');
const shapes = SHAPES.filter((s) => wanted.includes(s.name));

function randomIds(rows: number, cols: number, vocab: number, seed: number): number[][] {
  let s = seed >>> 0;
  const next = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 4294967296; };
  return Array.from({ length: rows }, () => Array.from({ length: cols }, () => Math.floor(next() * vocab)));
}

const median = (xs: number[]): number => { const a = [...xs].sort((x, y) => x - y); return a.length % 2 ? a[(a.length - 1) / 2]! : (a[a.length / 2 - 1]! + a[a.length / 2]!) / 2; };
const genRuns = Number(arg('--gen-runs') ?? (quick ? 1 : 3));
/** Wall and CPU milliseconds of f (CPU time matters on a shared, loaded machine). */
function timeCpu<T>(f: () => T): [T, number, number] {
  const c0 = process.cpuUsage(); const t0 = performance.now(); const r = f();
  const c = process.cpuUsage(c0);
  return [r, performance.now() - t0, (c.user + c.system) / 1000];
}

async function createDataParallel(s: Shape, workers: number) {
  const config = parseModelConfig({
    vocab_size: s.vocab, hidden_size: s.hidden, intermediate_size: s.intermediate, num_hidden_layers: s.layers,
    num_attention_heads: s.heads, num_key_value_heads: s.kvHeads, max_position_embeddings: s.context + 64, tie_word_embeddings: true,
  });
  const model = new CausalLM(config, { seed: 0 });
  // a character tokenizer covering the shape's ids (the workers rebuild it from its files; ids are random here)
  const chars = Array.from({ length: s.vocab }, (_, i) => String.fromCodePoint(0x100 + i)).join('');
  const tokenizer = buildCharTokenizer({ chars, tagTokens: [] });
  const dp = await DataParallelTrainer.create(model, { schedule: { lr: 1e-3, kind: 'constant' } },
    { workers, tokenizer: { json: tokenizer.toJson(), config: tokenizer.configJson() } });
  const prompts = randomIds(s.genBatch, s.genPrompt, s.vocab, 2);
  await dp.generate(tokenizer, prompts, { maxNewTokens: 8, seed: 1, stopTokenIds: [] }); // warm-up (every worker)
  const genWall: number[] = [];
  let generated = 0;
  for (let i = 0; i < genRuns; i++) {
    const t0 = performance.now();
    const gen = await dp.generate(tokenizer, prompts, { maxNewTokens: s.genTokens, seed: 1, stopTokenIds: [] });
    genWall.push(performance.now() - t0);
    generated = gen.reduce((a, r) => a + r.tokens.length, 0);
  }
  const genTokensPerSec = generated / (median(genWall) / 1000);
  const inputIds = randomIds(s.batch, s.context, s.vocab, 1);
  const batch = { inputIds, lossMask: inputIds.map((r) => r.map((_, t) => (t > 0 ? 1 : 0))) };
  await dp.step({ lossName: 'sft', batch });
  const wall: number[] = [];
  const cpu: number[] = [];
  return {
    /** `steps` more training steps (wall and process CPU ms: the main thread and the workers). */
    async measure(): Promise<number> {
      const w0 = wall.length;
      for (let i = 0; i < steps; i++) {
        const c0 = process.cpuUsage(); const t0 = performance.now();
        await dp.step({ lossName: 'sft', batch });
        wall.push(performance.now() - t0);
        const c = process.cpuUsage(c0); cpu.push((c.user + c.system) / 1000);
      }
      return median(wall.slice(w0));
    },
    async finish() {
      await dp.dispose();
      model.dispose();
      const msPerStep = median(wall);
      const cpuMsPerStep = median(cpu);
      return {
        workers, threads: workers + 1, msPerStep, cpuMsPerStep, stepsMeasured: wall.length,
        tokensPerSec: (s.batch * s.context) / (msPerStep / 1000), tokensPerCpuSec: (s.batch * s.context) / (cpuMsPerStep / 1000),
        generateTokensPerSec: genTokensPerSec,
      };
    },
  };
}

function createTfjs(s: Shape) {
  const tensorsBefore = tf.memory().numTensors;
  const config = parseModelConfig({
    vocab_size: s.vocab, hidden_size: s.hidden, intermediate_size: s.intermediate, num_hidden_layers: s.layers,
    num_attention_heads: s.heads, num_key_value_heads: s.kvHeads, max_position_embeddings: s.context + 64, tie_word_embeddings: true,
  });
  const model = new CausalLM(config, { seed: 0 });
  const trainer = new Trainer(model, { schedule: { lr: 1e-3, kind: 'constant' } });
  const inputIds = randomIds(s.batch, s.context, s.vocab, 1);
  const lossMask = inputIds.map((r) => r.map((_, t) => (t > 0 ? 1 : 0)));
  const batch = { inputIds, lossMask };
  trainer.step({ lossName: 'sft', batch }); // warm-up (kernel setup, XNNPACK packing)
  const wall: number[] = [];
  const cpu: number[] = [];
  /** `steps` more training steps; returns their median wall ms. */
  const measure = (): number => {
    const w0 = wall.length;
    for (let i = 0; i < steps; i++) {
      const [, w, c] = timeCpu(() => trainer.step({ lossName: 'sft', batch }));
      wall.push(w); cpu.push(c);
    }
    return median(wall.slice(w0));
  };
  measure();

  // Where the time goes (CPU ms, median of 3): forward only, forward + backward (no optimiser).
  const vars = model.trainableVariables();
  const fwd: number[] = [];
  const fwdBwd: number[] = [];
  for (let i = 0; i < 3; i++) {
    fwd.push(timeCpu(() => tf.tidy(() => { model.tokenOutputs(inputIds).logprobs.dataSync(); }))[2]);
    fwdBwd.push(timeCpu(() => tf.tidy(() => {
      const { grads } = tf.variableGrads(() => tf.neg(tf.mean(model.tokenOutputs(inputIds).logprobs)) as tf.Scalar, vars);
      Object.values(grads)[0]!.dataSync();
    }))[2]);
  }
  const fwdMs = median(fwd);
  const fwdBwdMs = median(fwdBwd);

  const tokenizer = { encode: () => [], decode: (ids: number[]) => ids.join(','), eosTokenId: -1, padTokenId: 0 };
  const prompts = randomIds(s.genBatch, s.genPrompt, s.vocab, 2);
  generate(model, tokenizer, prompts, { maxNewTokens: 8, seed: 1, stopTokenIds: [] }); // warm-up
  const genWall: number[] = [];
  const genCpu: number[] = [];
  let generated = 0;
  for (let i = 0; i < genRuns; i++) {
    const [gen, w, c] = timeCpu(() => generate(model, tokenizer, prompts, { maxNewTokens: s.genTokens, seed: 1, stopTokenIds: [] }));
    generated = gen.reduce((a, r) => a + r.tokens.length, 0);
    genWall.push(w); genCpu.push(c);
  }
  const genMs = median(genWall);
  const genCpuMs = median(genCpu);
  const finish = () => {
    const msPerStep = median(wall);
    const cpuMsPerStep = median(cpu);
    const result = {
      stepsMeasured: wall.length,
      params: model.parameterCount(),
      train: { msPerStep, cpuMsPerStep, tokensPerSec: (s.batch * s.context) / (msPerStep / 1000), tokensPerCpuSec: (s.batch * s.context) / (cpuMsPerStep / 1000) },
      breakdownCpuMs: { forward: fwdMs, forwardBackward: fwdBwdMs, optimizerAndRest: Math.max(0, cpuMsPerStep - fwdBwdMs) },
      generate: { seconds: genMs / 1000, cpuSeconds: genCpuMs / 1000, tokensPerSec: generated / (genMs / 1000), tokensPerCpuSec: generated / (genCpuMs / 1000) },
      tensorsLeft: 0,
    };
    trainer.dispose();
    model.dispose();
    result.tensorsLeft = tf.memory().numTensors - tensorsBefore; // should be 0
    return result;
  };
  return { measure, finish };
}

function runTorch(runs = genRuns): { ok: true; data: any } | { ok: false; reason: string } {
  if (process.argv.includes('--no-torch')) return { ok: false, reason: 'skipped (--no-torch)' };
  const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  const script = join(dirname(fileURLToPath(import.meta.url)), 'reference_torch.py');
  const threads = arg('--torch-threads') ?? '1';
  const r = spawnSync(python, [script, JSON.stringify(shapes), String(Math.max(1, steps)), threads, String(runs)], { encoding: 'utf8', timeout: 30 * 60_000 });
  if (r.status !== 0) return { ok: false, reason: `${python} ${script} failed: ${(r.stderr || r.error?.message || '').trim().split('\n').slice(-2).join(' ')}` };
  try { return { ok: true, data: JSON.parse(r.stdout.trim().split('\n').pop()!) }; } catch { return { ok: false, reason: `unparseable output: ${r.stdout.slice(0, 200)}` }; }
}

const backendArg = arg('--backend');
const report = await initBackend({ backend: backendArg ? parseBackendRequest(backendArg, '--backend') : 'wasm', ignoreEnv: Boolean(backendArg) });
const rounds = Math.max(1, Number(arg('--rounds') ?? 1));
const dpWorkers = Number(arg('--workers') ?? 0);
type TfjsResult = ReturnType<ReturnType<typeof createTfjs>['finish']>;
type DpResult = Awaited<ReturnType<Awaited<ReturnType<typeof createDataParallel>>['finish']>>;
const tfjs: Record<string, TfjsResult> = {};
const dataParallel: Record<string, DpResult> = {};
let torch: ReturnType<typeof runTorch>;
const roundRatios: Record<string, Array<Record<string, number>>> = {};
if (rounds === 1) {
  for (const s of shapes) {
    tfjs[s.name] = createTfjs(s).finish();
    if (dpWorkers > 0) { const dp = await createDataParallel(s, dpWorkers); await dp.measure(); dataParallel[s.name] = await dp.finish(); }
  }
  torch = runTorch();
} else {
  const sides = [];
  for (const s of shapes) sides.push({ s, single: createTfjs(s), dp: dpWorkers > 0 ? await createDataParallel(s, dpWorkers) : null });
  const torchRuns: any[] = [];
  torch = { ok: false, reason: 'no round ran' };
  for (let r = 0; r < rounds; r++) {
    const mine: Record<string, { single: number; dp: number | null }> = {};
    for (const side of sides) {
      // round 0: TF.js's first --steps ran when it was created (before its breakdown and generation runs)
      mine[side.s.name] = { single: r === 0 ? NaN : side.single.measure(), dp: side.dp ? await side.dp.measure() : null };
    }
    const t = runTorch(1);
    if (!t.ok) { torch = t; break; }
    torchRuns.push(t.data);
    if (r === 0) continue; // round 0 has no TF.js figure of its own (see above): no ratios
    for (const side of sides) {
      const name = side.s.name;
      const tokens = side.s.batch * side.s.context;
      const torchMs = t.data.results[name].train.msPerStep as number;
      (roundRatios[name] ??= []).push({
        trainWall: torchMs / mine[name]!.single,
        ...(mine[name]!.dp !== null ? { trainDataParallelWall: torchMs / mine[name]!.dp! } : {}),
        torchTokensPerSec: tokens / (torchMs / 1000),
      });
    }
  }
  for (const side of [...sides].reverse()) { // last created first: each side's tensor count then sees only its own tensors go
    if (side.dp) dataParallel[side.s.name] = await side.dp.finish();
    tfjs[side.s.name] = side.single.finish();
  }
  if (torchRuns.length === rounds) {
    // PyTorch's medians over every round's steps (each run reports its median step: the median of those).
    const data = torchRuns[0];
    for (const s of shapes) {
      const per = torchRuns.map((d) => d.results[s.name]);
      const train = per[0].train;
      const msPerStep = median(per.map((p: any) => p.train.msPerStep));
      const cpuMsPerStep = median(per.map((p: any) => p.train.cpuMsPerStep));
      const tokens = s.batch * s.context;
      data.results[s.name] = {
        ...per[0],
        train: { ...train, msPerStep, cpuMsPerStep, tokensPerSec: tokens / (msPerStep / 1000), tokensPerCpuSec: tokens / (cpuMsPerStep / 1000) },
        runs: torchRuns.length,
      };
    }
    torch = { ok: true, data };
  }
}
const ratios: Record<string, Record<string, number>> = {};
if (torch.ok) {
  for (const s of shapes) {
    const t = torch.data.results[s.name];
    const j = tfjs[s.name]!;
    ratios[s.name] = {
      trainWall: j.train.tokensPerSec / t.train.tokensPerSec,
      trainCpu: j.train.tokensPerCpuSec / t.train.tokensPerCpuSec,
      generateWall: j.generate.tokensPerSec / t.generate.tokensPerSec,
      generateCpu: j.generate.tokensPerCpuSec / t.generate.tokensPerCpuSec,
      ...(dataParallel[s.name] ? {
        trainDataParallelWall: dataParallel[s.name]!.tokensPerSec / t.train.tokensPerSec,
        trainDataParallelCpu: dataParallel[s.name]!.tokensPerCpuSec / t.train.tokensPerCpuSec,
        generateDataParallelWall: dataParallel[s.name]!.generateTokensPerSec / t.generate.tokensPerSec,
      } : {}),
    };
  }
}
console.log(JSON.stringify({
  date: new Date().toISOString(),
  backend: report.backend, backendSummary: report.summary, steps, shapes,
  // the wasm training path's matrix products: gemm-wasm.ts (SPA_WASM_GEMM=0: XNNPACK), fused multiply-adds (SPA_GEMM_FMA=1)
  wasmGemm: { enabled: linearGemm.enabled, fma: gemmOptions.fma, ...gemmInfo() },
  tfjs,
  dataParallel: dpWorkers > 0 ? dataParallel : null,
  torch: torch.ok ? torch.data : { error: torch.reason },
  ratios: torch.ok ? ratios : null,
  ...(rounds > 1 ? {
    rounds,
    roundRatios,
    roundRatioMedians: Object.fromEntries(Object.entries(roundRatios).map(([name, rs]) => [name, Object.fromEntries(
      Object.keys(rs[0] ?? {}).map((k) => [k, median(rs.map((r) => r[k]!))]))])),
  } : {}),
  cpus: os.cpus().length,
  loadAverage: os.loadavg(),
  note: 'ratio = TF.js / PyTorch tokens per second (wall clock, and per CPU-second) on this machine, same shapes and architecture; tfjs: one wasm thread; dataParallel: the main thread + --workers worker threads (wall clock); PyTorch: --torch-threads threads',
}, null, 2));
