// Custom gradients equal autograd of the plain-ops references, on small shapes.
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import {
  addBias, attentionBias, attentionReference, columnSum, embedding, linear, linearReference, rmsNorm, rmsNormReference, rope, ropeReference,
  readView, ropeTables, rotateHalfMatrix, swiglu, swigluReference, tokenStats, tokenStatsReference, transpose2d,
} from '../../core/model/kernels.js';
import { attentionFast } from '../../core/model/attention.js';
import { maxAbsDiff, useTestBackend } from './helpers.js';

beforeAll(useTestBackend);

/** Compare value and gradients (w.r.t. all inputs) of f and g under a random cotangent. */
function compare(f: (...xs: tf.Tensor[]) => tf.Tensor, g: (...xs: tf.Tensor[]) => tf.Tensor, inputs: tf.Tensor[], tol = 1e-4): void {
  tf.tidy(() => {
    const yf = f(...inputs);
    const yg = g(...inputs);
    expect(yf.shape).toEqual(yg.shape);
    expect(maxAbsDiff(yf, yg)).toBeLessThan(tol);
    const cot = tf.randomNormal(yf.shape, 0, 1, 'float32', 7);
    const gf = tf.grads((...xs: tf.Tensor[]) => tf.sum(tf.mul(f(...xs), cot)))(inputs);
    const gg = tf.grads((...xs: tf.Tensor[]) => tf.sum(tf.mul(g(...xs), cot)))(inputs);
    gf.forEach((d, i) => {
      const scale = Math.max(1, tf.max(tf.abs(gg[i]!)).dataSync()[0]!);
      expect(maxAbsDiff(d, gg[i]!) / scale).toBeLessThan(tol);
      expect(tf.max(tf.abs(gg[i]!)).dataSync()[0]!).toBeGreaterThan(0); // the gradient is not trivially zero
    });
  });
}

describe('custom-gradient kernels', () => {
  it('linear: y = x W^T with dx, dW (both weight-grad forms)', () => {
    compare((x, w) => linear(x as tf.Tensor2D, w as tf.Tensor2D), (x, w) => linearReference(x as tf.Tensor2D, w as tf.Tensor2D),
      [tf.randomNormal([6, 5], 0, 1, 'float32', 1), tf.randomNormal([3, 5], 0, 1, 'float32', 2)]);
    compare((x, w) => linear(x as tf.Tensor2D, w as tf.Tensor2D), (x, w) => linearReference(x as tf.Tensor2D, w as tf.Tensor2D),
      [tf.randomNormal([6, 3], 0, 1, 'float32', 1), tf.randomNormal([5, 3], 0, 1, 'float32', 2)]);
  });

  it('linear with a frozen weight gives the input gradient only', () => {
    const w = tf.randomNormal([3, 5], 0, 1, 'float32', 2);
    compare((x) => linear(x as tf.Tensor2D, w as tf.Tensor2D, false), (x) => linearReference(x as tf.Tensor2D, w as tf.Tensor2D),
      [tf.randomNormal([6, 5], 0, 1, 'float32', 1)]);
  });

  it('rmsNorm', () => {
    compare((x, w) => rmsNorm(x as tf.Tensor2D, w as tf.Tensor1D, 1e-6), (x, w) => rmsNormReference(x as tf.Tensor2D, w as tf.Tensor1D, 1e-6),
      [tf.randomNormal([7, 8], 0, 1, 'float32', 3), tf.randomNormal([8], 1, 0.3, 'float32', 4)]);
  });

  it('addBias: x + b with the bias gradient as a column sum', () => {
    compare((x, b) => addBias(x as tf.Tensor2D, b as tf.Tensor1D), (x, b) => tf.add(x, b),
      [tf.randomNormal([7, 5], 0, 1, 'float32', 3), tf.randomNormal([5], 0, 1, 'float32', 4)]);
    expect(() => addBias(tf.zeros([2, 3]) as tf.Tensor2D, tf.zeros([4]) as tf.Tensor1D)).toThrow(/width 3 does not match bias \[4\]/);
  });

  it('columnSum equals tf.sum over rows (with and without an elementwise factor)', () => {
    tf.tidy(() => {
      const a = tf.randomNormal([300, 37], 0, 1, 'float32', 5) as tf.Tensor2D;
      const b = tf.randomNormal([300, 37], 0, 1, 'float32', 6) as tf.Tensor2D;
      expect(maxAbsDiff(columnSum(a), tf.sum(a, 0))).toBeLessThan(1e-4);
      expect(maxAbsDiff(columnSum(a, b), tf.sum(tf.mul(a, b), 0))).toBeLessThan(1e-4);
      expect(() => columnSum(a, tf.zeros([300, 36]) as tf.Tensor2D)).toThrow(/differ/);
    });
  });

  it('swiglu', () => {
    compare((a, b) => swiglu(a as tf.Tensor2D, b as tf.Tensor2D), (a, b) => swigluReference(a as tf.Tensor2D, b as tf.Tensor2D),
      [tf.randomNormal([5, 6], 0, 2, 'float32', 5), tf.randomNormal([5, 6], 0, 1, 'float32', 6)]);
  });

  it('rope as a 2-D matmul equals slice-and-concat rotate_half', () => {
    const dim = 8;
    const { cos, sin } = ropeTables(16, dim, 10000);
    const rows = [3, 0, 7, 15, 9, 1];
    const c = tf.tensor2d(rows.flatMap((p) => [...cos.subarray(p * dim, p * dim + dim)]), [rows.length, dim]);
    const s = tf.tensor2d(rows.flatMap((p) => [...sin.subarray(p * dim, p * dim + dim)]), [rows.length, dim]);
    const r = tf.tensor2d(rotateHalfMatrix(dim), [dim, dim]);
    const rT = tf.transpose(r) as tf.Tensor2D;
    compare((x) => rope(x as tf.Tensor2D, c, s, r, rT), (x) => ropeReference(x as tf.Tensor2D, c, s), [tf.randomNormal([rows.length, dim], 0, 1, 'float32', 8)]);
  });

  it('embedding scatters gradients (repeated ids summed)', () => {
    const ids = tf.tensor1d([1, 3, 1, 0, 3, 3], 'int32');
    compare((t) => embedding(t as tf.Tensor2D, ids), (t) => tf.matMul(tf.cast(tf.oneHot(ids, 5), 'float32'), t), [tf.randomNormal([5, 4], 0, 1, 'float32', 9)]);
  });

  it('tokenStats: logprob and entropy with closed-form gradients', () => {
    const targets = tf.tensor1d([0, 4, 2, 2, 1], 'int32');
    compare((z) => tokenStats(z as tf.Tensor2D, targets), (z) => tokenStatsReference(z as tf.Tensor2D, targets), [tf.randomNormal([5, 6], 0, 2, 'float32', 10)]);
  });

  it('fast attention with in-kernel RoPE equals rope kernels + reference attention', () => {
    const B = 2; const T = 4; const H = 2; const KV = 1; const hd = 4;
    const mask = [[1, 1, 1, 1], [0, 1, 1, 1]];
    const positions = [[0, 1, 2, 3], [0, 0, 1, 2]];
    const { cos, sin } = ropeTables(8, hd, 10000);
    const rowsFor = (heads: number, table: Float32Array) => tf.tensor2d(positions.flat().flatMap((p) => Array.from({ length: heads }, () => [...table.subarray(p * hd, p * hd + hd)]).flat()), [B * T * heads, hd]);
    const r = tf.tensor2d(rotateHalfMatrix(hd), [hd, hd]);
    const rT = tf.transpose(r) as tf.Tensor2D;
    const shape = { batch: B, queryLength: T, keyLength: T, heads: H, kvHeads: KV, headDim: hd };
    const bias = attentionBias(mask, T);
    const rowMask = tf.tensor2d(mask.flat().map((m) => [m]), [B * T, 1]);
    compare(
      (q, k, v) => tf.mul(attentionFast(q as tf.Tensor2D, k as tf.Tensor2D, v as tf.Tensor2D, mask, shape, { cos, sin, positions }), rowMask),
      (q, k, v) => {
        const qr = tf.reshape(rope(tf.reshape(q, [B * T * H, hd]) as tf.Tensor2D, rowsFor(H, cos), rowsFor(H, sin), r, rT), [B * T, H * hd]) as tf.Tensor2D;
        const kr = tf.reshape(rope(tf.reshape(k, [B * T * KV, hd]) as tf.Tensor2D, rowsFor(KV, cos), rowsFor(KV, sin), r, rT), [B * T, KV * hd]) as tf.Tensor2D;
        return tf.mul(attentionReference(qr, kr, v as tf.Tensor2D, bias, shape), rowMask);
      },
      [tf.randomNormal([B * T, H * hd], 0, 1, 'float32', 21), tf.randomNormal([B * T, KV * hd], 0, 1, 'float32', 22), tf.randomNormal([B * T, KV * hd], 0, 1, 'float32', 23)],
    );
  });

  it('fast attention equals the reference (causal, GQA, left padding)', () => {
    const B = 2; const T = 5; const H = 4; const KV = 2; const hd = 4;
    const mask = [[1, 1, 1, 1, 1], [0, 0, 1, 1, 1]];
    const shape = { batch: B, queryLength: T, keyLength: T, heads: H, kvHeads: KV, headDim: hd };
    const bias = attentionBias(mask, T);
    // Padded query rows produce arbitrary but finite values in both; compare real rows only.
    const rowMask = tf.tensor2d(mask.flat().map((m) => [m]), [B * T, 1]);
    compare(
      (q, k, v) => tf.mul(attentionFast(q as tf.Tensor2D, k as tf.Tensor2D, v as tf.Tensor2D, mask, shape), rowMask),
      (q, k, v) => tf.mul(attentionReference(q as tf.Tensor2D, k as tf.Tensor2D, v as tf.Tensor2D, bias, shape), rowMask),
      [tf.randomNormal([B * T, H * hd], 0, 1, 'float32', 11), tf.randomNormal([B * T, KV * hd], 0, 1, 'float32', 12), tf.randomNormal([B * T, KV * hd], 0, 1, 'float32', 13)],
    );
  });

  it('fast attention twice in one graph, after a larger call (reused wasm buffers), equals the reference', () => {
    // The kernel reuses its scratch buffers across calls on wasm: a larger call first leaves them
    // oversized, and two layers in one graph run their backward passes one after the other.
    const big = { batch: 3, queryLength: 6, keyLength: 6, heads: 2, kvHeads: 2, headDim: 4 };
    const bigMask = [[1, 1, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1], [1, 1, 2, 2, 2, 0]];
    tf.tidy(() => {
      const x = tf.randomNormal([18, 8], 0, 1, 'float32', 31) as tf.Tensor2D;
      tf.grads((a: tf.Tensor) => tf.sum(attentionFast(a as tf.Tensor2D, x, x, bigMask, big)))([x]);
    });
    const B = 2; const T = 4; const H = 2; const hd = 4;
    const mask = [[1, 1, 1, 1], [0, 1, 1, 1]];
    const shape = { batch: B, queryLength: T, keyLength: T, heads: H, kvHeads: H, headDim: hd };
    const bias = attentionBias(mask, T);
    const rowMask = tf.tensor2d(mask.flat().map((m) => [m]), [B * T, 1]);
    const two = (attend: (q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D) => tf.Tensor2D) => (q: tf.Tensor, k: tf.Tensor, v: tf.Tensor) =>
      tf.mul(attend(tf.mul(attend(q as tf.Tensor2D, k as tf.Tensor2D, v as tf.Tensor2D), rowMask) as tf.Tensor2D, k as tf.Tensor2D, v as tf.Tensor2D), rowMask);
    compare(
      two((q, k, v) => attentionFast(q, k, v, mask, shape)),
      two((q, k, v) => attentionReference(q, k, v, bias, shape)),
      [tf.randomNormal([B * T, H * hd], 0, 1, 'float32', 41), tf.randomNormal([B * T, H * hd], 0, 1, 'float32', 42), tf.randomNormal([B * T, H * hd], 0, 1, 'float32', 43)],
    );
  });

  it('transpose2d equals tf.transpose (JS path on wasm for large tensors); readView reads the values', () => {
    tf.tidy(() => {
      for (const shape of [[3, 5], [300, 257]] as const) {
        const x = tf.randomNormal([...shape], 0, 1, 'float32', 31) as tf.Tensor2D;
        const t = transpose2d(x);
        expect(t.shape).toEqual([shape[1], shape[0]]);
        expect(maxAbsDiff(t, tf.transpose(x))).toBe(0);
        expect(Array.from(readView(x))).toEqual(Array.from(x.dataSync()));
      }
    });
  });

  it('a clone (shared data on wasm) keeps its values after the source is disposed, without leaking', () => {
    const before = tf.memory().numTensors;
    const x = tf.tensor1d([1, 2, 3]);
    const c = tf.clone(x);
    x.dispose();
    expect(Array.from(c.dataSync())).toEqual([1, 2, 3]);
    c.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });
});
