// Model configuration: the Hugging Face Qwen2 / Qwen3 / Llama config.json fields (same names, snake_case, so a
// config written here is a valid config.json and one from transformers loads here), each with a
// default and a one-line reason, plus our own extensions (value head). Validated where it enters.
import { z } from 'zod';

/** The decoder families that load (hf-load.ts maps each family's config.json defaults). */
export const MODEL_FAMILIES = ['qwen2', 'qwen3', 'llama'] as const;
export type ModelFamily = (typeof MODEL_FAMILIES)[number];

/** Llama 3.x frequency-dependent RoPE scaling (transformers' rope_type "llama3"). */
export const Llama3RopeScalingSchema = z.object({
  rope_type: z.literal('llama3'),
  factor: z.number().positive(),
  low_freq_factor: z.number().positive(),
  high_freq_factor: z.number().positive(),
  original_max_position_embeddings: z.number().int().positive(),
}).loose();

/**
 * Sane upper bounds of a config's sizes, checked before anything is allocated from them (a config.json
 * or GGUF header that claims 2^20 layers or 2^26 positions is refused, not built). Each is well above
 * every released model of the supported families: Llama 3.1 405B has 126 layers, hidden 16384,
 * intermediate 53248, 128 heads; Gemma's vocabulary is 256k; Llama 4 Scout's context is 10M positions.
 */
export const MODEL_SIZE_LIMITS = {
  num_hidden_layers: 1024,
  hidden_size: 65536,
  intermediate_size: 1 << 20,
  num_attention_heads: 1024,
  num_key_value_heads: 1024,
  head_dim: 4096,
  vocab_size: 1 << 22,
  max_position_embeddings: 1 << 24,
} as const;

/** A positive integer size of at most MODEL_SIZE_LIMITS[key], with a message naming the bound. */
function size(key: keyof typeof MODEL_SIZE_LIMITS) {
  const max = MODEL_SIZE_LIMITS[key];
  return z.number().int().positive().max(max, `expected at most ${max} (MODEL_SIZE_LIMITS: no released model is larger; corrupt config?)`);
}

export const ModelConfigSchema = z.object({
  architectures: z.array(z.string()).default(['Qwen2ForCausalLM']), // what transformers instantiates
  model_type: z.enum(MODEL_FAMILIES).default('qwen2'),              // HF model family (qwen3 adds q/k RMSNorm; llama has no qkv bias)
  vocab_size: size('vocab_size').default(128),            // set from the tokenizer in practice
  hidden_size: size('hidden_size').default(128),          // residual stream width
  intermediate_size: size('intermediate_size').default(352),     // SwiGLU width (~8/3 x hidden keeps params ~ GPT 4x MLP)
  num_hidden_layers: size('num_hidden_layers').default(4),      // decoder blocks
  num_attention_heads: size('num_attention_heads').default(4),    // query heads
  num_key_value_heads: size('num_key_value_heads').default(4),    // K/V heads (GQA when < query heads)
  max_position_embeddings: size('max_position_embeddings').default(512), // longest context (RoPE table size)
  rope_theta: z.number().positive().default(10000),                // RoPE base (Qwen2.5 uses 1e6, SmolLM2 1e5)
  rope_scaling: Llama3RopeScalingSchema.nullable().optional(),      // Llama 3.x long-context RoPE (torch backend only)
  head_dim: size('head_dim').optional(),               // per-head width when not hidden/heads (Qwen3; torch backend only)
  rms_norm_eps: z.number().positive().default(1e-6),               // RMSNorm epsilon (Qwen2 value)
  tie_word_embeddings: z.boolean().default(true),                  // lm_head shares embed_tokens (small models)
  attention_bias: z.boolean().default(true),                       // q/k/v projections have bias (Qwen2 = true)
  hidden_act: z.literal('silu').default('silu'),                   // SwiGLU activation (only silu supported)
  torch_dtype: z.enum(['float32', 'float16', 'bfloat16']).default('float32'), // dtype written to safetensors
  initializer_range: z.number().positive().default(0.02),          // std of normal init
  bos_token_id: z.number().int().nullable().optional(),            // informational
  eos_token_id: z.union([z.number().int(), z.array(z.number().int())]).nullable().optional(), // informational; generation uses the tokenizer's
  pad_token_id: z.number().int().nullable().optional(),            // informational
  use_sliding_window: z.boolean().default(false),                  // Qwen2 sliding window (unsupported when true)
  attention_dropout: z.number().min(0).max(1).default(0),          // ignored (no dropout here)
  // ----- our extensions (ignored by transformers) -----
  /** Scalar value head (`value_head.weight` [1, hidden], `value_head.bias` [1]) on this model's trunk. */
  value_head: z.boolean().default(false),
}).loose(); // HF configs carry many more fields (transformers_version, use_cache, ...): kept, ignored.

export type ModelConfig = z.infer<typeof ModelConfigSchema>;
export type ModelConfigInput = z.input<typeof ModelConfigSchema>;

export const PRESETS = {
  /** ~0.8M parameters: trains the whole recipe on a laptop CPU in minutes. The reference shape. */
  tiny: {
    hidden_size: 128,
    intermediate_size: 352,
    num_hidden_layers: 4,
    num_attention_heads: 4,
    num_key_value_heads: 4,
    max_position_embeddings: 512,
    vocab_size: 128,
    tie_word_embeddings: true,
  },
  /** ~10M parameters (GQA 6:2, head 64). */
  small: {
    hidden_size: 384,
    intermediate_size: 1024,
    num_hidden_layers: 6,
    num_attention_heads: 6,
    num_key_value_heads: 2,
    max_position_embeddings: 1024,
    vocab_size: 128,
    tie_word_embeddings: true,
  },
  /** ~50M parameters (GQA 10:2, head 64). */
  base: {
    hidden_size: 640,
    intermediate_size: 1728,
    num_hidden_layers: 12,
    num_attention_heads: 10,
    num_key_value_heads: 2,
    max_position_embeddings: 2048,
    vocab_size: 128,
    tie_word_embeddings: true,
  },
} as const satisfies Record<string, ModelConfigInput>;
export type PresetName = keyof typeof PRESETS;

export function headDim(config: ModelConfig): number { return config.head_dim ?? config.hidden_size / config.num_attention_heads; }

/** HF tensor names and shapes a config implies, in HF order (the torch worker's param_specs; TF.js's parameterSpecs for the qwen2/llama shapes). */
export function hfTensorSpecs(config: ModelConfig): Map<string, number[]> {
  const c = config;
  const D = c.hidden_size;
  const hd = headDim(c);
  const q = c.num_attention_heads * hd;
  const kv = c.num_key_value_heads * hd;
  const specs = new Map<string, number[]>([['model.embed_tokens.weight', [c.vocab_size, D]]]);
  for (let i = 0; i < c.num_hidden_layers; i++) {
    const p = `model.layers.${i}`;
    specs.set(`${p}.input_layernorm.weight`, [D]);
    specs.set(`${p}.self_attn.q_proj.weight`, [q, D]);
    specs.set(`${p}.self_attn.k_proj.weight`, [kv, D]);
    specs.set(`${p}.self_attn.v_proj.weight`, [kv, D]);
    if (c.attention_bias) {
      specs.set(`${p}.self_attn.q_proj.bias`, [q]);
      specs.set(`${p}.self_attn.k_proj.bias`, [kv]);
      specs.set(`${p}.self_attn.v_proj.bias`, [kv]);
    }
    if (c.model_type === 'qwen3') {
      specs.set(`${p}.self_attn.q_norm.weight`, [hd]);
      specs.set(`${p}.self_attn.k_norm.weight`, [hd]);
    }
    specs.set(`${p}.self_attn.o_proj.weight`, [D, q]);
    specs.set(`${p}.post_attention_layernorm.weight`, [D]);
    specs.set(`${p}.mlp.gate_proj.weight`, [c.intermediate_size, D]);
    specs.set(`${p}.mlp.up_proj.weight`, [c.intermediate_size, D]);
    specs.set(`${p}.mlp.down_proj.weight`, [D, c.intermediate_size]);
  }
  specs.set('model.norm.weight', [D]);
  if (!c.tie_word_embeddings) specs.set('lm_head.weight', [c.vocab_size, D]);
  if (c.value_head) {
    specs.set('value_head.weight', [1, D]);
    specs.set('value_head.bias', [1]);
  }
  return specs;
}

/**
 * What the TF.js model (core/model/transformer.ts) does not implement in this config; empty when it
 * runs there. The torch worker runs all of these.
 */
export function tfjsUnsupported(config: ModelConfig): string[] {
  const out: string[] = [];
  if (config.model_type === 'qwen3') out.push('model_type "qwen3" (per-head q/k RMSNorm)');
  if (config.head_dim !== undefined && config.head_dim !== config.hidden_size / config.num_attention_heads) {
    out.push(`head_dim ${config.head_dim} != hidden_size / num_attention_heads (${config.hidden_size / config.num_attention_heads})`);
  }
  if (config.rope_scaling) out.push(`rope_scaling.rope_type "${config.rope_scaling.rope_type}"`);
  return out;
}

/**
 * Parse and check a config (from a preset, a config.json or code). `where` names the source
 * for error messages (e.g. the file path).
 */
export function parseModelConfig(input: unknown, where = 'model config'): ModelConfig {
  const parsed = ModelConfigSchema.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new Error(`${where}: invalid model config: ${issues}`);
  }
  const c = parsed.data;
  const problems: string[] = [];
  if (c.head_dim === undefined && c.hidden_size % c.num_attention_heads !== 0) {
    problems.push(`hidden_size (${c.hidden_size}) must be divisible by num_attention_heads (${c.num_attention_heads}), or head_dim given`);
  } else if (headDim(c) % 2 !== 0) {
    problems.push(`head dim ${headDim(c)} must be even for rotary embeddings`);
  }
  if (c.num_attention_heads % c.num_key_value_heads !== 0) {
    problems.push(`num_attention_heads (${c.num_attention_heads}) must be a multiple of num_key_value_heads (${c.num_key_value_heads})`);
  }
  if (c.use_sliding_window) problems.push('use_sliding_window = true is not supported (set it to false)');
  if (c.rope_scaling && c.model_type !== 'llama') problems.push(`rope_scaling "llama3" is for model_type "llama", not "${c.model_type}"`);
  if (c.rope_scaling && !(c.rope_scaling.high_freq_factor > c.rope_scaling.low_freq_factor)) {
    problems.push(`rope_scaling.high_freq_factor (${c.rope_scaling.high_freq_factor}) must exceed low_freq_factor (${c.rope_scaling.low_freq_factor})`);
  }
  if (problems.length) throw new Error(`${where}: invalid model config: ${problems.join('; ')}`);
  return c;
}

/** A preset by name, with overrides (e.g. `{ vocab_size: tokenizer.vocabSize }`). */
export function presetConfig(name: string, overrides: ModelConfigInput = {}): ModelConfig {
  if (!(name in PRESETS)) {
    throw new Error(`unknown model preset ${JSON.stringify(name)}: expected one of ${Object.keys(PRESETS).join(', ')}`);
  }
  return parseModelConfig({ ...PRESETS[name as PresetName], ...overrides }, `preset "${name}"`);
}

/** Number of parameters a config implies (without instantiating it). */
export function countParameters(config: ModelConfig): number {
  const d = config.hidden_size;
  const q = config.num_attention_heads * headDim(config);
  const kv = config.num_key_value_heads * headDim(config);
  const bias = config.attention_bias ? q + 2 * kv : 0;
  const qkNorm = config.model_type === 'qwen3' ? 2 * headDim(config) : 0;
  const attention = d * q + 2 * d * kv + q * d + bias + qkNorm;
  const mlp = 3 * d * config.intermediate_size;
  const perLayer = attention + mlp + 2 * d;
  const embed = config.vocab_size * d;
  const head = config.tie_word_embeddings ? 0 : embed;
  const value = config.value_head ? d + 1 : 0;
  return embed + config.num_hidden_layers * perLayer + d + head + value;
}

/** The config as written to config.json (HF field names; our extensions kept). */
export function configToJson(config: ModelConfig): Record<string, unknown> {
  return { ...config, head_dim: headDim(config) };
}
