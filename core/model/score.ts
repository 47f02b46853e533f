// Scoring without gradients: per-token log-probabilities, entropies and values as plain arrays
// (PPO's old / reference log-probs, value estimates for GAE, evaluation perplexity). Runs in
// chunks of rows to bound memory; every tensor is disposed before returning.
import * as tf from '@tensorflow/tfjs';
import type { CausalLM } from './transformer.js';

export interface TokenScores {
  logprobs: number[][];          // [B, T], aligned with the tokens (position 0 holds 0)
  entropies: number[][];         // [B, T]
  values: number[][] | null;     // [B, T] when requested
}

export function tokenScores(
  model: CausalLM,
  inputIds: number[][],
  options: { attentionMask?: number[][]; segmentIds?: number[][]; values?: boolean; chunkRows?: number } = {},
): TokenScores {
  const chunk = Math.max(1, options.chunkRows ?? 16);
  const out: TokenScores = { logprobs: [], entropies: [], values: options.values ? [] : null };
  for (let start = 0; start < inputIds.length; start += chunk) {
    const ids = inputIds.slice(start, start + chunk);
    const mask = options.attentionMask?.slice(start, start + chunk);
    const segments = options.segmentIds?.slice(start, start + chunk);
    const o = tf.tidy(() => {
      const r = model.tokenOutputs(ids, { attentionMask: mask, segmentIds: segments, values: options.values ?? false });
      return r.values ? [r.logprobs, r.entropies, r.values] : [r.logprobs, r.entropies];
    });
    const [lp, ent, val] = o.map((t) => t.arraySync() as number[][]);
    tf.dispose(o);
    out.logprobs.push(...lp);
    out.entropies.push(...ent);
    if (out.values && val) out.values.push(...val);
  }
  return out;
}
