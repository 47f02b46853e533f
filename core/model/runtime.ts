// The model runtime interface: everything a stage needs from a model, whichever backend computes
// it. Stages (core/train) call only this: encode a chat prompt within a context budget, batched
// sampling with a KV cache, no-grad per-token statistics, one training step of a registered loss,
// and checkpoints in the Hugging Face folder layout (model.safetensors, config.json, tokenizer
// files, optimizer state, manifest.json). Two implementations:
//   TfjsRuntime   (this file)               TF.js in this process: wasm, cpu, tfjs-node(-gpu)
//   TorchRuntime  (core/model/torch/)       a Python/PyTorch worker process over a framed stdio protocol
// Prompt encoding is shared (RuntimeBase): both backends use this process's tokenizer.
import type { CausalLM } from './transformer.js';
import type { ModelConfig } from './config.js';
import type { Tokenizer } from './tokenizer.js';
import { formatChat, type ChatMessage, type ChatSpan } from './chat.js';
import { generate as generateTokens } from './generate.js';
import { tokenScores, type TokenScores } from './score.js';
import { Trainer, padRows, type TrainRow } from './trainer.js';
import { memorySettings, resolvedMemory, writesMoments } from './memory.js';
import type { OptimizerState } from './optim.js';
import { saveCheckpoint } from './checkpoint.js';
import { DataParallelTrainer } from './workers/data-parallel.js';
import type { TokenizerFiles } from './workers/protocol.js';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type { TrainRow } from './trainer.js';

export interface GenerateOptions {
  maxNewTokens: number; temperature: number; topP: number; topK: number; seed: number; stop?: string[];
  /**
   * One key per prompt (e.g. the episode's id): a backend that can (torch) keeps each row's keys and values for the row's next
   * call under the same key, whose prompt usually starts with this one and its reply (a multi-turn history), and computes only
   * the new tokens. The same tokens up to float rounding; a key missing from a call is dropped.
   */
  cacheKeys?: string[];
}
export interface Generated { ids: number[]; text: string; logprobs: number[] }
export interface TokenStat { logprobs: number[]; entropies: number[]; values: number[] | null }

/** Which backend and device compute a runtime, for logs, system.info and the run view. */
export interface RuntimeInfo {
  /** 'torch' or the TF.js backend name (wasm, cpu, tensorflow, tensorflow-gpu). */
  backend: string;
  /** e.g. 'cpu (2 threads)', 'cuda:0 NVIDIA RTX 4090 (bf16 autocast)', 'wasm (simd, 1 thread)'. */
  device: string;
}

/** What a checkpoint's manifest records besides the weights (see saveRuntime in core/train/runtime.ts). */
export interface RuntimeManifest { stage: string; step: number; parent: string | null; metrics: Record<string, number>; extra: Record<string, unknown> }

/** AdamW hyper-parameters every backend uses (beta2 0.95 as is common for LMs). */
export const RUNTIME_ADAMW = { beta1: 0.9, beta2: 0.95, eps: 1e-8 } as const;

/** What a training step needs of a model (a ModelRuntime, a value view, a fake in tests). */
export interface RuntimeTrainer {
  trainStep(
    lossName: string, rows: TrainRow[], params: Record<string, unknown>, lr: number, gradClip: number, tokenBudget?: number,
  ): Promise<Record<string, number>>;
  dispose(): Promise<void>;
}

/** What a checkpoint is for: a stage resumes from it (moments and f32 weights) or not (weights in the checkpoint dtype). */
export interface SaveOptions { resumePoint?: boolean }

export interface ModelRuntime {
  readonly info: RuntimeInfo;
  readonly config: ModelConfig;
  readonly tokenizer: Tokenizer;
  readonly maxContext: number;
  /** Chat → prompt ids ending with the assistant opening and the forced prefix. Oldest turns go first when too long. */
  encodePrompt(messages: ChatMessage[], prefix: string, maxTokens: number): number[];
  /**
   * Token in, token out (rollout.history 'tokens'): the prompt of the next turn as `history` (the last turn's prompt ids and
   * the ids the model sampled) followed by the template's tokens after that reply in the chat `messages` (which ends with
   * the next user message): the reply's closing markup from its end-of-turn token on when the history does not end with that
   * token, else only what follows it; then the next messages, the assistant opening and the forced `prefix`. Null when the
   * chat has no assistant message or the result passes maxTokens (the caller then encodes the chat from text).
   */
  continuePrompt(history: readonly number[], messages: ChatMessage[], prefix: string, maxTokens: number): number[] | null;
  /** Chat (ending with the assistant message to train) → ids truncated from the left to maxTokens. */
  formatForTraining(messages: ChatMessage[], maxTokens: number): { ids: number[]; messages: ChatMessage[] };
  /** Batched sampling with a KV cache; deterministic for a seed on one backend (the backends' samplers differ, greedy agrees). */
  generate(prompts: number[][], opts: GenerateOptions): Promise<Generated[]>;
  /**
   * No-grad per-token log-probabilities, entropies and values (values only with a value head), each aligned with the row's
   * ids. A row's `score` (0/1 per token) marks the tokens whose log-prob and entropy the caller reads: a backend may compute
   * only those (the torch worker's LM head runs on them alone) and give 0 elsewhere; values are given everywhere.
   */
  tokenStats(rows: Array<{ ids: number[]; score?: number[] }>, withValues: boolean, tokenBudget?: number): Promise<TokenStat[]>;
  /** Create the optimizer (AdamW, betas default RUNTIME_ADAMW's) if it does not exist yet; moments restored on resume are kept. */
  ensureOptimizer(weightDecay?: number, betas?: readonly [number, number]): void;
  /**
   * A second optimizer over the same weights (its own AdamW moments, no weight decay), e.g. the value
   * loss of PPO on a shared trunk at its own learning rate. Disposing it frees only its moments.
   * While it is open, a resume point saved by the model carries its moments (optimizer.value.safetensors),
   * and a model loaded with `resume` gives them back to the next value view (exact RL resume, N6b).
   */
  valueView(betas: readonly [number, number]): RuntimeTrainer;
  /**
   * One optimizer step of a registered loss on rows: token-budget chunks, token-weighted mean,
   * global-norm clipping, AdamW. Returns the loss stats plus charts/gradNorm and charts/lr.
   */
  trainStep(
    lossName: string, rows: TrainRow[], params: Record<string, unknown>, lr: number, gradClip: number, tokenBudget?: number,
  ): Promise<Record<string, number>>;
  /**
   * Write a checkpoint (HF layout + optimizer state + manifest), atomically. `resumePoint` (default true): a stage resumes
   * from it; the memory settings decide from it whether the AdamW moments go in and the weights' dtype (docs/checkpoints.md).
   */
  save(dir: string, manifest: RuntimeManifest, opts?: SaveOptions): Promise<void>;
  dispose(): Promise<void>;
}

/** Prompt encoding shared by the backends (it only needs the tokenizer and the context length). */
export abstract class RuntimeBase {
  constructor(readonly config: ModelConfig, readonly tokenizer: Tokenizer) {}

  get maxContext(): number { return this.config.max_position_embeddings; }

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

  continuePrompt(history: readonly number[], messages: ChatMessage[], prefix: string, maxTokens: number): number[] | null {
    const chat = formatChat(messages, this.tokenizer, { addGenerationPrompt: true, generationPrefix: prefix || undefined });
    let reply: ChatSpan | undefined;
    for (const span of chat.spans) if (span.role === 'assistant') reply = span;
    if (reply === undefined) return null;
    // the model wrote the template's end-of-turn token (it stopped on it): keep its ids and add only what follows
    const wrote = reply.endOfTurn >= 0 && history.length > 0 && history[history.length - 1] === chat.ids[reply.endOfTurn];
    const ids = [...history, ...chat.ids.slice(wrote ? reply.endOfTurn + 1 : reply.closeStart)];
    return ids.length <= Math.min(maxTokens, this.maxContext - 1) ? ids : null;
  }

  formatForTraining(messages: ChatMessage[], maxTokens: number): { ids: number[]; messages: ChatMessage[] } {
    let msgs = [...messages];
    for (;;) {
      const chat = formatChat(msgs, this.tokenizer);
      const first = msgs[0]?.role === 'system' ? 1 : 0;
      if (chat.ids.length <= Math.min(maxTokens, this.maxContext) || msgs.length - first <= 2) return { ids: chat.ids, messages: msgs };
      msgs = [...msgs.slice(0, first), ...msgs.slice(first + 2)];
    }
  }

  /** Stop token ids of generation: EOS plus the tokenizer's other stop ids. */
  protected stopTokenIds(): number[] { return [...new Set([this.tokenizer.eosTokenId, ...this.tokenizer.stopTokenIds])]; }

  /** New tokens for prompts of this length: at least 1, and the sequence stays inside the context. */
  protected newTokenBudget(prompts: number[][], maxNewTokens: number): number {
    const longest = Math.max(...prompts.map((p) => p.length));
    return Math.max(1, Math.min(maxNewTokens, this.maxContext - longest - 1));
  }
}

/**
 * Data-parallel worker threads of a TF.js runtime (wasm runs one thread per instance): generation,
 * token statistics and training steps are split across the main thread and `workers` threads, each
 * with its own wasm instance and model replica (core/model/workers/). `lossModules` register the
 * losses in each worker (core/train passes its losses module).
 */
export interface TfjsWorkers { workers: number; lossModules: string[]; /** the worker module (DataParallelOptions.entry) */ entry?: string }

/** The TF.js implementation: the model lives in this process; training goes through Trainer.stepRows. */
export class TfjsRuntime extends RuntimeBase implements ModelRuntime {
  trainer: Trainer | null = null;
  /** AdamW moments read from a checkpoint being resumed; applied when the optimizer is created. */
  restoredOptimizerState: OptimizerState | null = null;
  /** The value step's moments read from a resumed checkpoint (optimizer.value.safetensors); given to the next valueView. */
  restoredValueOptimizerState: OptimizerState | null = null;
  /** The open value view (its moments go into resume points); null when none is open. */
  private openValueView: TfjsRuntime | null = null;
  private dp: DataParallelTrainer | null = null;
  private dpStart: Promise<DataParallelTrainer> | null = null;
  /** Called after this runtime changed the model's weights outside its workers (a value view's step). */
  private onWeightsChanged: (() => void) | null = null;

  /**
   * `ownsModel` false: a view that shares another runtime's model (dispose frees only its optimizer).
   * `parallel`: data-parallel worker threads (started on the first generate / tokenStats / trainStep,
   * so adapters enabled before then are replicated; 0 or absent = this thread only).
   */
  constructor(
    readonly model: CausalLM, tokenizer: Tokenizer, readonly info: RuntimeInfo, private readonly ownsModel = true,
    readonly parallel: TfjsWorkers | null = null,
  ) {
    super(model.config, tokenizer);
  }

  /** The data-parallel coordinator, started on first use; null without workers. */
  private async workerPool(): Promise<DataParallelTrainer | null> {
    if (!this.parallel || this.parallel.workers <= 0) return null;
    if (this.dp) return this.dp;
    this.dpStart ??= (async () => {
      const files = await tokenizerFiles(this.tokenizer);
      const dp = await DataParallelTrainer.create(this.model, this.trainer, {
        workers: this.parallel!.workers, lossModules: this.parallel!.lossModules, backend: 'wasm', tokenizer: files,
        ...(this.parallel!.entry ? { entry: this.parallel!.entry } : {}),
      });
      this.dp = dp;
      return dp;
    })();
    try {
      return await this.dpStart;
    } catch (error) {
      this.dpStart = null;
      throw new Error(`TF.js data-parallel workers failed to start (${this.parallel.workers} threads): ${(error as Error).message}`);
    }
  }

  /**
   * The model's weights or structure changed outside this runtime's steps (adapters enabled, weights
   * loaded): the workers are stopped and restarted from the current model on next use, and the
   * optimizer is rebuilt over the current trainable variables.
   */
  async modelChanged(): Promise<void> {
    const dp = this.dp;
    this.dp = null;
    this.dpStart = null;
    await dp?.dispose();
    this.trainer?.dispose();
    this.trainer = null;
  }

  async generate(prompts: number[][], opts: GenerateOptions): Promise<Generated[]> {
    if (prompts.length === 0) return [];
    const options = {
      maxNewTokens: this.newTokenBudget(prompts, opts.maxNewTokens), temperature: opts.temperature, topP: opts.topP, topK: opts.topK, seed: opts.seed,
      stop: opts.stop ?? ['</answer>'], stopTokenIds: this.stopTokenIds(),
    };
    const dp = prompts.length > 1 ? await this.workerPool() : null;
    const results = dp ? await dp.generate(this.tokenizer, prompts, options) : generateTokens(this.model, this.tokenizer, prompts, options);
    await Promise.resolve();
    return results.map((r) => ({ ids: r.tokens, text: r.text, logprobs: r.logprobs }));
  }

  ensureOptimizer(weightDecay = 0.01, betas?: readonly [number, number]): Trainer {
    if (!this.trainer) {
      if (memorySettings().optimizerDtype === 'bf16') {
        throw new Error('model.memory.optimizerDtype bf16: the wasm backend keeps AdamW moments in f32; set it to auto or f32, or use the torch backend');
      }
      const adam = { ...RUNTIME_ADAMW, ...(betas ? { beta1: betas[0], beta2: betas[1] } : {}) };
      this.trainer = new Trainer(this.model, { schedule: { lr: 0, kind: 'constant' }, ...adam, weightDecay });
      if (this.restoredOptimizerState) {
        this.trainer.optimizer.setState(this.restoredOptimizerState);
        this.restoredOptimizerState = null;
      }
    }
    return this.trainer;
  }

  async trainStep(
    lossName: string, rows: TrainRow[], params: Record<string, unknown>, lr: number, gradClip: number, tokenBudget = memorySettings().tokensPerMicroBatch,
  ): Promise<Record<string, number>> {
    const trainer = this.ensureOptimizer();
    const opts = { lr, maxGradNorm: gradClip, tokenBudget, padTokenId: this.tokenizer.padTokenId };
    const dp = rows.length > 1 ? await this.workerPool() : null;
    dp?.setTrainer(trainer);
    const r = dp ? await dp.stepRows(lossName, rows, params, opts) : trainer.stepRows(lossName, rows, params, opts);
    if (!dp) this.dp?.markWeightsChanged();
    this.onWeightsChanged?.();
    await Promise.resolve();
    return { ...r.stats, 'losses/total': r.loss, 'charts/gradNorm': r.gradNorm, 'charts/lr': r.lr };
  }

  async tokenStats(rows: Array<{ ids: number[] }>, withValues: boolean, tokenBudget = 8192): Promise<TokenStat[]> {
    if (rows.length === 0) return [];
    const longest = Math.max(...rows.map((r) => r.ids.length));
    const per = Math.max(1, Math.floor(tokenBudget / Math.max(1, longest)));   // rows per forward (wasm memory)
    const values = withValues && this.config.value_head;
    const pad = (chunk: Array<{ ids: number[] }>) => padRows(chunk.map((r) => ({ ids: r.ids, arrays: {} })), this.tokenizer.padTokenId);
    const unpad = (chunk: Array<{ ids: number[] }>, s: TokenScores): TokenStat[] => chunk.map((r, k) => ({
      logprobs: s.logprobs[k]!.slice(0, r.ids.length), entropies: s.entropies[k]!.slice(0, r.ids.length),
      values: s.values ? s.values[k]!.slice(0, r.ids.length) : null,
    }));
    const dp = rows.length > 1 ? await this.workerPool() : null;
    if (dp) {
      const batch = pad(rows);
      return unpad(rows, await dp.tokenScores(batch.inputIds, batch.attentionMask!, { values, chunkRows: per }));
    }
    const out: TokenStat[] = [];
    for (let start = 0; start < rows.length; start += per) {
      const chunk = rows.slice(start, start + per);
      const batch = pad(chunk);   // padded to the chunk's longest row
      out.push(...unpad(chunk, tokenScores(this.model, batch.inputIds, { attentionMask: batch.attentionMask, values, chunkRows: chunk.length })));
    }
    await Promise.resolve();
    return out;
  }

  async save(dir: string, manifest: RuntimeManifest, opts: SaveOptions = {}): Promise<void> {
    const moments = this.trainer !== null && writesMoments(opts.resumePoint ?? true);
    const dtype = moments ? 'f32' : resolvedMemory(this.model.parameterCount()).checkpointDtype;
    const valueTrainer = this.openValueView?.trainer ?? null;
    await saveCheckpoint(dir, {
      model: this.model,
      tokenizer: this.tokenizer,
      ...(moments ? { optimizer: this.trainer!.optimizer } : {}),
      ...(moments && valueTrainer ? { valueOptimizer: valueTrainer.optimizer } : {}),
      manifest,
      dtype: dtype === 'bf16' ? 'BF16' : dtype === 'f16' ? 'F16' : 'F32',
    });
  }

  valueView(betas: readonly [number, number]): TfjsRuntime {
    const view = new TfjsRuntime(this.model, this.tokenizer, this.info, false);
    view.restoredOptimizerState = this.restoredValueOptimizerState;   // a resumed value step continues its moments
    this.restoredValueOptimizerState = null;
    view.ensureOptimizer(0, betas);
    view.onWeightsChanged = () => this.dp?.markWeightsChanged();   // the view steps on this thread: the workers resync
    view.onDispose = () => { if (this.openValueView === view) this.openValueView = null; };
    this.openValueView = view;
    return view;
  }

  /** Called when this value view is disposed (its parent stops saving its moments). */
  private onDispose: (() => void) | null = null;

  async dispose(): Promise<void> {
    this.onDispose?.();
    await this.modelChanged();   // stops the workers, frees the optimizer
    if (this.ownsModel) this.model.dispose();
  }
}

/** A tokenizer as its two files' contents (what data-parallel workers rebuild it from). */
async function tokenizerFiles(tokenizer: Tokenizer): Promise<TokenizerFiles> {
  const dir = await mkdtemp(join(tmpdir(), 'spa-tokenizer-'));
  try {
    await tokenizer.save(dir);
    const json = JSON.parse(await readFile(join(dir, 'tokenizer.json'), 'utf8')) as unknown;
    const config = JSON.parse(await readFile(join(dir, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
    return { json, config };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
