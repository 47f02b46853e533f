// Compute kernels with hand-written gradients (tf.customGrad) that reduce to plain 2-D matmuls
// and few elementwise ops. Why: on the wasm backend a plain 2-D matmul runs ~20-30 GFLOP/s but
// a matmul with a transpose flag or a batch dimension runs 1-2 GFLOP/s, so the gradients TF.js
// derives by itself (which use transpose flags) are ~10x slower than these. Every kernel has a
// plain-ops reference (used by the tests to check the gradients against autograd).
import * as tf from '@tensorflow/tfjs';
import { gemm, gemmOnHeap, gemmSupported } from './gemm-wasm.js';

type GradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) => tf.Tensor[];
type CustomBody = (...args: any[]) => { value: tf.Tensor; gradFunc: GradFunc };
/** tf.customGrad with loose typing: inputs are tensors, the last argument is the save function. */
export function custom(f: CustomBody): (...inputs: tf.Tensor[]) => tf.Tensor {
  return tf.customGrad(f as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (...inputs: tf.Tensor[]) => tf.Tensor;
}

/**
 * The float32 values of t. On wasm: a view of the tensor's memory (no copy) that is valid only
 * until the next TF.js call (memory may grow); elsewhere dataSync(). Read it right away.
 */
export function readView(t: tf.Tensor): Float32Array {
  const backend = tf.backend() as unknown as { wasm?: { HEAPU8: Uint8Array }; dataIdMap?: { get(id: object): { memoryOffset?: number } | undefined } };
  if (backend.wasm && backend.dataIdMap && t.dtype === 'float32') {
    const d = backend.dataIdMap.get(t.dataId);
    if (d && typeof d.memoryOffset === 'number') return new Float32Array(backend.wasm.HEAPU8.buffer, d.memoryOffset, t.size);
  }
  return t.dataSync() as Float32Array;
}

let transposeScratch = new Float32Array(0);

/**
 * out [c, r] = x^T for x [r, c] (row-major), both at the given offsets, in JS. Eight source rows
 * at a time (eight sequential read streams, eight adjacent writes per column): 2x faster than
 * one row or 16/32-square blocks on a [256, 256] tile and 2-4x on [4096, 128] (wasm SIMD Node,
 * measured on this machine, 2026-11-29).
 */
export function transposeInto(x: Float32Array, r: number, c: number, out: Float32Array, xOffset = 0, outOffset = 0): Float32Array {
  let i = 0;
  for (; i + 8 <= r; i += 8) {
    const a0 = xOffset + i * c; const a1 = a0 + c; const a2 = a1 + c; const a3 = a2 + c;
    const a4 = a3 + c; const a5 = a4 + c; const a6 = a5 + c; const a7 = a6 + c;
    for (let j = 0; j < c; j++) {
      const o = outOffset + j * r + i;
      out[o] = x[a0 + j]!; out[o + 1] = x[a1 + j]!; out[o + 2] = x[a2 + j]!; out[o + 3] = x[a3 + j]!;
      out[o + 4] = x[a4 + j]!; out[o + 5] = x[a5 + j]!; out[o + 6] = x[a6 + j]!; out[o + 7] = x[a7 + j]!;
    }
  }
  for (; i < r; i++) {
    const a = xOffset + i * c;
    for (let j = 0; j < c; j++) out[outOffset + j * r + i] = x[a + j]!;
  }
  return out;
}

/**
 * x^T for a 2-D tensor. On wasm, large ones are transposed in JS (transposeInto, straight from
 * the wasm heap): several times faster than the wasm Transpose kernel.
 * Not differentiable (used inside custom gradients only).
 */
export function transpose2d(x: tf.Tensor2D): tf.Tensor2D {
  const [r, c] = x.shape;
  if (r * c < 65536 || tf.getBackend() !== 'wasm') return tf.transpose(x);
  if (transposeScratch.length < r * c) transposeScratch = new Float32Array(r * c); // wasm copies on tensor creation
  const out = transposeInto(readView(x), r, c, transposeScratch);
  return tf.tensor2d(out.subarray(0, r * c), [c, r]);
}

/**
 * Weight gradient dW [out, in] = dy^T x [N, out]^T [N, in], computed as a plain matmul of an
 * explicitly transposed operand. XNNPACK packs the right operand of every matmul (and caches
 * the packing per tensor), so `dy^T x` with x on the right is preferred: q/k/v (and gate/up)
 * share their input x, which is then packed once for the three products. Only when x is much
 * wider than dy (the LM head: [N, D] vs [N, V] with V << D) is `(x^T dy)^T` cheaper.
 * (Measured, reference shape: transposing the narrower operand instead, with x^T shared by
 * q/k/v and gate/up, was 2-7 % slower per step: packing a fresh right operand costs about what
 * the transpose saves.)
 */
function weightGrad(dy: tf.Tensor2D, x: tf.Tensor2D): tf.Tensor2D {
  const fast = matMulWasm(dy, true, x, false);                             // [out, N] x [N, in], the transpose packed
  if (fast) return fast;
  const out = dy.shape[1];
  const inDim = x.shape[1];
  if (2 * out < inDim) return tf.transpose(tf.matMul(transpose2d(x), dy)) as tf.Tensor2D; // [in, N] x [N, out] -> [in, out] -> [out, in]
  return tf.matMul(transpose2d(dy), x);                                    // [out, N] x [N, in] -> [out, in]
}

/** Whether the linear layers use gemm-wasm.ts on wasm (off: XNNPACK through tf.matMul; for A/B measurements). */
export const linearGemm = { enabled: process.env.SPA_WASM_GEMM !== '0' };

/**
 * op(a) op(b) with gemm-wasm.ts (op = transpose when the flag is set) on the wasm backend, or null
 * where it does not apply (another backend, relaxed SIMD missing, an output width not a multiple of 8).
 * Not differentiable (used inside custom gradients only).
 */
function matMulWasm(a: tf.Tensor2D, aT: boolean, b: tf.Tensor2D, bT: boolean): tf.Tensor2D | null {
  if (!linearGemm.enabled || tf.getBackend() !== 'wasm' || a.dtype !== 'float32' || b.dtype !== 'float32') return null;
  const [M, K] = aT ? [a.shape[1], a.shape[0]] : a.shape;
  const [K2, N] = bT ? [b.shape[1], b.shape[0]] : b.shape;
  if (K !== K2) throw new Error(`matMulWasm: inner sizes ${K} and ${K2} differ`);
  if (!gemmSupported(M, N)) return null;
  const backend = tf.backend() as unknown as { dataIdMap?: { get(id: object): { memoryOffset?: number } | undefined } };
  const aPtr = backend.dataIdMap?.get(a.dataId)?.memoryOffset;
  const bPtr = backend.dataIdMap?.get(b.dataId)?.memoryOffset;
  if (typeof aPtr === 'number' && typeof bPtr === 'number') {
    // on TF.js-wasm's heap: no copy of A in, none of C out
    const info = gemmOnHeap(backend, { ptr: aPtr, transposed: aT }, { ptr: bPtr, transposed: bT }, M, K, N);
    if (info) return tf.engine().makeTensorFromTensorInfo(info) as tf.Tensor2D;
  }
  const c = gemm({ data: readView(a), transposed: aT }, { data: readView(b), transposed: bT }, M, K, N, null);
  return tf.tensor2d(c, [M, N]);                                          // copies out of the module's memory
}

const linearTrainable = custom((x: tf.Tensor, w: tf.Tensor, save: tf.GradSaveFunc) => {
  const x2 = x as tf.Tensor2D;                 // [N, in]
  const w2 = w as tf.Tensor2D;                 // [out, in]
  save([x2, w2]);
  const y = matMulWasm(x2, false, w2, true) ?? tf.matMul(x2, tf.transpose(w2));   // [N, in] x [in, out] -> [N, out]
  return {
    value: y,
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [xs, ws] = saved as [tf.Tensor2D, tf.Tensor2D];
      const dx = matMulWasm(dy as tf.Tensor2D, false, ws, false) ?? tf.matMul(dy as tf.Tensor2D, ws); // [N, out] x [out, in] -> [N, in]
      return [dx, weightGrad(dy as tf.Tensor2D, xs)];
    },
  };
});

/** y = x W^T for x [N, in], W [out, in] (HF layout). Frozen weights get no gradient computed. */
export function linear(x: tf.Tensor2D, w: tf.Tensor2D, trainable = true): tf.Tensor2D {
  if (x.shape[1] !== w.shape[1]) {
    throw new Error(`linear: input width ${x.shape[1]} does not match weight [out, in] = [${w.shape.join(', ')}]`);
  }
  if (trainable) return linearTrainable(x, w) as tf.Tensor2D;
  const frozen = custom((xi: tf.Tensor, save: tf.GradSaveFunc) => {
    save([]);
    return {
      value: matMulWasm(xi as tf.Tensor2D, false, w, true) ?? tf.matMul(xi as tf.Tensor2D, tf.transpose(w)), // [N, out]
      gradFunc: (dy: tf.Tensor) => [matMulWasm(dy as tf.Tensor2D, false, w, false) ?? tf.matMul(dy as tf.Tensor2D, w)], // [N, out] x [out, in]
    };
  });
  return frozen(x) as tf.Tensor2D;
}

/** Reference: the same with plain TF.js ops and autograd. */
export function linearReference(x: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor2D {
  return tf.matMul(x, w, false, true);
}

// ---------------------------------------------------------------- column sums (bias / norm-weight gradients)

/**
 * sum over rows of a [N, D] (times b [N, D] elementwise when given) -> [D]. On wasm in JS from
 * the heap (a sum over axis 0 there transposes the input first, then a Mul kernel for a * b):
 * one pass, float64 accumulators. Elsewhere tf.sum(a (* b), 0). Not differentiable (gradients only).
 */
export function columnSum(a: tf.Tensor2D, b?: tf.Tensor2D): tf.Tensor1D {
  const [n, d] = a.shape;
  if (b && (b.shape[0] !== n || b.shape[1] !== d)) throw new Error(`columnSum: shapes [${a.shape.join(', ')}] and [${b.shape.join(', ')}] differ`);
  if (tf.getBackend() !== 'wasm' || a.dtype !== 'float32' || (b && b.dtype !== 'float32')) {
    return tf.sum(b ? tf.mul(a, b) : a, 0) as tf.Tensor1D;
  }
  const acc = new Float64Array(d);
  const av = readView(a);
  const bv = b ? readView(b) : null;
  for (let i = 0; i < n; i++) {
    const o = i * d;
    if (bv) for (let j = 0; j < d; j++) acc[j]! += av[o + j]! * bv[o + j]!;
    else for (let j = 0; j < d; j++) acc[j]! += av[o + j]!;
  }
  return tf.tensor1d(Float32Array.from(acc));
}

const addBiasKernel = custom((x: tf.Tensor, b: tf.Tensor, save: tf.GradSaveFunc) => {
  save([]);
  return {
    value: tf.add(x, b),                                               // [N, out] + [out]
    gradFunc: (dy: tf.Tensor) => [dy, columnSum(dy as tf.Tensor2D)],    // [N, out], [out]
  };
});

/** y = x + b for x [N, out], b [out] (a projection's bias); the bias gradient is columnSum(dy). */
export function addBias(x: tf.Tensor2D, b: tf.Tensor1D): tf.Tensor2D {
  if (x.shape[1] !== b.shape[0]) throw new Error(`addBias: input width ${x.shape[1]} does not match bias [${b.shape[0]}]`);
  return addBiasKernel(x, b) as tf.Tensor2D;
}

// ---------------------------------------------------------------- RMSNorm

const rmsNormKernel = (eps: number) => custom((x: tf.Tensor, w: tf.Tensor, save: tf.GradSaveFunc) => {
  const x2 = x as tf.Tensor2D;                                       // [N, D]
  const r = tf.rsqrt(tf.add(tf.mean(tf.square(x2), -1, true), eps)); // [N, 1]
  const xn = tf.mul(x2, r);                                          // [N, D]
  save([xn, r, w]);
  return {
    value: tf.mul(xn, w),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [xns, rs, ws] = saved as [tf.Tensor2D, tf.Tensor2D, tf.Tensor1D];
      const dw = columnSum(dy as tf.Tensor2D, xns);                  // [D] = sum over rows of dy * xn
      const dxn = tf.mul(dy, ws);                                    // [N, D]
      const proj = tf.mean(tf.mul(dxn, xns), -1, true);              // [N, 1]
      const dx = tf.mul(tf.sub(dxn, tf.mul(xns, proj)), rs);         // [N, D]
      return [dx, dw];
    },
  };
});
const rmsNormCache = new Map<number, ReturnType<typeof rmsNormKernel>>();

/** RMSNorm over the last axis: x [N, D], w [D]. */
export function rmsNorm(x: tf.Tensor2D, w: tf.Tensor1D, eps: number): tf.Tensor2D {
  let k = rmsNormCache.get(eps);
  if (!k) { k = rmsNormKernel(eps); rmsNormCache.set(eps, k); }
  return k(x, w) as tf.Tensor2D;
}

export function rmsNormReference(x: tf.Tensor2D, w: tf.Tensor1D, eps: number): tf.Tensor2D {
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(tf.mean(tf.square(x), -1, true), eps))), w);
}

// ---------------------------------------------------------------- SwiGLU: silu(gate) * up

let swigluScratch = new Float32Array(0);
/**
 * SwiGLU's backward in one JS pass over the wasm heap (7 elementwise kernels otherwise):
 * du = dy silu(g), dg = dy u s (1 + g (1 - s)) with s = sigmoid(g).
 */
function swigluGradJs(dy: tf.Tensor, g: tf.Tensor, u: tf.Tensor, sg: tf.Tensor, act: tf.Tensor): tf.Tensor[] {
  const n = dy.size;
  if (swigluScratch.length < 2 * n) swigluScratch = new Float32Array(2 * n); // wasm copies on tensor creation
  const dg = swigluScratch.subarray(0, n);
  const du = swigluScratch.subarray(n, 2 * n);
  const dyv = readView(dy); const gv = readView(g); const uv = readView(u); const sv = readView(sg); const av = readView(act);
  for (let i = 0; i < n; i++) {
    const d = dyv[i]!; const s = sv[i]!;
    du[i] = d * av[i]!;
    dg[i] = d * uv[i]! * (s * (1 + gv[i]! * (1 - s)));
  }
  return [tf.tensor(dg, dy.shape), tf.tensor(du, dy.shape)];
}

const swigluKernel = custom((gate: tf.Tensor, up: tf.Tensor, save: tf.GradSaveFunc) => {
  const s = tf.sigmoid(gate);        // [N, I]
  const a = tf.mul(gate, s);         // silu(gate)
  save([gate, up, s, a]);
  return {
    value: tf.mul(a, up),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [g, u, sg, act] = saved as tf.Tensor[];
      if (tf.getBackend() === 'wasm' && dy.dtype === 'float32') return swigluGradJs(dy, g!, u!, sg!, act!);
      const du = tf.mul(dy, act!);
      // d silu(g)/dg = s (1 + g (1 - s))
      const dsilu = tf.mul(sg!, tf.add(1, tf.mul(g!, tf.sub(1, sg!))));
      const dg = tf.mul(tf.mul(dy, u!), dsilu);
      return [dg, du];
    },
  };
});
export function swiglu(gate: tf.Tensor2D, up: tf.Tensor2D): tf.Tensor2D { return swigluKernel(gate, up) as tf.Tensor2D; }
export function swigluReference(gate: tf.Tensor2D, up: tf.Tensor2D): tf.Tensor2D {
  return tf.mul(tf.mul(gate, tf.sigmoid(gate)), up);
}

// ---------------------------------------------------------------- rotary embeddings

/** Rotary tables: cos/sin [maxPos, headDim] in the HF layout (frequencies repeated over both halves). */
export function ropeTables(maxPositions: number, dim: number, theta: number): { cos: Float32Array; sin: Float32Array } {
  const half = dim / 2;
  const cos = new Float32Array(maxPositions * dim);
  const sin = new Float32Array(maxPositions * dim);
  for (let p = 0; p < maxPositions; p++) {
    for (let i = 0; i < half; i++) {
      const invFreq = 1 / Math.pow(theta, (2 * i) / dim);
      const angle = p * invFreq;
      const c = Math.cos(angle);
      const s = Math.sin(angle);
      cos[p * dim + i] = c; cos[p * dim + i + half] = c;
      sin[p * dim + i] = s; sin[p * dim + i + half] = s;
    }
  }
  return { cos, sin };
}

/** rotate_half(x) = concat(-x2, x1) as a matrix R [dim, dim]: rotate_half(x) = x R. */
export function rotateHalfMatrix(dim: number): Float32Array {
  const half = dim / 2;
  const r = new Float32Array(dim * dim);
  for (let j = 0; j < half; j++) r[(j + half) * dim + j] = -1; // out[j] = -x[j + half]
  for (let j = half; j < dim; j++) r[(j - half) * dim + j] = 1; // out[j] = x[j - half]
  return r;
}

/**
 * Apply RoPE to rows x [M, dim] with per-row cos/sin [M, dim]: x cos + rotate_half(x) sin.
 * rotate_half is a plain 2-D matmul with R; its gradient uses R^T = -R.
 */
export function rope(x: tf.Tensor2D, cos: tf.Tensor2D, sin: tf.Tensor2D, r: tf.Tensor2D, rT: tf.Tensor2D): tf.Tensor2D {
  // Tensors the backward pass needs must go through save(): closures would see them disposed.
  const k = custom((xi: tf.Tensor, save: tf.GradSaveFunc) => {
    save([cos, sin, rT]);
    return {
      value: tf.add(tf.mul(xi, cos), tf.mul(tf.matMul(xi as tf.Tensor2D, r), sin)), // [M, dim]
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [c, s, rt] = saved as tf.Tensor2D[];
        return [tf.add(tf.mul(dy, c!), tf.matMul(tf.mul(dy, s!) as tf.Tensor2D, rt!))];
      },
    };
  });
  return k(x) as tf.Tensor2D;
}

export function ropeReference(x: tf.Tensor2D, cos: tf.Tensor2D, sin: tf.Tensor2D): tf.Tensor2D {
  const half = x.shape[1] / 2;
  const x1 = tf.slice(x, [0, 0], [-1, half]);
  const x2 = tf.slice(x, [0, half], [-1, half]);
  const rotated = tf.concat([tf.neg(x2), x1], 1);
  return tf.add(tf.mul(x, cos), tf.mul(rotated, sin));
}

// ---------------------------------------------------------------- embedding lookup

/** rows of table [V, D] at ids [N] -> [N, D]; the gradient scatters (sums) into the table. */
export function embedding(table: tf.Tensor2D, ids: tf.Tensor1D, trainable = true): tf.Tensor2D {
  if (!trainable) return tf.gather(table, ids) as tf.Tensor2D;
  const k = custom((t: tf.Tensor, save: tf.GradSaveFunc) => {
    save([ids]);
    return {
      value: tf.gather(t, ids),                                                    // [N, D]
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => [tf.scatterND(tf.reshape(saved[0]!, [-1, 1]), dy, table.shape)], // [V, D], duplicates summed
    };
  });
  return k(table) as tf.Tensor2D;
}

// ---------------------------------------------------------------- token statistics

/**
 * Per-row log-probability of the target token and entropy of the distribution, from logits
 * [N, V] and targets [N] (int32): returns [N, 2] = (logprob, entropy). Gradient in closed form:
 *   d logprob / d z = onehot - p;   d entropy / d z = -p (log p + H).
 */
export function tokenStats(logits: tf.Tensor2D, targets: tf.Tensor1D): tf.Tensor2D {
  const vocab = logits.shape[1];
  const k = custom((z: tf.Tensor, save: tf.GradSaveFunc) => {
    const logp = tf.logSoftmax(z);                                 // [N, V]
    const onehot = tf.cast(tf.oneHot(targets, vocab), 'float32');     // [N, V]
    const p = tf.exp(logp);                                        // [N, V]
    const lp = tf.sum(tf.mul(logp, onehot), -1, true);             // [N, 1]
    const h = tf.neg(tf.sum(tf.mul(p, logp), -1, true));           // [N, 1]
    save([logp, p, onehot, h]);
    return {
      value: tf.concat([lp, h], 1),                                // [N, 2]
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [lg, pr, oh, ent] = saved as tf.Tensor2D[];
        const dyLp = tf.matMul(dy as tf.Tensor2D, tf.tensor2d([[1], [0]])); // [N, 1] (column 0, no slice)
        const dyH = tf.matMul(dy as tf.Tensor2D, tf.tensor2d([[0], [1]]));  // [N, 1]
        const gLp = tf.mul(dyLp, tf.sub(oh!, pr!));
        const gH = tf.mul(tf.neg(dyH), tf.mul(pr!, tf.add(lg!, ent!)));
        return [tf.add(gLp, gH)];
      },
    };
  });
  return k(logits) as tf.Tensor2D;
}

export function tokenStatsReference(logits: tf.Tensor2D, targets: tf.Tensor1D): tf.Tensor2D {
  const logp = tf.logSoftmax(logits);
  const onehot = tf.cast(tf.oneHot(targets, logits.shape[1]), 'float32');
  const lp = tf.sum(tf.mul(logp, onehot), -1, true);
  const h = tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), -1, true));
  return tf.concat([lp, h], 1) as tf.Tensor2D;
}

// ---------------------------------------------------------------- attention

export interface AttentionShape { batch: number; queryLength: number; keyLength: number; heads: number; kvHeads: number; headDim: number }

/**
 * Causal grouped-query attention on flat projections, plain TF.js ops (autograd).
 * q [B*Tq, H*hd], k/v [B*Tk, KV*hd], bias [B, 1, Tq, Tk] (0 = attend, large negative = masked),
 * returns [B*Tq, H*hd]. GQA without copying K/V: the query heads of one K/V head are stacked
 * along the query axis, [B, KV, rep*Tq, hd] x [B, KV, hd, Tk].
 */
export function attentionReference(q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D, bias: tf.Tensor4D, s: AttentionShape): tf.Tensor2D {
  const { batch: B, queryLength: Tq, keyLength: Tk, heads: H, kvHeads: KV, headDim: hd } = s;
  const rep = H / KV;
  const q4 = tf.transpose(tf.reshape(q, [B, Tq, KV, rep, hd]), [0, 2, 3, 1, 4]); // [B, KV, rep, Tq, hd]
  const qg = tf.reshape(q4, [B, KV, rep * Tq, hd]);                                // [B, KV, rep*Tq, hd]
  const kg = tf.transpose(tf.reshape(k, [B, Tk, KV, hd]), [0, 2, 1, 3]);           // [B, KV, Tk, hd]
  const vg = tf.transpose(tf.reshape(v, [B, Tk, KV, hd]), [0, 2, 1, 3]);           // [B, KV, Tk, hd]
  const biasG = rep === 1 ? bias : tf.reshape(tf.tile(tf.reshape(bias, [B, 1, 1, Tq, Tk]), [1, 1, rep, 1, 1]), [B, 1, rep * Tq, Tk]);
  const scores = tf.add(tf.mul(tf.matMul(qg, kg, false, true), 1 / Math.sqrt(hd)), biasG); // [B, KV, rep*Tq, Tk]
  const probs = tf.softmax(scores);                                                          // [B, KV, rep*Tq, Tk]
  const out = tf.matMul(probs, vg);                                                          // [B, KV, rep*Tq, hd]
  const o5 = tf.reshape(out, [B, KV, rep, Tq, hd]);                                          // [B, KV, rep, Tq, hd]
  return tf.reshape(tf.transpose(o5, [0, 3, 1, 2, 4]), [B * Tq, H * hd]) as tf.Tensor2D;                   // [B*Tq, H*hd]
}

/**
 * Additive bias [B, 1, T, T] for full sequences with segment ids (packed sequences): query i sees
 * key j iff j <= i, seg[j] = seg[i] and seg[j] != 0 (0 = padding). A 0/1 attention mask is the
 * one-segment case.
 */
export function segmentBias(segments: number[][], T: number): tf.Tensor4D {
  const B = segments.length;
  const data = new Float32Array(B * T * T);
  for (let b = 0; b < B; b++) {
    const seg = segments[b]!;
    for (let i = 0; i < T; i++) {
      const base = (b * T + i) * T;
      for (let j = 0; j < T; j++) data[base + j] = j <= i && seg[j] !== 0 && seg[j] === seg[i] ? 0 : -1e9;
    }
  }
  return tf.tensor4d(data, [B, 1, T, T]);
}

/** Additive attention bias [B, 1, Tq, Tk] for queries at the last Tq of Tk positions, causal + key padding. */
export function attentionBias(keyMask: number[][], queryLength: number): tf.Tensor4D {
  const B = keyMask.length;
  const Tk = keyMask[0]?.length ?? 0;
  const Tq = queryLength;
  const offset = Tk - Tq;
  const data = new Float32Array(B * Tq * Tk);
  for (let b = 0; b < B; b++) {
    const row = keyMask[b]!;
    for (let i = 0; i < Tq; i++) {
      const base = (b * Tq + i) * Tk;
      for (let j = 0; j < Tk; j++) {
        data[base + j] = j <= i + offset && row[j] ? 0 : -1e9;
      }
    }
  }
  return tf.tensor4d(data, [B, 1, Tq, Tk]);
}
