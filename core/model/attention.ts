// Fast causal attention for the wasm / cpu backends, with a hand-written backward pass.
//
// Why: TF.js-wasm runs a batched matmul ([B, H, T, hd] x [B, H, hd, T]) at 1-2 GFLOP/s, but a
// plain 2-D matmul at ~20-30 GFLOP/s, and tf.slice costs ~1 ms. So the projections are read to
// JavaScript once per call, rearranged once into one 2-D tile per (sequence, K/V head) (RoPE,
// the 1/sqrt(hd) scale and the transposes are done during that copy), and every product is a
// plain 2-D matmul:
//   forward   S = (scale Q) K^T,  P = softmax(S + bias),  O = P V
//   backward  dP = dO V^T,  dS = P * (dP - D) with D = rowsum(dO * O) (computed in JS),
//             dQ = scale dS K,  dK^T = (scale Q)^T dS,  dV^T = dO^T P
// GQA: the `rep` query heads that share a K/V head are stacked along the rows of one tile.
// Per tile that is 4 kernels forward and 4 backward (dS = P * (dP - D) and the transposes dS^T,
// P^T are one JS pass, softmaxGradTile); results are read straight from the wasm heap (no copy)
// and scattered into the flat [N, heads*hd] layout with the inverse RoPE. On wasm the JS buffers
// that only feed new tensors are reused across calls (scratch).
// The probabilities P are kept for the backward pass when they fit (MAX_SAVED_PROB_BYTES),
// otherwise recomputed there. Identical masks share one bias tile.
// On wasm, when the context and head size are multiples of 8, attentionGemm (below) runs the same tiles
// through gemm-wasm.ts instead: no TF.js tensor per tile, transposes as strides, the causal half skipped.
import * as tf from '@tensorflow/tfjs';
import { custom, linearGemm, readView, transposeInto, type AttentionShape } from './kernels.js';
import { expShiftLastC, gemm, gemmInfo, gemmMemoryView } from './gemm-wasm.js';

const MAX_SAVED_PROB_BYTES = 512 * 1024 * 1024;
const MASKED = -1e9;

interface Layout { B: number; T: number; H: number; KV: number; hd: number; rep: number; rows: number; scale: number }

export { readView };

/** delta[r] = sum over d of a[at + r * hd + d] * b[at + r * hd + d] for r < rows: the attention backward's D = rowsum(dO * O). */
function rowDots(a: ArrayLike<number>, b: ArrayLike<number>, at: number, rows: number, hd: number, delta: Float32Array): void {
  for (let r = 0; r < rows; r++) {
    let acc = 0;
    const base = at + r * hd;
    for (let d = 0; d < hd; d++) acc += a[base + d]! * b[base + d]!;
    delta[r] = acc;
  }
}

// wasm copies a tensor's values into its heap when the tensor is created, so there the buffers
// that only feed a new tensor (or are read within one call) are reused across calls instead of
// allocated per call (~100 MB of garbage per reference-shape step otherwise). Other backends may
// keep the array itself: they get a fresh one.
const scratchBuffers = new Map<string, Float32Array>();
function scratch(slot: string, n: number): Float32Array {
  if (tf.getBackend() !== 'wasm') return new Float32Array(n);
  let buf = scratchBuffers.get(slot);
  if (!buf || buf.length < n) { buf = new Float32Array(n); scratchBuffers.set(slot, buf); }
  return buf.subarray(0, n);
}

/**
 * Additive bias tiles [rep*T, T] (query i sees key j iff j <= i, seg[j] = seg[i] and seg[j] != 0;
 * 0 = padding; a 0/1 mask is one segment), one tensor per distinct mask row. Returns the unique
 * tiles and, per sequence, the index of its tile.
 */
function biasTiles(segments: number[][], L: Layout): { tiles: tf.Tensor2D[]; index: number[] } {
  const { T, rep } = L;
  const seen = new Map<string, number>();
  const tiles: tf.Tensor2D[] = [];
  const index = segments.map((seg) => {
    const key = seg.join(',');
    const known = seen.get(key);
    if (known !== undefined) return known;
    const out = new Float32Array(rep * T * T);
    for (let i = 0; i < T; i++) {
      const base = i * T;
      const si = seg[i];
      for (let j = 0; j < T; j++) out[base + j] = j <= i && seg[j] !== 0 && seg[j] === si ? 0 : MASKED;
    }
    for (let r = 1; r < rep; r++) out.copyWithin(r * T * T, 0, T * T);
    tiles.push(tf.tensor2d(out, [rep * T, T]));
    seen.set(key, tiles.length - 1);
    return tiles.length - 1;
  });
  return { tiles, index };
}

/** Rotary embedding applied inside the kernel (saves the separate RoPE ops of the trunk). */
export interface Rotary {
  cos: Float32Array;            // [maxPos, hd] HF layout
  sin: Float32Array;            // [maxPos, hd]
  positions: number[][];        // [B, T] position id of every token
}

/**
 * Rows [B*T, heads*hd] -> tiles: for each (b, group g of `group` consecutive heads) a block of
 * rows = group*T rows (row r*T + t = head g*group + r at token t) as [rows, hd], or [hd, rows]
 * when `transposed`; RoPE (x cos + rotate_half(x) sin) when `rot` is given; times `scale`.
 */
function gatherTiles(
  x: Float32Array, heads: number, group: number, L: Layout, rot: Rotary | undefined, scale: number, transposed: boolean, into?: Float32Array,
): Float32Array {
  const { B, T, hd } = L;
  const G = heads / group;
  const rows = group * T;
  const half = hd >> 1;
  const width = heads * hd;
  const out = into ?? new Float32Array(B * G * rows * hd);
  const cos = rot?.cos;
  const sin = rot?.sin;
  for (let b = 0; b < B; b++) {
    const pos = rot?.positions[b];
    for (let t = 0; t < T; t++) {
      const p = pos ? pos[t]! * hd : 0;
      for (let h = 0; h < heads; h++) {
        const g = (h / group) | 0;
        const row = (h - g * group) * T + t;
        const base = (b * G + g) * rows * hd;
        const o = (b * T + t) * width + h * hd;
        if (cos && sin) {
          const pc = cos;
          const ps = sin;
          for (let d = 0; d < half; d++) {
            const a = x[o + d]!;
            const c = x[o + d + half]!;
            const va = (a * pc[p + d]! - c * ps[p + d]!) * scale;
            const vc = (c * pc[p + d + half]! + a * ps[p + d + half]!) * scale;
            if (transposed) { out[base + d * rows + row] = va; out[base + (d + half) * rows + row] = vc; }
            else { out[base + row * hd + d] = va; out[base + row * hd + d + half] = vc; }
          }
        } else if (transposed) {
          for (let d = 0; d < hd; d++) out[base + d * rows + row] = x[o + d]! * scale;
        } else {
          const ob = base + row * hd;
          for (let d = 0; d < hd; d++) out[ob + d] = x[o + d]! * scale;
        }
      }
    }
  }
  return out;
}

/**
 * The inverse of gatherTiles for one tile: values of tile (b, g) ([rows, hd], or [hd, rows] when
 * `transposed`) into dst [B*T, heads*hd], through the transpose of RoPE when `rot` is given
 * (dy cos + rotate_half^T(dy sin): the gradient of the rotation), times `scale`.
 */
function scatterTile(
  src: Float32Array,
  transposed: boolean,
  dst: Float32Array,
  b: number,
  g: number,
  heads: number,
  group: number,
  L: Layout,
  rot: Rotary | undefined,
  scale: number,
): void {
  const { T, hd } = L;
  const rows = group * T;
  const half = hd >> 1;
  const width = heads * hd;
  const cos = rot?.cos;
  const sin = rot?.sin;
  const pos = rot?.positions[b];
  for (let r = 0; r < group; r++) {
    const h = g * group + r;
    for (let t = 0; t < T; t++) {
      const row = r * T + t;
      const o = (b * T + t) * width + h * hd;
      // separate loops per case (no per-element branches)
      if (transposed) {
        if (cos && sin) {
          const p = pos![t]! * hd;
          for (let d = 0; d < half; d++) {
            const gd = src[d * rows + row]!;
            const gh = src[(d + half) * rows + row]!;
            dst[o + d] = (gd * cos[p + d]! + gh * sin[p + d + half]!) * scale;
            dst[o + d + half] = (gh * cos[p + d + half]! - gd * sin[p + d]!) * scale;
          }
        } else {
          for (let d = 0; d < hd; d++) dst[o + d] = src[d * rows + row]! * scale;
        }
      } else {
        const sr = row * hd;
        if (cos && sin) {
          const p = pos![t]! * hd;
          for (let d = 0; d < half; d++) {
            const gd = src[sr + d]!;
            const gh = src[sr + d + half]!;
            dst[o + d] = (gd * cos[p + d]! + gh * sin[p + d + half]!) * scale;
            dst[o + d + half] = (gh * cos[p + d + half]! - gd * sin[p + d]!) * scale;
          }
        } else if (scale === 1) {
          for (let d = 0; d < hd; d++) dst[o + d] = src[sr + d]!;
        } else {
          for (let d = 0; d < hd; d++) dst[o + d] = src[sr + d]! * scale;
        }
      }
    }
  }
}

/** Transpose every [r, c] tile of a tile-major array into [c, r]. */
function transposeTiles(x: Float32Array, r: number, c: number, out: Float32Array = new Float32Array(x.length)): Float32Array {
  const size = r * c;
  for (let base = 0; base < x.length; base += size) transposeInto(x, r, c, out, base, base);
  return out;
}

/** Buffers of softmaxGradTile: reused on wasm (tensor creation copies them), fresh elsewhere. */
function softmaxGradBuffers(n: number): { dS: Float32Array; dSt: Float32Array; pT: Float32Array } {
  return { dS: scratch('dS', n), dSt: scratch('dSt', n), pT: scratch('pT', n) };
}

/**
 * The softmax backward of one tile in one pass: dS = P * (dP - D) (D [rows] per row) into dS
 * [rows, T], and the transposes dS^T and P^T [T, rows], eight rows at a time (as transposeInto).
 */
function softmaxGradTile(
  p: Float32Array, dP: Float32Array, delta: Float32Array, rows: number, T: number, dS: Float32Array, dSt: Float32Array, pT: Float32Array,
): void {
  let r = 0;
  for (; r + 8 <= rows; r += 8) {
    const a0 = r * T; const a1 = a0 + T; const a2 = a1 + T; const a3 = a2 + T;
    const a4 = a3 + T; const a5 = a4 + T; const a6 = a5 + T; const a7 = a6 + T;
    const d0 = delta[r]!; const d1 = delta[r + 1]!; const d2 = delta[r + 2]!; const d3 = delta[r + 3]!;
    const d4 = delta[r + 4]!; const d5 = delta[r + 5]!; const d6 = delta[r + 6]!; const d7 = delta[r + 7]!;
    for (let j = 0; j < T; j++) {
      const o = j * rows + r;
      const p0 = p[a0 + j]!; const p1 = p[a1 + j]!; const p2 = p[a2 + j]!; const p3 = p[a3 + j]!;
      const p4 = p[a4 + j]!; const p5 = p[a5 + j]!; const p6 = p[a6 + j]!; const p7 = p[a7 + j]!;
      const s0 = p0 * (dP[a0 + j]! - d0); const s1 = p1 * (dP[a1 + j]! - d1); const s2 = p2 * (dP[a2 + j]! - d2); const s3 = p3 * (dP[a3 + j]! - d3);
      const s4 = p4 * (dP[a4 + j]! - d4); const s5 = p5 * (dP[a5 + j]! - d5); const s6 = p6 * (dP[a6 + j]! - d6); const s7 = p7 * (dP[a7 + j]! - d7);
      dS[a0 + j] = s0; dS[a1 + j] = s1; dS[a2 + j] = s2; dS[a3 + j] = s3; dS[a4 + j] = s4; dS[a5 + j] = s5; dS[a6 + j] = s6; dS[a7 + j] = s7;
      dSt[o] = s0; dSt[o + 1] = s1; dSt[o + 2] = s2; dSt[o + 3] = s3; dSt[o + 4] = s4; dSt[o + 5] = s5; dSt[o + 6] = s6; dSt[o + 7] = s7;
      pT[o] = p0; pT[o + 1] = p1; pT[o + 2] = p2; pT[o + 3] = p3; pT[o + 4] = p4; pT[o + 5] = p5; pT[o + 6] = p6; pT[o + 7] = p7;
    }
  }
  for (; r < rows; r++) {
    const a = r * T;
    const d = delta[r]!;
    for (let j = 0; j < T; j++) {
      const pv = p[a + j]!;
      const sv = pv * (dP[a + j]! - d);
      dS[a + j] = sv;
      dSt[j * rows + r] = sv;
      pT[j * rows + r] = pv;
    }
  }
}

/** Calls of the training attention by path (tests read it: which path a batch took). */
export const attentionCalls = { gemm: 0, tiles: 0 };

/**
 * The multiple a training batch's length is padded to so that attentionFast takes the gemm path: 8 on wasm with gemm-wasm.ts
 * available and a head size that is a multiple of 8, else 1 (no padding). The gemm path is ~2x faster per tile (it also
 * skips the causal upper half); without the padding a chunk whose longest row is not a multiple of 8 ran on TF.js's own
 * matmul (a third of the wasm SFT's attention time in the main job; docs/results/mainjob-v3, session 10).
 */
export function attentionLengthMultiple(headDim: number): number {
  return headDim % 8 === 0 && linearGemm.enabled && tf.getBackend() === 'wasm' && gemmInfo().available ? 8 : 1;
}

/**
 * Causal grouped-query attention. q [B*T, H*hd], k/v [B*T, KV*hd], segments / mask [B, T] ->
 * [B*T, H*hd]. q and k are taken as already rotated, or rotated here when `rotary` is given.
 * Differentiable in q, k, v.
 */
export function attentionFast(q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D, mask: number[][], s: AttentionShape, rotary?: Rotary): tf.Tensor2D {
  if (s.queryLength !== s.keyLength) throw new Error('attentionFast: query and key lengths must match (training / scoring path)');
  const rep = s.heads / s.kvHeads;
  const L: Layout = { B: s.batch, T: s.queryLength, H: s.heads, KV: s.kvHeads, hd: s.headDim, rep, rows: rep * s.queryLength, scale: 1 / Math.sqrt(s.headDim) };
  const { B, T, H, KV, hd, rows } = L;
  const saveProbs = B * H * T * T * 4 <= MAX_SAVED_PROB_BYTES;
  if (saveProbs && attentionLengthMultiple(hd) === 8 && T % 8 === 0) {
    attentionCalls.gemm++;
    return attentionGemm(q, k, v, mask, L, rotary);
  }
  attentionCalls.tiles++;
  const qTile = rows * hd;
  const kTile = T * hd;

  const kernel = custom((qIn: tf.Tensor, kIn: tf.Tensor, vIn: tf.Tensor, save: tf.GradSaveFunc) => {
    // Tile-major copies: scaled rotated queries [rows, hd], rotated keys transposed [hd, T], values [T, hd].
    const qs = gatherTiles(readView(qIn), H, rep, L, rotary, L.scale, false);
    const kt = gatherTiles(readView(kIn), KV, 1, L, rotary, 1, true);
    const vv = gatherTiles(readView(vIn), KV, 1, L, undefined, 1, false);
    const out = scratch('out', B * T * H * hd);                  // all written by the scatters below
    const outTiles = new Float32Array(B * KV * qTile);          // O per tile (for D = rowsum(dO * O))
    const probs: tf.Tensor[] = [];
    const bias = biasTiles(mask, L);
    for (let b = 0; b < B; b++) {
      for (let g = 0; g < KV; g++) {
        const i = b * KV + g;
        const p = tf.tidy(() => {
          const sc = tf.matMul(
            tf.tensor2d(qs.subarray(i * qTile, (i + 1) * qTile), [rows, hd]),
            tf.tensor2d(kt.subarray(i * kTile, (i + 1) * kTile), [hd, T]),
          ); // [rows, T]
          return tf.softmax(tf.add(sc, bias.tiles[bias.index[b]!]!)) as tf.Tensor2D;
        });
        const vt = tf.tensor2d(vv.subarray(i * kTile, (i + 1) * kTile), [T, hd]);
        const o = tf.matMul(p, vt);                                               // [rows, hd]
        const ov = readView(o);
        outTiles.set(ov, i * qTile);
        scatterTile(ov, false, out, b, g, H, rep, L, undefined, 1);
        tf.dispose([o, vt]);
        if (saveProbs) probs.push(p); else p.dispose();
      }
    }
    save(saveProbs ? [...probs, ...bias.tiles] : bias.tiles);
    return {
      value: tf.tensor2d(out, [B * T, H * hd]),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const dO = gatherTiles(readView(dy), H, rep, L, undefined, 1, false, scratch('dO', B * KV * qTile)); // [rows, hd] tiles
        const vT = transposeTiles(vv, T, hd, scratch('vT', vv.length));         // [hd, T]
        const kk = transposeTiles(kt, hd, T, scratch('kk', kt.length));         // [T, hd]
        // every element of dq / dk / dv is written by the scatters below
        const dq = scratch('dq', B * T * H * hd);
        const dk = scratch('dk', B * T * KV * hd);
        const dv = scratch('dv', B * T * KV * hd);
        const savedBias = saved.slice(saveProbs ? B * KV : 0);
        const delta = new Float32Array(rows);
        for (let b = 0; b < B; b++) {
          for (let g = 0; g < KV; g++) {
            const i = b * KV + g;
            const qo = i * qTile;
            rowDots(dO, outTiles, qo, rows, hd, delta);                         // D = rowsum(dO * O) = rowsum(dP * P)
            // dK = dS^T (scale Q) and dV = P^T dO, with dS^T and P^T transposed in JS: a matmul
            // whose right operand is a fresh [rows, T] matrix (dK^T = (scale Q)^T dS) spends ~3x
            // longer packing that operand than multiplying, and tf.transpose is slower than JS.
            const [dQs, dK, dV] = tf.tidy(() => {
              const qsTile = tf.tensor2d(qs.subarray(qo, qo + qTile), [rows, hd]);
              const p = saveProbs
                ? (saved[i] as tf.Tensor2D)
                : (tf.softmax(
                    tf.add(tf.matMul(qsTile, tf.tensor2d(kt.subarray(i * kTile, (i + 1) * kTile), [hd, T])), savedBias[bias.index[b]!]!),
                  ) as tf.Tensor2D);
              const dOTile = tf.tensor2d(dO.subarray(qo, qo + qTile), [rows, hd]);
              const dP = tf.matMul(dOTile, tf.tensor2d(vT.subarray(i * kTile, (i + 1) * kTile), [hd, T])); // [rows, T]
              // dS = P * (dP - D), dS^T and P^T in one pass over P and dP in JS (no Sub/Mul kernels)
              const bufs = softmaxGradBuffers(rows * T);
              softmaxGradTile(readView(p), readView(dP), delta, rows, T, bufs.dS, bufs.dSt, bufs.pT);
              const dS = tf.tensor2d(bufs.dS, [rows, T]);
              const dQ = tf.matMul(dS, tf.tensor2d(kk.subarray(i * kTile, (i + 1) * kTile), [T, hd])); // [rows, hd] = d(scaled q)
              const dSt = tf.tensor2d(bufs.dSt, [T, rows]);
              const pT = tf.tensor2d(bufs.pT, [T, rows]);
              return [dQ, tf.matMul(dSt, qsTile), tf.matMul(pT, dOTile)];                     // [T, hd] = dK, dV
            });
            scatterTile(readView(dQs!), false, dq, b, g, H, rep, L, rotary, L.scale);
            scatterTile(readView(dK!), false, dk, b, g, KV, 1, L, rotary, 1);
            scatterTile(readView(dV!), false, dv, b, g, KV, 1, L, undefined, 1);
            tf.dispose([dQs!, dK!, dV!]);
          }
        }
        return [tf.tensor2d(dq, [B * T, H * hd]), tf.tensor2d(dk, [B * T, KV * hd]), tf.tensor2d(dv, [B * T, KV * hd])];
      },
    };
  });
  return kernel(q, k, v) as tf.Tensor2D;
}

/**
 * Softmax of each row of one tile's scores s [rows, T] (row r = query position r % T) over the keys
 * its mask allows (j <= t, seg[j] = seg[t] != 0), into p at `at`; 0 elsewhere (entries of s there
 * are not read: with the 'lowerC' hint they were never computed). A query with no visible key (a
 * padding position) gets 1/T on every key, as the additive -1e9 bias gave before. With `plain`
 * (every key up to t allowed), s must be the view of the last gemm call (the exponentials are taken
 * in place there, in wasm SIMD).
 */
function softmaxRows(s: Float32Array, p: Float32Array, at: number, seg: number[], rows: number, T: number, plain: boolean): void {
  for (let r = 0; r < rows; r++) {
    const t = r % T;
    const si = seg[t]!;
    const base = r * T;
    const o = at + base;
    // a padding query sees no key: P = 0 (the reference's -1e9 bias gives a uniform row instead; the row's output is read by
    // nothing, and its gradient is zero either way), which keeps P lower-triangular for the causal hints
    if (si === 0) { p.fill(0, o, o + T); continue; }
    let max = -Infinity;
    if (plain) {
      for (let j = 0; j <= t; j++) { const x = s[base + j]!; if (x > max) max = x; }
      const inv = 1 / expShiftLastC(base, t + 1, max);                       // s[base + j] = exp(s - max), in wasm SIMD
      for (let j = 0; j <= t; j++) p[o + j] = s[base + j]! * inv;
      p.fill(0, o + t + 1, o + T);
    } else {
      for (let j = 0; j <= t; j++) if (seg[j] === si) { const x = s[base + j]!; if (x > max) max = x; }
      let sum = 0;
      for (let j = 0; j < T; j++) {
        const e = j <= t && seg[j] === si ? Math.exp(s[base + j]! - max) : 0;
        p[o + j] = e; sum += e;
      }
      const inv = 1 / sum;
      for (let j = 0; j <= t; j++) p[o + j]! *= inv;
    }
  }
}

/**
 * dS = P * (dP - D) for one tile (D [rows] per row), into dS [rows, T] (may be dP itself); with `causal`,
 * only j <= t is computed (dP holds garbage above the diagonal there) and 0 is written above it.
 */
function softmaxGradRows(p: Float32Array, at: number, dP: Float32Array, delta: Float32Array, dS: Float32Array, rows: number, T: number, causal: boolean): void {
  for (let r = 0; r < rows; r++) {
    const t = causal ? r % T : T - 1;
    const base = r * T;
    const o = at + base;
    const d = delta[r]!;
    for (let j = 0; j <= t; j++) dS[base + j] = p[o + j]! * (dP[base + j]! - d);
    if (t + 1 < T) dS.fill(0, base + t + 1, base + T);
  }
}

/**
 * attentionFast on wasm with gemm-wasm.ts (relaxed-SIMD matrix products, no TF.js tensor per tile):
 * the same tiles and formulas, with P kept in one JS array; the transposes of the backward pass are
 * strided reads inside the product. Where one row is one query position (no GQA stacking), the
 * products skip the causally masked half: S and dP only below the diagonal, P V and dS K only over
 * k <= t, dS^T Q and P^T dO only over t >= k (padding queries get P = 0, so P stays lower-triangular).
 */
function attentionGemm(q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D, mask: number[][], L: Layout, rotary: Rotary | undefined): tf.Tensor2D {
  const { B, T, H, KV, hd, rows, rep } = L;
  const qTile = rows * hd;
  const kTile = T * hd;
  const pTile = rows * T;
  // Triangular hints are valid wherever P is lower-triangular: every real query sees only keys j <= t, and a padding query
  // none (softmaxRows gives it P = 0). Only GQA stacking (rep > 1: a tile row is not one position) breaks that.
  const causal = mask.map(() => rep === 1);
  const plain = mask.map(oneSegmentThenPadding);                              // keys j <= t of a real query t: one segment

  const kernel = custom((qIn: tf.Tensor, kIn: tf.Tensor, vIn: tf.Tensor, save: tf.GradSaveFunc) => {
    // kept for the backward pass, from a pool (every element is written here; back to the pool after the backward pass)
    const qs = gatherTiles(readView(qIn), H, rep, L, rotary, L.scale, false, pooled(B * KV * qTile)); // [rows, hd] scaled rotated queries
    const kt = gatherTiles(readView(kIn), KV, 1, L, rotary, 1, true, pooled(B * KV * kTile));         // [hd, T] rotated keys, transposed
    const vv = gatherTiles(readView(vIn), KV, 1, L, undefined, 1, false, pooled(B * KV * kTile));     // [T, hd]
    const probs = pooled(B * KV * pTile);                                        // P per tile
    const outTiles = pooled(B * KV * qTile);                                     // O per tile (for D = rowsum(dO * O))
    let released = false;
    const out = scratch('out', B * T * H * hd);
    for (let b = 0; b < B; b++) {
      for (let g = 0; g < KV; g++) {
        const i = b * KV + g;
        const sc = gemm({ data: qs, offset: i * qTile }, { data: kt, offset: i * kTile }, rows, hd, T, null, causal[b] ? 'lowerC' : 'none');
        softmaxRows(sc, probs, i * pTile, mask[b]!, rows, T, plain[b]! && causal[b]!);
        const o = gemm({ data: probs, offset: i * pTile }, { data: vv, offset: i * kTile }, rows, T, hd, null, causal[b] ? 'lowerA' : 'none');
        outTiles.set(o, i * qTile);
        scatterTile(o, false, out, b, g, H, rep, L, undefined, 1);
      }
    }
    save([]);
    return {
      value: tf.tensor2d(out, [B * T, H * hd]),
      gradFunc: (dy: tf.Tensor) => {
        if (released) throw new Error('attentionFast: a second backward pass through one forward call (its buffers are reused)');
        const dO = gatherTiles(readView(dy), H, rep, L, undefined, 1, false, scratch('dO', B * KV * qTile)); // [rows, hd] tiles
        const dq = scratch('dq', B * T * H * hd);                                 // every element written by the scatters
        const dk = scratch('dk', B * T * KV * hd);
        const dv = scratch('dv', B * T * KV * hd);
        const delta = new Float32Array(rows);
        for (let b = 0; b < B; b++) {
          const tri = causal[b]!;
          for (let g = 0; g < KV; g++) {
            const i = b * KV + g;
            const qo = i * qTile;
            rowDots(dO, outTiles, qo, rows, hd, delta);                         // D = rowsum(dO * O) = rowsum(dP * P)
            // dP = dO V^T (V stored [T, hd]: the transposed operand)
            const dP = gemm({ data: dO, offset: qo }, { data: vv, offset: i * kTile, transposed: true }, rows, hd, T, null, tri ? 'lowerC' : 'none');
            const dS = dP;                                                        // in place: read by the next two products where it is
            softmaxGradRows(probs, i * pTile, dP, delta, dS, rows, T, tri);
            // d(scaled q) = dS K (K stored transposed [hd, T])
            const dSAt = dS.byteOffset;
            const dQ = gemm({ data: dS }, { data: kt, offset: i * kTile, transposed: true }, rows, T, hd, null, tri ? 'lowerA' : 'none');
            scatterTile(dQ, false, dq, b, g, H, rep, L, rotary, L.scale);
            const dSt = gemmMemoryView(dSAt, pTile);                               // (a grown memory detached the first view)
            const dK = gemm({ data: dSt, transposed: true }, { data: qs, offset: qo }, T, rows, hd, null, tri ? 'upperA' : 'none'); // dS^T (scale Q)
            scatterTile(dK, false, dk, b, g, KV, 1, L, rotary, 1);
            const dV = gemm({ data: probs, offset: i * pTile, transposed: true }, { data: dO, offset: qo }, T, rows, hd, null, tri ? 'upperA' : 'none');
            // (dV = P^T dO)
            scatterTile(dV, false, dv, b, g, KV, 1, L, undefined, 1);
          }
        }
        released = true;
        release(qs, kt, vv, probs, outTiles);
        return [tf.tensor2d(dq, [B * T, H * hd]), tf.tensor2d(dk, [B * T, KV * hd]), tf.tensor2d(dv, [B * T, KV * hd])];
      },
    };
  });
  return kernel(q, k, v) as tf.Tensor2D;
}

/** One non-zero segment id, then (optionally) padding (0) to the end: [1, 1, 1, 0, 0]. */
function oneSegmentThenPadding(seg: number[]): boolean {
  const first = seg[0]!;
  if (first === 0) return seg.every((x) => x === 0);
  let t = 1;
  while (t < seg.length && seg[t] === first) t++;
  for (; t < seg.length; t++) if (seg[t] !== 0) return false;
  return true;
}

// Arrays attentionGemm keeps from a forward call to its backward pass (P alone is 16 MB a layer at the
// reference shape): reused across steps instead of allocated and collected (~6% of a step went to GC).
const pool = new Map<number, Float32Array[]>();
const POOL_PER_SIZE = 16;
function pooled(n: number): Float32Array { return pool.get(n)?.pop() ?? new Float32Array(n); }
function release(...arrays: Float32Array[]): void {
  for (const a of arrays) {
    let list = pool.get(a.length);
    if (!list) pool.set(a.length, (list = []));
    if (list.length < POOL_PER_SIZE) list.push(a);
  }
}
