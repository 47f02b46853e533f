// The loss as the references compute it (issue 34 item 1; ../shared/reference/peers-check.md's minimal inputs):
// verl's agg_loss modes for the policy, critic and SFT losses (F-AGG: policy −0.25 token-mean vs −0.50 RAGEN with
// micro-batch 1; F-SFT-AGG: 1.75 vs 2.5), k3 clamped as verl's low_var_kl (F-KL-CLAMP: 10 with zero gradient at a
// log-ratio of −3, finite at −20 and −89), the policy log-ratio clamp, and the weights surviving the trainers' chunking
// (the TF.js Trainer's stepRows and the chunk rule the PyTorch runtime uses, lossOutputGradients weighted by loss tokens).
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { aggregationWeights, withAggregationWeights, type LossAggregation } from '../../core/model/losses.js';
import { chunkRows, lossOutputGradients, lossTokens, padRows, Trainer, type TrainRow } from '../../core/model/trainer.js';
import { CausalLM } from '../../core/model/transformer.js';
import { klPenalty, klPerToken, ppoPolicyLoss } from '../../core/train/ppo-losses.js';
import { aggregatedBatch, tagRowEpisodes, type TurnSample } from '../../core/train/ppo.js';
import '../../core/train/losses.js';
import { tinyConfig, useTestBackend } from '../model/helpers.js';

beforeAll(async () => { await useTestBackend(); });

const PARAMS = { clipLow: 0.2, clipHigh: 0.28, dualClip: 3, entropyCoef: 0, klCoef: 0, valueClip: null };

/** The loss of `rows` as the PyTorch runtime computes it: chunks of `budget` padded tokens, each weighted by its loss tokens. */
function chunkedLoss(lossName: string, rows: TrainRow[], outputs: Array<Record<string, number[]>>, budget: number, stat: string): number {
  const byIds = new Map(rows.map((r, i) => [r, outputs[i]!]));
  let total = 0, weighted = 0;
  for (const chunk of chunkRows(rows, budget)) {
    const batch = padRows(chunk, 0);
    const T = batch.inputIds[0]!.length;
    const flat = (key: string) => Float32Array.from(chunk.flatMap((r) => {
      const o = byIds.get(r)![key]!;
      return [...o, ...new Array<number>(T - o.length).fill(0)];
    }));
    const out = lossOutputGradients(lossName, PARAMS, batch, {
      logprobs: flat('logprobs'), entropies: flat('entropies'), ...(outputs[0]!.values ? { values: flat('values') } : {}),
    });
    const w = lossTokens(batch);
    total += w;
    weighted += w * out.stats[stat]!;
  }
  return weighted / total;
}

describe('aggregationWeights (verl agg_loss as per-token weights of a token mean)', () => {
  it('token-mean 1; seq-mean-token-mean N/(S·n_s); seq-mean-token-sum N/S; a sequence without loss tokens is not counted', () => {
    const masks = [[1], [0, 1, 1, 1], [0, 0]];
    expect(aggregationWeights(masks, [0, 1, 2], 'token-mean')).toEqual([[1], [1, 1, 1, 1], [1, 1]]);
    const mean = aggregationWeights(masks, [0, 1, 2], 'seq-mean-token-mean');
    expect(mean[0]![0]).toBeCloseTo(4 / (2 * 1), 12);
    expect(mean[1]![1]).toBeCloseTo(4 / (2 * 3), 12);
    expect(aggregationWeights(masks, [0, 1, 2], 'seq-mean-token-sum')[1]![2]).toBeCloseTo(4 / 2, 12);
    // two turn rows of one episode form one sequence
    const episode = aggregationWeights([[1, 1], [1], [1]], [7, 7, 8], 'seq-mean-token-mean');
    expect(episode[0]![0]).toBeCloseTo(4 / (2 * 3), 12);
    expect(episode[2]![0]).toBeCloseTo(4 / (2 * 1), 12);
  });

  it('refuses mismatched ids and an unknown mode by name', () => {
    expect(() => aggregationWeights([[1]], [0, 1], 'token-mean')).toThrow(/one sequence id per row/);
    expect(() => aggregationWeights([[1]], [0], 'seq-sum' as LossAggregation)).toThrow(/unknown loss aggregation "seq-sum"/);
    expect(() => withAggregationWeights([{ ids: [1], arrays: {} }], [0], 'seq-mean-token-mean')).toThrow(/no lossMask/);
  });
});

describe('F-AGG: the policy and value losses of two responses (1 token with advantage 1, 3 tokens with advantage 0; ratio 1)', () => {
  const rows: TrainRow[] = [
    { ids: [5, 6, 7], arrays: { lossMask: [0, 0, 1], oldLogprobs: [0, 0, -1], advantages: [0, 0, 1], returns: [0, 0, 2], oldValues: [0, 0, 0] } },
    { ids: [5, 6, 7, 8], arrays: { lossMask: [0, 1, 1, 1], oldLogprobs: [0, -1, -1, -1], advantages: [0, 0, 0, 0], returns: [0, 0, 0, 0], oldValues: [0, 0, 0, 0] } },
  ];
  // the current policy's log-probs equal the old ones (ratio 1); values 0, so the 1-token row's squared error is 4
  const outputs = rows.map((r) => ({ logprobs: r.arrays.oldLogprobs!, entropies: r.ids.map(() => 0), values: r.ids.map(() => 0) }));
  const cases: Array<[LossAggregation, number, number]> = [
    // mode, policy loss, value loss 0.5·agg((V − R)²)
    ['token-mean', -0.25, 0.5 * (4 / 4)],            // the product's historical loss: −1/4
    ['seq-mean-token-mean', -0.5, 0.5 * (4 / 2)],    // RAGEN/verl with micro-batch 1 (SPA's run): mean(−1, 0)
    ['seq-mean-token-sum', -0.5, 0.5 * (4 / 2)],     // mean of the token sums (−1, 0)
  ];
  it.each(cases)('%s: policy %d, value %d, whatever the chunking (one chunk, one row per chunk)', (mode, policy, value) => {
    const weighted = withAggregationWeights(rows, [0, 1], mode);
    for (const budget of [1000, 4]) {
      expect(chunkedLoss('ppo-policy', weighted, outputs, budget, 'losses/policy')).toBeCloseTo(policy, 6);
      expect(chunkedLoss('value', weighted, outputs, budget, 'losses/value')).toBeCloseTo(value, 6);
    }
  });

  it('seq-mean-token-sum differs from seq-mean-token-mean when a long response has advantages', () => {
    const long = rows.map((r, i) => (i === 1 ? { ...r, arrays: { ...r.arrays, advantages: [0, 1, 1, 1] } } : r));
    expect(chunkedLoss('ppo-policy', withAggregationWeights(long, [0, 1], 'seq-mean-token-sum'), outputs, 1000, 'losses/policy')).toBeCloseTo(-2, 6);
    expect(chunkedLoss('ppo-policy', withAggregationWeights(long, [0, 1], 'seq-mean-token-mean'), outputs, 1000, 'losses/policy')).toBeCloseTo(-1, 6);
    expect(chunkedLoss('ppo-policy', long, outputs, 1000, 'losses/policy')).toBeCloseTo(-1, 6);
  });

  it('the RL update groups turn rows by episode: two turns of one episode and one of another weigh 1/2 each', () => {
    const samples: TurnSample[] = [
      { episode: 0, turn: 0, ids: [5, 6, 7], responseStart: 2 },
      { episode: 0, turn: 1, ids: [5, 6, 7, 8], responseStart: 1 },
      { episode: 1, turn: 0, ids: [5, 6, 7], responseStart: 2 },
    ];
    const three: TrainRow[] = tagRowEpisodes([rows[0]!, rows[1]!, { ...rows[0]!, arrays: { ...rows[0]!.arrays, advantages: [0, 0, 0] } }], samples);
    const batch = aggregatedBatch(three, { lossAggregation: 'seq-mean-token-mean' });
    // episode 0: tokens (1, 0, 0, 0) → mean −1/4; episode 1: 0 → the update's loss −1/8
    const outs = three.map((r) => ({ logprobs: r.arrays.oldLogprobs!, entropies: r.ids.map(() => 0) }));
    expect(chunkedLoss('ppo-policy', batch, outs, 1000, 'losses/policy')).toBeCloseTo(-0.125, 6);
    expect(aggregatedBatch(three, { lossAggregation: 'token-mean' })).toBe(three);
  });
});

describe('F-SFT-AGG: rows with NLL 4 (1 target) and NLL 1 (3 targets)', () => {
  const rows: TrainRow[] = [
    { ids: [3, 4], arrays: { lossMask: [0, 1] } },
    { ids: [3, 4, 5, 6], arrays: { lossMask: [0, 1, 1, 1] } },
  ];
  const outputs = [{ logprobs: [0, -4], entropies: [0, 0] }, { logprobs: [0, -1, -1, -1], entropies: [0, 0, 0, 0] }];
  it.each([['token-mean', 1.75], ['seq-mean-token-mean', 2.5], ['seq-mean-token-sum', 3.5]] as Array<[LossAggregation, number]>)(
    '%s gives %d (SPA\'s trainer: 2.5)', (mode, expected) => {
      const weighted = withAggregationWeights(rows, [0, 1], mode);
      for (const budget of [1000, 4]) expect(chunkedLoss('sft', weighted, outputs, budget, 'losses/sft')).toBeCloseTo(expected, 6);
    });
});

describe('the TF.js Trainer step keeps the aggregation whatever its chunks', () => {
  it('seq-mean-token-mean: one chunk and one row per chunk give the same loss and the same update', () => {
    const rowsOf = (model: CausalLM): TrainRow[] => {
      const ids = [[1, 2, 3, 4, 5], [2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [4, 5, 6]];
      const stats = tf.tidy(() => model.tokenOutputs(ids.map((r) => [...r, ...new Array<number>(10 - r.length).fill(0)]), {
        attentionMask: ids.map((r) => [...r.map(() => 1), ...new Array<number>(10 - r.length).fill(0)]), values: false, logits: true,
      }).logprobs!.arraySync() as number[][]);
      return ids.map((r, i) => ({
        ids: r,
        arrays: { lossMask: r.map((_, t) => (t >= 1 ? 1 : 0)), oldLogprobs: stats[i]!.slice(0, r.length), advantages: r.map((_, t) => (i === 0 ? 1 : -0.2 * t)) },
      }));
    };
    const results = [10000, 12].map((budget) => {
      const model = new CausalLM(tinyConfig(), { seed: 3 });
      const trainer = new Trainer(model, { schedule: { lr: 1e-2, kind: 'constant' }, weightDecay: 0 });
      const rows = withAggregationWeights(rowsOf(model), [0, 1, 2], 'seq-mean-token-mean');
      const step = trainer.stepRows('grpo', rows, PARAMS, { tokenBudget: budget, maxGradNorm: 0 });
      const weight = model.trainableVariables()[0]!.dataSync().slice(0, 8);
      trainer.dispose();
      model.dispose();
      return { step, weight };
    });
    // the per-row loss: mean over the 3 rows of each row's token mean of −A (ratio 1)
    const expected = -(1 + (-0.2 * (1 + 9) / 2) + (-0.2 * 1.5)) / 3;
    expect(results[0]!.step.stats['losses/policy']).toBeCloseTo(expected, 5);
    expect(results[1]!.step.stats['losses/policy']).toBeCloseTo(expected, 5);
    expect(results[0]!.step.gradNorm).toBeCloseTo(results[1]!.step.gradNorm, 4);
    results[0]!.weight.forEach((w, i) => expect(w).toBeCloseTo(results[1]!.weight[i]!, 6));
  });
});

describe('F-KL-CLAMP: k3 as verl\'s low_var_kl (x = log π − log π_ref clamped to [−20, 20], k3 clamped to [−10, 10])', () => {
  const k3 = (x: number) => tf.tidy(() => {
    const logprobs = tf.tensor2d([[x]]);
    const value = klPenalty(logprobs, tf.tensor2d([[0]]), tf.tensor2d([[1]]), 'k3').dataSync()[0]!;
    const grad = tf.grad((lp: tf.Tensor) => klPenalty(lp, tf.tensor2d([[0]]), tf.tensor2d([[1]]), 'k3'))(logprobs).dataSync()[0]!;
    return { value, grad };
  });
  it('log-ratio −3: 10 with zero gradient (unclamped: 16.0855, gradient −19.0855)', () => {
    expect(k3(-3).value).toBeCloseTo(10, 6);
    expect(Math.abs(k3(-3).grad)).toBe(0);
  });
  it.each([-20, -89, 30])('log-ratio %d: finite, clamped to 10, zero gradient', (x) => {
    const r = k3(x);
    expect(Number.isFinite(r.value) && Number.isFinite(r.grad)).toBe(true);
    expect(r.value).toBeCloseTo(10, 6);
    expect(Math.abs(r.grad)).toBe(0);
  });
  it('inside the clamp it is e^{−x} + x − 1 with gradient 1 − e^{−x}', () => {
    for (const x of [-0.5, 0.3, 2]) {
      expect(k3(x).value).toBeCloseTo(Math.exp(-x) + x - 1, 5);
      expect(k3(x).grad).toBeCloseTo(1 - Math.exp(-x), 5);
    }
    expect(() => tf.tidy(() => klPerToken(tf.zeros([1, 1]), tf.zeros([1, 1]), 'k2' as 'k3'))).toThrow(/unknown KL estimator "k2"/);
  });
});

describe('the policy log-ratio is clamped to [−20, 20] before exp (verl compute_policy_loss)', () => {
  it('a stale token with log π − log π_old = 100 gives a finite loss and gradient', () => {
    const { value, grad } = tf.tidy(() => {
      const logprobs = tf.tensor2d([[100, 0]]);
      const f = (lp: tf.Tensor) => ppoPolicyLoss({
        logprobs: lp, oldLogprobs: tf.zeros([1, 2]), advantages: tf.tensor2d([[-1, 1]]), mask: tf.ones([1, 2]), clipLow: 0.2, clipHigh: 0.28, dualClip: null,
      }).loss;
      return { value: f(logprobs).dataSync()[0]!, grad: Array.from(tf.grad(f)(logprobs).dataSync()) };
    });
    expect(value).toBeCloseTo((Math.exp(20) - 1) / 2, -3);
    expect(grad.every(Number.isFinite)).toBe(true);
    expect(Math.abs(grad[0]!)).toBe(0);
  });
});
