// Fast causal attention for training (see attentionFast). Placeholder: plain ops.
import * as tf from '@tensorflow/tfjs';
import { attentionBias, attentionReference, type AttentionShape } from './kernels.js';

/** q [B*T, H*hd], k/v [B*T, KV*hd], key mask [B, T] -> [B*T, H*hd]. */
export function attentionFast(q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D, mask: number[][], s: AttentionShape): tf.Tensor2D {
  return attentionReference(q, k, v, attentionBias(mask, s.queryLength), s);
}
