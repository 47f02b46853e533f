// The memory model of a real model's run on one GPU (issue 20 item 6): peak device memory per stage (self-play
// rollout, SFT, RL rollout, RL actor update, critic update, KL reference pass) for a model shape, a run size's
// settings and the torch worker's code path (resources/torch-worker/worker.py), and what fits a 24 / 48 / 80 GB card.
// docs/compute.md's memory table is rendered from here (core/engine/memory-model-doc.ts); tests/engine/memory-model.test.ts
// compares the model with every committed measurement (bench/results) within 15%.
//
// What it counts, per process on the device (the policy's worker; a separate critic and a KL reference are processes
// of their own, each with its own CUDA context and caching allocator, so their resident memory adds up):
//   state       f32 master weights 4 B/param; training adds f32 gradients 4 and AdamW m, v 8 (16 B/param); the
//               shared-trunk value view keeps a second AdamW slot over the trunk (+8); bf16 moments (optimizerDtype, the
//               default for real models) halve both slots (4 per slot); `apply` copies the gradients
//               twice (divided, then clipped: 20 B/param at its peak, after the activations are freed); under bf16
//               autocast the bf16 casts of the trainable weights live from forward to backward (+2). LoRA: the frozen
//               base in bf16 (frozenDtype bf16) or f32, adapters ~0.
//   activations bytes saved per token per decoder layer (bf16 autocast: 52·D + 4·KV·hd + 8·I; the review's count that
//               reproduced the H200 measurement, with K/V no longer repeated to every head), the attention mask
//               (rep·L bytes per token) and, without fused attention (SDPA), the softmax probabilities (6·H·L per layer);
//               with gradient checkpointing only each layer's f32 input (4·D) plus one layer recomputed.
//   LM head     the current worker: log-probs on the scored tokens only, in chunks of 256 MiB of f32 logits recomputed
//               in the backward pass (peak ~5 chunks); before (LEGACY_PATH): 5·4·V bytes per token on every position.
//   generation  weights, the bf16 K/V cache of one row chunk (rows · layers · 2 · KV · hd · (prompt + new) · 2 B), the
//               prefill's transient per layer and the decode step's f32 [rows, V] logits; the prefix cache: every rollout
//               row's K/V kept for its next turn, up to SPA_TORCH_PREFIX_CACHE_MB (2 GiB).
// Numbers are estimates of the allocator's peak on CUDA (reserved memory, ~0.5 GiB CUDA context per process).
import { MEMORY_DEFAULTS, type RunConfig } from '../api/run-config.js';

/** A decoder's shape (the HF config.json fields that set its memory). */
export interface ModelShape {
  name: string;
  hidden: number;          // D
  intermediate: number;    // I
  layers: number;          // ℓ
  heads: number;           // H
  kvHeads: number;         // KV
  headDim: number;         // hd
  vocab: number;           // V
  tied: boolean;           // tie_word_embeddings
  qkvBias: boolean;
}

export const QWEN25_05B: ModelShape = {
  name: 'Qwen2.5-0.5B', hidden: 896, intermediate: 4864, layers: 24, heads: 14, kvHeads: 2, headDim: 64, vocab: 151_936, tied: true, qkvBias: true,
};
export const QWEN25_15B: ModelShape = {
  name: 'Qwen2.5-1.5B', hidden: 1536, intermediate: 8960, layers: 28, heads: 12, kvHeads: 2, headDim: 128, vocab: 151_936, tied: true, qkvBias: true,
};

/** Parameters of a Llama/Qwen2-style decoder (embedding, attention, gated MLP, two RMSNorms per layer, final norm, head unless tied). */
export function parameterCount(s: ModelShape): number {
  const q = s.heads * s.headDim, kv = s.kvHeads * s.headDim;
  const attention = s.hidden * q + 2 * s.hidden * kv + q * s.hidden + (s.qkvBias ? q + 2 * kv : 0);
  const layer = attention + 3 * s.hidden * s.intermediate + 2 * s.hidden;
  return s.vocab * s.hidden * (s.tied ? 1 : 2) + s.layers * layer + s.hidden;
}

/** The worker's code path: which memory techniques it has. */
export interface WorkerPath {
  device: 'cuda' | 'cpu';
  /** bf16 autocast over f32 master weights (CUDA with bf16); else f32 activations. */
  autocast: boolean;
  /** Fused attention (F.scaled_dot_product_attention, torch >= 2): no [rows, heads, L, L] probabilities kept. */
  sdpa: boolean;
  /** K/V repeated to every query head (the worker before bb19ffc). */
  repeatKv: boolean;
  /** The LM head over every position at once, [tokens, V] f32 tensors kept (before bb19ffc); else chunked on scored tokens. */
  fullVocabHead: boolean;
  /** MiB of f32 logits per LM-head chunk (SPA_TORCH_HEAD_CHUNK_MB, default 256). */
  headChunkMiB: number;
  /** Bytes per process outside the tensors (CUDA context; the Python + torch runtime on the CPU). */
  processBytes: number;
  /**
   * MiB the worker keeps of the rollout rows' K/V for their next turn (SPA_TORCH_PREFIX_CACHE_MB, default 2048; e0acb56).
   * 0 on the paths whose measurements predate it.
   */
  prefixCacheMiB: number;
}

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

/** The worker as it is now on a CUDA GPU (torch >= 2: SDPA; chunked head; K/V not repeated). */
export const CUDA_PATH: WorkerPath = {
  device: 'cuda', autocast: true, sdpa: true, repeatKv: false, fullVocabHead: false, headChunkMiB: 256, processBytes: 0.5 * GIB, prefixCacheMiB: 2048,
};
/** The worker before the memory work of issue 20 (bb19ffc) on a CUDA GPU: what bench/results/torch-device-check-h200.json measured. */
export const LEGACY_CUDA_PATH: WorkerPath = { ...CUDA_PATH, sdpa: false, repeatKv: true, fullVocabHead: true, prefixCacheMiB: 0 };
/**
 * The worker on this machine's CPU (Debian torch 1.13: no SDPA; f32 activations), as bench/results/real-model-memory.json
 * measured it (2026-11-27 07:42, before the prefix cache).
 */
export const CPU_PATH: WorkerPath = {
  device: 'cpu', autocast: false, sdpa: false, repeatKv: false, fullVocabHead: false, headChunkMiB: 256, processBytes: 0.4 * GIB, prefixCacheMiB: 0,
};
/** The worker before bb19ffc on the CPU (what shared/reference/real-model-review.md measured: 18.4 GB). */
export const LEGACY_CPU_PATH: WorkerPath = { ...CPU_PATH, repeatKv: true, fullVocabHead: true };

/** The settings of a run that set its memory (a size's stages and model.memory). */
export interface MemoryPlan {
  /** Padded tokens per training micro-batch (model.memory.tokenBudget). */
  tokenBudget: number;
  /** Longest training row (prompt + reply), tokens: the attention's L. */
  rowTokens: number;
  /** Share of a micro-batch's tokens that are scored (the reply; log-probs are computed only there). */
  scoredFraction: number;
  gradientCheckpointing: boolean;
  /** Rows prefilled and decoded together (model.memory.generationRows). */
  generationRows: number;
  /** Rollout rows per batch (all are generated, generationRows at a time). */
  rolloutRows: number;
  promptTokens: number;
  newTokens: number;
  lora: boolean;
  /** Frozen weights (LoRA base, KL reference) in bf16. */
  frozenBf16: boolean;
  /** AdamW moments in bf16 (model.memory.optimizerDtype): 4 bytes per trained value and slot instead of 8. */
  optimizerBf16?: boolean;
  criticMode: 'shared-trunk' | 'separate';
  /** A frozen KL reference is loaded (rl.klCoef > 0). */
  klReference: boolean;
}

export type StageName = 'selfplay' | 'sft' | 'rlRollout' | 'rlActor' | 'critic' | 'reference';
/** The memory model's stages an engine stage holds (eval plays rollouts like RL's, with the critic resident only in RL). */
export const ENGINE_STAGE_PEAKS: Record<string, StageName[]> = {
  selfplay: ['selfplay'], sft: ['sft'], rl: ['rlRollout', 'rlActor', 'critic'], eval: ['rlRollout'],
};
export const STAGE_TITLES: Record<StageName, string> = {
  selfplay: 'self-play rollout', sft: 'SFT step', rlRollout: 'RL rollout', rlActor: 'RL actor update', critic: 'critic update', reference: 'KL reference pass',
};

export interface StagePeak {
  /** Device bytes in use at the stage's peak, every process on the device together. */
  bytes: number;
  /** The terms, bytes (for the doc and for reading why). */
  parts: Record<string, number>;
}

const sum = (parts: Record<string, number>): number => Object.values(parts).reduce((a, b) => a + b, 0);

/** Activation bytes saved per token per decoder layer (no checkpointing), attention probabilities excluded. */
export function layerBytesPerToken(s: ModelShape, path: WorkerPath): number {
  const D = s.hidden, I = s.intermediate, kv = s.kvHeads * s.headDim;
  if (path.autocast) return (path.repeatKv ? 52 * D + 4 * s.heads * s.headDim : 52 * D + 4 * kv) + 8 * I;
  // f32 (CPU): two RMSNorms (input, normalised, scaled: 12·D each), RoPE'd q and k, v (K/V repeated before bb19ffc), the
  // attention output's copy, and the gated MLP's four [T, I] tensors
  return (path.repeatKv ? 40 * D : 32 * D + 8 * kv) + 16 * I;
}

/** One training micro-batch on the policy (or a critic: no LM head): activations, mask and head, bytes. */
function trainActivations(s: ModelShape, plan: MemoryPlan, path: WorkerPath, opts: { head: boolean }): Record<string, number> {
  const tokens = plan.tokenBudget, L = Math.min(plan.rowTokens, plan.tokenBudget);
  const rep = path.repeatKv ? 1 : s.heads / s.kvHeads;
  const layer = layerBytesPerToken(s, path);
  const probs = path.sdpa ? 0 : (path.autocast ? 6 : 4) * s.heads * L;   // per token per layer
  const parts: Record<string, number> = {};
  if (plan.gradientCheckpointing) {
    parts['layer inputs (checkpointed)'] = tokens * s.layers * 4 * s.hidden;
    parts['one layer recomputed'] = tokens * (layer + probs);
  } else {
    parts.activations = tokens * s.layers * (layer + probs);
  }
  parts['attention mask'] = tokens * rep * L;
  if (opts.head) {
    if (path.fullVocabHead) parts['LM head'] = tokens * 5 * 4 * s.vocab;
    else {
      const scored = tokens * plan.scoredFraction;   // one chunk's [rows, V] f32 logits, softmax and their gradients at the peak
      parts['LM head'] = scored * 3 * 4 * s.hidden + 5 * Math.min(path.headChunkMiB * MIB, scored * 4 * s.vocab);
    }
  }
  return parts;
}

/** Bytes of AdamW moments (m and v) per trained value and optimizer slot. */
function momentBytes(plan: MemoryPlan): number {
  return plan.optimizerBf16 ? 4 : 8;
}

/** Model state bytes of a process: weights, and when it trains gradients and AdamW moments (slots: 1, or 2 with the shared-trunk value view). */
function stateBytes(P: number, plan: MemoryPlan, path: WorkerPath, opts: { train: boolean; slots?: number; apply?: boolean }): Record<string, number> {
  if (plan.lora) return { 'frozen base': P * (plan.frozenBf16 ? 2 : 4) };
  const parts: Record<string, number> = { 'f32 weights': 4 * P };
  if (!opts.train) return parts;
  parts[plan.optimizerBf16 ? 'AdamW moments (bf16)' : 'AdamW moments'] = momentBytes(plan) * P * (opts.slots ?? 1);
  if (opts.apply) parts['gradients (apply: divided and clipped copies)'] = 8 * P;
  else {
    parts.gradients = 4 * P;
    if (path.autocast) parts['bf16 weight casts'] = 2 * P;
  }
  return parts;
}

/** Resident bytes of a trained model's process between its phases (weights and moments; its context). */
function residentTrained(P: number, plan: MemoryPlan, path: WorkerPath): number {
  return sum(stateBytes(P, plan, path, { train: true, apply: true })) - (plan.lora ? 0 : 8 * P) + path.processBytes;
}

/** Generation of `rolloutRows` rows, generationRows at a time: transient prefill, K/V cache and decode logits, bytes. */
function generationBytes(s: ModelShape, plan: MemoryPlan, path: WorkerPath): Record<string, number> {
  const R = Math.min(plan.generationRows, plan.rolloutRows), P = plan.promptTokens, cap = plan.promptTokens + plan.newTokens;
  const act = path.autocast ? 2 : 4;
  const rep = s.heads / s.kvHeads;
  const kvBytes = path.repeatKv ? 6 : act;   // before: k kept f32 after RoPE, v bf16
  const parts: Record<string, number> = {};
  parts['K/V cache'] = R * s.layers * 2 * s.kvHeads * s.headDim * cap * kvBytes;
  // one layer's transient in the prefill: residual + norm f32, q/k/v, attention output, the MLP's gate/up/product
  parts['prefill (one layer)'] = R * P * (16 * s.hidden + 3 * act * s.intermediate) + (path.sdpa ? 0 : 10 * R * s.heads * P * P);
  parts['attention mask'] = R * (path.repeatKv ? 1 : rep) * P * P;
  parts['decode logits'] = 3 * R * s.vocab * 4;
  // the prefix cache: every rollout row's K/V of its prompt and reply, kept for its next turn while other chunks generate
  const kept = plan.rolloutRows * s.layers * 2 * s.kvHeads * s.headDim * cap * act;
  if (path.prefixCacheMiB > 0) parts['prefix cache (rows\' K/V for their next turn)'] = Math.min(path.prefixCacheMiB * MIB, kept);
  return parts;
}

/** Peak device bytes per stage for a model shape, a run's memory plan and the worker's code path. */
export function stagePeaks(s: ModelShape, plan: MemoryPlan, path: WorkerPath): Record<StageName, StagePeak> {
  const P = parameterCount(s);
  const ctx = path.processBytes;
  const separate = plan.criticMode === 'separate';
  const slots = separate ? 1 : 2;
  const critic = separate ? residentTrained(P, plan, path) : 0;
  const reference = plan.klReference ? P * (plan.frozenBf16 ? 2 : 4) + ctx : 0;
  const peak = (parts: Record<string, number>): StagePeak => ({ bytes: sum(parts), parts });
  const others = (extra: Record<string, number>): Record<string, number> => Object.fromEntries(Object.entries(extra).filter(([, v]) => v > 0));

  const train = (opts: { slots: number; head: boolean }): Record<string, number> => {
    const step = { ...stateBytes(P, plan, path, { train: true, slots: opts.slots }), ...trainActivations(s, plan, path, { head: opts.head }) };
    const apply = stateBytes(P, plan, path, { train: true, slots: opts.slots, apply: true });
    return sum(step) >= sum(apply) ? step : apply;
  };
  const selfplay = peak({ ...stateBytes(P, plan, path, { train: false }), ...generationBytes(s, plan, path), 'process': ctx });
  const sft = peak({ ...train({ slots: 1, head: true }), 'process': ctx });
  const residentPolicy = residentTrained(P, plan, path) + (separate || plan.lora ? 0 : momentBytes(plan) * P);   // + the value view's slot
  const rlRollout = peak({
    ...stateBytes(P, plan, path, { train: false }), ...generationBytes(s, plan, path), 'policy moments': plan.lora ? 0 : momentBytes(plan) * P * slots,
    'process': ctx, ...others({ 'separate critic (resident)': critic, 'KL reference (resident)': reference }),
  });
  const rlActor = peak({
    ...train({ slots, head: true }), 'process': ctx, ...others({ 'separate critic (resident)': critic, 'KL reference (resident)': reference }),
  });
  const criticPeak = separate
    ? peak({ ...train({ slots: 1, head: false }), 'process': ctx, 'policy (resident)': residentPolicy, ...others({ 'KL reference (resident)': reference }) })
    : peak({ ...train({ slots, head: false }), 'process': ctx, ...others({ 'KL reference (resident)': reference }) });
  const referencePass = plan.klReference
    ? peak({
      'frozen weights': P * (plan.frozenBf16 ? 2 : 4),
      'forward (one layer, LM head chunk)': plan.tokenBudget * (layerBytesPerToken(s, path) + 8 * s.hidden)
        + 3 * Math.min(path.headChunkMiB * MIB, plan.tokenBudget * plan.scoredFraction * 4 * s.vocab),
      'process': ctx, 'policy (resident)': residentPolicy, ...others({ 'separate critic (resident)': critic }),
    })
    : { bytes: 0, parts: {} };
  return { selfplay, sft, rlRollout, rlActor, critic: criticPeak, reference: referencePass };
}

/** The largest stage peak. */
export function runPeak(peaks: Record<StageName, StagePeak>): { stage: StageName; bytes: number } {
  let best: { stage: StageName; bytes: number } = { stage: 'selfplay', bytes: 0 };
  for (const [stage, p] of Object.entries(peaks) as Array<[StageName, StagePeak]>) if (p.bytes > best.bytes) best = { stage, bytes: p.bytes };
  return best;
}

/** Cards the table reports, GiB of device memory (an RTX 4090 / A5000 has 24 GiB, an A6000 / L40S 48, an A100 / H100 80). */
export const CARDS_GIB = [24, 48, 80] as const;
/** Share of a card the model may plan to use (the rest: fragmentation, other processes, the display). */
export const CARD_USABLE = 0.95;

/**
 * The estimate is multiplied by this before it is held against a card. The only whole run through the engine on a GPU
 * (bench/results/gpu-engine-run-h200.json: `spa --size gpu-24g` on the Qwen2.5-0.5B stand-in, an H200, nvidia-smi) measured
 * more than these terms count: self-play 1.17x (1.32x before the prefix cache was counted), SFT 1.21x and 1.23x; its RL
 * stage did not finish in the device time. The margin is the largest measured ratio rounded up to the next 0.05, until the
 * missing terms are found; tests/engine/memory-model.test.ts keeps it at or above every ratio such a file records
 * (engineRunChecks in memory-model-doc.ts, which recomputes each estimate from the run's recorded settings).
 */
export const ENGINE_MEASURED_MARGIN = 1.25;

export function fitsCard(bytes: number, cardGib: number): boolean {
  return bytes * ENGINE_MEASURED_MARGIN <= cardGib * GIB * CARD_USABLE;
}

export const gib = (bytes: number): number => bytes / GIB;

/** A model's shape from its HF config.json object (qwen2 / qwen3 / llama keys); null when a size key is missing. */
export function shapeFromHfConfig(raw: Record<string, unknown>, name = 'model'): ModelShape | null {
  const int = (k: string): number | null => (Number.isInteger(raw[k]) && (raw[k] as number) > 0 ? (raw[k] as number) : null);
  const D = int('hidden_size'), I = int('intermediate_size'), L = int('num_hidden_layers'), H = int('num_attention_heads'), V = int('vocab_size');
  if (D === null || I === null || L === null || H === null || V === null) return null;
  const family = typeof raw.model_type === 'string' ? raw.model_type : 'qwen2';
  return {
    name, hidden: D, intermediate: I, layers: L, heads: H, kvHeads: int('num_key_value_heads') ?? H, headDim: int('head_dim') ?? D / H, vocab: V,
    tied: raw.tie_word_embeddings === undefined ? family !== 'llama' : raw.tie_word_embeddings === true,
    qkvBias: family === 'qwen2' || raw.attention_bias === true,
  };
}

/**
 * The memory plan of a resolved run config (RunConfigSchema.parse output: model.memory, the rollout, SFT and RL sections as the
 * run uses them; an unset model.memory field is MEMORY_DEFAULTS, the runtimes' default). No default of its own.
 */
export function planFromConfig(config: Pick<RunConfig, 'model' | 'stages'>): MemoryPlan {
  const memory = { ...MEMORY_DEFAULTS, ...definedOnly(config.model.memory ?? {}) };
  const { rollout, sft, rl } = config.stages;
  const context = rollout.maxContextTokens, newTokens = rollout.maxNewTokens;
  const realModel = config.model.source !== 'preset';
  const ckpt = memory.gradientCheckpointing;
  return {
    tokenBudget: memory.tokensPerMicroBatch,
    rowTokens: Math.max(context, sft.maxLength),
    scoredFraction: Math.min(1, newTokens / context),
    gradientCheckpointing: ckpt === true || (ckpt === 'auto' && realModel),
    generationRows: memory.generationRows,
    rolloutRows: Math.max(rollout.batchSize, rl.groups * rl.groupSize),
    promptTokens: Math.max(1, context - newTokens),
    newTokens,
    lora: config.model.lora !== undefined,
    frozenBf16: memory.frozenDtype !== 'f32',
    optimizerBf16: memory.optimizerDtype === 'bf16' || (memory.optimizerDtype === 'auto' && realModel),
    criticMode: config.model.criticMode,
    klReference: rl.klCoef > 0,
  };
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
