// RL losses registered with the model engine's loss registry by name, so the trainer (and its
// data-parallel worker processes, which import this module by path) resolve the same functions.
//   ppo    clipped policy loss + clipped value loss (shared trunk with a value head) − entropy bonus + KL
//   value  value loss only (a separate critic model)
//   grpo   clipped policy loss with group-normalised advantages − entropy bonus + KL (no critic)
// Batch tensors ([B, T]): lossMask (model tokens), oldLogprobs, advantages, returns, oldValues,
// refLogprobs (only when klCoef > 0), and aggregationWeight when rl.lossAggregation is not token-mean (the policy, entropy,
// KL and value terms are then aggregated as verl's agg_loss mode, as RAGEN's dp_actor.py:325-360 does for all of them), and
// entropyWeight when rl.entropyOn is 'action' (core/train/ppo.ts entropyWeights: the bonus on the move's deciding token only;
// 'losses/entropy' is then that token's aggregated entropy); params.entropyCap (rl.entropyCap) caps each token's entropy in the bonus.
// The math is in ppo-losses.ts (tested against hand values and the peers-check's reference values).
import * as tf from '@tensorflow/tfjs';
import { registerLoss, requireBatchTensor, type LossFn } from '../model/losses.js';
import { aggregateLoss, maskedMean } from '../model/losses.js';
import { clippedValueLoss, klPenalty, ppoPolicyLoss, type KlEstimator } from './ppo-losses.js';

function num(params: Record<string, unknown>, name: string, fallback: number): number {
  const v = params[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`loss params.${name}: expected a finite number; received ${JSON.stringify(v)}`);
  return v;
}
function nullableNum(params: Record<string, unknown>, name: string, fallback: number | null): number | null {
  const v = params[name];
  if (v === null) return null;
  return v === undefined ? fallback : num(params, name, 0);
}

function policyPart(name: string, inputs: Parameters<LossFn>[0]) {
  const { outputs, batch, params } = inputs;
  const mask = requireBatchTensor(batch, 'lossMask', name);
  const weight = batch.aggregationWeight;
  const policy = ppoPolicyLoss({
    logprobs: outputs.logprobs, oldLogprobs: requireBatchTensor(batch, 'oldLogprobs', name), advantages: requireBatchTensor(batch, 'advantages', name), mask,
    clipLow: num(params, 'clipLow', 0.2), clipHigh: num(params, 'clipHigh', 0.28), dualClip: nullableNum(params, 'dualClip', 3), weight,
  });
  const entropyWeight = batch.entropyWeight;
  const entropyOf = (x: tf.Tensor) => (entropyWeight ? maskedMean(tf.mul(x, entropyWeight), mask) : aggregateLoss(x, mask, batch));
  const entropy = entropyOf(outputs.entropies);
  // rl.entropyCap: the bonus counts each token's entropy up to the cap (no gradient above it); 'losses/entropy' stays uncapped
  const cap = nullableNum(params, 'entropyCap', null);
  const bonus = cap === null ? entropy : entropyOf(tf.minimum(outputs.entropies, cap));
  const klCoef = num(params, 'klCoef', 0);
  const kl =
    klCoef > 0
      ? klPenalty(outputs.logprobs, requireBatchTensor(batch, 'refLogprobs', name), mask, (params.klEstimator as KlEstimator) ?? 'k3', weight)
      : tf.scalar(0);
  const loss = tf.add(tf.sub(policy.loss, tf.mul(bonus, num(params, 'entropyCoef', 0))), tf.mul(kl, klCoef)) as tf.Scalar;
  return { mask, policy, entropy, kl, loss };
}

export const ppoLoss: LossFn = (inputs) => {
  const { outputs, batch, params } = inputs;
  const part = policyPart('ppo', inputs);
  if (!outputs.values)
    throw new Error("loss 'ppo' needs the value head's outputs; use a model with value_head = true (criticMode 'shared-trunk') or the 'grpo' loss");
  const value = clippedValueLoss(
    outputs.values,
    requireBatchTensor(batch, 'oldValues', 'ppo'),
    requireBatchTensor(batch, 'returns', 'ppo'),
    part.mask,
    nullableNum(params, 'valueClip', 0.5),
    batch.aggregationWeight,
  );
  const loss = tf.add(part.loss, tf.mul(value, num(params, 'valueCoef', 0.5))) as tf.Scalar;
  return {
    loss,
    stats: {
      'losses/total': loss, 'losses/policy': part.policy.loss, 'losses/value': value, 'losses/entropy': part.entropy,
      'losses/approxKl': part.policy.approxKl, 'losses/clipFrac': part.policy.clipFrac, 'losses/kl': part.kl,
    },
  };
};

export const valueLoss: LossFn = ({ outputs, batch, params }) => {
  if (!outputs.values) throw new Error("loss 'value' needs a critic model with value_head = true");
  const mask = requireBatchTensor(batch, 'lossMask', 'value');
  const value = clippedValueLoss(
    outputs.values,
    requireBatchTensor(batch, 'oldValues', 'value'),
    requireBatchTensor(batch, 'returns', 'value'),
    mask,
    nullableNum(params, 'valueClip', 0.5),
    batch.aggregationWeight,
  );
  return { loss: value, stats: { 'losses/value': value } };
};

export const grpoLoss: LossFn = (inputs) => {
  const part = policyPart('grpo', inputs);
  return {
    loss: part.loss,
    stats: {
      'losses/total': part.loss,
      'losses/policy': part.policy.loss,
      'losses/entropy': part.entropy,
      'losses/approxKl': part.policy.approxKl,
      'losses/clipFrac': part.policy.clipFrac,
      'losses/kl': part.kl,
    },
  };
};

/** Policy-only PPO loss (a separate critic trains with 'value'). */
export const ppoPolicyOnlyLoss: LossFn = grpoLoss;

registerLoss('ppo', ppoLoss, { logprobs: true, entropies: true, values: true });
registerLoss('ppo-policy', ppoPolicyOnlyLoss, { logprobs: true, entropies: true, values: false });
registerLoss('value', valueLoss, { logprobs: false, entropies: false, values: true });
registerLoss('grpo', grpoLoss, { logprobs: true, entropies: true, values: false });
