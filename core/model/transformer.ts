// A Qwen2-style decoder-only transformer. The small parts are in kernels.ts (RMSNorm, rotary
// positions, SwiGLU, embedding, token statistics, reference attention) and attention.ts (the fast
// grouped-query attention); this file holds the weights and composes the parts: `block()` is one
// decoder layer (norm -> q/k/v -> attend -> o + residual -> norm -> SwiGLU MLP + residual), and
// `trunk()` (full sequences: training, scoring) and `step()` (K/V cache: generation) stack it,
// differing only in how they attend. inference.ts is a separate, faster generation path (tested
// equal to this one).
// Parameters are tf.Variables named by their Hugging Face keys and stored in the HF layout
// (linear weights [out, in]), so checkpoints map 1:1 to model.safetensors. The kernels
// (core/model/kernels.ts) reduce forward and backward to plain 2-D matmuls, the fast path of
// TF.js on wasm. Shapes: B batch, T sequence, N = B*T flattened tokens, D hidden, H query heads,
// KV key/value heads, hd head dim, I intermediate, V vocab.
import * as tf from '@tensorflow/tfjs';
import { headDim, parseModelConfig, type ModelConfig } from './config.js';
import {
  addBias, attentionBias, attentionReference, embedding, segmentBias, linear, rmsNorm, rope, ropeTables, rotateHalfMatrix, swiglu, tokenStats,
  type AttentionShape,
} from './kernels.js';
import { attentionFast } from './attention.js';

export interface WeightData { shape: number[]; data: Float32Array }

import { checkLoraConfig, loraStem, type LoraConfig } from './lora-config.js';

export { LORA_TARGETS, type LoraConfig } from './lora-config.js';

export interface CausalLMOptions {
  /** Seed of the weight initialisation (deterministic). */
  seed?: number;
  /** Whether the weights are trainable (false for a frozen reference copy). */
  trainable?: boolean;
  /** 'random' (default) or 'zeros' (when weights will be loaded right away). */
  init?: 'random' | 'zeros';
  /**
   * Attention implementation: 'fast' (2-D matmul tiles through JS, custom gradient; best on
   * wasm / cpu), 'reference' (batched TF.js ops; best on native / GPU backends), or 'auto'
   * (default: fast on wasm and cpu, reference otherwise).
   */
  attention?: 'auto' | 'fast' | 'reference';
}

export interface ForwardOptions {
  /** [B, T], 1 for real tokens, 0 for padding (right or left). Default: all ones. */
  attentionMask?: number[][];
  /**
   * [B, T] packed sequences: tokens attend only within their segment (same id, 0 = padding) and
   * positions restart at each segment. Replaces attentionMask when given.
   */
  segmentIds?: number[][];
  /** Compute logits (default true). */
  logits?: boolean;
  /** Compute values with the value head (default: when the config has one). */
  values?: boolean;
}

export interface ForwardResult {
  /** [B, T, V] next-token logits at each position. */
  logits: tf.Tensor3D | null;
  /** [B, T] value-head output at each position (value of the prefix up to and including t). */
  values: tf.Tensor2D | null;
  /** [N, D] final hidden states (after the last norm). */
  hidden: tf.Tensor2D;
}

/**
 * Per-token outputs aligned with the input tokens: position t describes token t given the
 * tokens before it (t = 0 has no prefix and holds 0). Masks over the tokens (e.g. assistant
 * tokens) therefore apply directly.
 */
export interface TokenOutputs {
  logprobs: tf.Tensor2D;          // [B, T] log p(token_t | tokens_<t)
  entropies: tf.Tensor2D;         // [B, T] entropy of the distribution that produced token_t
  values: tf.Tensor2D | null;     // [B, T] value of the state before token_t (prefix < t)
}

/** K/V cache for generation: per layer keys/values after RoPE, [B, KV, Tpast, hd]. */
export interface KvCache {
  keys: tf.Tensor4D[];
  values: tf.Tensor4D[];
  /** [B, Tpast] 1 where the cached position is a real token. */
  keyMask: number[][];
  /** [B] next position id of each row. */
  nextPosition: number[];
}

let modelCounter = 0;

interface LoraAdapter { a: tf.Variable; b: tf.Variable; scale: number }

export class CausalLM {
  readonly config: ModelConfig;
  readonly trainable: boolean;
  readonly attentionOption: 'auto' | 'fast' | 'reference';
  private readonly weights = new Map<string, tf.Variable>();
  private readonly lora = new Map<string, LoraAdapter>(); // keyed by base weight name
  private loraConfig: LoraConfig | null = null;
  private readonly uid: number;
  private readonly ropeCos: Float32Array;
  private readonly ropeSin: Float32Array;
  private readonly rotate: tf.Tensor2D;
  private readonly rotateT: tf.Tensor2D;
  private disposed = false;

  constructor(config: ModelConfig, options: CausalLMOptions = {}) {
    this.config = parseModelConfig(config);
    this.trainable = options.trainable ?? true;
    this.attentionOption = options.attention ?? 'auto';
    this.uid = ++modelCounter;
    const hd = headDim(this.config);
    const tables = ropeTables(this.config.max_position_embeddings, hd, this.config.rope_theta);
    this.ropeCos = tables.cos;
    this.ropeSin = tables.sin;
    this.rotate = tf.keep(tf.tensor2d(rotateHalfMatrix(hd), [hd, hd]));
    this.rotateT = tf.keep(tf.transpose(this.rotate));
    const seed = options.seed ?? 0;
    let index = 0;
    for (const [name, shape, kind] of this.parameterSpecs()) {
      const init = tf.tidy(() => {
        if (options.init === 'zeros' || kind === 'zeros') return tf.zeros(shape);
        if (kind === 'ones') return tf.ones(shape);
        // +1: TF.js treats a seed of 0 as "no seed" (Math.random), which made seed 0's first parameter irreproducible
        return tf.randomNormal(shape, 0, this.config.initializer_range, 'float32', seed * 100_003 + index + 1);
      });
      index++;
      this.weights.set(name, tf.variable(init, this.trainable, `m${this.uid}/${name}`));
      init.dispose();
    }
  }

  /** [HF name, shape, init kind] of every base parameter, in HF order. */
  parameterSpecs(): Array<[string, number[], 'normal' | 'ones' | 'zeros']> {
    const c = this.config;
    const D = c.hidden_size;
    const hd = headDim(c);
    const kvDim = c.num_key_value_heads * hd;
    const specs: Array<[string, number[], 'normal' | 'ones' | 'zeros']> = [['model.embed_tokens.weight', [c.vocab_size, D], 'normal']];
    for (let i = 0; i < c.num_hidden_layers; i++) {
      const p = `model.layers.${i}`;
      specs.push([`${p}.input_layernorm.weight`, [D], 'ones']);
      specs.push([`${p}.self_attn.q_proj.weight`, [D, D], 'normal']);
      specs.push([`${p}.self_attn.k_proj.weight`, [kvDim, D], 'normal']);
      specs.push([`${p}.self_attn.v_proj.weight`, [kvDim, D], 'normal']);
      if (c.attention_bias) {
        specs.push([`${p}.self_attn.q_proj.bias`, [D], 'zeros']);
        specs.push([`${p}.self_attn.k_proj.bias`, [kvDim], 'zeros']);
        specs.push([`${p}.self_attn.v_proj.bias`, [kvDim], 'zeros']);
      }
      specs.push([`${p}.self_attn.o_proj.weight`, [D, D], 'normal']);
      specs.push([`${p}.post_attention_layernorm.weight`, [D], 'ones']);
      specs.push([`${p}.mlp.gate_proj.weight`, [c.intermediate_size, D], 'normal']);
      specs.push([`${p}.mlp.up_proj.weight`, [c.intermediate_size, D], 'normal']);
      specs.push([`${p}.mlp.down_proj.weight`, [D, c.intermediate_size], 'normal']);
    }
    specs.push(['model.norm.weight', [D], 'ones']);
    if (!c.tie_word_embeddings) specs.push(['lm_head.weight', [c.vocab_size, D], 'normal']);
    if (c.value_head) {
      specs.push(['value_head.weight', [1, D], 'normal']);
      specs.push(['value_head.bias', [1], 'zeros']);
    }
    return specs;
  }

  // ------------------------------------------------------------------ weights

  /** Base weights by HF key (HF layout). The same Variables the model computes with. */
  namedWeights(): Map<string, tf.Variable> {
    return new Map(this.weights);
  }

  /** LoRA adapter weights by PEFT key (`base_model.model.<base>.lora_A.weight` [r, in], `lora_B` [out, r]). */
  loraWeights(): Map<string, tf.Variable> {
    const out = new Map<string, tf.Variable>();
    for (const [base, ad] of this.lora) {
      const stem = loraStem(base);
      out.set(`${stem}.lora_A.weight`, ad.a);
      out.set(`${stem}.lora_B.weight`, ad.b);
    }
    return out;
  }

  getLoraConfig(): LoraConfig | null {
    return this.loraConfig ? { ...this.loraConfig, targetModules: [...this.loraConfig.targetModules] } : null;
  }

  /** The Variables an optimizer updates: adapters under LoRA, else every base weight (when trainable). */
  trainableVariables(): tf.Variable[] {
    const all = [...this.weights.values(), ...[...this.lora.values()].flatMap((a) => [a.a, a.b])];
    return all.filter((v) => v.trainable);
  }

  /** Names (HF / PEFT keys) of the trainable variables, same order as trainableVariables(). */
  trainableNames(): string[] {
    const names: string[] = [];
    for (const [k, v] of this.weights) if (v.trainable) names.push(k);
    for (const [k, v] of this.loraWeights()) if (v.trainable) names.push(k);
    return names;
  }

  parameterCount(): number {
    let n = 0;
    for (const v of this.weights.values()) n += v.size;
    return n;
  }

  /** RoPE tables [max_position_embeddings, headDim] (cos, sin), HF layout. */
  rotaryTables(): { cos: Float32Array; sin: Float32Array } {
    return { cos: this.ropeCos, sin: this.ropeSin };
  }

  /**
   * A weight as used by the forward pass, LoRA folded in (W + scale B A), as a new tensor the
   * caller disposes (inference sessions precompute these once per generation).
   */
  effectiveWeight(name: string): tf.Tensor {
    const w = this.w(name);
    const ad = this.lora.get(name);
    return tf.tidy(() => (ad ? tf.add(w, tf.mul(tf.matMul(ad.b, ad.a), ad.scale)) : tf.clone(w))); // [out, r] x [r, in]
  }

  hasWeight(name: string): boolean {
    return this.weights.has(name);
  }

  private w(name: string): tf.Variable {
    const v = this.weights.get(name);
    if (!v) throw new Error(`model has no weight ${name}`);
    return v;
  }

  /**
   * Load weights by HF key. Every expected key must be present with the expected shape; keys
   * the model does not have are an error (unless `ignoreUnexpected`). `lm_head.weight` is
   * ignored when embeddings are tied; a missing value head keeps its initialisation.
   */
  loadWeights(
    map: Map<string, WeightData>,
    options: { ignoreUnexpected?: boolean; where?: string } = {},
  ): { loaded: string[]; missing: string[]; unexpected: string[] } {
    const where = options.where ?? 'weights';
    const loaded: string[] = [];
    const missing: string[] = [];
    const problems: string[] = [];
    for (const [name, variable] of this.weights) {
      const w = map.get(name);
      if (!w) {
        if (name.startsWith('value_head.')) {
          missing.push(name);
          continue;
        }
        problems.push(`missing ${name} (expected shape [${variable.shape.join(', ')}])`);
        continue;
      }
      const expected = variable.shape;
      if (w.shape.length !== expected.length || w.shape.some((d, i) => d !== expected[i])) {
        problems.push(`${name}: expected shape [${expected.join(', ')}], got [${w.shape.join(', ')}]`);
        continue;
      }
      const size = expected.reduce((a, b) => a * b, 1);
      if (w.data.length !== size) {
        problems.push(`${name}: shape [${w.shape.join(', ')}] needs ${size} values, got ${w.data.length}`);
        continue;
      }
    }
    const known = new Set(this.weights.keys());
    const loraKeys = this.loraWeights();
    const unexpected = [...map.keys()].filter(
      (k) => !known.has(k) && !loraKeys.has(k) && !(k === 'lm_head.weight' && this.config.tie_word_embeddings) && !k.endsWith('rotary_emb.inv_freq'),
    );
    if (unexpected.length && !options.ignoreUnexpected) {
      problems.push(
        `unexpected keys (not in this config): ${unexpected.slice(0, 8).join(', ')}${unexpected.length > 8 ? ` and ${unexpected.length - 8} more` : ''}`,
      );
    }
    if (problems.length) {
      throw new Error(
        `${where}: cannot load into a model with this config: ` +
          `${problems.slice(0, 12).join('; ')}${problems.length > 12 ? `; and ${problems.length - 12} more` : ''}. ` +
          'Check that config.json matches the weights file.',
      );
    }
    for (const [name, variable] of this.weights) {
      const w = map.get(name);
      if (!w) continue;
      tf.tidy(() => variable.assign(tf.tensor(w.data, w.shape, 'float32')));
      loaded.push(name);
    }
    for (const [name, variable] of loraKeys) {
      const w = map.get(name);
      if (!w) continue;
      if (w.shape.join(',') !== variable.shape.join(','))
        throw new Error(`${where}: ${name}: expected shape [${variable.shape.join(', ')}], got [${w.shape.join(', ')}]`);
      tf.tidy(() => variable.assign(tf.tensor(w.data, w.shape, 'float32')));
      loaded.push(name);
    }
    return { loaded, missing, unexpected };
  }

  /** Weights as plain data (for checkpoints and worker processes). */
  exportWeights(options: { includeLora?: boolean } = {}): Map<string, WeightData> {
    const out = new Map<string, WeightData>();
    const add = (k: string, v: tf.Variable) => out.set(k, { shape: [...v.shape], data: v.dataSync() as Float32Array });
    for (const [k, v] of this.weights) add(k, v);
    if (options.includeLora) for (const [k, v] of this.loraWeights()) add(k, v);
    return out;
  }

  /** A copy with the same weights (and adapters). `trainable: false` gives a frozen reference (e.g. PPO's KL reference). */
  clone(options: { trainable?: boolean } = {}): CausalLM {
    const copy = new CausalLM(this.config, { trainable: options.trainable ?? this.trainable, init: 'zeros', attention: this.attentionOption });
    for (const [k, v] of this.weights) copy.weights.get(k)!.assign(v);
    if (this.loraConfig) {
      copy.enableLora(this.loraConfig);
      for (const [k, ad] of this.lora) {
        const target = copy.lora.get(k)!;
        target.a.assign(ad.a);
        target.b.assign(ad.b);
        if (options.trainable === false) {
          target.a.trainable = false;
          target.b.trainable = false;
        }
      }
    }
    return copy;
  }

  /** Copy all weights from another model of the same config (e.g. refresh a reference). */
  copyWeightsFrom(other: CausalLM): void {
    for (const [k, v] of this.weights) {
      const src = other.weights.get(k);
      if (!src) throw new Error(`copyWeightsFrom: source has no ${k}`);
      v.assign(src);
    }
  }

  // ------------------------------------------------------------------ LoRA

  /**
   * Freeze the base weights and add trainable low-rank adapters to the target modules. A value head
   * stays trainable (it is not a linear layer of the trunk, and a frozen fresh head would leave
   * PPO's critic at zero), as PEFT's modules_to_save would keep it.
   */
  enableLora(lora: LoraConfig, seed = 0): void {
    if (this.loraConfig) throw new Error('LoRA is already enabled on this model');
    checkLoraConfig(lora);
    this.loraConfig = { ...lora, targetModules: [...lora.targetModules] };
    for (const [name, v] of this.weights) v.trainable = this.trainable && name.startsWith('value_head.');
    let index = 0;
    for (const [name, variable] of this.weights) {
      const m = /\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)\.weight$/.exec(name);
      if (!m || !lora.targetModules.includes(m[1]!)) continue;
      const [out, inDim] = variable.shape as [number, number];
      const bound = 1 / Math.sqrt(inDim);
      const aInit = tf.randomUniform([lora.rank, inDim], -bound, bound, 'float32', seed * 7919 + 1 + index++); // never 0 (TF.js: unseeded)
      const a = tf.variable(aInit, this.trainable, `m${this.uid}/${name}.lora_A`);
      const bInit = tf.zeros([out, lora.rank]);
      const b = tf.variable(bInit, this.trainable, `m${this.uid}/${name}.lora_B`);
      aInit.dispose();
      bInit.dispose();
      this.lora.set(name, { a, b, scale: lora.alpha / lora.rank });
    }
  }

  /** Fold the adapters into the base weights (W += scale B A), remove them and unfreeze the base. */
  mergeLora(): void {
    for (const [name, ad] of this.lora) {
      const w = this.weights.get(name)!;
      tf.tidy(() => w.assign(tf.add(w, tf.mul(tf.matMul(ad.b, ad.a), ad.scale)))); // [out, r] x [r, in]
      ad.a.dispose();
      ad.b.dispose();
    }
    this.lora.clear();
    this.loraConfig = null;
    for (const v of this.weights.values()) v.trainable = this.trainable;
  }

  /** A linear layer by base weight name: y = x W^T (+ b) (+ scale (x A^T) B^T). */
  private proj(x: tf.Tensor2D, name: string): tf.Tensor2D {
    const w = this.w(name);
    let y = linear(x, w as tf.Tensor2D, w.trainable);
    const biasName = name.replace(/\.weight$/, '.bias');
    const bias = this.weights.get(biasName);
    if (bias) y = addBias(y, bias as tf.Tensor1D); // bias gradient: a column sum in JS on wasm
    const ad = this.lora.get(name);
    if (ad) {
      const low = linear(x, ad.a as tf.Tensor2D, ad.a.trainable); // [N, r]
      const up = linear(low, ad.b as tf.Tensor2D, ad.b.trainable); // [N, out]
      y = tf.add(y, tf.mul(up, ad.scale));
    }
    return y;
  }

  // ------------------------------------------------------------------ forward

  private ropeRows(positions: number[][], heads: number): { cos: tf.Tensor2D; sin: tf.Tensor2D } {
    // One row per (token, head): [B*T*heads, hd], in the order of a [B, T, heads, hd] tensor.
    const hd = headDim(this.config);
    const maxPos = this.config.max_position_embeddings;
    let rows = 0;
    for (const r of positions) rows += r.length;
    const cos = new Float32Array(rows * heads * hd);
    const sin = new Float32Array(rows * heads * hd);
    let o = 0;
    for (const r of positions) {
      for (const p of r) {
        if (p >= maxPos) throw new Error(`position ${p} exceeds max_position_embeddings ${maxPos}: shorten the sequence or raise the limit`);
        const src = p * hd;
        for (let h = 0; h < heads; h++) {
          cos.set(this.ropeCos.subarray(src, src + hd), o);
          sin.set(this.ropeSin.subarray(src, src + hd), o);
          o += hd;
        }
      }
    }
    return { cos: tf.tensor2d(cos, [rows * heads, hd]), sin: tf.tensor2d(sin, [rows * heads, hd]) };
  }

  private embed(ids: number[][]): tf.Tensor2D {
    const flat = new Int32Array(ids.length * (ids[0]?.length ?? 0));
    let o = 0;
    const V = this.config.vocab_size;
    for (let b = 0; b < ids.length; b++) {
      for (const t of ids[b]!) {
        if (!Number.isInteger(t) || t < 0 || t >= V) throw new Error(`inputIds[${b}] contains token id ${t}, outside the vocabulary [0, ${V})`);
        flat[o++] = t;
      }
    }
    const table = this.w('model.embed_tokens.weight');
    return embedding(table as tf.Tensor2D, tf.tensor1d(flat, 'int32'), table.trainable); // [N, D]
  }

  private lmHead(hidden: tf.Tensor2D): tf.Tensor2D {
    const name = this.config.tie_word_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight';
    const w = this.w(name);
    return linear(hidden, w as tf.Tensor2D, w.trainable); // [N, V]
  }

  private valueHead(hidden: tf.Tensor2D): tf.Tensor2D {
    const w = this.w('value_head.weight');
    return tf.add(linear(hidden, w as tf.Tensor2D, w.trainable), this.w('value_head.bias')) as tf.Tensor2D; // [N, 1]
  }

  private checkBatch(inputIds: number[][], mask?: number[][], segmentIds?: number[][]): { B: number; T: number; mask: number[][] } {
    if (!Array.isArray(inputIds) || inputIds.length === 0) throw new Error('inputIds: expected a non-empty number[][] [batch, time]');
    const T = inputIds[0]!.length;
    if (T === 0) throw new Error('inputIds: sequences are empty');
    inputIds.forEach((r, b) => {
      if (r.length !== T)
        throw new Error(`inputIds[${b}] has length ${r.length}, expected ${T} (pad every row to the same length and pass attentionMask)`);
    });
    const name = segmentIds ? 'segmentIds' : 'attentionMask';
    const m = segmentIds ?? mask ?? inputIds.map((r) => r.map(() => 1));
    if (m.length !== inputIds.length) throw new Error(`${name} has ${m.length} rows, inputIds has ${inputIds.length}`);
    m.forEach((r, b) => {
      if (r.length !== T) throw new Error(`${name}[${b}] has length ${r.length}, expected ${T}`);
    });
    return { B: inputIds.length, T, mask: m };
  }

  /** Position ids from the mask: count of real tokens before each position (left padding works). */
  static positionsFromMask(mask: number[][]): number[][] {
    return mask.map((row) => {
      let p = 0;
      return row.map((m) => {
        const v = p;
        if (m) p++;
        return m ? v : 0;
      });
    });
  }

  /** Position ids from segment ids (0/1 masks included): counting restarts when the segment id changes. */
  static positionsFromSegments(segments: number[][]): number[][] {
    return segments.map((row) => {
      let p = 0;
      let current = 0;
      return row.map((s) => {
        if (!s) return 0;
        if (s !== current) {
          current = s;
          p = 0;
        }
        return p++;
      });
    });
  }

  /** [B, T] 1 where token t has a preceding token of the same segment (its log-prob is defined). */
  static hasPrefix(segments: number[][]): number[][] {
    return segments.map((row) => row.map((s, t) => (t > 0 && s !== 0 && row[t - 1] === s ? 1 : 0)));
  }

  /**
   * One decoder layer on the residual stream x [N, D]: pre-norm attention, then a pre-norm SwiGLU
   * MLP, each added back to x. `attend(q, k, v, layer)` is the only part that varies: q [N, H*hd],
   * k and v [N, KV*hd] (before rotary positions) in, the attended values [N, H*hd] out.
   */
  private block(i: number, x: tf.Tensor2D, attend: (q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D, layer: number) => tf.Tensor2D): tf.Tensor2D {
    const p = `model.layers.${i}`;
    const eps = this.config.rms_norm_eps;
    const h = rmsNorm(x, this.w(`${p}.input_layernorm.weight`) as tf.Tensor1D, eps); // [N, D]
    const q = this.proj(h, `${p}.self_attn.q_proj.weight`); // [N, H*hd]
    const k = this.proj(h, `${p}.self_attn.k_proj.weight`); // [N, KV*hd]
    const v = this.proj(h, `${p}.self_attn.v_proj.weight`); // [N, KV*hd]
    const attended = tf.add(x, this.proj(attend(q, k, v, i), `${p}.self_attn.o_proj.weight`)) as tf.Tensor2D; // [N, D]
    const h2 = rmsNorm(attended, this.w(`${p}.post_attention_layernorm.weight`) as tf.Tensor1D, eps);
    const mlp = swiglu(this.proj(h2, `${p}.mlp.gate_proj.weight`), this.proj(h2, `${p}.mlp.up_proj.weight`)); // [N, I]
    return tf.add(attended, this.proj(mlp, `${p}.mlp.down_proj.weight`)) as tf.Tensor2D; // [N, D]
  }

  /** The decoder trunk on a full sequence (training and scoring). Returns final hidden [N, D]. */
  private trunk(inputIds: number[][], mask: number[][]): tf.Tensor2D {
    const c = this.config;
    const B = inputIds.length;
    const T = inputIds[0]!.length;
    const H = c.num_attention_heads;
    const KV = c.num_key_value_heads;
    const hd = headDim(c);
    const positions = CausalLM.positionsFromSegments(mask); // mask may be 0/1 or segment ids
    const fast = this.useFastAttention();
    // The fast kernel applies RoPE itself (in JS, while cutting tiles); the reference path uses the rope kernel.
    const qRope = fast ? null : this.ropeRows(positions, H);
    const kRope = fast ? null : KV === H ? qRope : this.ropeRows(positions, KV);
    const rotary = { cos: this.ropeCos, sin: this.ropeSin, positions };
    const bias = fast ? null : segmentBias(mask, T); // [B, 1, T, T] (reference path only)
    const shape: AttentionShape = { batch: B, queryLength: T, keyLength: T, heads: H, kvHeads: KV, headDim: hd };
    const attend = (q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D): tf.Tensor2D => {
      // [N, H*hd]
      if (fast) return attentionFast(q, k, v, mask, shape, rotary);
      // rows per head -> [N, H*hd]
      const qr = tf.reshape(rope(tf.reshape(q, [B * T * H, hd]), qRope!.cos, qRope!.sin, this.rotate, this.rotateT), [B * T, H * hd]);
      const kr = tf.reshape(rope(tf.reshape(k, [B * T * KV, hd]), kRope!.cos, kRope!.sin, this.rotate, this.rotateT), [B * T, KV * hd]);
      return attentionReference(qr as tf.Tensor2D, kr as tf.Tensor2D, v, bias!, shape);
    };
    let x = this.embed(inputIds); // [N, D]
    for (let i = 0; i < c.num_hidden_layers; i++) x = this.block(i, x, attend);
    return rmsNorm(x, this.w('model.norm.weight') as tf.Tensor1D, c.rms_norm_eps);
  }

  /** Full forward: logits [B, T, V] and values [B, T] at every position. Call inside tf.tidy. */
  forward(inputIds: number[][], options: ForwardOptions = {}): ForwardResult {
    this.assertLive();
    const { B, T, mask } = this.checkBatch(inputIds, options.attentionMask, options.segmentIds);
    const hidden = this.trunk(inputIds, mask);
    const logits = options.logits === false ? null : (tf.reshape(this.lmHead(hidden), [B, T, this.config.vocab_size]) as tf.Tensor3D); // [N, V] -> [B, T, V]
    const wantValues = options.values ?? this.config.value_head;
    if (wantValues && !this.config.value_head) throw new Error('values requested but this model has no value head (config value_head = false)');
    const values = wantValues ? (tf.reshape(this.valueHead(hidden), [B, T]) as tf.Tensor2D) : null; // [N, 1] -> [B, T]
    return { logits, values, hidden };
  }

  /**
   * Per-token log-probabilities, entropies and values aligned with the tokens (see TokenOutputs).
   * Differentiable; call inside tf.tidy / a gradient function.
   */
  tokenOutputs(
    inputIds: number[][],
    options: { attentionMask?: number[][]; segmentIds?: number[][]; values?: boolean; logits?: boolean } = {},
  ): TokenOutputs {
    this.assertLive();
    const { B, T, mask } = this.checkBatch(inputIds, options.attentionMask, options.segmentIds);
    const hidden = this.trunk(inputIds, mask); // [N, D]
    const wantValues = options.values ?? this.config.value_head;
    if (options.logits === false) {
      // values only (a critic)
      return { logprobs: tf.zeros([B, T]), entropies: tf.zeros([B, T]), values: wantValues ? this.shiftedValues(hidden, B, T, mask) : null };
    }
    const logits = this.lmHead(hidden); // [N, V]
    const targets = new Int32Array(B * T); // next token at each position
    for (let b = 0; b < B; b++) for (let t = 0; t + 1 < T; t++) targets[b * T + t] = inputIds[b]![t + 1]!;
    const stats = tokenStats(logits, tf.tensor1d(targets, 'int32')); // [N, 2] (logprob, entropy) of the next token
    const shifted = shiftRight(tf.reshape(stats, [B, T, 2]) as tf.Tensor3D); // [B, T, 2]: position t <- t-1
    const cols = tf.reshape(shifted, [B * T, 2]) as tf.Tensor2D; // [N, 2]
    // Tokens without a preceding token of their own segment (first token, first of a packed
    // segment, first real token after left padding) have no defined log-prob: 0.
    const defined = tf.tensor2d(CausalLM.hasPrefix(mask)); // [B, T]
    const logprobs = tf.mul(tf.reshape(tf.matMul(cols, tf.tensor2d([[1], [0]])), [B, T]), defined) as tf.Tensor2D; // column 0 -> [B, T]
    const entropies = tf.mul(tf.reshape(tf.matMul(cols, tf.tensor2d([[0], [1]])), [B, T]), defined) as tf.Tensor2D; // column 1 -> [B, T]
    return { logprobs, entropies, values: wantValues ? this.shiftedValues(hidden, B, T, mask) : null };
  }

  private shiftedValues(hidden: tf.Tensor2D, B: number, T: number, segments: number[][]): tf.Tensor2D {
    if (!this.config.value_head) throw new Error('values requested but this model has no value head (config value_head = false)');
    const v = tf.reshape(this.valueHead(hidden), [B, T, 1]) as tf.Tensor3D; // [N, 1] -> [B, T, 1]
    const shifted = tf.reshape(shiftRight(v), [B, T]); // value of the prefix < t
    return tf.mul(shifted, tf.tensor2d(CausalLM.hasPrefix(segments))) as tf.Tensor2D; // 0 where there is no prefix
  }

  // ------------------------------------------------------------------ incremental (KV cache)

  /**
   * Run new tokens [B, Tn] through the model with a K/V cache (prefill when cache is null).
   * `newMask` [B, Tn] marks real tokens (left-padded prompts). Returns the logits [B, V] of the
   * last new position and the extended cache (the old cache's tensors are disposed).
   * Not differentiable; keeps its cache tensors outside any tidy scope.
   */
  step(newIds: number[][], newMask: number[][], cache: KvCache | null): { logits: tf.Tensor2D; cache: KvCache } {
    this.assertLive();
    const c = this.config;
    const B = newIds.length;
    const Tn = newIds[0]!.length;
    const H = c.num_attention_heads;
    const KV = c.num_key_value_heads;
    const hd = headDim(c);
    const rep = H / KV;
    const start = cache ? cache.nextPosition : new Array<number>(B).fill(0);
    const positions = newMask.map((row, b) => {
      let p = start[b]!;
      return row.map((m) => {
        const v = p;
        if (m) p++;
        return m ? v : 0;
      });
    });
    const nextPosition = newMask.map((row, b) => start[b]! + row.reduce((a, m) => a + (m ? 1 : 0), 0));
    const keyMask = cache ? cache.keyMask.map((r, b) => [...r, ...newMask[b]!]) : newMask.map((r) => [...r]);
    const Tk = keyMask[0]!.length;
    const newKeys: tf.Tensor4D[] = [];
    const newValues: tf.Tensor4D[] = [];
    const logits = tf.tidy(() => {
      const qRope = this.ropeRows(positions, H);
      const kRope = KV === H ? qRope : this.ropeRows(positions, KV);
      const bias = attentionBias(keyMask, Tn); // [B, 1, Tn, Tk]
      const biasG = rep === 1 ? bias : tf.reshape(tf.tile(tf.reshape(bias, [B, 1, 1, Tn, Tk]), [1, 1, rep, 1, 1]), [B, 1, rep * Tn, Tk]);
      const attend = (qIn: tf.Tensor2D, kIn: tf.Tensor2D, v: tf.Tensor2D, i: number): tf.Tensor2D => {
        // [B*Tn, H*hd]
        const q = rope(tf.reshape(qIn, [B * Tn * H, hd]), qRope.cos, qRope.sin, this.rotate, this.rotateT); // [B*Tn*H, hd]
        const k = rope(tf.reshape(kIn, [B * Tn * KV, hd]), kRope.cos, kRope.sin, this.rotate, this.rotateT); // [B*Tn*KV, hd]
        const k4 = tf.transpose(tf.reshape(k, [B, Tn, KV, hd]), [0, 2, 1, 3]) as tf.Tensor4D; // [B, KV, Tn, hd]
        const v4 = tf.transpose(tf.reshape(v, [B, Tn, KV, hd]), [0, 2, 1, 3]) as tf.Tensor4D; // [B, KV, Tn, hd]
        const kAll = cache ? (tf.concat([cache.keys[i]!, k4], 2) as tf.Tensor4D) : k4; // [B, KV, Tk, hd]
        const vAll = cache ? (tf.concat([cache.values[i]!, v4], 2) as tf.Tensor4D) : v4;
        newKeys.push(tf.keep(kAll));
        newValues.push(tf.keep(vAll));
        const qg = tf.reshape(tf.transpose(tf.reshape(q, [B, Tn, KV, rep, hd]), [0, 2, 3, 1, 4]), [B, KV, rep * Tn, hd]); // [B, KV, rep*Tn, hd]
        const scores = tf.add(tf.mul(tf.matMul(qg, kAll, false, true), 1 / Math.sqrt(hd)), biasG); // [B, KV, rep*Tn, Tk]
        const out = tf.matMul(tf.softmax(scores), vAll); // [B, KV, rep*Tn, hd]
        return tf.reshape(tf.transpose(tf.reshape(out, [B, KV, rep, Tn, hd]), [0, 3, 1, 2, 4]), [B * Tn, H * hd]) as tf.Tensor2D; // [B*Tn, H*hd]
      };
      let x = this.embed(newIds); // [B*Tn, D]
      for (let i = 0; i < c.num_hidden_layers; i++) x = this.block(i, x, attend);
      const last =
        Tn === 1 ? x : tf.reshape(tf.slice(tf.reshape(x, [B, Tn, c.hidden_size]), [0, Tn - 1, 0], [B, 1, c.hidden_size]), [B, c.hidden_size]); // [B, D]
      const hidden = rmsNorm(last as tf.Tensor2D, this.w('model.norm.weight') as tf.Tensor1D, c.rms_norm_eps);
      return this.lmHead(hidden); // [B, V]
    });
    if (cache) disposeCache(cache);
    return { logits, cache: { keys: newKeys, values: newValues, keyMask, nextPosition } };
  }

  private useFastAttention(): boolean {
    if (this.attentionOption !== 'auto') return this.attentionOption === 'fast';
    const backend = tf.getBackend();
    return backend === 'wasm' || backend === 'cpu';
  }

  private assertLive(): void {
    if (this.disposed) throw new Error('this model was disposed');
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const v of this.weights.values()) v.dispose();
    for (const ad of this.lora.values()) {
      ad.a.dispose();
      ad.b.dispose();
    }
    this.rotate.dispose();
    this.rotateT.dispose();
  }
}

/** [B, T, C] -> [B, T, C] with position t holding input t-1 and position 0 holding zeros. */
function shiftRight(x: tf.Tensor3D): tf.Tensor3D {
  const [B, T, C] = x.shape;
  if (T === 1) return tf.zerosLike(x);
  return tf.pad(tf.slice(x, [0, 0, 0], [B, T - 1, C]), [[0, 0], [1, 0], [0, 0]]) as tf.Tensor3D;
}

export function disposeCache(cache: KvCache): void {
  for (const t of cache.keys) t.dispose();
  for (const t of cache.values) t.dispose();
}
