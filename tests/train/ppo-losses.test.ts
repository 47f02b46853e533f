import { describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { ppoPolicyLoss, clippedValueLoss, klPenalty } from '../../core/train/ppo-losses.js';

await tf.setBackend('cpu');

const t = (rows: number[][]): tf.Tensor => tf.tensor2d(rows);
const v = (x: tf.Tensor): number => x.dataSync()[0]!;

describe('PPO losses (hand-computed)', () => {
  // ratios: e^{0.5}=1.6487, e^{-0.5}=0.6065, 1, e^{1.5}=4.4817 (A<0 → dual clip), last is masked out
  const logprobs = t([[0.5, -0.5, 0, 1.5, 9]]);
  const old = t([[0, 0, 0, 0, 0]]);
  const adv = t([[1, 1, -2, -1, 5]]);
  const mask = t([[1, 1, 1, 1, 0]]);

  it('policy loss with clip low/high and dual clip', () => {
    const out = ppoPolicyLoss({ logprobs, oldLogprobs: old, advantages: adv, mask, clipLow: 0.2, clipHigh: 0.28, dualClip: 3 });
    // token0: A=1, r=1.6487: max(−1.6487, −1.28) = −1.28 (clipped)
    // token1: A=1, r=0.6065: max(−0.6065, −0.8) = −0.6065
    // token2: A=−2, r=1: 2
    // token3: A=−1, r=4.4817: max(4.4817, 1.28) = 4.4817 → dual: min(4.4817, 3) = 3
    const expected = (-1.28 - Math.exp(-0.5) + 2 + 3) / 4;
    expect(v(out.loss)).toBeCloseTo(expected, 5);
    // clipped branch active on token0 only (token3 clipped (1.28) < unclipped)
    expect(v(out.clipFrac)).toBeCloseTo(1 / 4, 6);
    const k3 = [0.5, -0.5, 0, 1.5].map((x) => Math.exp(x) - 1 - x).reduce((a, c) => a + c, 0) / 4;
    expect(v(out.approxKl)).toBeCloseTo(k3, 5);
  });

  it('without dual clip the large-ratio negative token is unbounded', () => {
    const out = ppoPolicyLoss({ logprobs, oldLogprobs: old, advantages: adv, mask, clipLow: 0.2, clipHigh: 0.28, dualClip: null });
    expect(v(out.loss)).toBeCloseTo((-1.28 - Math.exp(-0.5) + 2 + Math.exp(1.5)) / 4, 5);
  });

  it('clipped value loss', () => {
    const values = t([[1.0, 0.0, 2.0]]), oldValues = t([[0.0, 0.0, 1.9]]), returns = t([[0.2, 1.0, 2.5]]);
    const m = t([[1, 1, 1]]);
    // token0: unclipped (0.8)²=0.64, clipped V=0.5 → 0.09 → 0.64 ; token1: 1,1 → 1 ; token2: 0.25, V=2.0 → 0.25
    expect(v(clippedValueLoss(values, oldValues, returns, m, 0.5))).toBeCloseTo(0.5 * (0.64 + 1 + 0.25) / 3, 6);
    expect(v(clippedValueLoss(values, oldValues, returns, m, null))).toBeCloseTo(0.5 * (0.64 + 1 + 0.25) / 3, 6);
    // clipping binds: V moved 1.0 from 0 towards a return of 0: clipped V 0.5 → 0.25 vs 1 → max 1
    expect(v(clippedValueLoss(t([[-1]]), t([[0]]), t([[0.4]]), t([[1]]), 0.5))).toBeCloseTo(0.5 * 1.96, 6);
  });

  it('KL estimators k1 and k3', () => {
    const lp = t([[-1, -2]]), ref = t([[-1.5, -1]]), m = t([[1, 1]]);
    expect(v(klPenalty(lp, ref, m, 'k1'))).toBeCloseTo((0.5 - 1) / 2, 6);
    const k3 = (x: number): number => Math.exp(-x) + x - 1;
    expect(v(klPenalty(lp, ref, m, 'k3'))).toBeCloseTo((k3(0.5) + k3(-1)) / 2, 6);
  });

  it('shape mismatch names both shapes', () => {
    expect(() => klPenalty(t([[1, 2]]), t([[1, 2, 3]]), t([[1, 1]]), 'k1')).toThrow(/expected refLogprobs with shape \[1, 2\].*received \[1, 3\]/);
  });
});

import { getLoss } from '../../core/model/losses.js';
import '../../core/train/losses.js';

describe('registered losses', () => {
  it('ppo = policy + valueCoef·value − entropyCoef·entropy; grpo has no value term', () => {
    const outputs = { logprobs: t([[0.5, -0.5]]) as tf.Tensor2D, entropies: t([[1, 3]]) as tf.Tensor2D, values: t([[1, 0]]) as tf.Tensor2D };
    const batch = { lossMask: t([[1, 1]]), oldLogprobs: t([[0, 0]]), advantages: t([[1, 1]]), returns: t([[0, 0]]), oldValues: t([[1, 0]]) };
    const params = { clipLow: 0.2, clipHigh: 0.28, dualClip: 3, valueClip: 0.5, entropyCoef: 0.01, valueCoef: 0.5, klCoef: 0 };
    const ppo = getLoss('ppo').fn({ outputs, batch, attentionMask: t([[1, 1]]) as tf.Tensor2D, params });
    const policy = (-1.28 - Math.exp(-0.5)) / 2;
    const value = 0.5 * (1 + 0) / 2;
    expect(v(ppo.stats['losses/policy']!)).toBeCloseTo(policy, 5);
    expect(v(ppo.stats['losses/value']!)).toBeCloseTo(value, 5);
    expect(v(ppo.loss)).toBeCloseTo(policy + 0.5 * value - 0.01 * 2, 5);
    const grpo = getLoss('grpo').fn({ outputs: { ...outputs, values: null }, batch, attentionMask: t([[1, 1]]) as tf.Tensor2D, params });
    expect(v(grpo.loss)).toBeCloseTo(policy - 0.01 * 2, 5);
    expect(() => getLoss('ppo').fn({ outputs: { ...outputs, values: null }, batch, attentionMask: t([[1, 1]]) as tf.Tensor2D, params })).toThrow(/value head/);
  });
});
