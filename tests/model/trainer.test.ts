// Training primitives: masked SFT lowers loss, masked tokens get zero gradient, no tensor growth,
// frozen reference unchanged, AdamW against a hand computation, schedules, clipping, state IO.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { CausalLM } from '../../core/model/transformer.js';
import { Trainer, type TrainRow } from '../../core/model/trainer.js';
import { TfjsRuntime } from '../../core/model/runtime.js';
import { buildCharTokenizer } from '../../core/model/tokenizer.js';
import { AdamW, clipByGlobalNorm, learningRate } from '../../core/model/optim.js';
import { getLoss, registerLoss, sftLoss } from '../../core/model/losses.js';
import { randomIds, tinyConfig, useTestBackend } from './helpers.js';

beforeAll(useTestBackend);

function sftBatch() {
  const inputIds = randomIds(4, 10, 17, 21);
  // Loss only on the second half of each row; the first token never has a target.
  const lossMask = inputIds.map((r) => r.map((_, t) => (t >= 5 ? 1 : 0)));
  return { inputIds, lossMask };
}

function snapshot(model: CausalLM): Map<string, Float32Array> {
  return new Map([...model.namedWeights()].map(([k, v]) => [k, v.dataSync().slice() as Float32Array]));
}

describe('trainer', () => {
  it('a masked SFT step lowers the loss on its batch and moves the weights; the frozen reference does not move', () => {
    const model = new CausalLM(tinyConfig(), { seed: 2 });
    const reference = model.clone({ trainable: false });
    const refBefore = snapshot(reference);
    const before = snapshot(model);
    const trainer = new Trainer(model, { schedule: { lr: 1e-2, kind: 'constant' }, weightDecay: 0 });
    const batch = sftBatch();
    const first = trainer.step({ lossName: 'sft', batch });
    let last = first;
    for (let i = 0; i < 5; i++) last = trainer.step({ lossName: 'sft', batch });
    expect(first.applied).toBe(true);
    expect(first.gradNorm).toBeGreaterThan(0);
    expect(last.loss).toBeLessThan(first.loss - 0.05);
    expect(first.stats['charts/tokens']).toBe(20);
    const after = snapshot(model);
    let moved = 0;
    for (const [k, v] of before) if (v.some((x, i) => x !== after.get(k)![i])) moved++;
    expect(moved).toBe(before.size);
    for (const [k, v] of refBefore) expect(reference.namedWeights().get(k)!.dataSync()).toEqual(v);
    trainer.dispose(); model.dispose(); reference.dispose();
  });

  it('masked tokens get zero gradient: the loss and its gradients ignore the last (masked) token', () => {
    const model = new CausalLM(tinyConfig(), { seed: 4 });
    const { inputIds } = sftBatch();
    const lossMask = inputIds.map((r) => r.map((_, t) => (t >= 3 && t < r.length - 1 ? 1 : 0)));
    const changed = inputIds.map((r) => [...r.slice(0, -1), (r[r.length - 1]! + 5) % 17]);
    const vars = model.trainableVariables();
    const gradsFor = (ids: number[][]) => tf.tidy(() => {
      const { value, grads } = tf.variableGrads(() => {
        const outputs = model.tokenOutputs(ids);
        return sftLoss({ outputs, batch: { lossMask: tf.tensor2d(lossMask) }, attentionMask: tf.ones([4, 10]), params: {} }).loss;
      }, vars);
      return [value, ...vars.map((v) => grads[v.name]!)];
    });
    const a = gradsFor(inputIds);
    const b = gradsFor(changed);
    expect(a[0]!.dataSync()[0]).toBeCloseTo(b[0]!.dataSync()[0]!, 6);
    const plain = (t: tf.Tensor) => Array.from(t.dataSync(), (x) => x + 0); // -0 -> 0
    for (let i = 1; i < a.length; i++) expect(plain(a[i]!)).toEqual(plain(b[i]!));
    // And directly: d loss / d logprobs is zero off the mask.
    tf.tidy(() => {
      const lp = tf.randomNormal([4, 10]);
      const g = tf.grad((x: tf.Tensor) => sftLoss({ outputs: { logprobs: x as tf.Tensor2D, entropies: tf.zeros([4, 10]), values: null }, batch: { lossMask: tf.tensor2d(lossMask) }, attentionMask: tf.ones([4, 10]), params: {} }).loss)(lp);
      const gv = g.arraySync() as number[][];
      lossMask.forEach((r, b) => r.forEach((m, t) => { if (!m) expect(Math.abs(gv[b]![t]!)).toBe(0); else expect(gv[b]![t]).not.toBe(0); }));
    });
    tf.dispose([...a, ...b]);
    model.dispose();
  });

  it('no tensor growth across steps (with accumulation and micro-batches)', () => {
    const model = new CausalLM(tinyConfig({ value_head: true }), { seed: 5 });
    const trainer = new Trainer(model, { schedule: { lr: 1e-3, warmupSteps: 2, totalSteps: 10 } });
    const batch = sftBatch();
    trainer.step({ lossName: 'sft', batch });
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) {
      trainer.step({ lossName: 'sft', batch, accumulate: true });
      trainer.step({ lossName: 'sft', batch, microBatchSize: 2 });
    }
    expect(tf.memory().numTensors).toBe(before);
    trainer.dispose(); model.dispose();
  });

  it('disposing the model, its LoRA adapters and the trainer frees every tensor', () => {
    const before = tf.memory().numTensors;
    const model = new CausalLM(tinyConfig({ value_head: true }), { seed: 5 });
    const reference = model.clone({ trainable: false });
    model.enableLora({ rank: 2, alpha: 4, targetModules: ['q_proj', 'up_proj'] });
    const trainer = new Trainer(model, { schedule: { lr: 1e-3 } });
    trainer.step({ lossName: 'sft', batch: sftBatch() });
    trainer.dispose(); model.dispose(); reference.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });

  it('a packed batch (segmentIds) trains like the same sequences padded', () => {
    const a = new CausalLM(tinyConfig(), { seed: 13 });
    const b = a.clone();
    const ta = new Trainer(a, { schedule: { lr: 1e-2, kind: 'constant' } });
    const tb = new Trainer(b, { schedule: { lr: 1e-2, kind: 'constant' } });
    const s1 = [3, 5, 7, 9]; const s2 = [2, 4, 6, 8];
    const padded = ta.step({ lossName: 'sft', batch: { inputIds: [s1, s2], lossMask: [[0, 1, 1, 1], [0, 1, 1, 1]] } });
    const packed = tb.step({ lossName: 'sft', batch: { inputIds: [[...s1, ...s2]], segmentIds: [[1, 1, 1, 1, 2, 2, 2, 2]], lossMask: [[0, 1, 1, 1, 0, 1, 1, 1]] } });
    expect(packed.loss).toBeCloseTo(padded.loss, 5);
    expect(packed.gradNorm).toBeCloseTo(padded.gradNorm, 4);
    ta.dispose(); tb.dispose(); a.dispose(); b.dispose();
  });

  it('gradient accumulation over micro-batches equals one full-batch step', () => {
    const a = new CausalLM(tinyConfig(), { seed: 6 });
    const b = a.clone();
    const ta = new Trainer(a, { schedule: { lr: 1e-2, kind: 'constant' } });
    const tb = new Trainer(b, { schedule: { lr: 1e-2, kind: 'constant' } });
    const batch = sftBatch();
    const ra = ta.step({ lossName: 'sft', batch });
    const rb = tb.step({ lossName: 'sft', batch, microBatchSize: 2 });
    expect(rb.loss).toBeCloseTo(ra.loss, 5);
    expect(rb.gradNorm).toBeCloseTo(ra.gradNorm, 4);
    const wa = snapshot(a); const wb = snapshot(b);
    for (const [k, v] of wa) v.forEach((x, i) => expect(Math.abs(x - wb.get(k)![i]!)).toBeLessThan(1e-5));
    ta.dispose(); tb.dispose(); a.dispose(); b.dispose();
  });

  it('custom losses are resolved by name and can use values; unknown names are a clear error', () => {
    registerLoss('test-value', ({ outputs, batch }) => {
      const err = tf.sub(outputs.values!, batch.returns!);
      const loss = tf.mean(tf.square(err)) as tf.Scalar;
      return { loss, stats: { 'losses/value': loss } };
    }, { values: true, logprobs: false, entropies: false });
    const critic = new CausalLM(tinyConfig({ value_head: true }), { seed: 8 });
    const trainer = new Trainer(critic, { schedule: { lr: 1e-2, kind: 'constant' } });
    const inputIds = randomIds(2, 6, 17, 3);
    const returns = [[0, 1, 1, 1, 1, 1], [0, -1, -1, -1, -1, -1]];
    const first = trainer.step({ lossName: 'test-value', batch: { inputIds, returns } });
    let last = first;
    for (let i = 0; i < 10; i++) last = trainer.step({ lossName: 'test-value', batch: { inputIds, returns } });
    expect(last.loss).toBeLessThan(first.loss);
    expect(() => getLoss('nope')).toThrow(/unknown loss "nope": registered losses are .*sft/);
    expect(() => trainer.step({ lossName: 'sft', batch: { inputIds } })).toThrow(/loss 'sft' needs batch.lossMask/);
    trainer.dispose(); critic.dispose();
  });

  it('AdamW matches a hand computation; state round-trips', () => {
    const p = tf.variable(tf.tensor2d([[1, -2]]), true, 'adamw-test-p');
    const opt = new AdamW([{ name: 'p', variable: p }], { beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.1 });
    const g = tf.tensor2d([[0.5, -1]]);
    opt.apply(new Map([['p', g]]), 0.1);
    // step 1: m = 0.1 g, v = 0.01 g^2, mhat = g, vhat = g^2 -> update = sign(g); decay: p *= 1 - 0.01
    const expected = [1 * 0.99 - 0.1, -2 * 0.99 + 0.1];
    Array.from(p.dataSync()).forEach((x, i) => expect(x).toBeCloseTo(expected[i]!, 5));
    const state = opt.getState();
    expect(state.step).toBe(1);
    expect(Array.from(state.tensors.get('p.exp_avg')!.data)).toEqual([0.05000000074505806, -0.10000000149011612]);
    const p2 = tf.variable(tf.tensor2d([[0, 0]]), true, 'adamw-test-p2');
    const opt2 = new AdamW([{ name: 'p', variable: p2 }]);
    opt2.setState(state);
    expect(opt2.getState().tensors.get('p.exp_avg_sq')!.data).toEqual(state.tensors.get('p.exp_avg_sq')!.data);
    expect(() => opt2.setState({ step: 1, tensors: new Map() })).toThrow(/missing p.exp_avg/);
    opt.dispose(); opt2.dispose(); p.dispose(); p2.dispose(); g.dispose();
  });

  it('clipping by global norm and warmup + cosine schedule', () => {
    const grads = new Map<string, tf.Tensor>([['a', tf.tensor1d([3, 0])], ['b', tf.tensor1d([0, 4])]]);
    const { grads: clipped, norm } = clipByGlobalNorm(grads, 1);
    expect(norm).toBeCloseTo(5, 5);
    expect(clipped.get('a')!.dataSync()[0]).toBeCloseTo(0.6, 4);
    expect(clipped.get('b')!.dataSync()[1]).toBeCloseTo(0.8, 4);
    tf.dispose([...clipped.values()]);
    const s = { lr: 1, warmupSteps: 10, totalSteps: 110, minLrRatio: 0.1 };
    expect(learningRate(0, s)).toBeCloseTo(0.1);
    expect(learningRate(9, s)).toBeCloseTo(1);
    expect(learningRate(60, s)).toBeCloseTo(0.55);
    expect(learningRate(110, s)).toBeCloseTo(0.1);
  });
});

describe('the one training step (Trainer.stepRows, what the pipeline runs)', () => {
  // Rows of different lengths and very different loss-token counts.
  function unevenRows(): TrainRow[] {
    const lengths = [4, 9, 6, 12, 7];
    return lengths.map((n, i) => {
      const ids = randomIds(1, n, 17, 40 + i)[0]!;
      return { ids, arrays: { lossMask: ids.map((_, t) => (t >= n - 1 - i * 2 ? 1 : 0)) } };
    });
  }

  it('is token-weighted whatever the chunking: one chunk and many chunks give the same loss and weights', () => {
    const a = new CausalLM(tinyConfig(), { seed: 21 });
    const b = a.clone();
    const ta = new Trainer(a, { schedule: { lr: 1e-2, kind: 'constant' } });
    const tb = new Trainer(b, { schedule: { lr: 1e-2, kind: 'constant' } });
    const rows = unevenRows();
    const whole = ta.stepRows('sft', rows, {}, { tokenBudget: 10_000 });
    const chunked = tb.stepRows('sft', rows, {}, { tokenBudget: 14 });   // chunks of 1-2 rows
    expect(chunked.loss).toBeCloseTo(whole.loss, 5);
    expect(chunked.gradNorm).toBeCloseTo(whole.gradNorm, 4);
    expect(chunked.stats['losses/sft']).toBeCloseTo(whole.stats['losses/sft']!, 5);
    const wa = snapshot(a); const wb = snapshot(b);
    for (const [k, v] of wa) v.forEach((x, i) => expect(Math.abs(x - wb.get(k)![i]!)).toBeLessThan(1e-5));
    ta.dispose(); tb.dispose(); a.dispose(); b.dispose();
  });

  it('step() with micro-batches of rows with unequal loss tokens equals the full batch (token mean, not mean of means)', () => {
    const a = new CausalLM(tinyConfig(), { seed: 22 });
    const b = a.clone();
    const ta = new Trainer(a, { schedule: { lr: 1e-2, kind: 'constant' } });
    const tb = new Trainer(b, { schedule: { lr: 1e-2, kind: 'constant' } });
    const inputIds = randomIds(4, 10, 17, 23);
    const lossMask = inputIds.map((r, i) => r.map((_, t) => (t >= 9 - i * 3 ? 1 : 0)));   // 1, 4, 7, 10 tokens
    const ra = ta.step({ lossName: 'sft', batch: { inputIds, lossMask } });
    const rb = tb.step({ lossName: 'sft', batch: { inputIds, lossMask }, microBatchSize: 1 });
    expect(rb.loss).toBeCloseTo(ra.loss, 5);
    expect(rb.gradNorm).toBeCloseTo(ra.gradNorm, 4);
    ta.dispose(); tb.dispose(); a.dispose(); b.dispose();
  });

  it('a non-finite loss or gradient applies nothing and clears what the step had accumulated', () => {
    const a = new CausalLM(tinyConfig(), { seed: 24 });
    const b = a.clone();
    const ta = new Trainer(a, { schedule: { lr: 1e-2, kind: 'constant' } });
    const tb = new Trainer(b, { schedule: { lr: 1e-2, kind: 'constant' } });
    const before = snapshot(a);
    const rows = unevenRows();
    const bad: TrainRow[] = [...rows.slice(0, 2), { ids: rows[4]!.ids, arrays: { lossMask: rows[4]!.arrays.lossMask!.map(() => Number.NaN) } }];
    expect(() => ta.stepRows('sft', bad, {}, { tokenBudget: 14 })).toThrow(/loss 'sft' is NaN \(not finite\)/);
    for (const [k, v] of snapshot(a)) expect(v, k).toEqual(before.get(k));
    expect(ta.optimizer.step).toBe(0);
    ta.stepRows('sft', rows, {}, {});
    tb.stepRows('sft', rows, {}, {});
    for (const [k, v] of snapshot(a)) expect(v, k).toEqual(snapshot(b).get(k));
    ta.dispose(); tb.dispose(); a.dispose(); b.dispose();
  });

  it("the pipeline's runtime trains through it: TfjsRuntime.trainStep calls Trainer.stepRows with the stage's lr and clip", async () => {
    const model = new CausalLM(tinyConfig(), { seed: 25 });
    const rt = new TfjsRuntime(model, buildCharTokenizer(), { backend: 'cpu', device: 'cpu' });
    const spy = vi.spyOn(Trainer.prototype, 'stepRows');
    const rows = unevenRows();
    const stats = await rt.trainStep('sft', rows, {}, 3e-3, 0.5, 14);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(spy.mock.calls[0]![3]).toMatchObject({ lr: 3e-3, maxGradNorm: 0.5, tokenBudget: 14 });
    expect(stats['charts/lr']).toBe(3e-3);
    expect(stats['charts/gradNorm']).toBeGreaterThan(0);
    spy.mockRestore();
    await rt.dispose();
  });
});
