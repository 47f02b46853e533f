// gemm-wasm.ts (the relaxed-SIMD matrix product of the wasm training step) against a float64 product,
// and attentionFast's path through it (context and head size multiples of 8) against the reference
// attention, in value and gradients: causal hints (one segment, packed segments) and the full
// products (GQA, padding). Issue 34 item 4.
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { expShiftLastC, gemm, gemmInfo, gemmMemoryView, gemmOnHeap, gemmOptions, gemmSupported, type GemmTriangle } from '../../core/model/gemm-wasm.js';
import { attentionFast } from '../../core/model/attention.js';
import { attentionReference, linear, linearReference, ropeTables, segmentBias } from '../../core/model/kernels.js';
import { maxAbsDiff, useTestBackend } from './helpers.js';

beforeAll(useTestBackend);

function random(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  return Float32Array.from({ length: n }, () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 4294967296 - 0.5; });
}

function maxDiff(x: Float32Array, y: Float32Array): number {
  let d = 0;
  for (let i = 0; i < x.length; i++) d = Math.max(d, Math.abs(x[i]! - y[i]!));
  return d;
}

/** max |C - A B| over the entries the mode defines, A (i, k) = 0 where the mode says so. */
function check(M: number, K: number, N: number, aT: boolean, bT: boolean, tri: GemmTriangle): number {
  const a = random(M * K, M + 7 * K);
  const b = random(K * N, N + 3 * K);
  const at = (i: number, k: number) => (aT ? k * M + i : i * K + k);
  for (let i = 0; i < M; i++) {
    for (let k = 0; k < K; k++) if ((tri === 'lowerA' && k > i) || (tri === 'upperA' && k < i)) a[at(i, k)] = 0;
  }
  const c = gemm({ data: a, transposed: aT }, { data: b, transposed: bT }, M, K, N, undefined, tri);
  let err = 0;
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      if (tri === 'lowerC' && j > i) continue;
      let sum = 0;
      for (let k = 0; k < K; k++) sum += a[at(i, k)]! * b[bT ? j * K + k : k * N + j]!;
      err = Math.max(err, Math.abs(sum - c[i * N + j]!));
    }
  }
  return err;
}

describe('gemm-wasm', () => {
  it('equals a float64 product: both transposes, rows not a multiple of the block, k over several chunks, triangular hints', () => {
    expect(gemmInfo().available).toBe(true);
    for (const [aT, bT] of [[false, false], [true, false], [false, true], [true, true]] as const) {
      expect(check(13, 5, 16, aT, bT, 'none')).toBeLessThan(1e-5);
      expect(check(7, 300, 24, aT, bT, 'none')).toBeLessThan(1e-4); // 300 > one 256 chunk: accumulated
    }
    expect(check(40, 40, 40, false, false, 'lowerC')).toBeLessThan(1e-5);
    expect(check(40, 40, 16, false, true, 'lowerA')).toBeLessThan(1e-5);
    expect(check(40, 40, 16, true, false, 'upperA')).toBeLessThan(1e-5);
    expect(check(41, 41, 8, true, false, 'upperA')).toBeLessThan(1e-5);
  });

  it('without fused multiply-adds it gives tf.matMul\'s wasm values to the bit (k in order, a multiply and an add)', () => {
    expect(gemmOptions.fma).toBe(false);
    tf.tidy(() => {
      for (const [M, K, N] of [[13, 40, 24], [30, 300, 16], [4096 / 64, 128, 352 / 4]]) {
        const a = random(M * K, 5 + K); const b = random(K * N, 9 + N);
        const want = tf.matMul(tf.tensor2d(a, [M, K]), tf.tensor2d(b, [K, N])).dataSync();
        const got = gemm({ data: a }, { data: b }, M, K, N);
        let diff = 0;
        for (let i = 0; i < M * N; i++) diff = Math.max(diff, Math.abs(got[i]! - want[i]!));
        expect(diff).toBe(0);
      }
    });
  });

  it('expShiftLastC: exp(c - shift) in place on the last product, and the sum (float32 c - shift, Cephes expf: relative error < 1e-6)', () => {
    const a = random(8 * 4, 3).map((x) => 40 * x); const b = random(4 * 16, 4);
    const c = gemm({ data: a }, { data: b }, 8, 4, 16, null);
    const before = Float32Array.from(c);
    const shift = Math.max(...before.subarray(16, 16 + 23));
    const sum = expShiftLastC(16, 23, shift);                 // 5 groups of 4 in wasm, 3 in JS
    let want = 0;
    for (let j = 0; j < 23; j++) {
      const e = Math.exp(before[16 + j]! - shift);
      want += e;
      expect(Math.abs(c[16 + j]! - e)).toBeLessThanOrEqual(1e-6 * e + 1e-38);
    }
    expect(c[15]).toBe(before[15]); expect(c[39]).toBe(before[39]);   // neighbours untouched
    expect(Math.abs(sum - want)).toBeLessThan(1e-6 * want);
    expect(() => expShiftLastC(120, 10, 0)).toThrow(/outside the last product/);
  });

  it('takes the view a call returned, rewritten in place, as the next A without copying (plain and transposed)', () => {
    const a = random(8 * 4, 21); const b = random(4 * 16, 22); const b2 = random(16 * 8, 23);
    for (const transposed of [false, true]) {
      const c1 = gemm({ data: a }, { data: b }, 8, 4, 16, null);
      for (let i = 0; i < c1.length; i++) c1[i] = 2 * c1[i]! - 1;          // rewritten in place
      const a2 = Float32Array.from(c1);                                    // the same values, in JS
      const [M, K] = transposed ? [16, 8] : [8, 16];                       // c1 [8, 16] as A, or as the transpose of A [16, 8]
      const got = gemm({ data: c1, transposed }, { data: b2.subarray(0, K * 8) }, M, K, 8);   // before anything overwrites c1
      const want = gemm({ data: a2, transposed }, { data: b2.subarray(0, K * 8) }, M, K, 8);
      expect(maxDiff(got, want)).toBe(0);
      expect(maxDiff(got, new Float32Array(got.length))).toBeGreaterThan(0);
    }
    const c = gemm({ data: a }, { data: b }, 8, 4, 16, null);
    expect(gemmMemoryView(c.byteOffset, 16)).toEqual(c.subarray(0, 16));
    expect(() => gemmMemoryView(-4, 1)).toThrow(/outside the memory/);
  });

  it('refuses widths that are not a multiple of 8 and short operands, by name', () => {
    expect(gemmSupported(4, 12)).toBe(false);
    expect(() => gemm({ data: new Float32Array(12) }, { data: new Float32Array(36) }, 4, 3, 12)).toThrow(/unsupported sizes.*N 12/);
    expect(() => gemm({ data: new Float32Array(5) }, { data: new Float32Array(24) }, 2, 3, 8)).toThrow(/shorter than \[2, 3\] x \[3, 8\]/);
  });

  it('on TF.js-wasm\'s heap (no copies) it gives tf.matMul\'s values to the bit; rows not a multiple of 4 fall back', () => {
    tf.tidy(() => {
      const a = tf.randomNormal([20, 40], 0, 1, 'float32', 4) as tf.Tensor2D;
      const b = tf.randomNormal([40, 24], 0, 1, 'float32', 5) as tf.Tensor2D;
      const ptr = (t: tf.Tensor) => (tf.backend() as unknown as { dataIdMap: { get(id: object): { memoryOffset: number } } }).dataIdMap.get(t.dataId).memoryOffset;
      const before = tf.memory().numTensors;
      const info = gemmOnHeap(tf.backend(), { ptr: ptr(a), transposed: false }, { ptr: ptr(b), transposed: false }, 20, 40, 24);
      expect(info).not.toBeNull();
      const c = tf.engine().makeTensorFromTensorInfo(info!);
      expect(tf.memory().numTensors).toBe(before + 1);
      expect(maxAbsDiff(c, tf.matMul(a, b))).toBe(0);
      const bt = tf.transpose(b);                                    // [24, 40]: used transposed
      const at = tf.transpose(a);                                    // [40, 20]
      const c2 = tf.engine().makeTensorFromTensorInfo(gemmOnHeap(tf.backend(), { ptr: ptr(at), transposed: true }, { ptr: ptr(bt), transposed: true }, 20, 40, 24)!);
      expect(maxAbsDiff(c2, tf.matMul(a, b))).toBe(0);
      expect(gemmOnHeap(tf.backend(), { ptr: ptr(a), transposed: false }, { ptr: ptr(b), transposed: false }, 22, 40, 24)).toBeNull();
    });
  });

  it('linear through gemm (widths multiple of 8) equals the reference in value and gradients', () => {
    tf.tidy(() => {
      const x = tf.randomNormal([20, 16], 0, 1, 'float32', 1) as tf.Tensor2D;
      const w = tf.randomNormal([24, 16], 0, 1, 'float32', 2) as tf.Tensor2D;
      const cot = tf.randomNormal([20, 24], 0, 1, 'float32', 3);
      expect(maxAbsDiff(linear(x, w), linearReference(x, w))).toBeLessThan(1e-4);
      const gf = tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(linear(a as tf.Tensor2D, b as tf.Tensor2D), cot)))([x, w]);
      const gr = tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(linearReference(a as tf.Tensor2D, b as tf.Tensor2D), cot)))([x, w]);
      expect(maxAbsDiff(gf[0]!, gr[0]!)).toBeLessThan(1e-4);
      expect(maxAbsDiff(gf[1]!, gr[1]!)).toBeLessThan(1e-4);
    });
  });
});

/** Value and gradients of attentionFast vs the reference (bias from the segments) on the rows the mask keeps. */
function compareAttention(B: number, T: number, H: number, KV: number, hd: number, segments: number[][], rope: boolean): void {
  tf.tidy(() => {
    const shape = { batch: B, queryLength: T, keyLength: T, heads: H, kvHeads: KV, headDim: hd };
    const rowMask = tf.tensor2d(segments.flat().map((m) => [m ? 1 : 0]), [B * T, 1]);
    const bias = segmentBias(segments, T);
    const positions = segments.map((seg) => seg.map((_, t) => t));
    const table = ropeTables(T, hd, 10000);
    const rotary = rope ? { ...table, positions } : undefined;
    // reference RoPE on [B*T*heads, hd] rows (x cos + rotate_half(x) sin), as the kernel folds it in
    const rot = (x: tf.Tensor, heads: number) => {
      if (!rope) return x;
      const rows = positions.flat().flatMap((p) => Array.from({ length: heads }, () => p));
      const c = tf.tensor2d(rows.flatMap((p) => [...table.cos.subarray(p * hd, p * hd + hd)]), [rows.length, hd]);
      const s = tf.tensor2d(rows.flatMap((p) => [...table.sin.subarray(p * hd, p * hd + hd)]), [rows.length, hd]);
      const x2 = tf.reshape(x, [rows.length, hd]);
      const half = hd / 2;
      const rh = tf.concat([tf.neg(tf.slice(x2, [0, half], [-1, half])), tf.slice(x2, [0, 0], [-1, half])], 1);
      return tf.reshape(tf.add(tf.mul(x2, c), tf.mul(rh, s)), [B * T, heads * hd]);
    };
    const fast = (q: tf.Tensor, k: tf.Tensor, v: tf.Tensor) =>
      tf.mul(attentionFast(q as tf.Tensor2D, k as tf.Tensor2D, v as tf.Tensor2D, segments, shape, rotary), rowMask);
    const ref = (q: tf.Tensor, k: tf.Tensor, v: tf.Tensor) =>
      tf.mul(attentionReference(rot(q, H) as tf.Tensor2D, rot(k, KV) as tf.Tensor2D, v as tf.Tensor2D, bias, shape), rowMask);
    const inputs = [tf.randomNormal([B * T, H * hd], 0, 1, 'float32', 11), tf.randomNormal([B * T, KV * hd], 0, 1, 'float32', 12),
      tf.randomNormal([B * T, KV * hd], 0, 1, 'float32', 13)];
    expect(maxAbsDiff(fast(inputs[0]!, inputs[1]!, inputs[2]!), ref(inputs[0]!, inputs[1]!, inputs[2]!))).toBeLessThan(1e-4);
    const cot = tf.randomNormal([B * T, H * hd], 0, 1, 'float32', 7);
    const gf = tf.grads((q: tf.Tensor, k: tf.Tensor, v: tf.Tensor) => tf.sum(tf.mul(fast(q, k, v), cot)))(inputs);
    const gr = tf.grads((q: tf.Tensor, k: tf.Tensor, v: tf.Tensor) => tf.sum(tf.mul(ref(q, k, v), cot)))(inputs);
    gf.forEach((d, i) => {
      const scale = Math.max(1, tf.max(tf.abs(gr[i]!)).dataSync()[0]!);
      expect(maxAbsDiff(d, gr[i]!) / scale).toBeLessThan(1e-4);
      expect(tf.max(tf.abs(gr[i]!)).dataSync()[0]!).toBeGreaterThan(0);
    });
  });
}

describe('attentionFast through gemm-wasm (T and head size multiples of 8)', () => {
  const T = 16;
  const full = Array.from({ length: T }, () => 1);
  it('one segment (causal hints), with RoPE', () => compareAttention(2, T, 2, 2, 8, [full, full], true));
  it('packed segments (causal hints with a segment mask)', () => {
    const packed = Array.from({ length: T }, (_, t) => (t < 6 ? 1 : t < 13 ? 2 : 3));
    compareAttention(2, T, 2, 2, 8, [packed, full], false);
  });
  it('left padding (causal hints; padded rows see no key)', () => {
    const padded = Array.from({ length: T }, (_, t) => (t < 5 ? 0 : 1));
    compareAttention(2, T, 2, 2, 8, [padded, full], true);
  });
  it('trailing padding, as the trainer pads rows (causal hints, the one-segment softmax)', () => {
    const padded = Array.from({ length: T }, (_, t) => (t < 11 ? 1 : 0));
    const short = Array.from({ length: T }, (_, t) => (t < 3 ? 1 : 0));
    compareAttention(3, T, 2, 2, 8, [padded, full, short], true);
  });
  it('packed segments and trailing padding (causal hints with a segment mask)', () => {
    const packed = Array.from({ length: T }, (_, t) => (t < 4 ? 1 : t < 12 ? 2 : 0));
    compareAttention(2, T, 2, 2, 8, [packed, full], true);
  });
  it('GQA, two query heads per K/V head (full products)', () => compareAttention(2, T, 4, 2, 8, [full, full], true));
});
