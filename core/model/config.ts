// Model configuration: the Hugging Face Qwen2 config.json fields (same names, snake_case, so a
// config written here is a valid config.json and one from transformers loads here), each with a
// default and a one-line reason, plus our own extensions (value head). Validated where it enters.
import { z } from 'zod';

export const ModelConfigSchema = z.object({
  architectures: z.array(z.string()).default(['Qwen2ForCausalLM']), // what transformers instantiates
  model_type: z.string().default('qwen2'),                         // HF model family
  vocab_size: z.number().int().positive().default(128),            // set from the tokenizer in practice
  hidden_size: z.number().int().positive().default(128),           // residual stream width
  intermediate_size: z.number().int().positive().default(352),     // SwiGLU width (~8/3 x hidden keeps params ~ GPT 4x MLP)
  num_hidden_layers: z.number().int().positive().default(4),       // decoder blocks
  num_attention_heads: z.number().int().positive().default(4),     // query heads
  num_key_value_heads: z.number().int().positive().default(4),     // K/V heads (GQA when < query heads)
  max_position_embeddings: z.number().int().positive().default(512), // longest context (RoPE table size)
  rope_theta: z.number().positive().default(10000),                // RoPE base (Qwen2.5 uses 1e6)
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

export function headDim(config: ModelConfig): number { return config.hidden_size / config.num_attention_heads; }

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
  if (c.hidden_size % c.num_attention_heads !== 0) {
    problems.push(`hidden_size (${c.hidden_size}) must be divisible by num_attention_heads (${c.num_attention_heads})`);
  } else if ((c.hidden_size / c.num_attention_heads) % 2 !== 0) {
    problems.push(`head dim hidden_size/num_attention_heads = ${c.hidden_size / c.num_attention_heads} must be even for rotary embeddings`);
  }
  if (c.num_attention_heads % c.num_key_value_heads !== 0) {
    problems.push(`num_attention_heads (${c.num_attention_heads}) must be a multiple of num_key_value_heads (${c.num_key_value_heads})`);
  }
  if (c.use_sliding_window) problems.push('use_sliding_window = true is not supported (set it to false)');
  const explicitHeadDim = (c as Record<string, unknown>).head_dim;
  if (typeof explicitHeadDim === 'number' && explicitHeadDim !== c.hidden_size / c.num_attention_heads) {
    problems.push(`head_dim ${explicitHeadDim} != hidden_size/num_attention_heads (${c.hidden_size / c.num_attention_heads}) is not supported`);
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
  const kv = config.num_key_value_heads * headDim(config);
  const bias = config.attention_bias ? d + 2 * kv : 0;
  const attention = d * d + 2 * d * kv + d * d + bias;
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
