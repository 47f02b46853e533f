// PPO / GRPO loss terms on per-token tensors (TF.js). Shapes: [B, T]. Each term is aggregated over the model's own tokens
// (mask = 1) as the token mean, or as one of verl's agg_loss modes when a per-token `weight` is given (aggregationWeights in
// core/model/losses.ts: the weight makes the trainers' chunked token mean equal seq-mean-token-mean / seq-mean-token-sum).
//   policy  : clipped surrogate with separate low/high bounds and optional dual clip (Ye et al. 2020); the log-ratio is
//             clamped to [−20, 20] before exp as verl does (verl/trainer/ppo/core_algos.py compute_policy_loss_vanilla,
//             volcengine/verl@012be9d; zero gradient outside, so a stale token cannot overflow the step)
//   value   : clipped value loss 0.5·max((V−R)², (V_old + clip(V−V_old, ±c) − R)²)
//   entropy : mean entropy of the sampled-token distributions (bonus: subtracted from the loss)
//   kl      : to a frozen reference, estimators k1 = log π − log π_ref, k3 = e^{−x} + x − 1 with x = log π − log π_ref;
//             k3 as verl's low_var_kl: x clamped to [−20, 20] first, the per-token k3 clamped to [−10, 10] (zero gradient
//             outside; verl/trainer/ppo/core_algos.py kl_penalty, volcengine/verl@1e47e412:491-495)
import * as tf from '@tensorflow/tfjs';
import { maskedMean } from '../model/losses.js';

export type KlEstimator = 'k1' | 'k3';

/** verl's clamp of the log-ratio log π − log π_old before exp (compute_policy_loss). */
export const LOG_RATIO_CLAMP = 20;
/** verl's clamp of x = log π − log π_ref before exp in low_var_kl, and of the per-token k3 value. */
export const K3_LOG_RATIO_CLAMP = 20;
export const K3_VALUE_CLAMP = 10;

export interface PolicyLossInput {
  logprobs: tf.Tensor;     // [B, T] log π(a_t) under the current policy (differentiable)
  oldLogprobs: tf.Tensor;  // [B, T] log π_old(a_t) at rollout time (constant)
  advantages: tf.Tensor;   // [B, T]
  mask: tf.Tensor;         // [B, T] 1 on model tokens
  clipLow: number;         // ε_low: ratio floor 1 − ε_low (0.2)
  clipHigh: number;        // ε_high: ratio ceiling 1 + ε_high (0.28)
  dualClip: number | null; // c > 1: bound the loss of negative-advantage tokens by −c·A (3); null = off
  weight?: tf.Tensor;      // [B, T] aggregation weight (aggregationWeights); absent = token mean
}

export interface PolicyLossOutput {
  loss: tf.Scalar;
  clipFrac: tf.Scalar;   // fraction of tokens where the clipped branch was active (token mean, a metric)
  approxKl: tf.Scalar;   // k3 estimate of KL(π_old || π) over the batch: mean((r − 1) − log r) (token mean, a metric)
}

/** Σ x·mask·w / max(Σ mask, 1): the aggregated loss (w absent: the token mean). */
function aggregate(x: tf.Tensor, mask: tf.Tensor, weight: tf.Tensor | undefined): tf.Scalar {
  return weight ? maskedMean(tf.mul(x, weight), mask) : maskedMean(x, mask);
}

export function ppoPolicyLoss(input: PolicyLossInput): PolicyLossOutput {
  const { logprobs, oldLogprobs, advantages, mask, clipLow, clipHigh, dualClip, weight } = input;
  assertSameShape({ logprobs, oldLogprobs, advantages, mask, ...(weight ? { weight } : {}) }, 'ppoPolicyLoss');
  const logRatio = tf.clipByValue(tf.sub(logprobs, oldLogprobs), -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
  const ratio = tf.exp(logRatio);
  const unclipped = tf.neg(tf.mul(advantages, ratio));
  const clipped = tf.neg(tf.mul(advantages, tf.clipByValue(ratio, 1 - clipLow, 1 + clipHigh)));
  let perToken = tf.maximum(unclipped, clipped);
  if (dualClip !== null) {
    const bound = tf.mul(tf.neg(advantages), dualClip);                 // −A·c (> 0 when A < 0)
    const dual = tf.minimum(perToken, bound);
    perToken = tf.where(tf.less(advantages, 0), dual, perToken);
  }
  const loss = aggregate(perToken, mask, weight);
  const clipFrac = maskedMean(tf.cast(tf.greater(clipped, unclipped), 'float32'), mask);
  const approxKl = maskedMean(tf.sub(tf.sub(ratio, 1), logRatio), mask);
  return { loss, clipFrac, approxKl };
}

/** Clipped value loss, aggregated as the token mean or by `weight` ([B, T], aggregationWeights). */
export function clippedValueLoss(
  values: tf.Tensor, oldValues: tf.Tensor, returns: tf.Tensor, mask: tf.Tensor, clip: number | null, weight?: tf.Tensor,
): tf.Scalar {
  assertSameShape({ values, oldValues, returns, mask, ...(weight ? { weight } : {}) }, 'clippedValueLoss');
  const unclipped = tf.square(tf.sub(values, returns));
  if (clip === null) return tf.mul(aggregate(unclipped, mask, weight), 0.5) as tf.Scalar;
  const clippedValues = tf.add(oldValues, tf.clipByValue(tf.sub(values, oldValues), -clip, clip));
  const clipped = tf.square(tf.sub(clippedValues, returns));
  return tf.mul(aggregate(tf.maximum(unclipped, clipped), mask, weight), 0.5) as tf.Scalar;
}

/** Per-token KL estimate ([B, T]) of π to π_ref from x = log π − log π_ref: k1 = x, k3 = verl's clamped low_var_kl. */
export function klPerToken(logprobs: tf.Tensor, refLogprobs: tf.Tensor, estimator: KlEstimator): tf.Tensor {
  const x = tf.sub(logprobs, refLogprobs);
  if (estimator === 'k1') return x;
  if (estimator !== 'k3') throw new Error(`klPenalty: unknown KL estimator ${JSON.stringify(estimator)}; expected k1 or k3`);
  // k3 = exp(−x) + x − 1 ≥ 0 (Schulman's low-variance unbiased estimator of KL(π || π_ref)), as verl: kl = ref − logp
  // clamped to [−20, 20], k3 = e^{kl} − kl − 1 clamped to [−10, 10]
  const kl = tf.clipByValue(tf.neg(x), -K3_LOG_RATIO_CLAMP, K3_LOG_RATIO_CLAMP);
  return tf.clipByValue(tf.sub(tf.sub(tf.exp(kl), kl), 1), -K3_VALUE_CLAMP, K3_VALUE_CLAMP);
}

export function klPenalty(logprobs: tf.Tensor, refLogprobs: tf.Tensor, mask: tf.Tensor, estimator: KlEstimator, weight?: tf.Tensor): tf.Scalar {
  assertSameShape({ logprobs, refLogprobs, mask, ...(weight ? { weight } : {}) }, 'klPenalty');
  return aggregate(klPerToken(logprobs, refLogprobs, estimator), mask, weight);
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
