// Both backends compute the same aggregated loss (issue 34 item 1): one PPO step (policy + clipped value loss) and one SFT
// step with rl/sft.lossAggregation 'seq-mean-token-mean' weights, on the committed Qwen2 fixture, TF.js against the PyTorch
// worker, in several chunks (token budget 40): the same loss, gradient norm and updated weights. The weights travel as a
// batch array, so the worker's backward is the registered TypeScript loss's (trainer.ts lossOutputGradients).
// Needs a Python with torch (CI installs Debian's python3-torch); fails, not skips, without it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-cpu';
import type { ModelRuntime, TrainRow } from '../../core/model/runtime.js';
import { withAggregationWeights } from '../../core/model/losses.js';
import { probeTorch, type TorchProbe } from '../../core/model/torch/worker-client.js';
import '../../core/train/losses.js';
import { PARITY_FIXTURES, PPO_PARAMS, ppoRows, rowsOf, tfjsFrom, torchFrom } from '../torch/helpers.js';

let probe: TorchProbe;
const open: ModelRuntime[] = [];

beforeAll(async () => {
  await tf.setBackend('cpu');
  probe = probeTorch();
  if (!probe.ok) throw new Error(`these tests need a Python with torch: ${probe.reason}`);
});
afterAll(async () => { for (const rt of open) await rt.dispose(); });

const dir = path.join(PARITY_FIXTURES, 'qwen2-f32');

describe('seq-mean-token-mean on both backends (qwen2-f32, chunks of 40 tokens)', () => {
  it('PPO: the same policy and value losses, gradient norm and weights; and they differ from token-mean', async () => {
    const a = await tfjsFrom(dir, { valueHead: true });
    const b = await torchFrom(probe, dir, { valueHead: true });
    open.push(a, b);
    const ids = rowsOf(a);
    const stats = await a.tokenStats(ids.map((r) => ({ ids: r })), true);
    const plain = ppoRows(ids, stats);
    const rows: TrainRow[] = withAggregationWeights(plain, [0, 1, 2], 'seq-mean-token-mean');
    const ra = await a.trainStep('ppo', rows, PPO_PARAMS, 1e-3, 1, 40);
    const rb = await b.trainStep('ppo', rows, PPO_PARAMS, 1e-3, 1, 40);
    for (const k of ['losses/total', 'losses/policy', 'losses/value', 'losses/entropy']) expect(Math.abs(ra[k]! - rb[k]!), k).toBeLessThan(1e-4);
    expect(Math.abs(ra['charts/gradNorm']! - rb['charts/gradNorm']!) / ra['charts/gradNorm']!).toBeLessThan(1e-3);
    const wb = await b.weights();
    let worst = 0;
    for (const [name, v] of a.model.namedWeights()) {
      const w = v.dataSync(), o = wb.get(name)!;
      expect(o, name).toBeDefined();
      for (let i = 0; i < w.length; i++) worst = Math.max(worst, Math.abs(w[i]! - o[i]!));
    }
    // AdamW's first step moves each weight by about lr (1e-3): the backends agree to 2% of it, as tests/torch/parity.test.ts
    expect(worst).toBeLessThan(2e-5);
    // the same rows as a token mean give another policy loss (the weights are not a no-op)
    const c = await tfjsFrom(dir, { valueHead: true });
    open.push(c);
    const rc = await c.trainStep('ppo', plain, PPO_PARAMS, 1e-3, 1, 40);
    expect(Math.abs(rc['losses/policy']! - ra['losses/policy']!)).toBeGreaterThan(1e-3);
  });

  it('SFT: the same loss and gradient norm', async () => {
    const a = await tfjsFrom(dir);
    const b = await torchFrom(probe, dir);
    open.push(a, b);
    const plain: TrainRow[] = rowsOf(a).map((r) => ({ ids: r, arrays: { lossMask: r.map((_, t) => (t >= 2 ? 1 : 0)) } }));
    const rows = withAggregationWeights(plain, [0, 1, 2], 'seq-mean-token-mean');
    a.ensureOptimizer(0.01); b.ensureOptimizer(0.01);
    const ra = await a.trainStep('sft', rows, {}, 1e-3, 1, 40);
    const rb = await b.trainStep('sft', rows, {}, 1e-3, 1, 40);
    expect(Math.abs(ra['losses/sft']! - rb['losses/sft']!)).toBeLessThan(1e-4);
    expect(Math.abs(ra['charts/gradNorm']! - rb['charts/gradNorm']!) / ra['charts/gradNorm']!).toBeLessThan(1e-3);
  });
});
