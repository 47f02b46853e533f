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
import { Trainer, type StepRequest, type StepResult, type TrainBatch, type TrainerOptions } from '../trainer.js';
import type { BackendRequest } from '../backend.js';
import type { FromWorker, GenerateMessage, StepMessage, TokenizerFiles } from './protocol.js';
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
}

interface WorkerHandle { worker: Worker; pending: Map<number, { resolve: (m: FromWorker) => void; reject: (e: Error) => void }> }

export class DataParallelTrainer {
  readonly trainer: Trainer;
  private readonly model: CausalLM;
  private readonly handles: WorkerHandle[];
  private readonly names: string[];
  private nextId = 1;
  /** Incremented on every applied update; a worker whose copy is older gets the weights. */
  private weightsVersion = 0;
  private readonly workerVersion: number[];

  private constructor(model: CausalLM, trainer: Trainer, handles: WorkerHandle[]) {
    this.model = model;
    this.trainer = trainer;
    this.handles = handles;
    this.names = trainer.trainableNames();
    this.workerVersion = handles.map(() => 0);
  }

  static async create(model: CausalLM, options: TrainerOptions, dp: DataParallelOptions): Promise<DataParallelTrainer> {
    if (!Number.isInteger(dp.workers) || dp.workers < 0) throw new Error(`data parallel: workers must be a non-negative integer, got ${dp.workers}`);
    const trainer = new Trainer(model, options);
    const here = fileURLToPath(import.meta.url);
    const ext = here.endsWith('.ts') ? '.ts' : '.js';
    const entry = pathToFileURL(here.replace(/data-parallel\.(ts|js)$/, `dp-worker${ext}`)).href;
    const bootstrap = new URL('./bootstrap.mjs', import.meta.url);
    if (!existsSync(fileURLToPath(bootstrap))) throw new Error(`data parallel: worker bootstrap not found at ${fileURLToPath(bootstrap)}`);
    const lossModules = (dp.lossModules ?? []).map((m) => (m.startsWith('file:') || !m.includes('/') ? m : pathToFileURL(m).href));
    const weights = [...model.exportWeights({ includeLora: true })].map(([name, w]) => ({ name, shape: w.shape, data: w.data }));
    const handles: WorkerHandle[] = [];
    try {
      for (let i = 0; i < dp.workers; i++) {
        const worker = new Worker(bootstrap, { workerData: { entry } });
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
        worker.on('message', (m: FromWorker) => {
          if (m.type === 'result' || m.type === 'generated' || m.type === 'error') {
            const p = m.id !== null ? handle.pending.get(m.id) : undefined;
            if (!p) return;
            handle.pending.delete(m.id!);
            if (m.type === 'error') p.reject(new Error(`data-parallel worker ${i}: ${m.message}`)); else p.resolve(m);
          }
        });
        worker.on('error', (e) => { for (const p of handle.pending.values()) p.reject(e); handle.pending.clear(); });
      }
    } catch (error) {
      await Promise.all(handles.map((h) => h.worker.terminate()));
      trainer.dispose();
      throw error;
    }
    return new DataParallelTrainer(model, trainer, handles);
  }

  get workers(): number { return this.handles.length; }

  /** Call after changing the model's weights outside this trainer (e.g. loading a checkpoint): workers resync the trainable weights. */
  markWeightsChanged(): void { this.weightsVersion++; }

  /** One optimisation step over the whole batch, split across the main thread and the workers. */
  async step(request: StepRequest): Promise<StepResult> {
    if (request.microBatchSize) throw new Error('data parallel: microBatchSize is not supported; use accumulate across calls');
    const rows = request.batch.inputIds.length;
    const parts = Math.min(rows, this.handles.length + 1);
    const bounds = Array.from({ length: parts + 1 }, (_, i) => Math.round((i * rows) / parts));
    const stale = this.workerVersion.some((v, i) => i < parts - 1 && v !== this.weightsVersion);
    const trainable = stale ? flattenWeights(this.model, this.names) : undefined;
    const remote: Array<Promise<FromWorker>> = [];
    for (let i = 1; i < parts; i++) {
      const handle = this.handles[i - 1]!;
      const id = this.nextId++;
      const send = this.workerVersion[i - 1] !== this.weightsVersion;
      const message: StepMessage = {
        type: 'step',
        id,
        lossName: request.lossName,
        params: request.params ?? {},
        batch: sliceBatch(request.batch, bounds[i]!, bounds[i + 1]!),
        ...(send && trainable ? { trainable } : {}),
      };
      this.workerVersion[i - 1] = this.weightsVersion;
      remote.push(new Promise((resolve, reject) => { handle.pending.set(id, { resolve, reject }); handle.worker.postMessage(message); }));
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
    const rows = ids.length;
    if (rows === 0) return [];
    const parts = Math.min(rows, this.handles.length + 1);
    const bounds = Array.from({ length: parts + 1 }, (_, i) => Math.round((i * rows) / parts));
    const stale = this.workerVersion.some((v, i) => i < parts - 1 && v !== this.weightsVersion);
    const trainable = stale ? flattenWeights(this.model, this.names) : undefined;
    const base = options.rowSeedOffset ?? 0;
    const remote: Array<Promise<FromWorker>> = [];
    for (let i = 1; i < parts; i++) {
      const handle = this.handles[i - 1]!;
      const id = this.nextId++;
      const send = this.workerVersion[i - 1] !== this.weightsVersion;
      const message: GenerateMessage = {
        type: 'generate',
        id,
        prompts: ids.slice(bounds[i]!, bounds[i + 1]!),
        options: { ...options, rowSeedOffset: base + bounds[i]! },
        ...(send && trainable ? { trainable } : {}),
      };
      this.workerVersion[i - 1] = this.weightsVersion;
      remote.push(new Promise((resolve, reject) => { handle.pending.set(id, { resolve, reject }); handle.worker.postMessage(message); }));
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

  async dispose(): Promise<void> {
    await Promise.all(this.handles.map(async (h) => { h.worker.postMessage({ type: 'close' }); await h.worker.terminate(); }));
    this.trainer.dispose();
  }
}

function sliceBatch(batch: TrainBatch, start: number, end: number): TrainBatch {
  const out: TrainBatch = { inputIds: batch.inputIds.slice(start, end) };
  for (const [k, v] of Object.entries(batch)) if (k !== 'inputIds' && v !== undefined) out[k] = (v as unknown[]).slice(start, end) as number[][];
  return out;
}
