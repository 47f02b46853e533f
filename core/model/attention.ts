// Fast causal attention for the wasm / cpu backends, with a hand-written backward pass.
//
// Why: TF.js-wasm runs a batched matmul ([B, H, T, hd] x [B, H, hd, T]) at 1-2 GFLOP/s, but a
// plain 2-D matmul at ~20-30 GFLOP/s, and tf.slice costs ~1 ms. So the projections are read to
// JavaScript once, cut into one 2-D tile per (sequence, K/V head) by plain array copies (with the
// transposes done during the copy), and every product is a plain 2-D matmul:
//   forward   S = (scale Q) K^T,  P = softmax(S + bias),  O = P V
//   backward  dP = dO V^T,  dS = P * (dP - rowsum(dP * P)),
//             dQ = scale dS K,  dK^T = (scale Q)^T dS,  dV^T = dO^T P
// GQA: the `rep` query heads that share a K/V head are stacked along the rows of one tile.
// The probabilities P are kept for the backward pass when they fit (MAX_SAVED_PROB_BYTES),
// otherwise recomputed there.
import * as tf from '@tensorflow/tfjs';
import { custom, type AttentionShape } from './kernels.js';

const MAX_SAVED_PROB_BYTES = 512 * 1024 * 1024;
const MASKED = -1e9;

interface Layout { B: number; T: number; H: number; KV: number; hd: number; rep: number; scale: number }

/**
 * Additive bias for sequence b, stacked `rep` times: [rep*T, T]. `segments` [B, T]: query i sees
 * key j iff j <= i, seg[j] = seg[i] and seg[j] != 0 (0 = padding; a 0/1 mask is one segment).
 */
function biasTile(segments: number[][], b: number, L: Layout): Float32Array {
  const { T, rep } = L;
  const seg = segments[b]!;
  const out = new Float32Array(rep * T * T);
  for (let i = 0; i < T; i++) {
    const base = i * T;
    const si = seg[i];
    for (let j = 0; j < T; j++) out[base + j] = j <= i && seg[j] !== 0 && seg[j] === si ? 0 : MASKED;
  }
  for (let r = 1; r < rep; r++) out.copyWithin(r * T * T, 0, T * T);
  return out;
}

/** Rows of the query heads of KV group g in batch b as [rep*T, hd] (transposed = false) or [hd, rep*T] (true), times `scale`. */
function headTile(x: Float32Array, b: number, g: number, L: Layout, transposed: boolean, scale: number): Float32Array {
  const { T, H, hd, rep } = L;
  const out = new Float32Array(rep * T * hd);
  const rows = rep * T;
  for (let r = 0; r < rep; r++) {
    const h = g * rep + r;
    for (let t = 0; t < T; t++) {
      const src = (b * T + t) * H * hd + h * hd;
      const row = r * T + t;
      if (transposed) for (let d = 0; d < hd; d++) out[d * rows + row] = x[src + d]! * scale;
      else for (let d = 0; d < hd; d++) out[row * hd + d] = x[src + d]! * scale;
    }
  }
  return out;
}

/** Scaled queries of (b, g). */
const queryTile = (q: Float32Array, b: number, g: number, L: Layout, transposed: boolean): Float32Array => headTile(q, b, g, L, transposed, L.scale);

/** Keys or values of (b, g) as [T, hd] (transposed = false) or [hd, T] (true). */
function kvTile(x: Float32Array, b: number, g: number, L: Layout, transposed: boolean): Float32Array {
  const { T, KV, hd } = L;
  const out = new Float32Array(T * hd);
  for (let t = 0; t < T; t++) {
    const src = (b * T + t) * KV * hd + g * hd;
    if (transposed) for (let d = 0; d < hd; d++) out[d * T + t] = x[src + d]!;
    else for (let d = 0; d < hd; d++) out[t * hd + d] = x[src + d]!;
  }
  return out;
}

/** Gradient wrt the output of (b, g) (unscaled). */
const outGradTile = (dy: Float32Array, b: number, g: number, L: Layout, transposed: boolean): Float32Array => headTile(dy, b, g, L, transposed, 1);

/** Rotary embedding applied inside the kernel (saves the separate RoPE ops of the trunk). */
export interface Rotary {
  cos: Float32Array;            // [maxPos, hd] HF layout
  sin: Float32Array;            // [maxPos, hd]
  positions: number[][];        // [B, T] position id of every token
}

/**
 * RoPE on every head of rows [B*T, heads*hd] in JS: inverse = false gives x cos + rotate_half(x) sin,
 * inverse = true applies the transpose (the gradient): dy cos + rotate_half^T(dy sin).
 */
export function rotateRows(x: Float32Array, heads: number, hd: number, r: Rotary, inverse: boolean): Float32Array {
  const out = new Float32Array(x.length);
  const half = hd >> 1;
  const { cos, sin, positions } = r;
  const T = positions[0]?.length ?? 0;
  const width = heads * hd;
  for (let b = 0; b < positions.length; b++) {
    const row = positions[b]!;
    for (let t = 0; t < T; t++) {
      const p = row[t]! * hd;
      const base = (b * T + t) * width;
      for (let h = 0; h < heads; h++) {
        const o = base + h * hd;
        for (let d = 0; d < half; d++) {
          const a = x[o + d]!;
          const c = x[o + d + half]!;
          if (inverse) {
            out[o + d] = a * cos[p + d]! + c * sin[p + d + half]!;
            out[o + d + half] = c * cos[p + d + half]! - a * sin[p + d]!;
          } else {
            out[o + d] = a * cos[p + d]! - c * sin[p + d]!;
            out[o + d + half] = c * cos[p + d + half]! + a * sin[p + d + half]!;
          }
        }
      }
    }
  }
  return out;
}

/**
 * Causal grouped-query attention. q [B*T, H*hd], k/v [B*T, KV*hd], segments / mask [B, T] ->
 * [B*T, H*hd]. q and k are taken as already rotated, or rotated here when `rotary` is given.
 * Differentiable in q, k, v.
 */
export function attentionFast(q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D, mask: number[][], s: AttentionShape, rotary?: Rotary): tf.Tensor2D {
  if (s.queryLength !== s.keyLength) throw new Error('attentionFast: query and key lengths must match (training / scoring path)');
  const L: Layout = { B: s.batch, T: s.queryLength, H: s.heads, KV: s.kvHeads, hd: s.headDim, rep: s.heads / s.kvHeads, scale: 1 / Math.sqrt(s.headDim) };
  const { B, T, H, KV, hd, rep } = L;
  const rows = rep * T;
  const saveProbs = B * H * T * T * 4 <= MAX_SAVED_PROB_BYTES;

  const kernel = custom((qIn: tf.Tensor, kIn: tf.Tensor, vIn: tf.Tensor, save: tf.GradSaveFunc) => {
    const qd = rotary ? rotateRows(qIn.dataSync() as Float32Array, H, hd, rotary, false) : qIn.dataSync() as Float32Array; // [B*T, H*hd]
    const kd = rotary ? rotateRows(kIn.dataSync() as Float32Array, KV, hd, rotary, false) : kIn.dataSync() as Float32Array; // [B*T, KV*hd]
    const vd = vIn.dataSync() as Float32Array;   // [B*T, KV*hd]
    const out = new Float32Array(B * T * H * hd);
    const probs: tf.Tensor[] = [];
    const biases: tf.Tensor2D[] = [];
    for (let b = 0; b < B; b++) {
      const bias = tf.tensor2d(biasTile(mask, b, L), [rows, T]);                  // [rep*T, T]
      biases.push(bias);
      for (let g = 0; g < KV; g++) {
        const p = tf.tidy(() => {
          const qs = tf.tensor2d(queryTile(qd, b, g, L, false), [rows, hd]);    // [rep*T, hd]
          const kt = tf.tensor2d(kvTile(kd, b, g, L, true), [hd, T]);           // [hd, T]
          return tf.softmax(tf.add(tf.matMul(qs, kt), bias)) as tf.Tensor2D;   // [rep*T, T]
        });
        const o = tf.tidy(() => tf.matMul(p, tf.tensor2d(kvTile(vd, b, g, L, false), [T, hd]))); // [rep*T, hd]
        const od = o.dataSync();
        o.dispose();
        for (let r = 0; r < rep; r++) {
          const h = g * rep + r;
          for (let t = 0; t < T; t++) out.set(od.subarray((r * T + t) * hd, (r * T + t + 1) * hd), (b * T + t) * H * hd + h * hd);
        }
        if (saveProbs) probs.push(p); else p.dispose();
      }
    }
    save(saveProbs ? [...probs, ...biases] : biases);
    return {
      value: tf.tensor2d(out, [B * T, H * hd]),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const dyd = dy.dataSync() as Float32Array;
        const dq = new Float32Array(B * T * H * hd);
        const dk = new Float32Array(B * T * KV * hd);
        const dv = new Float32Array(B * T * KV * hd);
        const savedBias = saved.slice(saveProbs ? B * KV : 0);
        for (let b = 0; b < B; b++) {
          for (let g = 0; g < KV; g++) {
            const [dQs, dKt, dVt] = tf.tidy(() => {
              const qsT = tf.tensor2d(queryTile(qd, b, g, L, true), [hd, rows]);  // [hd, rep*T]
              const p = saveProbs
                ? saved[b * KV + g] as tf.Tensor2D
                : tf.softmax(tf.add(tf.matMul(tf.tensor2d(queryTile(qd, b, g, L, false), [rows, hd]), tf.tensor2d(kvTile(kd, b, g, L, true), [hd, T])), savedBias[b]!)) as tf.Tensor2D;
              const dO = tf.tensor2d(outGradTile(dyd, b, g, L, false), [rows, hd]);  // [rep*T, hd]
              const dOt = tf.tensor2d(outGradTile(dyd, b, g, L, true), [hd, rows]);  // [hd, rep*T]
              const vt = tf.tensor2d(kvTile(vd, b, g, L, true), [hd, T]);             // [hd, T]
              const kk = tf.tensor2d(kvTile(kd, b, g, L, false), [T, hd]);            // [T, hd]
              const dP = tf.matMul(dO, vt);                                           // [rep*T, T]
              const dS = tf.mul(p, tf.sub(dP, tf.sum(tf.mul(dP, p), -1, true)));      // [rep*T, T]
              return [
                tf.matMul(dS, kk),                                                    // [rep*T, hd] = d(scaled q)
                tf.matMul(qsT, dS),                                                   // [hd, T] = dK^T
                tf.matMul(dOt, p),                                                    // [hd, T] = dV^T
              ];
            });
            const dQsd = dQs!.dataSync();
            const dKtd = dKt!.dataSync();
            const dVtd = dVt!.dataSync();
            tf.dispose([dQs!, dKt!, dVt!]);
            for (let r = 0; r < rep; r++) {
              const h = g * rep + r;
              for (let t = 0; t < T; t++) {
                const dst = (b * T + t) * H * hd + h * hd;
                const src = (r * T + t) * hd;
                for (let d = 0; d < hd; d++) dq[dst + d] = dQsd[src + d]! * L.scale;
              }
            }
            for (let t = 0; t < T; t++) {
              const dst = (b * T + t) * KV * hd + g * hd;
              for (let d = 0; d < hd; d++) { dk[dst + d] = dKtd[d * T + t]!; dv[dst + d] = dVtd[d * T + t]!; }
            }
          }
        }
        return [
          tf.tensor2d(rotary ? rotateRows(dq, H, hd, rotary, true) : dq, [B * T, H * hd]),
          tf.tensor2d(rotary ? rotateRows(dk, KV, hd, rotary, true) : dk, [B * T, KV * hd]),
          tf.tensor2d(dv, [B * T, KV * hd]),
        ];
      },
    };
  });
  return kernel(q, k, v) as tf.Tensor2D;
}
