// PPO / GRPO loss terms on per-token tensors (TF.js). Everything is aggregated as a token mean
// over the model's own tokens (mask = 1), as in verl's "token-mean". Shapes: [B, T].
//   policy  : clipped surrogate with separate low/high bounds and optional dual clip (Ye et al. 2020)
//   value   : clipped value loss 0.5·max((V−R)², (V_old + clip(V−V_old, ±c) − R)²)
//   entropy : mean entropy of the sampled-token distributions (bonus: subtracted from the loss)
//   kl      : to a frozen reference, estimators k1 = log π − log π_ref, k3 = e^{−x} + x − 1 with x = log π − log π_ref
import * as tf from '@tensorflow/tfjs';
import { maskedMean } from '../model/losses.js';

export type KlEstimator = 'k1' | 'k3';

export interface PolicyLossInput {
  logprobs: tf.Tensor;     // [B, T] log π(a_t) under the current policy (differentiable)
  oldLogprobs: tf.Tensor;  // [B, T] log π_old(a_t) at rollout time (constant)
  advantages: tf.Tensor;   // [B, T]
  mask: tf.Tensor;         // [B, T] 1 on model tokens
  clipLow: number;         // ε_low: ratio floor 1 − ε_low (0.2)
  clipHigh: number;        // ε_high: ratio ceiling 1 + ε_high (0.28)
  dualClip: number | null; // c > 1: bound the loss of negative-advantage tokens by −c·A (3); null = off
}

export interface PolicyLossOutput {
  loss: tf.Scalar;
  clipFrac: tf.Scalar;   // fraction of tokens where the clipped branch was active
  approxKl: tf.Scalar;   // k3 estimate of KL(π_old || π) over the batch: mean((r − 1) − log r)
}

export function ppoPolicyLoss(input: PolicyLossInput): PolicyLossOutput {
  const { logprobs, oldLogprobs, advantages, mask, clipLow, clipHigh, dualClip } = input;
  assertSameShape({ logprobs, oldLogprobs, advantages, mask }, 'ppoPolicyLoss');
  const logRatio = tf.sub(logprobs, oldLogprobs);
  const ratio = tf.exp(logRatio);
  const unclipped = tf.neg(tf.mul(advantages, ratio));
  const clipped = tf.neg(tf.mul(advantages, tf.clipByValue(ratio, 1 - clipLow, 1 + clipHigh)));
  let perToken = tf.maximum(unclipped, clipped);
  if (dualClip !== null) {
    const bound = tf.mul(tf.neg(advantages), dualClip);                 // −A·c (> 0 when A < 0)
    const dual = tf.minimum(perToken, bound);
    perToken = tf.where(tf.less(advantages, 0), dual, perToken);
  }
  const loss = maskedMean(perToken, mask);
  const clipFrac = maskedMean(tf.cast(tf.greater(clipped, unclipped), 'float32'), mask);
  const approxKl = maskedMean(tf.sub(tf.sub(ratio, 1), logRatio), mask);
  return { loss, clipFrac, approxKl };
}

export function clippedValueLoss(values: tf.Tensor, oldValues: tf.Tensor, returns: tf.Tensor, mask: tf.Tensor, clip: number | null): tf.Scalar {
  assertSameShape({ values, oldValues, returns, mask }, 'clippedValueLoss');
  const unclipped = tf.square(tf.sub(values, returns));
  if (clip === null) return tf.mul(maskedMean(unclipped, mask), 0.5) as tf.Scalar;
  const clippedValues = tf.add(oldValues, tf.clipByValue(tf.sub(values, oldValues), -clip, clip));
  const clipped = tf.square(tf.sub(clippedValues, returns));
  return tf.mul(maskedMean(tf.maximum(unclipped, clipped), mask), 0.5) as tf.Scalar;
}

export function klPenalty(logprobs: tf.Tensor, refLogprobs: tf.Tensor, mask: tf.Tensor, estimator: KlEstimator): tf.Scalar {
  assertSameShape({ logprobs, refLogprobs, mask }, 'klPenalty');
  const x = tf.sub(logprobs, refLogprobs);
  if (estimator === 'k1') return maskedMean(x, mask);
  // k3 = exp(−x) + x − 1 ≥ 0 (Schulman's low-variance unbiased estimator of KL(π || π_ref))
  return maskedMean(tf.sub(tf.add(tf.exp(tf.neg(x)), x), 1), mask);
}

function assertSameShape(tensors: Record<string, tf.Tensor>, where: string): void {
  const entries = Object.entries(tensors);
  const [firstName, first] = entries[0]!;
  for (const [name, t] of entries) {
    if (t.shape.length !== first.shape.length || t.shape.some((d, i) => d !== first.shape[i])) {
      throw new Error(`${where}: expected ${name} with shape [${first.shape.join(', ')}] like ${firstName}; received [${t.shape.join(', ')}]`);
    }
  }
}
