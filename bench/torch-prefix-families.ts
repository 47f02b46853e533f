// The torch worker's prefix families (worker.py prefix_families / Decoder._trunk_families with trainer.ts prefixChunks: the
// leading tokens an RL episode's rows share computed once) against computing every row whole (SPA_TORCH_PREFIX_FAMILIES=0,
// read when the worker starts and by prefixChunks): two workers on the same model with the same LoRA adapters, the update
// rows of real episodes from an RL episode journal (each chain of turns whose prompts continue the last turn's prompt and
// reply is one row: the prefix carriers the old log-probs and the update use), the two alternating. Per rep: the seconds
// of tokenStats over the rows (old log-probs) and of one SFT-loss trainStep on their reply tokens (forward and backward),
// the largest log-prob difference and the two steps' losses and gradient norms. Writes bench/results/torch-prefix-families.json.
//   SPA_TORCH_THREADS=1 node bin/run-ts.mjs bench/torch-prefix-families.ts --model DIR --journal FILE [--episodes 2] [--reps 2]
//     (FILE: a run's stages/rl/batches/rollouts-NNNNNN.jsonl; DIR: the run's model folder, fresh adapters are added)
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunConfigSchema } from '../core/api/run-config.js';
import { loadRuntime, useBackend, type ModelRuntime } from '../core/train/runtime.js';
import { prefixCarriers, type TurnSample } from '../core/train/ppo.js';
import '../core/train/losses.js';

const arg = (name: string): string | undefined => { const i = process.argv.indexOf(name); return i >= 0 ? process.argv[i + 1] : undefined; };
const here = dirname(fileURLToPath(import.meta.url));
const model = arg('--model'), journal = arg('--journal');
if (!model || !journal) throw new Error('usage: bench/torch-prefix-families.ts --model DIR --journal FILE [--episodes 2] [--reps 2]');
const episodes = Number(arg('--episodes') ?? 2), reps = Number(arg('--reps') ?? 2);
await useBackend(RunConfigSchema.parse({ backend: 'torch' }));

// the rows the old log-probs and the update use: each episode's prefix carriers (ppo.ts prefixCarriers: the last turn of each
// chain of turns whose tokens continue the earlier turns'), scored on the reply tokens of every turn they carry
type Turn = { promptIds: number[]; responseIds: number[] };
const lines = readFileSync(resolve(journal), 'utf8').split('\n').filter(Boolean).slice(1).map((l) => JSON.parse(l) as { results: Array<{ tokens: Turn[] }> });
const eps = lines.flatMap((l) => l.results.map((r) => r.tokens)).slice(0, episodes);
const samples: TurnSample[] = eps.flatMap((turns, episode) => turns.map((t, turn) => (
  { episode, turn, ids: [...t.promptIds, ...t.responseIds], responseStart: t.promptIds.length })));
const carrier = prefixCarriers(samples);
const carriers = [...new Set(carrier)].sort((a, b) => a - b);
const rows = carriers.map((c) => ({ ids: samples[c]!.ids, score: samples[c]!.ids.map(() => 0) }));
const slot = new Map(carriers.map((c, k) => [c, k]));
samples.forEach((s, i) => { const row = rows[slot.get(carrier[i]!)!]!; for (let t = s.responseStart; t < s.ids.length; t++) row.score[t] = 1; });
const tokens = rows.reduce((s, r) => s + r.ids.length, 0);
console.log(`${eps.length} episodes, ${rows.length} rows, ${tokens} tokens`);

async function runtime(on: boolean): Promise<ModelRuntime> {
  process.env.SPA_TORCH_PREFIX_FAMILIES = on ? '0.1' : '0';   // the worker reads it when it starts
  const rt = await loadRuntime(resolve(model!), { trainable: true });
  if (!existsSync(join(resolve(model!), 'adapter_config.json'))) {
    await (rt as unknown as { enableLora: (l: object, o: object) => Promise<void> }).enableLora(
      { rank: 16, alpha: 32, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] }, { seed: 1 });
  }
  return rt;
}
const on = await runtime(true), off = await runtime(false);
const seconds: Record<'on' | 'off', { stats: number[]; step: number[] }> = { on: { stats: [], step: [] }, off: { stats: [], step: [] } };
const steps: Record<'on' | 'off', Array<Record<string, number>>> = { on: [], off: [] };
let worstLogprob = 0;
const trainRows = rows.map((r) => ({ ids: r.ids, arrays: { lossMask: r.score } }));
for (let rep = 0; rep < reps; rep++) {
  const order: Array<['on' | 'off', ModelRuntime]> = rep % 2 === 0 ? [['on', on], ['off', off]] : [['off', off], ['on', on]];
  const stats: Record<string, Awaited<ReturnType<ModelRuntime['tokenStats']>>> = {};
  for (const [name, rt] of order) {
    process.env.SPA_TORCH_PREFIX_FAMILIES = name === 'on' ? '0.1' : '0';   // prefixChunks reads it per call
    let t0 = performance.now();
    stats[name] = await rt.tokenStats(rows, false);
    seconds[name].stats.push((performance.now() - t0) / 1000);
    t0 = performance.now();
    // lr 0: the step computes the loss and gradients (forward and backward) and leaves the weights as they were
    steps[name].push(await rt.trainStep('sft', trainRows, {}, 0, 1));
    seconds[name].step.push((performance.now() - t0) / 1000);
  }
  rows.forEach((r, i) => r.score.forEach((s, t) => {
    if (s) worstLogprob = Math.max(worstLogprob, Math.abs(stats.on![i]!.logprobs[t]! - stats.off![i]!.logprobs[t]!));
  }));
  write(rep + 1);   // the reps so far (a stopped run keeps its finished reps)
  console.log(`rep ${rep}: stats on ${seconds.on.stats[rep]!.toFixed(1)} s, off ${seconds.off.stats[rep]!.toFixed(1)} s; step on ${seconds.on.step[rep]!.toFixed(1)} s, off ${seconds.off.step[rep]!.toFixed(1)} s`);
}
await on.dispose();
await off.dispose();
process.exit(0);

function write(done: number): void {
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const round = (x: number, d = 2) => Number(x.toFixed(d));
  const result = {
    what: 'torch worker, prefix families on (default) vs off: tokenStats (old log-probs) and one SFT-loss trainStep (lr 0) over the update rows of real RL episodes, LoRA r16, 1 thread',
    model: resolve(model!), journal: resolve(journal!), episodes: eps.length, rows: rows.length, tokens, reps, repsDone: done,
    threads: process.env.SPA_TORCH_THREADS ?? 'all cores', loadavg: loadavg().map((x) => round(x)),
    secondsStatsOn: seconds.on.stats.map((x) => round(x)), secondsStatsOff: seconds.off.stats.map((x) => round(x)),
    secondsStepOn: seconds.on.step.map((x) => round(x)), secondsStepOff: seconds.off.step.map((x) => round(x)),
    statsSpeedup: round(median(seconds.off.stats) / median(seconds.on.stats)), stepSpeedup: round(median(seconds.off.step) / median(seconds.on.step)),
    worstLogprobDiff: worstLogprob,
    lossOn: steps.on[0]!['losses/total'], lossOff: steps.off[0]!['losses/total'],
    gradNormOn: steps.on[0]!['charts/gradNorm'], gradNormOff: steps.off[0]!['charts/gradNorm'],
  };
  mkdirSync(join(here, 'results'), { recursive: true });
  writeFileSync(join(here, 'results', 'torch-prefix-families.json'), `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify(result, null, 2));
}
