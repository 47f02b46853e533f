// The torch backend of the model runtime (core/model/runtime.ts): the weights, the forward and
// backward passes, sampling and AdamW live in a PyTorch worker process (worker-client.ts); this
// process keeps the tokenizer, the chat formatting and the loss math. A training step per chunk:
//   worker `forward` (graph kept) → per-token log-probs / entropies / values
//   → lossOutputGradients (the registered TypeScript loss, tf.grads w.r.t. those outputs)
//   → worker `backward` with the coefficients times the chunk's token weight
// then one worker `apply` (mean over the tokens, global-norm clip, AdamW as core/model/optim.ts).
// LoRA: `enableLora` (fresh adapters from a seed, or given ones), and a folder with adapter files
// loads with its adapters on; the worker keeps TF.js's math, init convention and PEFT names, so a
// LoRA checkpoint moves between the backends like any other.
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import type { ModelConfig } from '../config.js';
import { countParameters } from '../config.js';
import type { Tokenizer } from '../tokenizer.js';
import { loadTokenizer } from '../tokenizer.js';
import { getLoss } from '../losses.js';
import { inspectHfFolder, type GenerationDefaults } from '../hf-load.js';
import { readAdapterConfig, readManifest, saveCheckpoint, verifyCheckpoint, CheckpointError, OPTIMIZER_VALUE_FILE } from '../checkpoint.js';
import { checkLoraConfig, type LoraConfig } from '../lora-config.js';
import { prefixChunks, padRows, lossTokens, lossOutputGradients, type TrainBatch, type TrainRow } from '../trainer.js';
import { RuntimeBase, RUNTIME_ADAMW } from '../runtime.js';
import { memorySettings, resolvedMemory, writesMoments } from '../memory.js';
import type { Generated, GenerateOptions, ModelRuntime, RuntimeInfo, RuntimeManifest, SaveOptions, TokenStat } from '../runtime.js';
import { releaseWorker, takeWorker, type TorchWorker, type TorchProbe, type WireArray } from './worker-client.js';

/**
 * The least share of a batch's tokens that rows must share at their start for prefixChunks to keep them together: the
 * worker's own threshold (SPA_TORCH_PREFIX_FAMILIES, default 0.1; 0 turns the prefix families off on both sides).
 * Throws on a value that is not a number from 0 to 1.
 */
export function prefixFamiliesMin(): number {
  const raw = (process.env.SPA_TORCH_PREFIX_FAMILIES ?? '').trim();
  if (raw === '') return 0.1;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < 0 || v > 1) throw new Error(`SPA_TORCH_PREFIX_FAMILIES must be a number from 0 to 1 (0 = off); got '${raw}'`);
  return v;
}

export interface TorchStartOptions {
  probe: TorchProbe;
  /** Intra-op CPU threads (default: SPA_TORCH_THREADS, else 1 for a model under ONE_THREAD_BELOW_PARAMETERS, else all cores). */
  threads?: number;
  log?: (line: string) => void;
}

/** The worker's memory settings for this model (model.memory, 'auto' resolved by its size): checkpointing, frozen-weight dtype. */
function memoryInit(config: ModelConfig): { gradientCheckpointing: boolean; frozenDtype: 'bf16' | 'f32' } {
  const r = resolvedMemory(countParameters(config));
  return { gradientCheckpointing: r.gradientCheckpointing, frozenDtype: r.frozenDtype };
}

/**
 * Below this many parameters a model's CPU ops are too small to split: one intra-op thread (unless SPA_TORCH_THREADS says
 * otherwise), which leaves the other cores to the engine. Measured on the quick preset's 2 x 64 model (SFT step of 32
 * rows x 280 tokens, torch 1.13, 2-core machine): 0.85 s on 1 thread, 0.91-0.94 s on 2; bench/results/torch-backend*.json
 * (0.8M parameters): 497 ms per step on 1 thread, 727 on 2.
 */
export const ONE_THREAD_BELOW_PARAMETERS = 10_000_000;

function defaultThreads(config: ModelConfig): number | undefined {
  if (process.env.SPA_TORCH_THREADS?.trim()) return undefined;
  return countParameters(config) < ONE_THREAD_BELOW_PARAMETERS ? 1 : undefined;
}

/** The dtype the worker keeps this model's AdamW moments in (model.memory.optimizerDtype, 'auto' resolved by its size). */
function momentDtype(config: ModelConfig): 'bf16' | 'f32' {
  return resolvedMemory(countParameters(config)).optimizerDtype;
}

/**
 * The worker's generation prefix cache budget, MB (SPA_TORCH_PREFIX_CACHE_MB, default 2048; 0 turns it off): each episode's
 * keys and values kept for its next turn, so a multi-turn history is computed once (bench/results/prefix-cache.json).
 */
export function prefixCacheMb(): number {
  const raw = process.env.SPA_TORCH_PREFIX_CACHE_MB?.trim();
  if (raw === undefined || raw === '') return 2048;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`SPA_TORCH_PREFIX_CACHE_MB=${raw}: use a whole number of MB (0 turns the cache off)`);
  return n;
}

function grid(rows: number[][]): { data: Int32Array; shape: number[] } {
  const T = rows[0]?.length ?? 0;
  const data = new Int32Array(rows.length * T);
  rows.forEach((r, b) => data.set(r, b * T));
  return { data, shape: [rows.length, T] };
}

export class TorchRuntime extends RuntimeBase implements ModelRuntime {
  private weightDecay: number | null = null;
  private betas: readonly [number, number] = [RUNTIME_ADAMW.beta1, RUNTIME_ADAMW.beta2];
  private piecesSent = false;
  private loraConfig: LoraConfig | null = null;

  /** `slot`: which of the worker's optimizers this runtime steps ('main'; 'value' for a value view, which does not own the worker). */
  private constructor(
    private readonly worker: TorchWorker, config: ModelConfig, tokenizer: Tokenizer, readonly info: RuntimeInfo, private readonly slot = 'main',
  ) {
    super(config, tokenizer);
  }

  private static async start(
    config: ModelConfig, tokenizer: Tokenizer, opts: TorchStartOptions, init: (w: TorchWorker) => Promise<unknown>,
  ): Promise<TorchRuntime> {
    if (!opts.probe.ok) throw new Error(`backend 'torch' is not available: ${opts.probe.reason}`);
    const worker = takeWorker({ python: opts.probe.python, threads: opts.threads ?? defaultThreads(config), log: opts.log });
    try {
      const hello = (await worker.request('hello')).header;
      await init(worker);
      const device = `${String(hello.device)} · torch ${String(hello.torch)}, Python ${String(hello.python)} (${opts.probe.python})`;
      const info: RuntimeInfo = { backend: 'torch', device };
      return new TorchRuntime(worker, config, tokenizer, info);
    } catch (error) {
      await releaseWorker(worker).catch(() => undefined);
      throw error;
    }
  }

  /** A worker holding these weights (a fresh preset model initialised in TypeScript, so both backends start from the same numbers). */
  static async fromWeights(
    config: ModelConfig, tokenizer: Tokenizer, weights: Map<string, { shape: number[]; data: Float32Array }>, opts: TorchStartOptions,
  ): Promise<TorchRuntime> {
    return TorchRuntime.start(config, tokenizer, opts, async (worker) => {
      const arrays: Record<string, { data: WireArray; shape: number[] }> = {};
      for (const [name, w] of weights) arrays[name] = { data: w.data, shape: w.shape };
      await worker.request('init', { config, trainable: true, ...memoryInit(config) }, arrays);
    });
  }

  /**
   * A checkpoint or HF folder: hashes verified against manifest.json (when present), the worker
   * reads the safetensors files itself (F32/F16/BF16, sharded), the tokenizer loads here.
   * `valueHead` adds a zero value head when the folder has none; `resume` restores AdamW.
   */
  static async fromFolder(dir: string, opts: TorchStartOptions & { valueHead?: boolean; trainable?: boolean; resume?: boolean }): Promise<TorchRuntime> {
    const manifest = await readManifest(dir);
    if (manifest) {
      const problems = await verifyCheckpoint(dir, (file) => (opts.resume ?? false) || !file.startsWith('optimizer.'));
      if (problems.length) throw new CheckpointError(`${dir}: checkpoint is damaged: ${problems.join('; ')}`);
    }
    const adapterConfig = join(dir, 'adapter_config.json');
    const adapterWeights = join(dir, 'adapter_model.safetensors');
    const lora = existsSync(adapterConfig) ? await readAdapterConfig(adapterConfig) : null;
    if (lora && !existsSync(adapterWeights)) throw new CheckpointError(`${adapterWeights}: missing (adapter_config.json is present)`);
    const info = await inspectHfFolder(dir);
    const tokenizer = await loadTokenizer(dir);
    const addHead = (opts.valueHead ?? false) && !info.config.value_head;
    const config: ModelConfig = addHead ? { ...info.config, value_head: true } : info.config;
    const byFile = new Map<string, Array<[string, string]>>();
    for (const [canonical, t] of info.tensors) {
      if (canonical.startsWith('value_head.') && !config.value_head) continue;
      if (!config.attention_bias && /\.self_attn\.[qkv]_proj\.bias$/.test(canonical)) continue;
      const list = byFile.get(t.file) ?? [];
      list.push([canonical, t.storedName]);
      byFile.set(t.file, list);
    }
    const files = [...byFile].map(([file, names]) => ({ path: join(dir, file), names }));
    const optimizerPath = join(dir, 'optimizer.safetensors');
    const runtime = await TorchRuntime.start(config, tokenizer, opts, async (worker) => {
      await worker.request('init', {
        config, files, zeroValueHead: addHead, trainable: opts.trainable ?? true, ...memoryInit(config),
      });
      if (lora) await worker.request('enable_lora', { ...lora, path: adapterWeights, frozenDtype: memoryInit(config).frozenDtype });
      if (opts.resume && existsSync(optimizerPath)) {
        await worker.request('load_optimizer', { path: optimizerPath, weightDecay: 0.01, momentDtype: momentDtype(config) });
      }
      // a shared-trunk value step's moments (N6b): the worker keeps them in the 'value' slot the next value view steps
      const valuePath = join(dir, OPTIMIZER_VALUE_FILE);
      if (opts.resume && existsSync(valuePath)) {
        await worker.request('load_optimizer', { path: valuePath, weightDecay: 0, slot: 'value', momentDtype: momentDtype(config) });
      }
    });
    runtime.loraConfig = lora;
    return runtime;
  }

  /** The LoRA settings when adapters are on (from enableLora or the loaded folder), else null. */
  get lora(): LoraConfig | null {
    return this.loraConfig ? { ...this.loraConfig, targetModules: [...this.loraConfig.targetModules] } : null;
  }

  /**
   * Freeze the base weights (a value head stays trainable) and add LoRA adapters to the target
   * modules, as CausalLM.enableLora: fresh ones (A uniform in ±1/sqrt(in) from `seed`, B zero: the
   * torch generator draws other numbers than TF.js's) or `weights` by PEFT key. Drops the
   * optimizer state (it was over the base weights); the next step starts AdamW over the adapters.
   */
  async enableLora(lora: LoraConfig, opts: { seed?: number; weights?: Map<string, { shape: number[]; data: Float32Array }> } = {}): Promise<void> {
    if (this.slot !== 'main') throw new Error('enableLora: call it on the model, not on a value view');
    if (this.loraConfig) throw new Error('LoRA is already enabled on this model');
    checkLoraConfig(lora);
    const arrays: Record<string, { data: WireArray; shape: number[] }> = {};
    for (const [name, w] of opts.weights ?? []) arrays[name] = { data: w.data, shape: w.shape };
    await this.worker.request('enable_lora', { ...lora, seed: opts.seed ?? 0, frozenDtype: memoryInit(this.config).frozenDtype }, arrays);
    this.loraConfig = { ...lora, targetModules: [...lora.targetModules] };
    this.weightDecay = null;   // the worker dropped its optimizers: ensureOptimizer sends the settings again
  }

  /** How many values an optimizer step updates (adapters and value head under LoRA), and the base parameters. */
  async trainableParameters(): Promise<{ trainable: number; parameters: number }> {
    const r = await this.worker.request('lora_info');
    return { trainable: r.header.trainable as number, parameters: r.header.parameters as number };
  }

  ensureOptimizer(weightDecay = 0.01, betas?: readonly [number, number]): void {
    if (this.weightDecay !== null) return;
    this.weightDecay = weightDecay;
    if (betas) this.betas = [betas[0], betas[1]];
    // a dead worker fails the next request with its reason
    void this.worker.request('optimizer', { weightDecay, slot: this.slot, momentDtype: momentDtype(this.config) }).catch(() => undefined);
  }

  valueView(betas: readonly [number, number]): TorchRuntime {
    const view = new TorchRuntime(this.worker, this.config, this.tokenizer, this.info, 'value');
    view.ensureOptimizer(0, betas);
    return view;
  }

  async generate(prompts: number[][], opts: GenerateOptions): Promise<Generated[]> {
    if (prompts.length === 0) return [];
    if (opts.cacheKeys && opts.cacheKeys.length !== prompts.length)
      throw new Error(`generate: cacheKeys has ${opts.cacheKeys.length} key(s) for ${prompts.length} prompt(s)`);
    prompts.forEach((p, b) => { if (p.length === 0) throw new Error(`generate: prompt ${b} is empty (it needs at least one token)`); });
    const stop = (opts.stop ?? ['</answer>']).filter((s) => s.length > 0);
    if (stop.length && !this.piecesSent) {
      // Each token's text, so the worker can stop a row early; the final cut is made here on the decoded text.
      const pieces = Array.from({ length: this.config.vocab_size }, (_, id) => (id < this.tokenizer.vocabSize ? this.tokenizer.decode([id]) : ''));
      await this.worker.request('set_pieces', { pieces });
      this.piecesSent = true;
    }
    const flat = new Int32Array(prompts.reduce((a, p) => a + p.length, 0));
    let o = 0;
    for (const p of prompts) { flat.set(p, o); o += p.length; }
    const stopIds = this.stopTokenIds();
    const cacheMb = prefixCacheMb();
    const reply = await this.worker.request('generate', {
      lengths: prompts.map((p) => p.length), padTokenId: this.tokenizer.padTokenId, maxNewTokens: this.newTokenBudget(prompts, opts.maxNewTokens),
      temperature: opts.temperature, topK: opts.topK, topP: opts.topP, seed: opts.seed, stopTokenIds: stopIds, stop,
      rowChunk: memorySettings().generationRows,
      ...(opts.cacheKeys && cacheMb > 0 ? { cacheKeys: opts.cacheKeys, cacheMb } : {}),
    }, { prompts: { data: flat, shape: [flat.length] } });
    const lengths = reply.header.lengths as number[];
    const tokens = reply.arrays.tokens as Int32Array;
    const logprobs = reply.arrays.logprobs as Float32Array;
    const out: Generated[] = [];
    let k = 0;
    for (const n of lengths) {
      const ids = Array.from(tokens.subarray(k, k + n));
      const lps = Array.from(logprobs.subarray(k, k + n));
      k += n;
      const eos = ids.length > 0 && stopIds.includes(ids[ids.length - 1]!);
      let text = this.tokenizer.decode(eos ? ids.slice(0, -1) : ids);
      let cut = -1;
      for (const s of stop) { const i = text.indexOf(s); if (i >= 0 && (cut < 0 || i + s.length < cut)) cut = i + s.length; }
      if (!eos && cut >= 0) text = text.slice(0, cut);
      out.push({ ids, text, logprobs: lps });
    }
    return out;
  }

  /**
   * Per-token log-probs, entropies (and values) of rows [ids], in the rows' order. The rows are scored in the chunks of
   * prefixChunks: rows that share their start together (the worker computes the shared tokens once), else chunks of similar
   * length, so a short row is not padded to the longest (RL's prefix carriers run from one turn to ten: on a 10-turn step
   * of study v4's vanilla arm, 212k tokens padded to 220k, against 309k in the given order). A row's numbers do not depend
   * on its chunk beyond the order of floating-point sums. Throws when a row's score mask and ids differ in length.
   */
  async tokenStats(rows: Array<{ ids: number[]; score?: number[] }>, withValues: boolean, tokenBudget = 8192): Promise<TokenStat[]> {
    if (rows.length === 0) return [];
    rows.forEach((r, i) => {
      if (r.score && r.score.length !== r.ids.length) throw new Error(`tokenStats: row ${i}'s score has ${r.score.length} values for ${r.ids.length} tokens`);
    });
    const values = withValues && this.config.value_head;
    const out = new Array<TokenStat>(rows.length);
    for (const indexes of prefixChunks(rows, tokenBudget, prefixFamiliesMin())) {
      const chunk = indexes.map((i) => rows[i]!);
      const batch = padRows(chunk.map((r) => ({ ids: r.ids, arrays: {} })), this.tokenizer.padTokenId);
      const T = batch.inputIds[0]!.length;
      // the rows' score masks, when any row has one: the worker's LM head runs on the scored tokens only (0 elsewhere)
      const scored = chunk.some((r) => r.score !== undefined);
      const score = scored ? grid(chunk.map((r) => [...(r.score ?? r.ids.map(() => 1)), ...new Array<number>(T - r.ids.length).fill(0)])) : null;
      const arrays = { ids: grid(batch.inputIds), mask: grid(batch.attentionMask!), ...(score ? { score } : {}) };
      const reply = await this.worker.request('stats', { values }, arrays);
      const lp = reply.arrays.logprobs as Float32Array;
      const ent = reply.arrays.entropies as Float32Array;
      const val = reply.arrays.values as Float32Array | undefined;
      chunk.forEach((r, b) => {
        out[indexes[b]!] = {
          logprobs: Array.from(lp.subarray(b * T, b * T + r.ids.length)), entropies: Array.from(ent.subarray(b * T, b * T + r.ids.length)),
          values: values && val ? Array.from(val.subarray(b * T, b * T + r.ids.length)) : null,
        };
      });
    }
    return out;
  }

  async trainStep(
    lossName: string, rows: TrainRow[], params: Record<string, unknown>, lr: number, gradClip: number, tokenBudget = memorySettings().tokensPerMicroBatch,
  ): Promise<Record<string, number>> {
    if (rows.length === 0) throw new Error('trainStep: no rows to train on');
    this.ensureOptimizer();
    const spec = getLoss(lossName);
    if (spec.needs.values && !this.config.value_head) throw new Error(`loss '${lossName}' needs a value head; this model has none`);
    const chunks: TrainBatch[] = prefixChunks(rows, tokenBudget, prefixFamiliesMin()).map((c) => padRows(c.map((i) => rows[i]!), this.tokenizer.padTokenId));
    const weights = chunks.map(lossTokens);
    const total = weights.reduce((a, b) => a + b, 0);
    const stats: Record<string, number> = {};
    let loss = 0;
    try {
      for (let i = 0; i < chunks.length; i++) {
        const chunk = chunks[i]!;
        const [B, T] = [chunk.inputIds.length, chunk.inputIds[0]!.length];
        const logits = spec.needs.logprobs || spec.needs.entropies;
        const lossMask = chunk.lossMask as number[][] | undefined;
        const inputs = { ids: grid(chunk.inputIds), mask: grid(chunk.attentionMask!), ...(lossMask ? { score: grid(lossMask) } : {}) };
        const fwd = await this.worker.request('forward', { logits, values: spec.needs.values }, inputs);
        const outputs = { ...(logits ? { logprobs: fwd.arrays.logprobs as Float32Array, entropies: fwd.arrays.entropies as Float32Array } : {}),
          ...(spec.needs.values ? { values: fwd.arrays.values as Float32Array } : {}) };
        const r = lossOutputGradients(lossName, params, chunk, outputs);
        const w = weights[i]!;
        loss += (r.loss * w) / total;
        for (const [k, v] of Object.entries(r.stats)) stats[k] = (stats[k] ?? 0) + (v * w) / total;
        const coef: Record<string, { data: WireArray; shape: number[] }> = {};
        for (const [k, g] of Object.entries(r.grads)) coef[k] = { data: (g as Float32Array).map((x) => x * w), shape: [B, T] };
        await this.worker.request('backward', {}, coef);
      }
      const applied = await this.worker.request('apply', {
        lr, maxGradNorm: gradClip, totalWeight: total, slot: this.slot,
        beta1: this.betas[0], beta2: this.betas[1], eps: RUNTIME_ADAMW.eps, weightDecay: this.weightDecay ?? 0.01,
      });
      return { ...stats, 'losses/total': loss, 'charts/gradNorm': applied.header.gradNorm as number, 'charts/lr': lr };
    } catch (error) {
      await this.worker.request('discard').catch(() => undefined);
      throw error;
    }
  }

  /** Named weights as f32 arrays (tests and parity checks). */
  async weights(names?: string[]): Promise<Map<string, Float32Array>> {
    const reply = await this.worker.request('weights', names ? { names } : {});
    return new Map(Object.entries(reply.arrays).map(([k, v]) => [k, v as Float32Array]));
  }

  async save(dir: string, manifest: RuntimeManifest, opts: SaveOptions = {}): Promise<void> {
    // moments (and then f32 weights, so a resume is exact) only where the settings say; else weights in the checkpoint dtype
    const moments = writesMoments(opts.resumePoint ?? true);
    const dtype = resolvedMemory(countParameters(this.config)).checkpointDtype;
    await saveCheckpoint(dir, {
      tokenizer: this.tokenizer,
      manifest,
      external: {
        config: this.config,
        parameters: countParameters(this.config),
        writeFiles: async (tmp) => {
          const r = await this.worker.request('save', {
            weights: join(tmp, 'model.safetensors'), adapters: join(tmp, 'adapter_model.safetensors'), dtype,
            // the value view's slot too, when one is open (the worker skips it otherwise)
            ...(moments ? { optimizer: join(tmp, 'optimizer.safetensors'), valueOptimizer: join(tmp, OPTIMIZER_VALUE_FILE) } : {}),
          });
          const step = (r.header.optimizerStep ?? null) as number | null;
          const valueStep = (r.header.valueOptimizerStep ?? null) as number | null;
          const optimizer = { beta1: this.betas[0], beta2: this.betas[1], eps: RUNTIME_ADAMW.eps, weightDecay: this.weightDecay ?? 0.01 };
          const written = String(r.header.dtype ?? 'f32');
          return {
            optimizerStep: step, valueOptimizerStep: valueStep, optimizer, lora: (r.header.lora ?? null) as LoraConfig | null,
            dtype: written === 'bf16' ? 'BF16' as const : written === 'f16' ? 'F16' as const : 'F32' as const,
          };
        },
      },
    });
  }

  /**
   * `model export` on torch: the weights (no moments) in `dtype` with the folder's generation defaults, as a checkpoint
   * (manifest, hashes, tokenizer). LoRA adapters are written beside the base weights (the worker does not merge them).
   */
  async exportTo(dir: string, manifest: RuntimeManifest, opts: { dtype: 'f32' | 'f16' | 'bf16'; generation?: GenerationDefaults }): Promise<void> {
    await saveCheckpoint(dir, {
      tokenizer: this.tokenizer,
      manifest,
      ...(opts.generation ? { generation: opts.generation } : {}),
      external: {
        config: this.config,
        parameters: countParameters(this.config),
        writeFiles: async (tmp) => {
          const r = await this.worker.request('save', {
            weights: join(tmp, 'model.safetensors'), adapters: join(tmp, 'adapter_model.safetensors'), dtype: opts.dtype,
          });
          const written = String(r.header.dtype ?? 'f32');
          return {
            optimizerStep: null, lora: (r.header.lora ?? null) as LoraConfig | null,
            dtype: written === 'bf16' ? 'BF16' as const : written === 'f16' ? 'F16' as const : 'F32' as const,
          };
        },
      },
    });
  }

  /** Tests: the worker process, to kill it or feed it bad bytes. */
  get workerForTests(): TorchWorker { return this.worker; }

  async dispose(): Promise<void> {
    if (this.slot === 'main') await releaseWorker(this.worker);
    else await this.worker.request('drop_optimizer', { slot: this.slot }).catch(() => undefined);
  }
}
