// On wasm, a training batch is padded to a length that is a multiple of 8 (padBatchLength, attentionLengthMultiple), so that
// attention takes the gemm-wasm.ts path for every chunk; before, a chunk whose longest row was not a multiple of 8 ran on
// TF.js's own matmul, a third of the wasm SFT's attention time in the main job (docs/results/mainjob-v3, session 10).
// The padding must change nothing but the order of floating-point sums: loss, stats and gradients equal the unpadded step's.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { CausalLM } from '../../core/model/transformer.js';
import { Trainer, padBatchLength, type TrainBatch } from '../../core/model/trainer.js';
import { attentionCalls, attentionLengthMultiple } from '../../core/model/attention.js';
import { linearGemm } from '../../core/model/kernels.js';
import { randomIds, tinyConfig, useTestBackend } from './helpers.js';

beforeAll(useTestBackend);
const gemmAtStart = linearGemm.enabled;
afterEach(() => { linearGemm.enabled = gemmAtStart; });

describe('padBatchLength', () => {
  it('pads every [B, T] array at the end with zeros, keeps per-row arrays, and adds the mask a maskless batch needs', () => {
    const batch: TrainBatch = { inputIds: [[5, 6, 7], [8, 9, 10]], lossMask: [[0, 1, 1], [0, 1, 0]], rowWeight: [1, 2] };
    const out = padBatchLength(batch, 4);
    expect(out.inputIds).toEqual([[5, 6, 7, 0], [8, 9, 10, 0]]);
    expect(out.attentionMask).toEqual([[1, 1, 1, 0], [1, 1, 1, 0]]);
    expect(out.lossMask).toEqual([[0, 1, 1, 0], [0, 1, 0, 0]]);
    expect(out.rowWeight).toEqual([1, 2]);
    const masked = padBatchLength({ inputIds: [[1, 2, 3, 4, 5]], attentionMask: [[1, 1, 1, 0, 0]] }, 8);
    expect(masked.attentionMask).toEqual([[1, 1, 1, 0, 0, 0, 0, 0]]);
    const segments = padBatchLength({ inputIds: [[1, 2, 3]], segmentIds: [[1, 1, 2]] }, 8);
    expect(segments.segmentIds).toEqual([[1, 1, 2, 0, 0, 0, 0, 0]]);
    expect(segments.attentionMask).toBeUndefined();   // segmentIds replace the mask
    expect(padBatchLength(batch, 3)).toBe(batch);      // already a multiple
    expect(padBatchLength(batch, 1)).toBe(batch);
  });
});

// (SPA_WASM_GEMM=0 turns gemm-wasm.ts off for a whole process: there is then no gemm path to take)
describe.runIf((process.env.SPA_TEST_BACKEND ?? 'wasm') === 'wasm' && gemmAtStart)('a wasm training step on rows whose length is not a multiple of 8', () => {
  it('takes the gemm attention path and gives the unpadded step\'s loss, stats and gradients', () => {
    expect(tf.getBackend()).toBe('wasm');
    const config = tinyConfig({ hidden_size: 32, intermediate_size: 48, num_attention_heads: 4, num_key_value_heads: 2 });   // head size 8
    expect(attentionLengthMultiple(8)).toBe(8);
    const inputIds = randomIds(3, 13, 17, 5);
    const batch: TrainBatch = {
      inputIds,
      attentionMask: inputIds.map((r, b) => r.map((_, t) => (t < 13 - 2 * b ? 1 : 0))),   // rows of 13, 11 and 9 tokens
      lossMask: inputIds.map((r, b) => r.map((_, t) => (t >= 4 && t < 13 - 2 * b ? 1 : 0))),
    };
    const model = new CausalLM(config, { seed: 3 });
    const trainer = new Trainer(model, { schedule: { lr: 1e-3, kind: 'constant' } });
    const before = { ...attentionCalls };
    const padded = trainer.computeGradients('sft', {}, batch);
    expect(attentionCalls.gemm - before.gemm).toBe(config.num_hidden_layers);   // every layer on the gemm path
    expect(attentionCalls.tiles).toBe(before.tiles);
    // the reference: the same step with gemm-wasm.ts off (no padding, TF.js's matmuls everywhere)
    linearGemm.enabled = false;
    expect(attentionLengthMultiple(8)).toBe(1);
    const plain = trainer.computeGradients('sft', {}, batch);
    expect(attentionCalls.tiles - before.tiles).toBe(config.num_hidden_layers);
    expect(padded.loss).toBeCloseTo(plain.loss, 5);
    expect(padded.stats['charts/tokens']).toBe(plain.stats['charts/tokens']);
    expect(padded.stats['charts/tokens']).toBe(9 + 7 + 5);
    let worst = 0;
    for (const [name, g] of plain.grads) {
      const a = padded.grads.get(name)!.dataSync();
      const b = g.dataSync();
      expect(a.length).toBe(b.length);
      const scale = Math.max(1e-3, ...Array.from(b, Math.abs));
      for (let i = 0; i < b.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!) / scale);
    }
    expect(worst).toBeLessThan(1e-4);
    expect(plain.grads.size).toBeGreaterThan(0);
    for (const g of [...padded.grads.values(), ...plain.grads.values()]) g.dispose();
  });
});
