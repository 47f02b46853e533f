// The torch backend against the TF.js backend on the same checkpoints (the committed Qwen2
// fixtures): per-token log-probs within 1e-4 (f32), greedy generation token for token, one SFT and
// one PPO step (value head, clipped value loss) give the same updated weights, the value head
// agrees, and checkpoints move between the backends (written on one, resumed on the other).
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
import '../../core/train/losses.js';
import { PARITY_FIXTURES, PPO_PARAMS, maxDiff, ppoRows, rowsOf, tfjsFrom, torchFrom as torchFromProbe } from './helpers.js';

let probe: TorchProbe;

beforeAll(async () => {
  await tf.setBackend('cpu');
  probe = probeTorch();
  if (!probe.ok) throw new Error(`these tests need a Python with torch: ${probe.reason}`);
});

const torchFrom = (dir: string, opts: { valueHead?: boolean; resume?: boolean } = {}) => torchFromProbe(probe, dir, opts);

// every test gives its models' workers back to the pool (core/model/torch/worker-client.ts, two idle): the next model
// reuses a Python that has torch imported (a start is ~1.5 CPU-s; this file started 13 of them when models stayed open)
const open: ModelRuntime[] = [];
afterEach(async () => { for (const rt of open.splice(0)) await rt.dispose(); });

describe('torch generation in chunks (qwen2-f32)', () => {
  const dir = path.join(PARITY_FIXTURES, 'qwen2-f32');

  // The worker reads SPA_TORCH_GEN_CHUNK when it starts, so each chunk value needs a Python started with it: these run
  // first in the file (the pool is still empty, no worker started without the variable can be handed out) and their
  // workers are closed after (none of them goes back to the pool). One worker per value: every call seeds its draws.
  const byChunk = new Map<string, TorchRuntime>();
  afterAll(async () => {
    for (const rt of byChunk.values()) { await rt.workerForTests.close(); await rt.dispose(); }   // exited: dispose pools nothing
  });

  async function sampleWith(chunk: string, stop: string[]): Promise<{ ids: number[]; text: string; logprobs: number[] }[]> {
    let rt = byChunk.get(chunk);
    if (!rt) {
      const before = process.env.SPA_TORCH_GEN_CHUNK;
      process.env.SPA_TORCH_GEN_CHUNK = chunk;
      try {
        rt = await torchFrom(dir);
        byChunk.set(chunk, rt);
      } finally {
        if (before === undefined) delete process.env.SPA_TORCH_GEN_CHUNK; else process.env.SPA_TORCH_GEN_CHUNK = before;
      }
    }
    const prompts = rowsOf(rt).map((r) => r.slice(0, 4));
    return (await rt.generate(prompts, { maxNewTokens: 12, temperature: 1, topK: 0, topP: 0.9, seed: 7, stop })).map((g) => ({ ...g }));
  }

  it('sampling with one host look per 5 steps gives the tokens and log-probs of one look per step, stops inside a chunk included', async () => {
    const one = await sampleWith('1', []);
    expect(one.every((g) => g.ids.length === 12)).toBe(true);
    // a stop string that row 0 writes after its 3rd character: it must end there under both chunkings
    const text0 = one[0]!.text;
    expect(text0.length).toBeGreaterThan(5);
    const stop = text0.slice(3, 5);
    const a = await sampleWith('1', [stop]);
    const b = await sampleWith('5', [stop]);
    expect(a[0]!.ids.length).toBeLessThan(12);
    expect(b.map((g) => g.ids)).toEqual(a.map((g) => g.ids));
    a.forEach((g, i) => expect(maxDiff(g.logprobs, b[i]!.logprobs)).toBe(0));
    // and the same draws as without the stop, up to where row 0 stopped
    expect(a[0]!.ids).toEqual(one[0]!.ids.slice(0, a[0]!.ids.length));
    const c = await sampleWith('5', []);
    expect(c.map((g) => g.ids)).toEqual(one.map((g) => g.ids));
  });

  it('a chunk that is not a whole number from 1 to 256 is refused with the reason', async () => {
    await expect(sampleWith('0', [])).rejects.toThrow(/SPA_TORCH_GEN_CHUNK=0/);
  });
});

describe.each(['qwen2-f32', 'qwen2-tied-bf16', 'qwen2-sharded-f16'])('torch vs TF.js on %s', (name) => {
  const dir = path.join(PARITY_FIXTURES, name);

  it('token log-probs and entropies agree within 1e-4; greedy generation gives the same tokens', async () => {
    const a = await tfjsFrom(dir);
    const b = await torchFrom(dir);
    open.push(a, b);
    const rows = rowsOf(a).map((ids) => ({ ids }));
    const sa = await a.tokenStats(rows, false);
    const sb = await b.tokenStats(rows, false);
    rows.forEach((_, i) => {
      expect(maxDiff(sa[i]!.logprobs, sb[i]!.logprobs)).toBeLessThan(1e-4);
      expect(maxDiff(sa[i]!.entropies, sb[i]!.entropies)).toBeLessThan(1e-4);
    });
    // a score mask: torch computes log-probs and entropies on the scored tokens only, the same numbers there, 0 elsewhere
    const scored = rows.map((r, i) => ({ ids: r.ids, score: r.ids.map((_, t) => ((t + i) % 3 === 0 ? 0 : 1)) }));
    const sc = await b.tokenStats(scored, false);
    scored.forEach((r, i) => r.score.forEach((on, t) => {
      expect(sc[i]!.logprobs[t]).toBe(on ? sb[i]!.logprobs[t] : 0);
      expect(sc[i]!.entropies[t]).toBe(on ? sb[i]!.entropies[t] : 0);
    }));
    expect(sc.some((s, i) => s.logprobs.some((x, t) => x !== sb[i]!.logprobs[t]))).toBe(true);   // some were skipped
    await expect(b.tokenStats([{ ids: rows[0]!.ids, score: [1] }], false)).rejects.toThrow(/row 0's score has 1 values for \d+ tokens/);
    const prompts = rowsOf(a).map((r) => r.slice(0, 4));
    const opts = { maxNewTokens: 8, temperature: 0, topK: 0, topP: 1, seed: 0, stop: [] };
    const ga = await a.generate(prompts, opts);
    const gb = await b.generate(prompts, opts);
    expect(gb.map((g) => g.ids)).toEqual(ga.map((g) => g.ids));
    expect(gb.map((g) => g.text)).toEqual(ga.map((g) => g.text));
    ga.forEach((g, i) => expect(maxDiff(g.logprobs, gb[i]!.logprobs)).toBeLessThan(1e-4));
  });

  it('token stats of rows of mixed lengths: chunks of similar length within the budget, numbers in the rows\' order', async () => {
    const b = await torchFrom(dir);
    open.push(b);
    const base = rowsOf(b).flat();
    const lengths = [3, 17, 5, 30, 4, 16, 29, 6];
    const rows = lengths.map((n, i) => ({ ids: Array.from({ length: n }, (_, t) => base[(t * 3 + i) % base.length]!) }));
    const alone = await Promise.all(rows.map(async (r) => (await b.tokenStats([r], false))[0]!));
    const sent: number[][] = [];   // [rows, padded length] of each stats request
    const worker = b.workerForTests;
    const request = worker.request.bind(worker);
    worker.request = (async (op: string, header: Record<string, unknown>, arrays: Record<string, { shape: number[] }>) => {
      if (op === 'stats') sent.push(arrays.ids!.shape);
      return request(op, header, arrays as never);
    }) as typeof worker.request;
    try {
      const together = await b.tokenStats(rows, false, 40);
      rows.forEach((r, i) => {
        expect(together[i]!.logprobs.length).toBe(r.ids.length);
        expect(maxDiff(together[i]!.logprobs, alone[i]!.logprobs)).toBeLessThan(1e-5);
        expect(maxDiff(together[i]!.entropies, alone[i]!.entropies)).toBeLessThan(1e-5);
      });
      // sorted by length: [3, 4, 5, 6] (4 x 6 = 24 <= 40), [16, 17] (34), [29], [30]; in the given order with one row count
      // for all (40 / 30 = 1 row a chunk) it was 8 requests
      expect(sent).toEqual([[4, 6], [2, 17], [1, 29], [1, 30]]);
      expect(sent.reduce((n, [r, t]) => n + r! * t!, 0)).toBe(117);   // padded tokens; the rows hold 110
      await expect(b.tokenStats([rows[0]!, { ids: rows[1]!.ids, score: [1] }], false)).rejects.toThrow(/row 1's score has 1 values for 17 tokens/);
      // an episode's rows (each history continues the last, then a reply of its own): one chunk, and the worker computes
      // the shared tokens once (prefix_families; tests/torch/prefix_families_check.py) with the numbers of each row alone
      const long = Array.from({ length: 40 }, (_, t) => base[(t * 5 + 1) % base.length]!);
      const family = [long, ...[12, 22, 31].map((c, k) => ({ c, own: [base[k]!, base[k + 3]!, base[k + 1]!] }))
        .map(({ c, own }) => [...long.slice(0, c), ...(own[0] === long[c] ? own.slice(1) : own)])].map((ids) => ({ ids }));
      const single = await Promise.all(family.map(async (r) => (await b.tokenStats([r], false))[0]!));
      sent.length = 0;
      const shared = await b.tokenStats(family, false, 8192);
      expect(sent).toEqual([[4, 40]]);
      family.forEach((r, i) => expect(maxDiff(shared[i]!.logprobs, single[i]!.logprobs), `row ${i}`).toBeLessThan(1e-5));
    } finally {
      worker.request = request;
    }
  });
});

/** Weights after a step: the change from `before` on both backends agrees within `tol` of lr. */
async function compareWeights(a: TfjsRuntime, b: TorchRuntime, before: Map<string, Float32Array>, lr: number): Promise<{ moved: number; worst: number }> {
  const wb = await b.weights();
  let worst = 0, moved = 0;
  for (const [name, v] of a.model.namedWeights()) {
    const x = v.dataSync() as Float32Array;
    const y = wb.get(name)!;
    expect(y, name).toBeDefined();
    worst = Math.max(worst, maxDiff(x, y));
    if (maxDiff(x, before.get(name)!) > lr / 2) moved++;
  }
  return { moved, worst };
}

function snapshot(rt: TfjsRuntime): Map<string, Float32Array> {
  return new Map([...rt.model.namedWeights()].map(([k, v]) => [k, (v.dataSync() as Float32Array).slice()]));
}

describe('training steps agree between the backends (qwen2-f32)', () => {
  const dir = path.join(PARITY_FIXTURES, 'qwen2-f32');
  const lr = 1e-3;

  it('one SFT step (two chunks: token budget 40) gives the same loss, gradient norm and weights', async () => {
    const a = await tfjsFrom(dir);
    const b = await torchFrom(dir);
    open.push(a, b);
    const before = snapshot(a);
    const rows: TrainRow[] = rowsOf(a).map((ids) => ({ ids, arrays: { lossMask: ids.map((_, t) => (t >= 2 ? 1 : 0)) } }));
    a.ensureOptimizer(0.01); b.ensureOptimizer(0.01);
    const ra = await a.trainStep('sft', rows, {}, lr, 1, 40);
    const rb = await b.trainStep('sft', rows, {}, lr, 1, 40);
    expect(Math.abs(ra['losses/total']! - rb['losses/total']!)).toBeLessThan(1e-4);
    expect(Math.abs(ra['charts/gradNorm']! - rb['charts/gradNorm']!) / ra['charts/gradNorm']!).toBeLessThan(1e-3);
    const { moved, worst } = await compareWeights(a, b, before, lr);
    expect(moved).toBeGreaterThan(before.size / 2);
    // AdamW's first step moves each weight by about lr: the two backends agree to 2% of lr.
    expect(worst).toBeLessThan(0.02 * lr);
  });

  it('one PPO step (policy + clipped value loss on a fresh value head) agrees; the value heads then agree', async () => {
    const a = await tfjsFrom(dir, { valueHead: true });
    const b = await torchFrom(dir, { valueHead: true });
    open.push(a, b);
    const before = snapshot(a);
    const ids = rowsOf(a);
    const stats = await a.tokenStats(ids.map((r) => ({ ids: r })), true);
    const rows = ppoRows(ids, stats);
    const params = PPO_PARAMS;
    const ra = await a.trainStep('ppo', rows, params, lr, 1);
    const rb = await b.trainStep('ppo', rows, params, lr, 1);
    for (const k of ['losses/total', 'losses/policy', 'losses/value', 'losses/entropy']) expect(Math.abs(ra[k]! - rb[k]!), k).toBeLessThan(1e-4);
    const { worst } = await compareWeights(a, b, before, lr);
    expect(worst).toBeLessThan(0.02 * lr);
    const va = await a.tokenStats(ids.map((r) => ({ ids: r })), true);
    const vb = await b.tokenStats(ids.map((r) => ({ ids: r })), true);
    expect(va[0]!.values!.some((v) => Math.abs(v) > 1e-4)).toBe(true);   // the head moved off zero
    va.forEach((s, i) => expect(maxDiff(s.values!, vb[i]!.values!)).toBeLessThan(1e-4));
  });
});

describe('the RL update of the pipeline agrees (shared trunk: policy step, then the value view\'s own AdamW)', () => {
  it('ppo-policy at lr then value at criticLr through valueView: the same weights on both backends, twice', async () => {
    const dir = path.join(PARITY_FIXTURES, 'qwen2-f32');
    const a = await tfjsFrom(dir, { valueHead: true });
    const b = await torchFrom(dir, { valueHead: true });
    open.push(a, b);
    const betas = [0.9, 0.999] as const;
    a.ensureOptimizer(0, betas); b.ensureOptimizer(0, betas);
    const va = a.valueView(betas);
    const vb = b.valueView(betas);
    const ids = rowsOf(a);
    const stats = await a.tokenStats(ids.map((r) => ({ ids: r })), true);
    const rows: TrainRow[] = ids.map((r, i) => ({
      ids: r,
      arrays: {
        lossMask: r.map((_, t) => (t >= 2 ? 1 : 0)), oldLogprobs: stats[i]!.logprobs, advantages: r.map((_, t) => Math.sin(t + i)),
        returns: r.map((_, t) => Math.cos(t - i)), oldValues: r.map(() => 0),
      },
    }));
    const params = { clipLow: 0.2, clipHigh: 0.28, dualClip: 3, entropyCoef: 0, valueClip: 0.5 };
    const before = snapshot(a);
    for (let k = 0; k < 2; k++) {
      await a.trainStep('ppo-policy', rows, params, 1e-3, 1); await va.trainStep('value', rows, params, 1e-2, 1);
      await b.trainStep('ppo-policy', rows, params, 1e-3, 1); await vb.trainStep('value', rows, params, 1e-2, 1);
    }
    const { worst, moved } = await compareWeights(a, b, before, 1e-3);
    expect(moved).toBeGreaterThan(before.size / 2);
    expect(worst).toBeLessThan(5e-5);
    // the untied lm_head is not reached by the value loss, the value head not by the policy loss: each moved by one optimizer only
    await va.dispose(); await vb.dispose();
  });
});

describe('checkpoints move between the backends', () => {
  const dir = path.join(PARITY_FIXTURES, 'qwen2-f32');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-torch-ckpt-'));
  const manifest = (step: number) => ({ stage: 'sft', step, parent: null, metrics: {}, extra: {} });

  it('written on TF.js with AdamW state, resumed on torch: same weights, the optimizer continues from its step', async () => {
    const a = await tfjsFrom(dir);
    open.push(a);
    const rows: TrainRow[] = rowsOf(a).map((ids) => ({ ids, arrays: { lossMask: ids.map(() => 1) } }));
    await a.trainStep('sft', rows, {}, 1e-3, 1);
    const saved = path.join(tmp, 'from-tfjs');
    await a.save(saved, manifest(1));
    const b = await torchFrom(saved, { resume: true });
    open.push(b);
    const sa = await a.tokenStats(rows, false);
    const sb = await b.tokenStats(rows, false);
    sa.forEach((s, i) => expect(maxDiff(s.logprobs, sb[i]!.logprobs)).toBeLessThan(1e-4));
    // the same second step on both: equal weights again (so the moments were restored, not reset)
    await a.trainStep('sft', rows, {}, 1e-3, 1);
    await b.trainStep('sft', rows, {}, 1e-3, 1);
    const { worst } = await compareWeights(a, b, snapshot(a), 1e-3);
    expect(worst).toBeLessThan(2e-5);
    const again = path.join(tmp, 'from-torch');
    await b.save(again, manifest(2));
    const m = JSON.parse(fs.readFileSync(path.join(again, 'manifest.json'), 'utf8')) as { optimizerStep: number; weights: { dtype: string } };
    expect(m.optimizerStep).toBe(2);
    expect(m.weights.dtype).toBe('F32');
    const state = await readSafetensors(path.join(again, 'optimizer.safetensors'));
    expect(state.has('model.embed_tokens.weight.exp_avg')).toBe(true);
  });

  it('written on torch, loaded on TF.js: the same log-probs; a resumed TF.js step matches a torch step', async () => {
    const b = await torchFrom(dir);
    open.push(b);
    const rows: TrainRow[] = rowsOf(b).map((ids) => ({ ids, arrays: { lossMask: ids.map(() => 1) } }));
    await b.trainStep('sft', rows, {}, 1e-3, 1);
    const saved = path.join(tmp, 'torch-first');
    await b.save(saved, manifest(1));
    const a = await tfjsFrom(saved, { resume: true });
    open.push(a);
    const sa = await a.tokenStats(rows, false);
    const sb = await b.tokenStats(rows, false);
    sa.forEach((s, i) => expect(maxDiff(s.logprobs, sb[i]!.logprobs)).toBeLessThan(1e-4));
    await a.trainStep('sft', rows, {}, 1e-3, 1);
    await b.trainStep('sft', rows, {}, 1e-3, 1);
    expect(a.trainer!.optimizer.step).toBe(2);
    const { worst } = await compareWeights(a, b, snapshot(a), 1e-3);
    expect(worst).toBeLessThan(2e-5);
  });
});
