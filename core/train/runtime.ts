// The pipeline's handle on a model: tokenizer + CausalLM + optimizer, with the operations the
// stages need — encode a chat prompt within a context budget, batched sampling with a KV cache,
// one training step of a registered loss, no-grad per-token statistics, and checkpoints in the
// Hugging Face layout (model.safetensors, config.json, tokenizer files, manifest.json).
import * as tf from '@tensorflow/tfjs';
import { CausalLM } from '../model/transformer.js';
import { generate as generateTokens } from '../model/generate.js';
import { presetConfig, type ModelConfig } from '../model/config.js';
import { buildCharTokenizer, type Tokenizer } from '../model/tokenizer.js';
import { formatChat, type ChatMessage } from '../model/chat.js';
import { loadCheckpoint, saveCheckpoint } from '../model/checkpoint.js';
import { getLoss } from '../model/losses.js';
import { tokenScores } from '../model/score.js';
import { AdamW, clipByGlobalNorm, type OptimizerState } from '../model/optim.js';
import { initBackend } from '../model/backend.js';
import type { RunConfig } from '../api/run-config.js';
import './losses.js';

export interface GenerateOptions { maxNewTokens: number; temperature: number; topP: number; topK: number; seed: number; stop?: string[] }
export interface Generated { ids: number[]; text: string; logprobs: number[] }

/** A training row: token ids plus named per-token arrays (same length as ids) for the loss. */
export interface TrainRow { ids: number[]; arrays: Record<string, number[]> }

export class ModelRuntime {
  optimizer: AdamW | null = null;
  constructor(readonly model: CausalLM, readonly tokenizer: Tokenizer) {}

  get config(): ModelConfig { return this.model.config; }
  get maxContext(): number { return this.model.config.max_position_embeddings; }

  /** Chat → prompt ids ending with the assistant opening and the forced prefix. Oldest turns go first when too long. */
  encodePrompt(messages: ChatMessage[], prefix: string, maxTokens: number): number[] {
    const budget = Math.min(maxTokens, this.maxContext - 1);
    let msgs = [...messages];
    for (;;) {
      const chat = formatChat(msgs, this.tokenizer, { addGenerationPrompt: true, generationPrefix: prefix || undefined });
      if (chat.ids.length <= budget) return chat.ids;
      // drop the oldest (user, assistant) pair after the system message, keeping the last user message
      const first = msgs[0]?.role === 'system' ? 1 : 0;
      if (msgs.length - first > 2) { msgs = [...msgs.slice(0, first), ...msgs.slice(first + 2)]; continue; }
      return chat.ids.slice(chat.ids.length - budget); // still too long: keep the tail
    }
  }

  /** Chat (ending with the assistant message to train) → ids truncated from the left to maxTokens. */
  formatForTraining(messages: ChatMessage[], maxTokens: number): { ids: number[]; messages: ChatMessage[] } {
    let msgs = [...messages];
    for (;;) {
      const chat = formatChat(msgs, this.tokenizer);
      const first = msgs[0]?.role === 'system' ? 1 : 0;
      if (chat.ids.length <= Math.min(maxTokens, this.maxContext) || msgs.length - first <= 2) return { ids: chat.ids, messages: msgs };
      msgs = [...msgs.slice(0, first), ...msgs.slice(first + 2)];
    }
  }

  /** Batched sampling with a KV cache (core/model/generate.ts); deterministic for a seed. */
  async generate(prompts: number[][], opts: GenerateOptions): Promise<Generated[]> {
    if (prompts.length === 0) return [];
    const longest = Math.max(...prompts.map((p) => p.length));
    const maxNewTokens = Math.max(1, Math.min(opts.maxNewTokens, this.maxContext - longest - 1));
    const results = generateTokens(this.model, this.tokenizer as never, prompts, {
      maxNewTokens, temperature: opts.temperature, topP: opts.topP, topK: opts.topK, seed: opts.seed,
      stop: opts.stop ?? ['</answer>'], stopTokenIds: [...new Set([this.tokenizer.eosTokenId, ...this.tokenizer.stopTokenIds])],
    });
    await Promise.resolve();
    return results.map((r) => ({ ids: r.tokens, text: r.text, logprobs: r.logprobs }));
  }

  /** Pad rows to one length; returns ids, attention mask and padded named arrays. */
  private pad(rows: TrainRow[]): { ids: number[][]; attention: number[][]; arrays: Record<string, number[][]> } {
    const T = Math.max(...rows.map((r) => r.ids.length));
    const pad = this.tokenizer.padTokenId;
    const ids = rows.map((r) => [...r.ids, ...new Array<number>(T - r.ids.length).fill(pad)]);
    const attention = rows.map((r) => [...r.ids.map(() => 1), ...new Array<number>(T - r.ids.length).fill(0)]);
    const names = Object.keys(rows[0]?.arrays ?? {});
    const arrays: Record<string, number[][]> = {};
    for (const name of names) {
      arrays[name] = rows.map((r, i) => {
        const a = r.arrays[name];
        if (!a || a.length !== r.ids.length) throw new Error(`training row ${i}: array ${name} must have one value per token (${r.ids.length}); received ${a?.length ?? 'none'}`);
        return [...a, ...new Array<number>(T - a.length).fill(0)];
      });
    }
    return { ids, attention, arrays };
  }

  /** AdamW moments read from a checkpoint being resumed; applied when the optimizer is created. */
  restoredOptimizerState: OptimizerState | null = null;

  ensureOptimizer(weightDecay = 0.01): AdamW {
    if (!this.optimizer) {
      const names = this.model.trainableNames();
      const vars = this.model.trainableVariables();
      this.optimizer = new AdamW(names.map((name, i) => ({ name, variable: vars[i]! })), { beta1: 0.9, beta2: 0.95, weightDecay });
      if (this.restoredOptimizerState) {
        this.optimizer.setState(this.restoredOptimizerState);
        this.restoredOptimizerState = null;
      }
    }
    return this.optimizer;
  }

  /**
   * One optimizer step of a registered loss on rows; returns the loss stats and the gradient norm.
   * Rows are processed in micro-batches of at most `tokenBudget` padded tokens (wasm memory);
   * each chunk's gradients are weighted by its share of the loss-mask tokens, so the result is
   * the token mean over the whole batch.
   */
  trainStep(lossName: string, rows: TrainRow[], params: Record<string, unknown>, lr: number, gradClip: number, tokenBudget = 6144): Record<string, number> {
    const optimizer = this.ensureOptimizer();
    const chunks: TrainRow[][] = [];
    let current: TrainRow[] = [];
    let longest = 0;
    for (const row of [...rows].sort((x, y) => x.ids.length - y.ids.length)) {
      const nextLongest = Math.max(longest, row.ids.length);
      if (current.length > 0 && nextLongest * (current.length + 1) > tokenBudget) { chunks.push(current); current = []; longest = 0; }
      current.push(row);
      longest = Math.max(longest, row.ids.length);
    }
    if (current.length) chunks.push(current);
    const weightOf = (chunk: TrainRow[]) => chunk.reduce((a, r) => a + (r.arrays.lossMask ? r.arrays.lossMask.reduce((x, m) => x + m, 0) : r.ids.length), 0);
    const total = Math.max(1, chunks.reduce((a, c) => a + weightOf(c), 0));
    const names = this.model.trainableNames();
    let summed: Map<string, tf.Tensor> | null = null;
    const statSums: Record<string, number> = {};
    for (const chunk of chunks) {
      const weight = weightOf(chunk) / total;
      const { grads, stats } = this.chunkGrads(lossName, chunk, params);
      for (const [k, v] of Object.entries(stats)) statSums[k] = (statSums[k] ?? 0) + v * weight;
      if (!summed) {
        summed = new Map();
        for (const [k, g] of grads) { summed.set(k, tf.mul(g, weight)); g.dispose(); }
      } else {
        for (const [k, g] of grads) {
          const prev = summed.get(k);
          const next = tf.tidy(() => (prev ? tf.add(prev, tf.mul(g, weight)) : tf.mul(g, weight)));
          prev?.dispose();
          g.dispose();
          summed.set(k, next);
        }
      }
    }
    const clipped = clipByGlobalNorm(summed ?? new Map(), gradClip);
    optimizer.apply(clipped.grads, lr);
    for (const g of clipped.grads.values()) if (!g.isDisposed) g.dispose();
    if (summed) for (const g of summed.values()) if (!g.isDisposed) g.dispose();
    void names;
    statSums['charts/gradNorm'] = clipped.norm;
    statSums['charts/lr'] = lr;
    return statSums;
  }

  private chunkGrads(lossName: string, rows: TrainRow[], params: Record<string, unknown>): { grads: Map<string, tf.Tensor>; stats: Record<string, number> } {
    const spec = getLoss(lossName);
    const { ids, attention, arrays } = this.pad(rows);
    const names = this.model.trainableNames();
    const vars = this.model.trainableVariables();
    const statValues: Record<string, number> = {};
    const grads = tf.tidy(() => {
      const attentionMask = tf.tensor2d(attention);
      const batch: Record<string, tf.Tensor> = {};
      for (const [k, v] of Object.entries(arrays)) batch[k] = tf.tensor2d(v);
      let stats: Record<string, tf.Scalar> = {};
      const result = tf.variableGrads(() => {
        const out = this.model.tokenOutputs(ids, { attentionMask: attention, values: spec.needs.values });
        const r = spec.fn({ outputs: out, batch, attentionMask, params });
        stats = Object.fromEntries(Object.entries(r.stats).map(([k, s]) => [k, tf.keep(s)]));
        return r.loss;
      }, vars);
      statValues['losses/total'] = result.value.dataSync()[0]!;
      const seen = new Set<tf.Tensor>();
      for (const [k, s] of Object.entries(stats)) {
        statValues[k] = s.dataSync()[0]!;
        if (!seen.has(s) && s !== result.value) { seen.add(s); s.dispose(); }
      }
      return result.grads;
    });
    const byName = new Map<string, tf.Tensor>();
    vars.forEach((v, i) => { const g = grads[v.name]; if (g) byName.set(names[i]!, g); });
    for (const g of Object.values(grads)) if (![...byName.values()].includes(g)) g.dispose();
    return { grads: byName, stats: statValues };
  }

  /** No-grad per-token log-probabilities, entropies and values (values only with a value head). */
  tokenStats(rows: Array<{ ids: number[] }>, withValues: boolean, tokenBudget = 8192): Array<{ logprobs: number[]; entropies: number[]; values: number[] | null }> {
    if (rows.length === 0) return [];
    const longest = Math.max(...rows.map((r) => r.ids.length));
    const per = Math.max(1, Math.floor(tokenBudget / Math.max(1, longest)));   // rows per forward (wasm memory)
    const out: Array<{ logprobs: number[]; entropies: number[]; values: number[] | null }> = [];
    for (let start = 0; start < rows.length; start += per) {
      const chunk = rows.slice(start, start + per);
      const { ids, attention } = this.pad(chunk.map((r) => ({ ids: r.ids, arrays: {} })));   // padded to the chunk's longest row
      const s = tokenScores(this.model, ids, { attentionMask: attention, values: withValues && this.config.value_head, chunkRows: chunk.length });
      chunk.forEach((r, k) => out.push({
        logprobs: s.logprobs[k]!.slice(0, r.ids.length), entropies: s.entropies[k]!.slice(0, r.ids.length),
        values: s.values ? s.values[k]!.slice(0, r.ids.length) : null,
      }));
    }
    return out;
  }

  dispose(): void { this.optimizer?.dispose(); this.model.dispose(); }
}

// ───────────────────────── creation and checkpoints ─────────────────────────

export async function useBackend(config: RunConfig, log?: (line: string) => void): Promise<string> {
  const report = await initBackend({ backend: config.backend, log });
  return report.summary;
}

/** A fresh model from the run's model preset (tiny models: character tokenizer). */
export function createRuntime(config: RunConfig, opts: { seed: number; valueHead: boolean }): ModelRuntime {
  if (config.model.source !== 'preset') throw new Error(`createRuntime: model.source is ${config.model.source}; use loadRuntime for folders`);
  const tokenizer = buildCharTokenizer();
  const modelConfig = presetConfig(config.model.preset, { ...(config.model.overrides ?? {}), vocab_size: tokenizer.vocabSize, value_head: opts.valueHead });
  return new ModelRuntime(new CausalLM(modelConfig, { seed: opts.seed }), tokenizer);
}

/**
 * Load a checkpoint or HF folder (core/model/checkpoint: hashes verified, HF config defaults,
 * sharded weights, LoRA adapters). `valueHead` adds a value head when the folder has none (it
 * starts at zero output, so it adds no noise to the first advantages). `resume` also restores
 * the AdamW moments saved with the checkpoint, for continuing the same stage.
 */
export async function loadRuntime(dir: string, opts: { valueHead?: boolean; trainable?: boolean; resume?: boolean } = {}): Promise<ModelRuntime> {
  const loaded = await loadCheckpoint(dir, { valueHead: opts.valueHead, model: { trainable: opts.trainable ?? true }, optimizer: opts.resume ?? false });
  const runtime = new ModelRuntime(loaded.model, loaded.tokenizer);
  if (opts.resume) runtime.restoredOptimizerState = loaded.optimizerState;
  return runtime;
}

/**
 * Write a checkpoint through core/model/checkpoint: weights, HF config, tokenizer, AdamW state
 * and a manifest with hashes; written to a temp folder, verified, and only then swapped in for
 * the previous checkpoint.
 */
export async function saveRuntime(runtime: ModelRuntime, dir: string, manifest: Record<string, unknown>): Promise<void> {
  const { stage, step, parent, metrics, ...extra } = manifest;
  const numeric = Object.fromEntries(Object.entries((metrics ?? {}) as Record<string, unknown>).filter((e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1])));
  await saveCheckpoint(dir, {
    model: runtime.model,
    tokenizer: runtime.tokenizer,
    ...(runtime.optimizer ? { optimizer: runtime.optimizer } : {}),
    manifest: {
      stage: typeof stage === 'string' ? stage : 'unknown',
      step: typeof step === 'number' && Number.isInteger(step) && step >= 0 ? step : 0,
      parent: typeof parent === 'string' ? parent : null,
      metrics: numeric,
      extra,
    },
  });
}
