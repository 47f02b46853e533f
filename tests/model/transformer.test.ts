// The decoder: shapes, per-token outputs agree with logits, padding invariance, weight IO, clone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { CausalLM } from '../../core/model/transformer.js';
import { countParameters, presetConfig } from '../../core/model/config.js';
import { maxAbsDiff, randomIds, tinyConfig, useTestBackend } from './helpers.js';

let model: CausalLM;
beforeAll(async () => {
  await useTestBackend();
  model = new CausalLM(tinyConfig({ value_head: true }), { seed: 3 });
});
afterAll(() => model.dispose());

describe('CausalLM', () => {
  it('initialises reproducibly for every seed, 0 included (TF.js treats seed 0 as unseeded)', () => {
    for (const seed of [0, 1]) {
      const a = new CausalLM(tinyConfig(), { seed });
      const b = new CausalLM(tinyConfig(), { seed });
      for (const [name, w] of a.namedWeights()) expect(maxAbsDiff(w, b.namedWeights().get(name)!), `${name} seed ${seed}`).toBe(0);
      a.dispose(); b.dispose();
    }
  });

  it('has HF-named weights in HF layout and the parameter count of its config', () => {
    const w = model.namedWeights();
    expect(w.get('model.embed_tokens.weight')!.shape).toEqual([17, 16]);
    expect(w.get('model.layers.0.self_attn.q_proj.weight')!.shape).toEqual([16, 16]);
    expect(w.get('model.layers.0.self_attn.k_proj.weight')!.shape).toEqual([8, 16]); // GQA: 2 kv heads x 4
    expect(w.get('model.layers.0.self_attn.k_proj.bias')!.shape).toEqual([8]);
    expect(w.get('model.layers.1.mlp.down_proj.weight')!.shape).toEqual([16, 24]);
    expect(w.get('lm_head.weight')!.shape).toEqual([17, 16]);
    expect(w.get('value_head.weight')!.shape).toEqual([1, 16]);
    expect(model.parameterCount()).toBe(countParameters(model.config));
    const tiny = presetConfig('tiny');
    expect(countParameters(tiny)).toBeGreaterThan(0.5e6);
    expect(countParameters(tiny)).toBeLessThan(1.5e6);
  });

  it('forward gives logits [B, T, V] and values [B, T]; the fast path equals the reference attention', () => {
    const ids = randomIds(3, 6, 17, 5);
    const ref = new CausalLM(model.config, { attention: 'reference', init: 'zeros' });
    ref.copyWeightsFrom(model);
    tf.tidy(() => {
      const a = model.forward(ids);
      const b = ref.forward(ids);
      expect(a.logits!.shape).toEqual([3, 6, 17]);
      expect(a.values!.shape).toEqual([3, 6]);
      expect(maxAbsDiff(a.logits!, b.logits!)).toBeLessThan(1e-4);
    });
    ref.dispose();
  });

  it('tokenOutputs: logprob of token t is log_softmax(logits[t-1])[token t]; t = 0 holds 0', () => {
    const ids = randomIds(2, 5, 17, 9);
    tf.tidy(() => {
      const { logits } = model.forward(ids);
      const out = model.tokenOutputs(ids, { values: true });
      const logp = tf.logSoftmax(logits!).arraySync() as number[][][];
      const lp = out.logprobs.arraySync();
      const ent = out.entropies.arraySync();
      for (let b = 0; b < 2; b++) {
        expect(lp[b]![0]).toBe(0);
        for (let t = 1; t < 5; t++) {
          expect(lp[b]![t]).toBeCloseTo(logp[b]![t - 1]![ids[b]![t]!]!, 4);
          const row = logp[b]![t - 1]!;
          const h = -row.reduce((s, l) => s + Math.exp(l) * l, 0);
          expect(ent[b]![t]).toBeCloseTo(h, 4);
        }
      }
      expect(out.values!.shape).toEqual([2, 5]);
    });
  });

  it('left padding does not change the outputs of the real tokens', () => {
    const seq = [4, 9, 1, 12];
    tf.tidy(() => {
      const plain = model.tokenOutputs([seq]).logprobs.arraySync()[0]!;
      const padded = model.tokenOutputs([[0, 0, ...seq]], { attentionMask: [[0, 0, 1, 1, 1, 1]] }).logprobs.arraySync()[0]!;
      for (let t = 1; t < seq.length; t++) expect(padded[t + 2]).toBeCloseTo(plain[t]!, 4);
    });
  });

  it('packed sequences (segment ids) give the same outputs as each sequence alone, fast and reference attention', () => {
    const a = [4, 9, 1, 12, 3];
    const b = [7, 2, 8];
    const ref = new CausalLM(model.config, { attention: 'reference', init: 'zeros' });
    ref.copyWeightsFrom(model);
    tf.tidy(() => {
      for (const m of [model, ref]) {
        const alone = m.tokenOutputs([[...a, ...b.map(() => 0)], [...b, ...a.map(() => 0)]], {
          attentionMask: [[...a.map(() => 1), ...b.map(() => 0)], [...b.map(() => 1), ...a.map(() => 0)]], values: true,
        });
        const packed = m.tokenOutputs([[...a, ...b, 0]], { segmentIds: [[...a.map(() => 1), ...b.map(() => 2), 0]], values: true });
        const la = alone.logprobs.arraySync(); const lp = packed.logprobs.arraySync()[0]!;
        const va = alone.values!.arraySync(); const vp = packed.values!.arraySync()[0]!;
        for (let t = 0; t < a.length; t++) { expect(lp[t]).toBeCloseTo(la[0]![t]!, 4); expect(vp[t]).toBeCloseTo(va[0]![t]!, 4); }
        for (let t = 0; t < b.length; t++) { expect(lp[a.length + t]).toBeCloseTo(la[1]![t]!, 4); expect(vp[a.length + t]).toBeCloseTo(va[1]![t]!, 4); }
        expect(Math.abs(lp[a.length]!)).toBe(0); // first token of the second segment has no prefix
        expect(Math.abs(lp[0]!)).toBe(0);
      }
    });
    ref.dispose();
  });

  it('rejects bad input with a clear message', () => {
    expect(() => model.forward([[1, 2], [3]])).toThrow(/inputIds\[1\] has length 1, expected 2/);
    expect(() => model.forward([[1, 99]])).toThrow(/token id 99, outside the vocabulary \[0, 17\)/);
    const weights = model.exportWeights();
    weights.set('model.norm.weight', { shape: [15], data: new Float32Array(15) });
    const other = new CausalLM(model.config, { init: 'zeros' });
    expect(() => other.loadWeights(weights)).toThrow(/model\.norm\.weight: expected shape \[16\], got \[15\]/);
    weights.delete('model.norm.weight');
    expect(() => other.loadWeights(weights)).toThrow(/missing model\.norm\.weight/);
    other.dispose();
  });

  it('exportWeights -> loadWeights round trip gives identical logits; clone copies', () => {
    const ids = randomIds(2, 7, 17, 11);
    const other = new CausalLM(model.config, { init: 'zeros' });
    other.loadWeights(model.exportWeights());
    const frozen = model.clone({ trainable: false });
    expect(frozen.trainableVariables()).toHaveLength(0);
    tf.tidy(() => {
      const a = model.forward(ids).logits!;
      expect(maxAbsDiff(a, other.forward(ids).logits!)).toBe(0);
      expect(maxAbsDiff(a, frozen.forward(ids).logits!)).toBe(0);
    });
    other.dispose();
    frozen.dispose();
  });
});

describe('tokenScores', () => {
  it('returns the same numbers as tokenOutputs, in chunks, without leaking', async () => {
    const { tokenScores } = await import('../../core/model/score.js');
    const m = new CausalLM(tinyConfig({ value_head: true }), { seed: 8 });
    const ids = randomIds(5, 6, 17, 2);
    const mask = ids.map((r, b) => r.map((_, t) => (b === 1 && t < 2 ? 0 : 1)));
    const before = tf.memory().numTensors;
    const scores = tokenScores(m, ids, { attentionMask: mask, values: true, chunkRows: 2 });
    expect(tf.memory().numTensors).toBe(before);
    tf.tidy(() => {
      const o = m.tokenOutputs(ids, { attentionMask: mask, values: true });
      const lp = o.logprobs.arraySync(); const v = o.values!.arraySync();
      for (let b = 0; b < 5; b++) for (let t = 0; t < 6; t++) {
        expect(scores.logprobs[b]![t]).toBeCloseTo(lp[b]![t]!, 5);
        expect(scores.values![b]![t]).toBeCloseTo(v[b]![t]!, 5);
      }
    });
    m.dispose();
  });
});
