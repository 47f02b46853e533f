// Fast incremental inference for generation on wasm / cpu: weights pre-transposed once per
// session (plain 2-D matmuls, no per-call transposes), q/k/v fused into one matmul, and the
// K/V cache kept in JavaScript arrays (preallocated, appended in place: no concat per step),
// with RoPE and the attention of the few new tokens computed in JavaScript. The matmuls of the
// projections and the MLP stay in TF.js. Equivalent to CausalLM.forward (tested).
import * as tf from '@tensorflow/tfjs';
import { headDim } from './config.js';
import type { CausalLM } from './transformer.js';
import { rmsNorm, swiglu } from './kernels.js';
import { attentionFast } from './attention.js';

interface LayerWeights {
  ln1: tf.Tensor1D; ln2: tf.Tensor1D;
  qkvT: tf.Tensor2D;            // [D, (H + 2 KV) hd]
  qkvBias: tf.Tensor1D | null;  // [(H + 2 KV) hd]
  oT: tf.Tensor2D;              // [H hd, D]
  gateT: tf.Tensor2D; upT: tf.Tensor2D; // [D, I]
  downT: tf.Tensor2D;           // [I, D]
}

/** Prompts at least this long are prefilled with the tiled 2-D-matmul attention instead of JS loops. */
const TILED_PREFILL_MIN = 32;

export class InferenceSession {
  readonly batch: number;
  readonly maxLength: number;
  private readonly model: CausalLM;
  private readonly layers: LayerWeights[] = [];
  private readonly embed: tf.Tensor2D;
  private readonly norm: tf.Tensor1D;
  private readonly lmHeadT: tf.Tensor2D;   // [D, V]
  private readonly keys: Float32Array[];   // per layer [B, KV, maxLength, hd], after RoPE
  private readonly values: Float32Array[]; // per layer [B, KV, maxLength, hd]
  private readonly keyMask: Uint8Array;    // [B, maxLength]
  private readonly nextPosition: Int32Array; // [B]
  private length = 0;
  private disposed = false;
  private readonly H: number; private readonly KV: number; private readonly hd: number; private readonly D: number;

  constructor(model: CausalLM, batch: number, maxLength: number) {
    const c = model.config;
    if (maxLength > c.max_position_embeddings) throw new Error(`InferenceSession: maxLength ${maxLength} exceeds max_position_embeddings ${c.max_position_embeddings}`);
    this.model = model;
    this.batch = batch;
    this.maxLength = maxLength;
    this.H = c.num_attention_heads; this.KV = c.num_key_value_heads; this.hd = headDim(c); this.D = c.hidden_size;
    const t = (name: string) => tf.keep(tf.tidy(() => tf.transpose(model.effectiveWeight(name))) as tf.Tensor2D);
    for (let i = 0; i < c.num_hidden_layers; i++) {
      const p = `model.layers.${i}`;
      const qkvT = tf.keep(tf.tidy(() => tf.transpose(tf.concat([
        model.effectiveWeight(`${p}.self_attn.q_proj.weight`), model.effectiveWeight(`${p}.self_attn.k_proj.weight`), model.effectiveWeight(`${p}.self_attn.v_proj.weight`),
      ], 0))) as tf.Tensor2D);                                                    // [(H+2KV)hd, D] -> [D, (H+2KV)hd]
      const qkvBias = model.hasWeight(`${p}.self_attn.q_proj.bias`)
        ? tf.keep(tf.tidy(() => tf.concat([model.effectiveWeight(`${p}.self_attn.q_proj.bias`), model.effectiveWeight(`${p}.self_attn.k_proj.bias`), model.effectiveWeight(`${p}.self_attn.v_proj.bias`)], 0)) as tf.Tensor1D)
        : null;
      this.layers.push({
        ln1: tf.keep(model.effectiveWeight(`${p}.input_layernorm.weight`) as tf.Tensor1D),
        ln2: tf.keep(model.effectiveWeight(`${p}.post_attention_layernorm.weight`) as tf.Tensor1D),
        qkvT, qkvBias,
        oT: t(`${p}.self_attn.o_proj.weight`),
        gateT: t(`${p}.mlp.gate_proj.weight`), upT: t(`${p}.mlp.up_proj.weight`), downT: t(`${p}.mlp.down_proj.weight`),
      });
    }
    this.embed = tf.keep(model.effectiveWeight('model.embed_tokens.weight') as tf.Tensor2D);
    this.norm = tf.keep(model.effectiveWeight('model.norm.weight') as tf.Tensor1D);
    this.lmHeadT = t(c.tie_word_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight');
    const cacheSize = batch * this.KV * maxLength * this.hd;
    this.keys = this.layers.map(() => new Float32Array(cacheSize));
    this.values = this.layers.map(() => new Float32Array(cacheSize));
    this.keyMask = new Uint8Array(batch * maxLength);
    this.nextPosition = new Int32Array(batch);
  }

  /** Tokens cached so far (including masked slots). */
  get cachedLength(): number { return this.length; }

  /**
   * Feed new tokens [B, Tn] (mask [B, Tn]: 1 real, 0 padding) and return the logits [B, V] of
   * the last new position of each row.
   */
  step(newIds: number[][], newMask: number[][]): Float32Array {
    if (this.disposed) throw new Error('InferenceSession was disposed');
    const B = this.batch;
    if (newIds.length !== B || newMask.length !== B) throw new Error(`InferenceSession.step: expected ${B} rows, got ${newIds.length} ids and ${newMask.length} mask rows`);
    const Tn = newIds[0]!.length;
    if (this.length + Tn > this.maxLength) throw new Error(`InferenceSession.step: ${this.length + Tn} tokens exceed the session length ${this.maxLength}`);
    const V = this.model.config.vocab_size;
    const positions = newMask.map((row, b) => row.map((m) => (m ? this.nextPosition[b]++ : 0)));
    for (let b = 0; b < B; b++) for (let t = 0; t < Tn; t++) this.keyMask[b * this.maxLength + this.length + t] = newMask[b]![t] ? 1 : 0;
    const flat = new Int32Array(B * Tn);
    newIds.forEach((row, b) => row.forEach((id, t) => {
      if (!Number.isInteger(id) || id < 0 || id >= V) throw new Error(`token id ${id} (row ${b}) is outside the vocabulary [0, ${V})`);
      flat[b * Tn + t] = id;
    }));
    const eps = this.model.config.rms_norm_eps;
    const tiled = this.length === 0 && Tn >= TILED_PREFILL_MIN;
    const logits = tf.tidy(() => {
      let x = tf.gather(this.embed, tf.tensor1d(flat, 'int32')) as tf.Tensor2D;   // [B*Tn, D]
      this.layers.forEach((L, i) => {
        const h = rmsNorm(x, L.ln1, eps);
        let qkv = tf.matMul(h, L.qkvT);                                            // [B*Tn, (H+2KV)hd]
        if (L.qkvBias) qkv = tf.add(qkv, L.qkvBias);
        const attn = this.attend(i, qkv.dataSync() as Float32Array, Tn, positions, newMask, tiled); // [B*Tn, H*hd]
        x = tf.add(x, tf.matMul(attn, L.oT));
        const h2 = rmsNorm(x, L.ln2, eps);
        x = tf.add(x, tf.matMul(swiglu(tf.matMul(h2, L.gateT), tf.matMul(h2, L.upT)), L.downT));
      });
      const last = Tn === 1 ? x : tf.gather(x, tf.tensor1d(Array.from({ length: B }, (_, b) => b * Tn + Tn - 1), 'int32')) as tf.Tensor2D; // [B, D]
      return tf.matMul(rmsNorm(last, this.norm, eps), this.lmHeadT);            // [B, V]
    });
    this.length += Tn;
    const data = logits.dataSync() as Float32Array;
    logits.dispose();
    return data;
  }

  /** RoPE one head vector in place: x cos + rotate_half(x) sin at position `pos`. */
  private rope(src: Float32Array, srcOffset: number, dst: Float32Array, dstOffset: number, pos: number, scale: number): void {
    const hd = this.hd;
    const half = hd / 2;
    const { cos, sin } = this.model.rotaryTables();
    const base = pos * hd;
    for (let d = 0; d < half; d++) {
      const a = src[srcOffset + d]!;
      const b = src[srcOffset + d + half]!;
      dst[dstOffset + d] = (a * cos[base + d]! - b * sin[base + d]!) * scale;
      dst[dstOffset + d + half] = (b * cos[base + d + half]! + a * sin[base + d + half]!) * scale;
    }
  }

  /** Write the new keys/values into the cache and attend; returns [B*Tn, H*hd]. */
  private attend(layer: number, qkv: Float32Array, Tn: number, positions: number[][], newMask: number[][], tiled: boolean): tf.Tensor2D {
    const { H, KV, hd } = this;
    const B = this.batch;
    const M = this.maxLength;
    const W = (H + 2 * KV) * hd;
    const rep = H / KV;
    const kc = this.keys[layer]!;
    const vc = this.values[layer]!;
    const start = this.length;
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < Tn; t++) {
        const row = (b * Tn + t) * W;
        for (let g = 0; g < KV; g++) {
          const dst = ((b * KV + g) * M + start + t) * hd;
          this.rope(qkv, row + H * hd + g * hd, kc, dst, positions[b]![t]!, 1);
          vc.set(qkv.subarray(row + (H + KV) * hd + g * hd, row + (H + KV) * hd + (g + 1) * hd), dst);
        }
      }
    }
    const scale = 1 / Math.sqrt(hd);
    if (tiled) {
      // Prefill of a long prompt: causal attention among the new tokens with 2-D matmul tiles.
      const q = new Float32Array(B * Tn * H * hd);
      const k = new Float32Array(B * Tn * KV * hd);
      const v = new Float32Array(B * Tn * KV * hd);
      for (let b = 0; b < B; b++) {
        for (let t = 0; t < Tn; t++) {
          const row = (b * Tn + t) * W;
          for (let h = 0; h < H; h++) this.rope(qkv, row + h * hd, q, (b * Tn + t) * H * hd + h * hd, positions[b]![t]!, 1);
          for (let g = 0; g < KV; g++) {
            const src = ((b * KV + g) * M + t) * hd;
            k.set(kc.subarray(src, src + hd), (b * Tn + t) * KV * hd + g * hd);
            v.set(vc.subarray(src, src + hd), (b * Tn + t) * KV * hd + g * hd);
          }
        }
      }
      return attentionFast(tf.tensor2d(q, [B * Tn, H * hd]), tf.tensor2d(k, [B * Tn, KV * hd]), tf.tensor2d(v, [B * Tn, KV * hd]), newMask,
        { batch: B, queryLength: Tn, keyLength: Tn, heads: H, kvHeads: KV, headDim: hd });
    }
    // Decode (few new tokens): plain loops over the cache, locals hoisted for the JIT.
    const out = new Float32Array(B * Tn * H * hd);
    const qv = new Float32Array(hd);
    const scores = new Float32Array(start + Tn);
    const keyMask = this.keyMask;
    const { cos, sin } = this.model.rotaryTables();
    const half = hd / 2;
    for (let b = 0; b < B; b++) {
      const maskRow = b * M;
      for (let t = 0; t < Tn; t++) {
        const limit = start + t;                   // attend to slots 0..limit
        const row = (b * Tn + t) * W;
        const pos = positions[b]![t]! * hd;
        for (let h = 0; h < H; h++) {
          const g = (h / rep) | 0;
          const qo = row + h * hd;
          for (let d = 0; d < half; d++) {          // RoPE, pre-scaled
            const a = qkv[qo + d]!;
            const c = qkv[qo + d + half]!;
            qv[d] = (a * cos[pos + d]! - c * sin[pos + d]!) * scale;
            qv[d + half] = (c * cos[pos + d + half]! + a * sin[pos + d + half]!) * scale;
          }
          const kBase = (b * KV + g) * M * hd;
          let max = -Infinity;
          for (let j = 0; j <= limit; j++) {
            if (keyMask[maskRow + j] === 0) { scores[j] = -Infinity; continue; }
            let acc = 0;
            const o = kBase + j * hd;
            for (let d = 0; d < hd; d++) acc += qv[d]! * kc[o + d]!;
            scores[j] = acc;
            if (acc > max) max = acc;
          }
          if (max === -Infinity) continue;          // no visible key (a padding query): output 0
          let sum = 0;
          for (let j = 0; j <= limit; j++) { const e = Math.exp(scores[j]! - max); scores[j] = e; sum += e; }
          const inv = 1 / sum;
          const dst = (b * Tn + t) * H * hd + h * hd;
          for (let j = 0; j <= limit; j++) {
            const p = scores[j]! * inv;
            if (p === 0) continue;
            const o = kBase + j * hd;
            for (let d = 0; d < hd; d++) out[dst + d] = out[dst + d]! + p * vc[o + d]!;
          }
        }
      }
    }
    return tf.tensor2d(out, [B * Tn, H * hd]);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const L of this.layers) tf.dispose([L.ln1, L.ln2, L.qkvT, L.oT, L.gateT, L.upT, L.downT, ...(L.qkvBias ? [L.qkvBias] : [])]);
    tf.dispose([this.embed, this.norm, this.lmHeadT]);
  }
}
