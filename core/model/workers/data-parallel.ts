// Data-parallel training on a multi-core CPU: wasm runs one thread per process/thread, so the
// batch is split row-wise across the main thread and N worker threads (each its own TF.js + wasm
// instance and model replica). Workers return flattened gradients; the coordinator averages
// them (weighted by rows), clips, applies AdamW once and sends the new trainable weights with
// the next step. Losses are resolved by name in every worker: pass the modules that register
// them (e.g. core/train's losses) as `lossModules`.
import { Worker } from 'node:worker_threads';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { existsSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs';
import type { CausalLM } from '../transformer.js';
import {
  Trainer, chunkRows, padRows, DEFAULT_TOKEN_BUDGET, type StepRequest, type StepResult, type TrainBatch, type TrainerOptions, type TrainRow,
} from '../trainer.js';
import { tokenScores, type TokenScores } from '../score.js';
import type { BackendRequest } from '../backend.js';
import type { ChunksMessage, FromWorker, GenerateMessage, ScoresMessage, StepMessage, TokenizerFiles } from './protocol.js';
import { generate, type GenerateOptions, type GenerationResult, type GenerationTokenizer } from '../generate.js';
import { flattenWeights, unflattenGradients } from './flat.js';

export interface DataParallelOptions {
  /** Worker threads besides the main thread (0 = plain single-thread training). */
  workers: number;
  /** Modules each worker imports to register losses (paths or file URLs; .ts works from source). */
  lossModules?: string[];
  /** Backend of the workers ('wasm' by default). */
  backend?: BackendRequest;
  /** Tokenizer files (tokenizer.json / tokenizer_config.json contents) for generate() in the workers. */
  tokenizer?: TokenizerFiles;
  /**
   * The worker module (file URL): a .ts source runs through tsx (bootstrap.mjs), a .js bundle
   * directly. Default: dp-worker next to this file (which registers only core/model's losses).
   */
  entry?: string;
}

interface WorkerHandle {
  worker: Worker;
  pending: Map<number, { resolve: (m: FromWorker) => void; reject: (e: Error) => void }>;
  /** Why the worker is gone (set when it exits or crashes): later requests fail with it at once. */
  dead?: string;
}

export class DataParallelTrainer {
  private trainerRef: Trainer | null;
  private readonly model: CausalLM;
  private readonly handles: WorkerHandle[];
  private readonly names: string[];
  private nextId = 1;
  /** Incremented on every applied update; a worker whose copy is older gets the weights. */
  private weightsVersion = 0;
  private readonly workerVersion: number[];

  private constructor(model: CausalLM, trainer: Trainer | null, handles: WorkerHandle[], private ownsTrainer: boolean) {
    this.model = model;
    this.trainerRef = trainer;
    this.handles = handles;
    this.names = model.trainableNames();
    this.workerVersion = handles.map(() => 0);
  }

  /**
   * Start the workers. `trainer`: options for a new Trainer (disposed with this), an existing
   * Trainer over `model` whose optimizer (and its restored moments) this one steps (not disposed),
   * or null for generation and scoring only (attach one with setTrainer before training).
   */
  static async create(model: CausalLM, trainerOrOptions: TrainerOptions | Trainer | null, dp: DataParallelOptions): Promise<DataParallelTrainer> {
    if (!Number.isInteger(dp.workers) || dp.workers < 0) throw new Error(`data parallel: workers must be a non-negative integer, got ${dp.workers}`);
    const ownsTrainer = trainerOrOptions !== null && !(trainerOrOptions instanceof Trainer);
    const trainer = trainerOrOptions === null || trainerOrOptions instanceof Trainer ? trainerOrOptions : new Trainer(model, trainerOrOptions);
    if (trainer && trainer.model !== model) throw new Error('data parallel: the trainer given belongs to another model');
    const here = fileURLToPath(import.meta.url);
    const ext = here.endsWith('.ts') ? '.ts' : '.js';
    const entry = dp.entry ?? pathToFileURL(here.replace(/data-parallel\.(ts|js)$/, `dp-worker${ext}`)).href;
    if (!existsSync(fileURLToPath(entry))) throw new Error(`data parallel: worker module not found at ${fileURLToPath(entry)}`);
    const bootstrap = new URL('./bootstrap.mjs', import.meta.url);
    const viaTsx = entry.endsWith('.ts');
    if (viaTsx && !existsSync(fileURLToPath(bootstrap))) throw new Error(`data parallel: worker bootstrap not found at ${fileURLToPath(bootstrap)}`);
    const lossModules = (dp.lossModules ?? []).map((m) => (m.startsWith('file:') || !m.includes('/') ? m : pathToFileURL(m).href));
    const weights = [...model.exportWeights({ includeLora: true })].map(([name, w]) => ({ name, shape: w.shape, data: w.data }));
    const handles: WorkerHandle[] = [];
    try {
      for (let i = 0; i < dp.workers; i++) {
        const worker = viaTsx ? new Worker(bootstrap, { workerData: { entry } }) : new Worker(new URL(entry));
        const handle: WorkerHandle = { worker, pending: new Map() };
        handles.push(handle);
        const ready = new Promise<void>((resolve, reject) => {
          const onMessage = (m: FromWorker) => {
            if (m.type === 'ready') {
              worker.off('message', onMessage);
              resolve();
            } else if (m.type === 'error') {
              worker.off('message', onMessage);
              reject(new Error(`data-parallel worker ${i} failed to start: ${m.message}`));
            }
          };
          worker.on('message', onMessage);
          worker.once('error', (e) => reject(new Error(`data-parallel worker ${i} crashed at start: ${e.message}`)));
        });
        worker.postMessage({
          type: 'init',
          config: model.config,
          lora: model.getLoraConfig(),
          weights,
          lossModules,
          backend: dp.backend ?? 'wasm',
          tokenizer: dp.tokenizer ?? null,
        });
        await ready;
        worker.unref();   // an idle worker does not keep the process alive (post() refs it while a request is out)
        worker.on('message', (m: FromWorker) => {
          if (m.type !== 'ready') {
            const p = m.id !== null ? handle.pending.get(m.id) : undefined;
            if (!p) return;
            handle.pending.delete(m.id!);
            if (handle.pending.size === 0) worker.unref();
            if (m.type === 'error') p.reject(new Error(`data-parallel worker ${i}: ${m.message}`)); else p.resolve(m);
          }
        });
        worker.on('error', (e) => {
          handle.dead = `data-parallel worker ${i} crashed: ${e.message}`;
          for (const p of handle.pending.values()) p.reject(e);
          handle.pending.clear();
        });
        worker.on('exit', (code) => {
          handle.dead ??= `data-parallel worker ${i} exited (code ${code})`;
          for (const p of handle.pending.values()) p.reject(new Error(`${handle.dead} in the middle of a request`));
          handle.pending.clear();
        });
      }
    } catch (error) {
      await Promise.all(handles.map((h) => h.worker.terminate()));
      if (ownsTrainer) trainer?.dispose();
      throw error;
    }
    return new DataParallelTrainer(model, trainer, handles, ownsTrainer);
  }

  get workers(): number { return this.handles.length; }

  /** The optimizer side (clipping, AdamW) of the steps; throws when none is attached. */
  get trainer(): Trainer {
    if (!this.trainerRef) throw new Error('data parallel: no trainer attached (created for generation only; call setTrainer first)');
    return this.trainerRef;
  }

  /** Use this Trainer (over the same model; not disposed by this) for the next steps. */
  setTrainer(trainer: Trainer): void {
    if (trainer === this.trainerRef) return;
    if (trainer.model !== this.model) throw new Error('data parallel: the trainer given belongs to another model');
    if (this.ownsTrainer) this.trainerRef?.dispose();
    this.trainerRef = trainer;
    this.ownsTrainer = false;
  }

  /** Call after changing the model's weights outside this trainer (e.g. loading a checkpoint): workers resync the trainable weights. */
  markWeightsChanged(): void { this.weightsVersion++; }

  /** One optimisation step over the whole batch, split across the main thread and the workers. */
  async step(request: StepRequest): Promise<StepResult> {
    if (request.microBatchSize) throw new Error('data parallel: microBatchSize is not supported; use accumulate across calls');
    const rows = request.batch.inputIds.length;
    const bounds = splitBounds(rows, this.handles.length + 1);
    const trainable = this.trainableOnce();
    const remote: Array<Promise<FromWorker>> = [];
    for (let i = 1; i < bounds.length - 1; i++) {
      remote.push(this.dispatch(i - 1, {
        type: 'step', id: this.nextId++, lossName: request.lossName, params: request.params ?? {},
        batch: sliceBatch(request.batch, bounds[i]!, bounds[i + 1]!),
      }, trainable));
    }
    // The main thread computes its shard while the workers compute theirs.
    let local: ReturnType<Trainer['computeGradients']>;
    try {
      local = this.trainer.computeGradients(request.lossName, request.params ?? {}, sliceBatch(request.batch, bounds[0]!, bounds[1]!));
    } catch (error) {
      await Promise.allSettled(remote);
      throw error;
    }
    const localWeight = (bounds[1]! - bounds[0]!) / rows;
    const scaled = new Map<string, tf.Tensor>();
    for (const [k, g] of local.grads) { scaled.set(k, tf.mul(g, localWeight)); g.dispose(); }
    this.trainer.addToAccumulator(scaled, localWeight);
    this.trainer.recordStats(local.loss, local.stats);
    let results: FromWorker[];
    try {
      results = await Promise.all(remote);
    } catch (error) {
      this.trainer.resetAccumulation();
      throw error;
    }
    let loss = local.loss * localWeight;
    results.forEach((r, j) => {
      if (r.type !== 'result') return;
      const weight = (bounds[j + 2]! - bounds[j + 1]!) / rows;
      this.trainer.addToAccumulator(unflattenGradients(this.model, this.names, r.grads, weight), weight);
      this.trainer.recordStats(r.loss, r.stats);
      loss += r.loss * weight;
    });
    if (request.accumulate) {
      return { loss, stats: {}, gradNorm: Number.NaN, lr: this.trainer.currentLr(), applied: false, step: this.trainer.optimizer.step };
    }
    const result = this.trainer.applyAccumulatedGradients();
    this.weightsVersion++;
    return result;
  }

  /**
   * Generate with the current weights, prompts split across the main thread and the workers
   * (each row's sampling stream depends only on (seed, row index), so the split does not change
   * the samples). `tokenizer` is the main thread's; workers use the files given at create().
   */
  async generate(tokenizer: GenerationTokenizer, prompts: Array<string | number[]>, options: GenerateOptions): Promise<GenerationResult[]> {
    const ids = prompts.map((p) => (typeof p === 'string' ? tokenizer.encode(p) : [...p]));
    if (ids.length === 0) return [];
    const bounds = splitBounds(ids.length, this.handles.length + 1);
    const trainable = this.trainableOnce();
    const base = options.rowSeedOffset ?? 0;
    const remote: Array<Promise<FromWorker>> = [];
    for (let i = 1; i < bounds.length - 1; i++) {
      remote.push(this.dispatch(i - 1, {
        type: 'generate', id: this.nextId++, prompts: ids.slice(bounds[i]!, bounds[i + 1]!), options: { ...options, rowSeedOffset: base + bounds[i]! },
      }, trainable));
    }
    let local: GenerationResult[];
    try {
      local = generate(this.model, tokenizer, ids.slice(bounds[0]!, bounds[1]!), { ...options, rowSeedOffset: base });
    } catch (error) {
      await Promise.allSettled(remote);
      throw error;
    }
    const results = await Promise.all(remote);
    return [...local, ...results.flatMap((r) => (r.type === 'generated' ? r.results : []))];
  }

  /** Send a message to worker `index` (with the trainable weights when its copy is stale) and await its reply. */
  private dispatch(index: number, message: WorkerRequest, trainable: () => Float32Array): Promise<FromWorker> {
    const handle = this.handles[index]!;
    if (this.workerVersion[index] !== this.weightsVersion) message.trainable = trainable();
    this.workerVersion[index] = this.weightsVersion;
    return post(handle, message);
  }

  /** Lazily flattened trainable weights (computed once per call, only if some worker is stale). */
  private trainableOnce(): () => Float32Array {
    let flat: Float32Array | null = null;
    return () => (flat ??= flattenWeights(this.model, this.names));
  }

  /**
   * One optimisation step over rows of different lengths, as Trainer.stepRows computes it (the
   * token-weighted mean over all rows' loss tokens, clipping, AdamW), with the rows split across
   * the main thread and the workers: balanced by tokens, then packed into token-budget chunks per
   * shard. Only the summation order differs from the single-thread step.
   */
  async stepRows(
    lossName: string, rows: TrainRow[], params: Record<string, unknown>,
    opts: { lr?: number; maxGradNorm?: number; tokenBudget?: number; padTokenId?: number } = {},
  ): Promise<StepResult> {
    if (rows.length === 0) throw new Error('stepRows: no rows to train on');
    const shards = balanceRows(rows, this.handles.length + 1);
    const budget = opts.tokenBudget ?? DEFAULT_TOKEN_BUDGET;
    const pad = opts.padTokenId ?? 0;
    const chunksOf = (shard: TrainRow[]) => chunkRows(shard, budget).map((c) => padRows(c, pad));
    const trainable = this.trainableOnce();
    const remote = shards.slice(1).map((shard, j) =>
      this.dispatch(j, { type: 'chunks', id: this.nextId++, lossName, params, chunks: chunksOf(shard) }, trainable));
    try {
      for (const chunk of chunksOf(shards[0]!)) this.trainer.accumulateChunk(lossName, params, chunk);
      const results = await Promise.all(remote);
      for (const r of results) {
        if (r.type !== 'accumulated') throw new Error(`data parallel: unexpected reply ${r.type} to a training shard`);
        this.trainer.addToAccumulator(unflattenGradients(this.model, this.names, r.grads, 1), r.weight);
        for (const it of r.items) this.trainer.recordStats(it.loss, it.stats, it.weight);
      }
    } catch (error) {
      await Promise.allSettled(remote);
      this.trainer.resetAccumulation();
      throw error;
    }
    const result = this.trainer.applyAccumulatedGradients({ lr: opts.lr, maxGradNorm: opts.maxGradNorm });
    this.weightsVersion++;
    return result;
  }

  /** No-grad per-token statistics (tokenScores) of padded rows, split across the main thread and the workers. */
  async tokenScores(inputIds: number[][], attentionMask: number[][], options: { values: boolean; chunkRows: number }): Promise<TokenScores> {
    const bounds = splitBounds(inputIds.length, this.handles.length + 1);
    const trainable = this.trainableOnce();
    const remote: Array<Promise<FromWorker>> = [];
    for (let i = 1; i < bounds.length - 1; i++) {
      remote.push(this.dispatch(i - 1, {
        type: 'scores', id: this.nextId++, inputIds: inputIds.slice(bounds[i]!, bounds[i + 1]!),
        attentionMask: attentionMask.slice(bounds[i]!, bounds[i + 1]!), values: options.values, chunkRows: options.chunkRows,
      }, trainable));
    }
    let local: TokenScores;
    try {
      local = tokenScores(this.model, inputIds.slice(0, bounds[1]!), { attentionMask: attentionMask.slice(0, bounds[1]!), ...options });
    } catch (error) {
      await Promise.allSettled(remote);
      throw error;
    }
    for (const r of await Promise.all(remote)) {
      if (r.type !== 'scored') throw new Error(`data parallel: unexpected reply ${r.type} to a scoring shard`);
      local.logprobs.push(...r.logprobs);
      local.entropies.push(...r.entropies);
      if (local.values && r.values) local.values.push(...r.values);
    }
    return local;
  }

  async dispose(): Promise<void> {
    await Promise.all(this.handles.map(async (h) => { h.worker.postMessage({ type: 'close' }); await h.worker.terminate(); }));
    if (this.ownsTrainer) this.trainerRef?.dispose();
  }
}

function sliceBatch(batch: TrainBatch, start: number, end: number): TrainBatch {
  const out: TrainBatch = { inputIds: batch.inputIds.slice(start, end) };
  for (const [k, v] of Object.entries(batch)) if (k !== 'inputIds' && v !== undefined) out[k] = (v as unknown[]).slice(start, end) as number[][];
  return out;
}

/** Rows into `parts` shards of about equal token counts (longest first, each to the lightest shard); no empty shard. */
export function balanceRows(rows: TrainRow[], parts: number): TrainRow[][] {
  const n = Math.max(1, Math.min(parts, rows.length));
  const shards: TrainRow[][] = Array.from({ length: n }, () => []);
  const load = new Array<number>(n).fill(0);
  for (const row of [...rows].sort((a, b) => b.ids.length - a.ids.length)) {
    let k = 0;
    for (let i = 1; i < n; i++) if (load[i]! < load[k]!) k = i;
    shards[k]!.push(row);
    load[k] = load[k]! + row.ids.length;
  }
  return shards;
}

type WorkerRequest = StepMessage | GenerateMessage | ChunksMessage | ScoresMessage;

/** Row bounds splitting `rows` into at most `parts` contiguous shards (at least one; none empty when rows > 0). */
function splitBounds(rows: number, parts: number): number[] {
  const n = Math.max(1, Math.min(rows, parts));
  return Array.from({ length: n + 1 }, (_, i) => Math.round((i * rows) / n));
}

/** Send a request to a worker and await its reply; the worker keeps the process alive only while requests are out. */
function post(handle: WorkerHandle, message: WorkerRequest): Promise<FromWorker> {
  return new Promise((resolve, reject) => {
    if (handle.dead) { reject(new Error(`${handle.dead}; the step was not taken`)); return; }
    handle.pending.set(message.id, { resolve, reject });
    handle.worker.ref();
    handle.worker.postMessage(message);
  });
}
