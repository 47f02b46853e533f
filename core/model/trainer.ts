// A training step on a CausalLM: forward the batch, evaluate a loss from the registry by name,
// backpropagate (custom 2-D-matmul gradients), clip by global norm, accumulate if asked, and apply
// AdamW with the scheduled learning rate. Used by the data-parallel workers (model/workers), the
// model benchmarks and the model tests. The pipeline's stages train through
// ModelRuntime.trainStep (core/train/runtime.ts), a separate step with token-budget chunks.
// Memory discipline: everything inside tf.tidy; gradients disposed after use.
import * as tf from '@tensorflow/tfjs';
import type { CausalLM } from './transformer.js';
import { getLoss, type LossOutputs } from './losses.js';
import { AdamW, clipByGlobalNorm, learningRate, type AdamWOptions, type ScheduleOptions } from './optim.js';

export interface TrainerOptions extends AdamWOptions {
  schedule: ScheduleOptions;    // learning rate and its warmup / decay
  maxGradNorm?: number;         // global-norm clipping threshold (1.0; 0 disables)
}

/** A batch: token ids [B, T], optional attention mask [B, T], and named per-token ([B, T]) or per-row ([B]) arrays. */
export interface TrainBatch {
  inputIds: number[][];
  attentionMask?: number[][];
  /** Packed sequences: segment id per token (0 = padding); replaces attentionMask. */
  segmentIds?: number[][];
  [name: string]: number[][] | number[] | undefined;
}

export interface StepRequest {
  lossName: string;
  params?: Record<string, unknown>;
  batch: TrainBatch;
  /** Accumulate this batch's gradients and return without updating; the next non-accumulating step applies the mean. */
  accumulate?: boolean;
  /** Split the batch into chunks of this many rows (gradient accumulation inside one step). */
  microBatchSize?: number;
}

export interface StepResult {
  loss: number;
  stats: Record<string, number>;
  /** Global gradient norm before clipping (NaN when the step only accumulated). */
  gradNorm: number;
  lr: number;
  /** Whether the optimiser updated the weights. */
  applied: boolean;
  /** Optimiser steps taken so far. */
  step: number;
}

export class Trainer {
  readonly model: CausalLM;
  readonly optimizer: AdamW;
  readonly options: TrainerOptions;
  private readonly names: string[];
  private readonly variables: tf.Variable[];
  private accumulated: Map<string, tf.Tensor> | null = null;
  private accumulatedCount = 0;
  private accStats: Array<{ loss: number; stats: Record<string, number> }> = [];

  constructor(model: CausalLM, options: TrainerOptions) {
    this.model = model;
    this.options = options;
    this.names = model.trainableNames();
    this.variables = model.trainableVariables();
    if (this.variables.length === 0) throw new Error('Trainer: the model has no trainable variables (a frozen copy?)');
    this.optimizer = new AdamW(this.names.map((name, i) => ({ name, variable: this.variables[i]! })), options);
  }

  /** Learning rate the next applied step will use. */
  currentLr(): number { return learningRate(this.optimizer.step, this.options.schedule); }

  step(request: StepRequest): StepResult {
    const { batch } = request;
    const rows = batch.inputIds?.length ?? 0;
    if (rows === 0) throw new Error('step: batch.inputIds must be a non-empty number[][]');
    const micro = request.microBatchSize && request.microBatchSize < rows ? request.microBatchSize : rows;
    for (let start = 0; start < rows; start += micro) {
      const chunk = micro === rows ? batch : sliceBatch(batch, start, Math.min(rows, start + micro));
      this.accumulateChunk(request.lossName, request.params ?? {}, chunk);
    }
    const mean = averageStats(this.accStats);
    if (request.accumulate) {
      return { ...mean, gradNorm: Number.NaN, lr: this.currentLr(), applied: false, step: this.optimizer.step };
    }
    return { ...mean, ...this.applyAccumulated() };
  }

  /** Drop accumulated gradients without applying them. */
  resetAccumulation(): void {
    if (this.accumulated) for (const g of this.accumulated.values()) g.dispose();
    this.accumulated = null;
    this.accumulatedCount = 0;
    this.accStats = [];
  }

  /**
   * Gradients of one batch (no update): by trainable name, plus the loss and stats. The caller
   * owns (and disposes) the gradient tensors. Used by step() and by data-parallel workers.
   */
  computeGradients(lossName: string, params: Record<string, unknown>, batch: TrainBatch): { grads: Map<string, tf.Tensor>; loss: number; stats: Record<string, number> } {
    const spec = getLoss(lossName);
    const B = batch.inputIds.length;
    const T = batch.inputIds[0]!.length;
    let lossValue = 0;
    const statValues: Record<string, number> = {};
    const { grads } = tf.tidy(() => {
      const named: Record<string, tf.Tensor> = {};
      for (const [key, value] of Object.entries(batch)) {
        if (key === 'inputIds' || key === 'attentionMask' || key === 'segmentIds' || value === undefined) continue;
        named[key] = toTensor(key, value, B, T);
      }
      const maskArray = batch.segmentIds ? batch.segmentIds.map((r) => r.map((sid) => (sid ? 1 : 0))) : batch.attentionMask ?? batch.inputIds.map((r) => r.map(() => 1));
      const attentionMask = toTensor('attentionMask', maskArray, B, T) as tf.Tensor2D;
      const result = tf.variableGrads(() => {
        const needLogits = spec.needs.logprobs || spec.needs.entropies;
        const out = needLogits || spec.needs.values
          ? this.model.tokenOutputs(batch.inputIds, { attentionMask: batch.attentionMask, segmentIds: batch.segmentIds, values: spec.needs.values, logits: needLogits })
          : null;
        const outputs: LossOutputs = {
          logprobs: out?.logprobs ?? tf.zeros([B, T]),
          entropies: out?.entropies ?? tf.zeros([B, T]),
          values: out?.values ?? null,
        };
        const { loss, stats } = spec.fn({ outputs, batch: named, attentionMask, params });
        if (loss.rank !== 0) throw new Error(`loss '${lossName}' returned a tensor of shape [${loss.shape.join(', ')}], expected a scalar`);
        lossValue = loss.dataSync()[0]!;
        for (const [k, v] of Object.entries(stats)) statValues[k] = v.dataSync()[0]!;
        return loss;
      }, this.variables);
      return { grads: result.grads };
    });
    if (!Number.isFinite(lossValue)) {
      for (const g of Object.values(grads)) g.dispose();
      throw new Error(`loss '${lossName}' is ${lossValue} (not finite): check the learning rate and the batch (empty masks, extreme advantages)`);
    }
    // By our names (variable names are model-unique ids).
    const byName = new Map<string, tf.Tensor>();
    this.variables.forEach((v, i) => {
      const g = grads[v.name];
      if (g) byName.set(this.names[i]!, g);
    });
    return { grads: byName, loss: lossValue, stats: statValues };
  }

  /** Names of the trainable variables, in the order gradients are flattened. */
  trainableNames(): string[] { return [...this.names]; }

  private accumulateChunk(lossName: string, params: Record<string, unknown>, batch: TrainBatch): void {
    const { grads: byName, loss, stats } = this.computeGradients(lossName, params, batch);
    this.addToAccumulator(byName, 1);
    this.accStats.push({ loss, stats });
  }

  /** Add gradients (times `weight` micro-batches' worth) to the accumulator; takes ownership. */
  addToAccumulator(grads: Map<string, tf.Tensor>, weight: number): void {
    if (!this.accumulated) {
      this.accumulated = grads;
    } else {
      for (const [k, g] of grads) {
        const prev = this.accumulated.get(k);
        if (prev) { this.accumulated.set(k, tf.add(prev, g)); prev.dispose(); g.dispose(); } else this.accumulated.set(k, g);
      }
    }
    this.accumulatedCount += weight;
  }

  /** Record a loss/stats pair for the step's averaged report (data-parallel shards). */
  recordStats(loss: number, stats: Record<string, number>): void { this.accStats.push({ loss, stats }); }

  /** Apply what was accumulated (mean over the accumulated weight): clip, AdamW, schedule. */
  applyAccumulatedGradients(): StepResult {
    const mean = averageStats(this.accStats);
    return { ...mean, ...this.applyAccumulated() };
  }

  private applyAccumulated(): { gradNorm: number; lr: number; applied: boolean; step: number } {
    if (!this.accumulated) throw new Error('step: nothing to apply');
    let grads = this.accumulated;
    if (this.accumulatedCount > 1) {
      const scaled = new Map<string, tf.Tensor>();
      for (const [k, g] of grads) { scaled.set(k, tf.div(g, this.accumulatedCount)); g.dispose(); }
      grads = scaled;
    }
    const clipped = clipByGlobalNorm(grads, this.options.maxGradNorm ?? 1.0);
    const lr = this.currentLr();
    this.optimizer.apply(clipped.grads, lr);
    for (const g of clipped.grads.values()) g.dispose();
    this.accumulated = null;
    this.accumulatedCount = 0;
    this.accStats = [];
    return { gradNorm: clipped.norm, lr, applied: true, step: this.optimizer.step };
  }

  dispose(): void {
    this.resetAccumulation();
    this.optimizer.dispose();
  }
}

function toTensor(name: string, value: number[][] | number[], B: number, T: number): tf.Tensor {
  if (!Array.isArray(value) || value.length !== B) {
    throw new Error(`batch.${name}: expected ${B} rows (one per sequence), got ${Array.isArray(value) ? value.length : typeof value}`);
  }
  if (Array.isArray(value[0])) {
    const rows = value as number[][];
    const data = new Float32Array(B * T);
    rows.forEach((r, b) => {
      if (r.length !== T) throw new Error(`batch.${name}[${b}] has length ${r.length}, expected ${T} (same as inputIds)`);
      data.set(r, b * T);
    });
    return tf.tensor2d(data, [B, T]);
  }
  return tf.tensor1d(value as number[]);
}

function sliceBatch(batch: TrainBatch, start: number, end: number): TrainBatch {
  const out: TrainBatch = { inputIds: batch.inputIds.slice(start, end) };
  for (const [k, v] of Object.entries(batch)) if (k !== 'inputIds' && v !== undefined) out[k] = (v as unknown[]).slice(start, end) as number[][];
  return out;
}

function averageStats(items: Array<{ loss: number; stats: Record<string, number> }>): { loss: number; stats: Record<string, number> } {
  const n = Math.max(1, items.length);
  const stats: Record<string, number> = {};
  let loss = 0;
  for (const it of items) {
    loss += it.loss / n;
    for (const [k, v] of Object.entries(it.stats)) stats[k] = (stats[k] ?? 0) + v / n;
  }
  return { loss, stats };
}
