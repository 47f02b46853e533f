// Loss registry. A loss is registered by NAME so that the trainer, and data-parallel worker
// processes that import the registering modules, resolve the same function. The SFT masked
// cross-entropy lives here; core/train registers 'ppo', 'grpo', 'value'.
import * as tf from '@tensorflow/tfjs';

/** Forward outputs of the target tokens, aligned with the input tokens (see TokenOutputs). */
export interface LossOutputs {
  logprobs: tf.Tensor2D;          // [B, T] (zeros when the loss did not ask for them)
  entropies: tf.Tensor2D;         // [B, T] (zeros when the loss did not ask for them)
  values: tf.Tensor2D | null;     // [B, T] when the loss asked for values
}

export interface LossInputs {
  outputs: LossOutputs;
  /** The batch's named arrays as float32 tensors ([B, T] or [B]), e.g. lossMask, advantages. */
  batch: Record<string, tf.Tensor>;
  /** [B, T] float32 attention mask (1 real token, 0 padding). */
  attentionMask: tf.Tensor2D;
  /** Loss hyper-parameters (clip ranges, coefficients, ...), plain JSON. */
  params: Record<string, unknown>;
}

export interface LossResult {
  loss: tf.Scalar;
  /** Scalars to log, namespaced (e.g. 'losses/sft', 'losses/approxKl'). */
  stats: Record<string, tf.Scalar>;
}

export type LossFn = (inputs: LossInputs) => LossResult;

export interface LossSpec {
  fn: LossFn;
  /** Which outputs the loss reads (the trainer skips the rest). Default: logprobs and entropies. */
  needs: { logprobs: boolean; entropies: boolean; values: boolean };
}

const registry = new Map<string, LossSpec>();

export function registerLoss(name: string, fn: LossFn, needs: Partial<LossSpec['needs']> = {}): void {
  registry.set(name, { fn, needs: { logprobs: needs.logprobs ?? true, entropies: needs.entropies ?? true, values: needs.values ?? false } });
}

export function getLoss(name: string): LossSpec {
  const spec = registry.get(name);
  if (!spec) {
    throw new Error(`unknown loss ${JSON.stringify(name)}: registered losses are ${[...registry.keys()].join(', ') || '(none)'}. ` +
      'Import the module that registers it (e.g. core/train/losses) before training.');
  }
  return spec;
}

/** Named [B, T] tensor from the batch, or a clear error. */
export function requireBatchTensor(batch: Record<string, tf.Tensor>, name: string, loss: string): tf.Tensor {
  const t = batch[name];
  if (!t) throw new Error(`loss '${loss}' needs batch.${name} (a number[][] [batch, time]); the batch has: ${Object.keys(batch).join(', ') || '(nothing)'}`);
  return t;
}

/** Token mean over the mask: sum(x * mask) / max(sum(mask), 1). Shared by the SFT and the RL losses. */
export function maskedMean(x: tf.Tensor, mask: tf.Tensor): tf.Scalar {
  return tf.tidy(() => tf.div(tf.sum(tf.mul(x, mask)), tf.maximum(tf.sum(mask), 1)) as tf.Scalar);
}

/**
 * How a loss's per-token terms combine into one number, as verl's `agg_loss` (verl/trainer/ppo/core_algos.py, `agg_loss`;
 * volcengine/verl@1e47e412:316 and HEAD):
 *   token-mean           every loss token of the update weighs the same (the product's historical default)
 *   seq-mean-token-mean  each sequence's token mean, then the mean over sequences: every sequence weighs the same. This is
 *                        what SPA's PPO ran: RAGEN with ppo_micro_batch_size_per_gpu 1 (SPA@3848e68 config/base.yaml:12) takes
 *                        each one-episode micro-batch's token mean and divides by the number of micro-batches
 *                        (RAGEN@5eb79b8 ragen/workers/actor/dp_actor.py:356-360, critic dp_critic.py:253-255); SPA's SFT
 *                        trainer the same per row (SPA@3848e68 sft/spa_sft_trainer.py:470-473, micro-batch 1)
 *   seq-mean-token-sum   each sequence's token sum, then the mean over sequences (a long sequence weighs by its length)
 * A "sequence" is what the caller groups: an RL episode (all its turn rows in the update), an SFT row.
 */
export const LOSS_AGGREGATIONS = ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum'] as const;
export type LossAggregation = (typeof LOSS_AGGREGATIONS)[number];

/**
 * Per-token weights (batch array `aggregationWeight`) that turn the trainers' token mean into an `agg_loss` mode over the
 * rows of ONE update, however the rows are later cut into chunks: every trainer (TF.js Trainer, the PyTorch runtime, the
 * data-parallel coordinator) takes each chunk's mean of weight·term over its loss tokens and weighs the chunk by its loss
 * tokens, so the update's loss is Σ_t w_t·x_t / N over all N loss tokens. With S sequences of n_s loss tokens:
 *   token-mean w = 1;  seq-mean-token-mean w = N / (S·n_s);  seq-mean-token-sum w = N / S.
 * masks[i] is row i's loss mask (1 = loss token); sequenceOf[i] its sequence id. A sequence without loss tokens counts in
 * no S (verl would give it 0/0 = NaN under seq-mean-token-mean). Returns one weight array per row (same length as masks[i]).
 * Throws on mismatched lengths or an unknown mode.
 */
export function aggregationWeights(masks: number[][], sequenceOf: number[], mode: LossAggregation): number[][] {
  if (masks.length !== sequenceOf.length) {
    throw new Error(`aggregationWeights: expected one sequence id per row; received ${masks.length} rows and ${sequenceOf.length} ids`);
  }
  if (!LOSS_AGGREGATIONS.includes(mode)) {
    throw new Error(`aggregationWeights: unknown loss aggregation ${JSON.stringify(mode)}; expected one of ${LOSS_AGGREGATIONS.join(', ')}`);
  }
  const tokens = new Map<number, number>();
  let total = 0;
  masks.forEach((mask, i) => {
    const n = mask.reduce((a, m) => a + (m > 0 ? 1 : 0), 0);
    total += n;
    if (n > 0) tokens.set(sequenceOf[i]!, (tokens.get(sequenceOf[i]!) ?? 0) + n);
  });
  const sequences = tokens.size;
  return masks.map((mask, i) => {
    if (mode === 'token-mean' || sequences === 0) return mask.map(() => 1);
    const n = tokens.get(sequenceOf[i]!) ?? 1;
    const w = mode === 'seq-mean-token-mean' ? total / (sequences * n) : total / sequences;
    return mask.map(() => w);
  });
}

/** Rows with `arrays.aggregationWeight` for `mode` (aggregationWeights); token-mean returns the rows unchanged. */
export function withAggregationWeights<R extends { ids: number[]; arrays: Record<string, number[]> }>(
  rows: R[], sequenceOf: number[], mode: LossAggregation,
): R[] {
  if (mode === 'token-mean') return rows;
  const masks = rows.map((r, i) => {
    const m = r.arrays.lossMask;
    if (!m) throw new Error(`withAggregationWeights: row ${i} has no lossMask (the loss tokens the weights are counted over)`);
    return m;
  });
  const weights = aggregationWeights(masks, sequenceOf, mode);
  return rows.map((r, i) => ({ ...r, arrays: { ...r.arrays, aggregationWeight: weights[i]! } }));
}

/**
 * The aggregated loss of per-token terms x [B, T] over the mask: Σ x·mask·w / max(Σ mask, 1) with w = batch.aggregationWeight
 * when the batch has it (see aggregationWeights), else the plain token mean. Shared by SFT and the RL losses.
 */
export function aggregateLoss(x: tf.Tensor, mask: tf.Tensor, batch: Record<string, tf.Tensor>): tf.Scalar {
  const weight = batch.aggregationWeight;
  return weight ? maskedMean(tf.mul(x, weight), mask) : maskedMean(x, mask);
}

/**
 * SFT: masked cross-entropy over the tokens where batch.lossMask = 1 (e.g. assistant tokens), aggregated as the token mean,
 * or per batch.aggregationWeight (sft.lossAggregation; aggregationWeights). Tokens outside the mask get exactly zero gradient.
 */
export const sftLoss: LossFn = ({ outputs, batch }) => {
  const mask = requireBatchTensor(batch, 'lossMask', 'sft');
  const nll = aggregateLoss(tf.neg(outputs.logprobs), mask, batch);
  return {
    loss: nll,
    stats: {
      'losses/sft': nll,
      'charts/entropy': maskedMean(outputs.entropies, mask),
      'charts/tokens': tf.sum(mask) as tf.Scalar,
    },
  };
};
registerLoss('sft', sftLoss, { logprobs: true, entropies: true, values: false });
