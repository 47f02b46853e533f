// The one training step on a CausalLM (TF.js): forward a chunk, evaluate a loss from the registry
// by name, backpropagate, accumulate the chunk's gradients weighted by its loss tokens, then clip by
// global norm and apply AdamW. Every caller goes through it: the pipeline's stages (via
// TfjsRuntime.trainStep in core/train/runtime.ts, which calls stepRows), the data-parallel workers,
// the benchmarks and the tests.
//   chunks     stepRows: rows sorted by length, packed into chunks of at most `tokenBudget` padded
//              tokens (wasm memory); step: a padded batch split by microBatchSize rows or budget
//   averaging  token-weighted: each chunk's gradients and stats count by its loss-mask tokens, so
//              the step is the token mean over the whole batch whatever the chunking
//   guards     a non-scalar or non-finite loss, or a non-finite gradient norm, discards the step
//              (nothing applied, the accumulator cleared) and throws with the reason
// Memory discipline: everything inside tf.tidy; gradients disposed after use.
import * as tf from '@tensorflow/tfjs';
import type { CausalLM } from './transformer.js';
import { getLoss, type LossOutputs } from './losses.js';
import { AdamW, clipByGlobalNorm, learningRate, type AdamWOptions, type ScheduleOptions } from './optim.js';
import { attentionLengthMultiple } from './attention.js';
import { headDim } from './config.js';

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
  /** Without microBatchSize: split into chunks of at most this many padded tokens (default: the whole batch). */
  tokenBudget?: number;
  /** Learning rate for this step instead of the schedule's (the pipeline computes its own). */
  lr?: number;
  /** Clipping threshold for this step instead of options.maxGradNorm. */
  maxGradNorm?: number;
}

/** A training row: token ids plus named per-token arrays (same length as ids) for the loss. */
export interface TrainRow { ids: number[]; arrays: Record<string, number[]> }

/** Default padded-token budget of one chunk (keeps a wasm training step's memory bounded). */
export const DEFAULT_TOKEN_BUDGET = 6144;

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
  private accStats: Array<{ loss: number; stats: Record<string, number>; weight: number }> = [];

  constructor(model: CausalLM, options: TrainerOptions) {
    this.model = model;
    this.options = options;
    this.names = model.trainableNames();
    this.variables = model.trainableVariables();
    if (this.variables.length === 0) throw new Error('Trainer: the model has no trainable variables (a frozen copy?)');
    this.optimizer = new AdamW(
      this.names.map((name, i) => ({ name, variable: this.variables[i]! })),
      options,
    );
  }

  /** Learning rate the next applied step will use. */
  currentLr(): number {
    return learningRate(this.optimizer.step, this.options.schedule);
  }

  step(request: StepRequest): StepResult {
    const { batch } = request;
    const rows = batch.inputIds?.length ?? 0;
    if (rows === 0) throw new Error('step: batch.inputIds must be a non-empty number[][]');
    const T = batch.inputIds[0]!.length;
    const byBudget = request.tokenBudget ? Math.max(1, Math.floor(request.tokenBudget / Math.max(1, T))) : rows;
    const micro = request.microBatchSize && request.microBatchSize < rows ? request.microBatchSize : Math.min(rows, byBudget);
    const chunks: TrainBatch[] = [];
    for (let start = 0; start < rows; start += micro) chunks.push(micro === rows ? batch : sliceBatch(batch, start, Math.min(rows, start + micro)));
    return this.runChunks(request.lossName, request.params ?? {}, chunks, request);
  }

  /**
   * One step on rows of different lengths (what the pipeline trains on): rows sorted by length
   * and packed into chunks of at most `tokenBudget` padded tokens, each padded to its longest row.
   */
  stepRows(
    lossName: string,
    rows: TrainRow[],
    params: Record<string, unknown>,
    opts: { lr?: number; maxGradNorm?: number; tokenBudget?: number; padTokenId?: number } = {},
  ): StepResult {
    if (rows.length === 0) throw new Error('stepRows: no rows to train on');
    const chunks = chunkRows(rows, opts.tokenBudget ?? DEFAULT_TOKEN_BUDGET).map((c) => padRows(c, opts.padTokenId ?? 0));
    return this.runChunks(lossName, params, chunks, opts);
  }

  private runChunks(
    lossName: string,
    params: Record<string, unknown>,
    chunks: TrainBatch[],
    opts: { accumulate?: boolean; lr?: number; maxGradNorm?: number },
  ): StepResult {
    try {
      for (const chunk of chunks) this.accumulateChunk(lossName, params, chunk);
    } catch (error) {
      this.resetAccumulation();
      throw error;
    }
    const mean = averageStats(this.accStats);
    if (opts.accumulate) {
      return { ...mean, gradNorm: Number.NaN, lr: opts.lr ?? this.currentLr(), applied: false, step: this.optimizer.step };
    }
    return { ...mean, ...this.applyAccumulated(opts) };
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
  computeGradients(
    lossName: string,
    params: Record<string, unknown>,
    batch: TrainBatch,
  ): { grads: Map<string, tf.Tensor>; loss: number; stats: Record<string, number> } {
    const spec = getLoss(lossName);
    batch = padBatchLength(batch, attentionLengthMultiple(headDim(this.model.config)));
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
      const maskArray = batch.segmentIds
        ? batch.segmentIds.map((r) => r.map((sid) => (sid ? 1 : 0)))
        : (batch.attentionMask ?? batch.inputIds.map((r) => r.map(() => 1)));
      const attentionMask = toTensor('attentionMask', maskArray, B, T) as tf.Tensor2D;
      const result = tf.variableGrads(() => {
        const needLogits = spec.needs.logprobs || spec.needs.entropies;
        const out =
          needLogits || spec.needs.values
            ? this.model.tokenOutputs(batch.inputIds, {
                attentionMask: batch.attentionMask,
                segmentIds: batch.segmentIds,
                values: spec.needs.values,
                logits: needLogits,
              })
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
  trainableNames(): string[] {
    return [...this.names];
  }

  /** A chunk counts by its loss tokens: gradients times that weight go into the accumulator (data-parallel coordinators call it too). */
  accumulateChunk(lossName: string, params: Record<string, unknown>, batch: TrainBatch): void {
    const weight = lossTokens(batch);
    const { grads, loss, stats } = this.computeGradients(lossName, params, batch);
    const scaled = new Map<string, tf.Tensor>();
    for (const [k, g] of grads) {
      scaled.set(k, tf.mul(g, weight));
      g.dispose();
    }
    this.addToAccumulator(scaled, weight);
    this.accStats.push({ loss, stats, weight });
  }

  /** Add gradients already multiplied by `weight` to the accumulator (apply divides by the summed weight); takes ownership. */
  addToAccumulator(grads: Map<string, tf.Tensor>, weight: number): void {
    if (!this.accumulated) {
      this.accumulated = grads;
    } else {
      for (const [k, g] of grads) {
        const prev = this.accumulated.get(k);
        if (prev) {
          this.accumulated.set(k, tf.add(prev, g));
          prev.dispose();
          g.dispose();
        } else this.accumulated.set(k, g);
      }
    }
    this.accumulatedCount += weight;
  }

  /** Record a loss/stats pair for the step's averaged report (data-parallel shards). */
  recordStats(loss: number, stats: Record<string, number>, weight = 1): void {
    this.accStats.push({ loss, stats, weight });
  }

  /** Apply what was accumulated (mean over the accumulated weight): clip, AdamW, schedule. */
  applyAccumulatedGradients(opts: { lr?: number; maxGradNorm?: number } = {}): StepResult {
    const mean = averageStats(this.accStats);
    return { ...mean, ...this.applyAccumulated(opts) };
  }

  private applyAccumulated(opts: { lr?: number; maxGradNorm?: number } = {}): { gradNorm: number; lr: number; applied: boolean; step: number } {
    if (!this.accumulated) throw new Error('step: nothing to apply');
    let grads = this.accumulated;
    if (this.accumulatedCount > 0 && this.accumulatedCount !== 1) {
      const scaled = new Map<string, tf.Tensor>();
      for (const [k, g] of grads) {
        scaled.set(k, tf.div(g, this.accumulatedCount));
        g.dispose();
      }
      grads = scaled;
    }
    this.accumulated = grads;
    const clipped = clipByGlobalNorm(grads, opts.maxGradNorm ?? this.options.maxGradNorm ?? 1.0);
    if (!Number.isFinite(clipped.norm)) {
      this.resetAccumulation();
      throw new Error(`the gradient norm is ${clipped.norm} (not finite): the step was not applied; check the learning rate and the batch`);
    }
    const lr = opts.lr ?? this.currentLr();
    this.optimizer.apply(clipped.grads, lr);
    if (clipped.grads !== grads) for (const g of grads.values()) if (!g.isDisposed) g.dispose();
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

/** Weighted mean of the chunks' loss and stats (weights: loss tokens, or rows for data-parallel shards). */
function averageStats(items: Array<{ loss: number; stats: Record<string, number>; weight: number }>): { loss: number; stats: Record<string, number> } {
  const total = items.reduce((a, it) => a + it.weight, 0) || 1;
  const stats: Record<string, number> = {};
  let loss = 0;
  for (const it of items) {
    loss += (it.loss * it.weight) / total;
    for (const [k, v] of Object.entries(it.stats)) stats[k] = (stats[k] ?? 0) + (v * it.weight) / total;
  }
  return { loss, stats };
}

/** Loss tokens of a chunk: the lossMask's sum, else the attended tokens (at least 1, so an all-masked chunk still counts). */
export function lossTokens(batch: TrainBatch): number {
  const mask = (batch.lossMask as number[][] | undefined) ?? batch.attentionMask ?? batch.segmentIds?.map((r) => r.map((s) => (s ? 1 : 0)));
  if (!mask) return Math.max(1, batch.inputIds.length * (batch.inputIds[0]?.length ?? 0));
  let n = 0;
  for (const r of mask) for (const m of r) n += m;
  return Math.max(1, n);
}

/** Rows sorted by length into chunks of at most `budget` padded tokens (a row longer than the budget is a chunk alone). */
export function chunkRows(rows: TrainRow[], budget: number): TrainRow[][] {
  return lengthChunks(rows, budget).map((c) => c.map((i) => rows[i]!));
}

/** chunkRows as indexes of `rows`: sorted by length (ties in the rows' order), at most `budget` padded tokens a chunk. */
export function lengthChunks(rows: ReadonlyArray<{ ids: readonly number[] }>, budget: number): number[][] {
  const chunks: number[][] = [];
  let current: number[] = [];
  let longest = 0;
  for (const i of rows.map((_, k) => k).sort((x, y) => rows[x]!.ids.length - rows[y]!.ids.length || x - y)) {
    const n = rows[i]!.ids.length;
    const nextLongest = Math.max(longest, n);
    if (current.length > 0 && nextLongest * (current.length + 1) > budget) { chunks.push(current); current = []; }
    current.push(i);
    longest = current.length === 1 ? n : nextLongest;
  }
  if (current.length) chunks.push(current);
  return chunks;
}

/** Tokens two id rows share at their start. */
export function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * Indexes of `rows` in chunks for a backend that computes the leading tokens rows share once (the torch worker's
 * prefix_families: an RL episode's update rows, each history continuing the last, share all but their last reply). Rows go
 * in lexicographic order of their ids (rows with a common start are then adjacent); a row that shares at least half of
 * itself with the row before joins that row's family (the worker's rule for a tail). When the families' shared tokens are
 * at least `minSaving` of all tokens, the families go into chunks whose padded work, as the worker computes it (each
 * family's longest row padded to the chunk's longest such row, each other row's own tokens padded to the longest of them),
 * is at most `budget`; a family goes into one chunk when it fits one, else row by row, and a row longer than the budget is
 * a chunk alone. Otherwise the chunks of chunkRows (sorted by length, at most `budget` padded tokens). Every index appears
 * once. Measured on a 10-turn RL step of study v4's vanilla arm (304 rows, 212k tokens): 49k tokens in the prefix tree of
 * each episode's rows.
 */
export function prefixChunks(rows: ReadonlyArray<{ ids: readonly number[] }>, budget: number, minSaving = 0.1): number[][] {
  const total = rows.reduce((s, r) => s + r.ids.length, 0);
  const order = rows.map((_, i) => i).sort((x, y) => {
    const a = rows[x]!.ids, b = rows[y]!.ids, k = commonPrefix(a, b);
    return k < a.length && k < b.length ? a[k]! - b[k]! : a.length - b.length || x - y;
  });
  // tokens each row shares with the row before when it joins that row's family, else 0 (it starts a family)
  const shared = order.map((r, k) => {
    const n = k === 0 ? 0 : commonPrefix(rows[order[k - 1]!]!.ids, rows[r]!.ids);
    return 2 * n >= rows[r]!.ids.length ? n : 0;
  });
  if (total === 0 || minSaving <= 0 || shared.reduce((a, b) => a + b, 0) < minSaving * total) return lengthChunks(rows, budget);
  const families: number[][] = [];
  order.forEach((_, k) => { if (shared[k]! > 0) families[families.length - 1]!.push(k); else families.push([k]); });
  // the current chunk's padded work: its families' first rows whole (count, longest), its other rows' own tokens (count, longest)
  const chunks: number[][] = [];
  let heads = 0, headMax = 0, tails = 0, tailMax = 0;
  const work = (h: number, hMax: number, t: number, tMax: number): number => h * hMax + t * tMax;
  const start = (k: number): void => { chunks.push([order[k]!]); heads = 1; headMax = rows[order[k]!]!.ids.length; tails = 0; tailMax = 0; };
  for (const family of families) {
    const n = family.map((k) => rows[order[k]!]!.ids.length);
    const head = Math.max(...n), own = Math.max(0, ...family.slice(1).map((k, j) => n[j + 1]! - shared[k]!));
    if (work(1, head, family.length - 1, own) <= budget) {   // the family fits a chunk: into this one, else a new one
      if (chunks.length > 0 && work(heads + 1, Math.max(headMax, head), tails + family.length - 1, Math.max(tailMax, own)) <= budget) {
        chunks[chunks.length - 1]!.push(...family.map((k) => order[k]!));
        heads += 1; headMax = Math.max(headMax, head); tails += family.length - 1; tailMax = Math.max(tailMax, own);
      } else {
        start(family[0]!);
        chunks[chunks.length - 1]!.push(...family.slice(1).map((k) => order[k]!));
        headMax = head; tails = family.length - 1; tailMax = own;
      }
      continue;
    }
    // too big for one chunk: row by row, each row after the first of a chunk counted by its own tokens
    family.forEach((k, j) => {
      const more = n[j]! - shared[k]!;
      if (j > 0 && work(heads, headMax, tails + 1, Math.max(tailMax, more)) <= budget) {
        chunks[chunks.length - 1]!.push(order[k]!); tails += 1; tailMax = Math.max(tailMax, more);
      } else start(k);
    });
  }
  return chunks;
}

/**
 * The batch with every row padded at its end to a length that is a multiple of `multiple` (inputIds with 0, attentionMask,
 * segmentIds and every other array with 0): positions no loss, mask or attention reads, so the loss and the gradients are
 * those of the batch as given (up to the order of floating-point sums). The batch itself when it needs no padding.
 */
export function padBatchLength(batch: TrainBatch, multiple: number): TrainBatch {
  const T = batch.inputIds[0]?.length ?? 0;
  const extra = multiple > 1 ? (multiple - (T % multiple)) % multiple : 0;
  if (extra === 0) return batch;
  const zeros = new Array<number>(extra).fill(0);
  const out: TrainBatch = { inputIds: batch.inputIds.map((r) => [...r, ...zeros]) };
  if (!batch.attentionMask && !batch.segmentIds) out.attentionMask = batch.inputIds.map((r) => [...r.map(() => 1), ...zeros]);
  for (const [k, v] of Object.entries(batch)) {
    if (k === 'inputIds' || v === undefined) continue;
    // [B, T] arrays are padded; a per-row array ([B], one number a row) is kept as it is
    out[k] = Array.isArray(v[0]) ? (v as number[][]).map((r) => [...r, ...zeros]) : v;
  }
  return out;
}

/** Rows right-padded to one length: ids, attention mask and the named arrays (padding 0). */
export function padRows(rows: TrainRow[], padTokenId: number): TrainBatch {
  const T = Math.max(...rows.map((r) => r.ids.length));
  const batch: TrainBatch = {
    inputIds: rows.map((r) => [...r.ids, ...new Array<number>(T - r.ids.length).fill(padTokenId)]),
    attentionMask: rows.map((r) => [...r.ids.map(() => 1), ...new Array<number>(T - r.ids.length).fill(0)]),
  };
  for (const name of Object.keys(rows[0]?.arrays ?? {})) {
    batch[name] = rows.map((r, i) => {
      const a = r.arrays[name];
      if (!a || a.length !== r.ids.length) {
        throw new Error(`training row ${i}: array ${name} must have one value per token (${r.ids.length}); received ${a?.length ?? 'none'}`);
      }
      return [...a, ...new Array<number>(T - a.length).fill(0)];
    });
  }
  return batch;
}

/** Per-token outputs of a forward pass computed elsewhere (the PyTorch worker), [B*T] row-major. */
export interface ExternalOutputs { logprobs?: Float32Array; entropies?: Float32Array; values?: Float32Array }

/**
 * The loss side of a training step whose forward and backward run in another engine: the
 * registered loss (the same TypeScript function the TF.js step uses) evaluated on the outputs of
 * that engine's forward, and d loss / d output per token, which that engine back-propagates.
 * Because every loss reads the model only through these outputs (LossInputs), this is the
 * whole chain rule's loss part: one source of truth for the loss math across backends.
 * Throws (like computeGradients) on a non-scalar or non-finite loss.
 */
export function lossOutputGradients(lossName: string, params: Record<string, unknown>, batch: TrainBatch, outputs: ExternalOutputs):
  { loss: number; stats: Record<string, number>; grads: ExternalOutputs } {
  const spec = getLoss(lossName);
  const B = batch.inputIds.length;
  const T = batch.inputIds[0]!.length;
  const keys = (['logprobs', 'entropies', 'values'] as const).filter((k) => outputs[k] !== undefined);
  if (spec.needs.values && !outputs.values) throw new Error(`loss '${lossName}' needs values: the model has no value head`);
  let lossValue = Number.NaN;
  const statValues: Record<string, number> = {};
  const grads: ExternalOutputs = {};
  tf.tidy(() => {
    const named: Record<string, tf.Tensor> = {};
    for (const [key, value] of Object.entries(batch)) {
      if (key === 'inputIds' || key === 'attentionMask' || key === 'segmentIds' || value === undefined) continue;
      named[key] = toTensor(key, value, B, T);
    }
    const maskArray = batch.attentionMask ?? batch.inputIds.map((r) => r.map(() => 1));
    const attentionMask = toTensor('attentionMask', maskArray, B, T) as tf.Tensor2D;
    // Variables, not tf.grads: a loss may read an output only for its stats (sft: entropies), and
    // variableGrads leaves such an output out (gradient 0) where tf.grads throws.
    const xs = keys.map((k) => tf.variable(tf.tensor2d(outputs[k]!, [B, T]), true));
    const f = (): tf.Scalar => {
      const byKey = Object.fromEntries(keys.map((k, i) => [k, xs[i] as tf.Tensor as tf.Tensor2D]));
      const lossOutputs: LossOutputs = {
        logprobs: byKey.logprobs ?? tf.zeros([B, T]), entropies: byKey.entropies ?? tf.zeros([B, T]), values: byKey.values ?? null,
      };
      const { loss, stats } = spec.fn({ outputs: lossOutputs, batch: named, attentionMask, params });
      if (loss.rank !== 0) throw new Error(`loss '${lossName}' returned a tensor of shape [${loss.shape.join(', ')}], expected a scalar`);
      lossValue = loss.dataSync()[0]!;
      for (const [k, v] of Object.entries(stats)) statValues[k] = v.dataSync()[0]!;
      return loss;
    };
    if (!xs.length) throw new Error(`loss '${lossName}': no model outputs to differentiate`);
    try {
      const { grads: gs } = tf.variableGrads(f, xs);
      keys.forEach((k, i) => { const g = gs[xs[i]!.name]; grads[k] = (g ? g.dataSync() : new Float32Array(B * T)) as Float32Array; });
    } finally {
      for (const x of xs) x.dispose();
    }
  });
  if (!Number.isFinite(lossValue)) {
    throw new Error(`loss '${lossName}' is ${lossValue} (not finite): check the learning rate and the batch (empty masks, extreme advantages)`);
  }
  return { loss: lossValue, stats: statValues, grads };
}
