// LoRA on the torch backend against TF.js (core/model/transformer.ts) on the committed Qwen2 fixture:
// the same adapters give the same per-token log-probs (1e-4) and greedy tokens; one SFT step and one
// PPO step (value head) from the same state move only the adapters (and the value head), to the same
// numbers on both; a LoRA checkpoint (PEFT adapter files, AdamW moments by adapter name) written on
// one backend loads and resumes on the other. Fresh torch adapters leave the function unchanged
// (B = 0), bad settings are refused with the valid targets named, and a smoke run with model.lora
// on torch writes LoRA checkpoints over the unchanged base.
// Needs a Python with torch (CI installs Debian's python3-torch); fails, not skips, without it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-cpu';
import type { ModelRuntime, TfjsRuntime, TrainRow } from '../../core/model/runtime.js';
import type { TorchRuntime } from '../../core/model/torch/runtime.js';
import { probeTorch, type TorchProbe } from '../../core/model/torch/worker-client.js';
import { readSafetensors } from '../../core/model/safetensors.js';
import { applyLora, runtimeLora, trainableParameterCount } from '../../core/train/lora.js';
import { PARITY_FIXTURES, PPO_PARAMS, maxDiff, ppoRows, rowsOf, tfjsFrom, torchFrom } from './helpers.js';
import { runPreset } from '../train/helpers.js';
import '../../core/train/losses.js';

const DIR = path.join(PARITY_FIXTURES, 'qwen2-f32');
const LORA = { rank: 4, alpha: 8, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] };
let probe: TorchProbe;
const open: ModelRuntime[] = [];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-torch-lora-'));

beforeAll(async () => {
  await tf.setBackend('cpu');
  probe = probeTorch();
  if (!probe.ok) throw new Error(`these tests need a Python with torch: ${probe.reason}`);
});
// every test gives its models' workers back to the pool (core/model/torch/worker-client.ts, two idle): the next model
// reuses a Python that has torch imported (a start is ~1.5 CPU-s) instead of starting one per model
afterEach(async () => { for (const rt of open.splice(0)) await rt.dispose(); });
afterAll(() => { fs.rmSync(tmp, { recursive: true, force: true }); });

/** TF.js with adapters on and B drawn non-zero (so the adapters change the function and A gets gradients). */
async function tfjsWithLora(opts: { valueHead?: boolean } = {}): Promise<TfjsRuntime> {
  const a = await tfjsFrom(DIR, opts);
  open.push(a);
  await applyLora(a, LORA, 3);
  let k = 0;
  for (const [name, v] of a.model.loraWeights()) if (name.endsWith('lora_B.weight')) tf.tidy(() => v.assign(tf.randomNormal(v.shape, 0, 0.05, 'float32', 11 + k++)));
  return a;
}

/** Torch on the same folder with TF.js's adapters sent over. */
async function torchLike(a: TfjsRuntime, opts: { valueHead?: boolean } = {}): Promise<TorchRuntime> {
  const b = await torchFrom(probe, DIR, opts);
  open.push(b);
  const weights = new Map([...a.model.loraWeights()].map(([k, v]) => [k, { shape: [...v.shape], data: v.dataSync() as Float32Array }]));
  await b.enableLora(LORA, { weights });
  return b;
}

function snapshot(a: TfjsRuntime): Map<string, Float32Array> {
  return new Map([...a.model.namedWeights(), ...a.model.loraWeights()].map(([k, v]) => [k, (v.dataSync() as Float32Array).slice()]));
}

/** Every weight of both backends: the largest difference, and which moved from `before` (by more than lr / 2). */
async function compare(a: TfjsRuntime, b: TorchRuntime, before: Map<string, Float32Array>, lr: number) {
  const wb = await b.weights();
  let worst = 0;
  const moved: string[] = [];
  const changedOnTorch: string[] = [];
  for (const [name, v] of [...a.model.namedWeights(), ...a.model.loraWeights()]) {
    const x = v.dataSync() as Float32Array;
    const y = wb.get(name);
    expect(y, name).toBeDefined();
    worst = Math.max(worst, maxDiff(x, y!));
    if (maxDiff(x, before.get(name)!) > lr / 2) moved.push(name);
    if (maxDiff(y!, before.get(name)!) > 0) changedOnTorch.push(name);
  }
  expect(wb.size).toBe(before.size);
  return { worst, moved, changedOnTorch };
}

const sftRows = (a: ModelRuntime): TrainRow[] => rowsOf(a).map((ids) => ({ ids, arrays: { lossMask: ids.map((_, t) => (t >= 2 ? 1 : 0)) } }));

describe('LoRA: torch against TF.js on the same adapters', () => {
  it('log-probs and entropies agree within 1e-4 and greedy generation gives the same tokens; the adapters change the function', async () => {
    const plain = await tfjsFrom(DIR);
    open.push(plain);
    const a = await tfjsWithLora();
    const b = await torchLike(a);
    expect(b.lora).toEqual(LORA);
    const rows = rowsOf(a).map((ids) => ({ ids }));
    const [s0, sa, sb] = [await plain.tokenStats(rows, false), await a.tokenStats(rows, false), await b.tokenStats(rows, false)];
    let changed = 0;
    rows.forEach((_, i) => {
      expect(maxDiff(sa[i]!.logprobs, sb[i]!.logprobs)).toBeLessThan(1e-4);
      expect(maxDiff(sa[i]!.entropies, sb[i]!.entropies)).toBeLessThan(1e-4);
      changed = Math.max(changed, maxDiff(s0[i]!.logprobs, sb[i]!.logprobs));
    });
    expect(changed).toBeGreaterThan(1e-2);   // torch computes with the adapters, not the base alone
    const prompts = rowsOf(a).map((r) => r.slice(0, 4));
    const opts = { maxNewTokens: 8, temperature: 0, topK: 0, topP: 1, seed: 0, stop: [] };
    const [ga, gb] = [await a.generate(prompts, opts), await b.generate(prompts, opts)];
    expect(gb.map((g) => g.ids)).toEqual(ga.map((g) => g.ids));
    ga.forEach((g, i) => expect(maxDiff(g.logprobs, gb[i]!.logprobs)).toBeLessThan(1e-4));
  });

  it('one SFT step (two chunks) updates only the adapters, to the same values on both backends', async () => {
    const a = await tfjsWithLora();
    const b = await torchLike(a);
    const lr = 1e-3;
    const before = snapshot(a);
    a.ensureOptimizer(0.01); b.ensureOptimizer(0.01);
    const ra = await a.trainStep('sft', sftRows(a), {}, lr, 1, 40);
    const rb = await b.trainStep('sft', sftRows(a), {}, lr, 1, 40);
    expect(Math.abs(ra['losses/total']! - rb['losses/total']!)).toBeLessThan(1e-4);
    expect(Math.abs(ra['charts/gradNorm']! - rb['charts/gradNorm']!) / ra['charts/gradNorm']!).toBeLessThan(1e-3);
    const { worst, moved, changedOnTorch } = await compare(a, b, before, lr);
    const adapters = [...a.model.loraWeights().keys()];
    expect(moved.sort()).toEqual([...adapters].sort());   // every A and B moved (B ≠ 0: A has gradients too), nothing else
    expect(changedOnTorch.every((n) => n.includes('.lora_'))).toBe(true);   // the torch base weights are bit-for-bit unchanged
    expect(worst).toBeLessThan(0.02 * lr);   // the tolerance of parity.test.ts: AdamW's first step moves each weight by about lr
  });

  it('one PPO step on a fresh value head: adapters and the value head train (base frozen), the same on both', async () => {
    const a = await tfjsWithLora({ valueHead: true });
    const b = await torchLike(a, { valueHead: true });
    const lr = 1e-3;
    const counts = [await trainableParameterCount(a), await trainableParameterCount(b)];
    expect(counts[1]).toEqual(counts[0]);
    expect(counts[0]!.trainable).toBe(a.model.trainableNames().reduce((n, k) => n + (snapshot(a).get(k)!.length), 0));
    const before = snapshot(a);
    const ids = rowsOf(a);
    const stats = await a.tokenStats(ids.map((r) => ({ ids: r })), true);
    const rows = ppoRows(ids, stats);
    const params = PPO_PARAMS;
    const ra = await a.trainStep('ppo', rows, params, lr, 1);
    const rb = await b.trainStep('ppo', rows, params, lr, 1);
    for (const k of ['losses/total', 'losses/policy', 'losses/value']) expect(Math.abs(ra[k]! - rb[k]!), k).toBeLessThan(1e-4);
    const { worst, moved, changedOnTorch } = await compare(a, b, before, lr);
    expect(moved).toContain('value_head.weight');
    expect(moved.filter((n) => !n.includes('.lora_') && !n.startsWith('value_head.'))).toEqual([]);
    expect(changedOnTorch.filter((n) => !n.includes('.lora_') && !n.startsWith('value_head.'))).toEqual([]);
    expect(worst).toBeLessThan(0.02 * lr);
  });
});

/** The same weights (base and adapters, exactly) and log-probs (1e-4) on both backends; returns the rows compared. */
async function expectSameModel(a: TfjsRuntime, b: TorchRuntime): Promise<TrainRow[]> {
  const wb = await b.weights();
  for (const [name, v] of [...a.model.namedWeights(), ...a.model.loraWeights()]) expect(maxDiff(v.dataSync(), wb.get(name)!), name).toBe(0);
  const rows = sftRows(a);
  const [sa, sb] = [await a.tokenStats(rows, false), await b.tokenStats(rows, false)];
  sa.forEach((s, i) => expect(maxDiff(s.logprobs, sb[i]!.logprobs)).toBeLessThan(1e-4));
  return rows;
}

describe('LoRA checkpoints move between the backends', () => {
  const manifest = (step: number) => ({ stage: 'sft', step, parent: null, metrics: {}, extra: {} });

  it('written on torch (adapters + AdamW moments), loaded on TF.js: same adapter weights and log-probs; a resumed step matches', async () => {
    const a0 = await tfjsWithLora();
    const b = await torchLike(a0);
    await b.trainStep('sft', sftRows(b), {}, 1e-3, 1);
    const saved = path.join(tmp, 'torch-lora');
    await b.save(saved, manifest(1));
    const m = JSON.parse(fs.readFileSync(path.join(saved, 'manifest.json'), 'utf8')) as { lora: unknown; optimizerStep: number; files: Record<string, unknown> };
    expect(m.lora).toEqual(LORA);
    expect(m.optimizerStep).toBe(1);
    expect(Object.keys(m.files)).toEqual(expect.arrayContaining(['adapter_config.json', 'adapter_model.safetensors', 'optimizer.safetensors']));
    const config = JSON.parse(fs.readFileSync(path.join(saved, 'adapter_config.json'), 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({ peft_type: 'LORA', r: 4, lora_alpha: 8, target_modules: LORA.targetModules });
    const base = await readSafetensors(path.join(saved, 'model.safetensors'));
    expect([...base.keys()].some((k) => k.includes('lora_'))).toBe(false);
    const moments = await readSafetensors(path.join(saved, 'optimizer.safetensors'));
    expect(moments.has('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight.exp_avg')).toBe(true);
    expect(moments.has('model.embed_tokens.weight.exp_avg')).toBe(false);   // the frozen base has no moments

    const a = await tfjsFrom(saved, { resume: true });
    open.push(a);
    expect(runtimeLora(a)).toEqual(LORA);
    const rows = await expectSameModel(a, b);
    // the same second step on both: the same adapters again (so the moments were restored by name, not reset)
    await a.trainStep('sft', rows, {}, 1e-3, 1);
    await b.trainStep('sft', rows, {}, 1e-3, 1);
    expect(a.trainer!.optimizer.step).toBe(2);
    const { worst } = await compare(a, b, snapshot(a), 1e-3);
    expect(worst).toBeLessThan(2e-5);
  });

  it('written on TF.js, loaded on torch: the adapters come on with the same weights and log-probs; a resumed step matches', async () => {
    const a = await tfjsWithLora();
    await a.trainStep('sft', sftRows(a), {}, 1e-3, 1);
    const saved = path.join(tmp, 'tfjs-lora');
    await a.save(saved, manifest(1));
    const b = await torchFrom(probe, saved, { resume: true });
    open.push(b);
    expect(b.lora).toEqual(LORA);
    expect(runtimeLora(b)).toEqual(LORA);
    const rows = await expectSameModel(a, b);
    await a.trainStep('sft', rows, {}, 1e-3, 1);
    await b.trainStep('sft', rows, {}, 1e-3, 1);
    const { worst, changedOnTorch } = await compare(a, b, snapshot(a), 1e-3);
    expect(worst).toBeLessThan(2e-5);
    expect(changedOnTorch.every((n) => n.includes('.lora_'))).toBe(true);
    // saved again on torch: TF.js reads it back with the same adapters
    const again = path.join(tmp, 'tfjs-lora-torch');
    await b.save(again, manifest(2));
    const c = await tfjsFrom(again);
    open.push(c);
    const wb2 = await b.weights();
    for (const [name, v] of c.model.loraWeights()) expect(maxDiff(v.dataSync(), wb2.get(name)!), name).toBe(0);
  });
});

describe('LoRA on torch: fresh adapters and bad settings', () => {
  it('fresh adapters (seeded A in ±1/sqrt(in), B = 0) leave the log-probs unchanged; a second enable and bad settings are refused', async () => {
    const b = await torchFrom(probe, DIR);
    open.push(b);
    const rows = rowsOf(b).map((ids) => ({ ids }));
    const before = await b.tokenStats(rows, false);
    await applyLora(b, { rank: 2, alpha: 4, targetModules: ['q_proj', 'down_proj'] }, 7);
    const after = await b.tokenStats(rows, false);
    before.forEach((s, i) => expect(maxDiff(s.logprobs, after[i]!.logprobs)).toBe(0));
    const w = await b.weights();
    const aName = 'base_model.model.model.layers.1.mlp.down_proj.lora_A.weight';
    const A = w.get(aName)!;
    expect(A.length).toBe(2 * 48);   // [rank, intermediate]
    expect(Math.max(...A.map(Math.abs))).toBeLessThanOrEqual(1 / Math.sqrt(48));
    expect(Math.max(...A.map(Math.abs))).toBeGreaterThan(0);
    expect(Math.max(...w.get(aName.replace('lora_A', 'lora_B'))!.map(Math.abs))).toBe(0);
    expect(w.has('base_model.model.model.layers.0.self_attn.k_proj.lora_A.weight')).toBe(false);   // not a target
    const c = await trainableParameterCount(b);
    expect(c!.trainable).toBe(2 * (2 * 32 + 32 * 2) + 2 * (2 * 48 + 32 * 2));   // per layer: q_proj and down_proj adapters
    await expect(applyLora(b, { rank: 2, alpha: 4, targetModules: ['q_proj'] }, 1)).rejects.toThrow(/already enabled/);

    const fresh = await torchFrom(probe, DIR);
    open.push(fresh);
    await expect(applyLora(fresh, { rank: 2, alpha: 4, targetModules: ['qproj'] }, 1))
      .rejects.toThrow(/model\.lora\.targetModules: expected a non-empty subset of q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj.*"qproj"/);
    await expect(applyLora(fresh, { rank: 0, alpha: 4, targetModules: ['q_proj'] }, 1)).rejects.toThrow(/model\.lora\.rank: expected a positive integer/);
    // the worker checks too (another client could send anything)
    await expect(fresh.workerForTests.request('enable_lora', { rank: 2, alpha: 4, targetModules: ['bogus'] }))
      .rejects.toThrow(/targetModules: expected a non-empty subset of q_proj/);
    await expect(fresh.enableLora(LORA, { weights: new Map([['base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight', { shape: [4, 32], data: new Float32Array(128) }]]) }))
      .rejects.toThrow(/missing tensor base_model\.model\.model\.layers\.0\.self_attn\.q_proj\.lora_B\.weight/);
    expect(fresh.lora).toBeNull();
  });
});

describe('model.lora in a run on the torch backend', () => {
  it('spa-random-action (smoke): SFT and RL checkpoints hold adapters over the bootstrap base, written by the torch worker', async () => {
    const project = fs.mkdtempSync(path.join(tmp, 'run-'));
    const lora = { rank: 2, alpha: 4, targetModules: ['q_proj', 'up_proj'] };
    const { outcome, runDir, events } = await runPreset(project, 'spa-random-action', 'torch-lora', {
      env: { id: 'frozenlake' }, model: { source: 'preset', preset: 'tiny', lora }, backend: 'torch',
      stages: { bootstrap: { gateTurns: 5 } },   // the gate's code on 5 held-out turns, not 50 (torch: a worker round trip per token)
    });
    expect(outcome).toEqual({ status: 'completed' });
    const names = fs.readdirSync(path.join(runDir, 'checkpoints'));
    const base = await readSafetensors(path.join(runDir, 'checkpoints', 'bootstrap', 'model.safetensors'));
    for (const name of [names.filter((n) => /^sft-epoch-\d+$/.test(n)).sort().pop()!, names.filter((n) => /^rl-\d+$/.test(n)).sort().pop()!]) {
      const dir = path.join(runDir, 'checkpoints', name);
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { lora: unknown; extra: { compute: { backend: string } } };
      expect(manifest.lora, name).toEqual(lora);
      expect(manifest.extra.compute.backend, name).toBe('torch');
      const adapters = await readSafetensors(path.join(dir, 'adapter_model.safetensors'));
      expect([...adapters].some(([k, v]) => k.endsWith('lora_B.weight') && v.data.some((x) => x !== 0)), name).toBe(true);
      const weights = await readSafetensors(path.join(dir, 'model.safetensors'));
      for (const [k, v] of base) expect(maxDiff(weights.get(k)!.data, v.data), `${name}: ${k}`).toBe(0);
    }
    const logs = events.filter((e) => e.type === 'log').map((e) => (e as { message: string }).message);
    expect(logs.some((l) => /^sft: LoRA rank 2, alpha 4 .*trainable parameters [\d,]+ of/.test(l))).toBe(true);
    expect(logs.some((l) => /^rl policy: LoRA .*adapters from the checkpoint/.test(l))).toBe(true);
  }, 180_000);
});
