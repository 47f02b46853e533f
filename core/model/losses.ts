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
 * SFT: masked cross-entropy, mean over the tokens where batch.lossMask = 1 (e.g. assistant
 * tokens). Tokens outside the mask get exactly zero gradient.
 */
export const sftLoss: LossFn = ({ outputs, batch }) => {
  const mask = requireBatchTensor(batch, 'lossMask', 'sft');
  const nll = maskedMean(tf.neg(outputs.logprobs), mask);
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
