// Helpers of the torch-vs-TF.js tests (parity, LoRA): runtimes on a committed Qwen2 fixture folder
// on both backends, the largest difference of two arrays, a few token rows, a PPO batch.
import { expect } from 'vitest';
import * as path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { TfjsRuntime, type ModelRuntime, type TokenStat, type TrainRow } from '../../core/model/runtime.js';
import { TorchRuntime } from '../../core/model/torch/runtime.js';
import type { TorchProbe } from '../../core/model/torch/worker-client.js';
import { loadCheckpoint } from '../../core/model/checkpoint.js';

export const PARITY_FIXTURES = path.resolve(__dirname, '../fixtures/model/parity');

/** A TF.js runtime on a folder (a fresh value head is zeros, as the torch worker's). */
export async function tfjsFrom(dir: string, opts: { valueHead?: boolean; resume?: boolean } = {}): Promise<TfjsRuntime> {
  const loaded = await loadCheckpoint(dir, { valueHead: opts.valueHead, optimizer: opts.resume ?? false });
  const rt = new TfjsRuntime(loaded.model, loaded.tokenizer, { backend: 'cpu', device: 'cpu' });
  if (opts.resume) rt.restoredOptimizerState = loaded.optimizerState;
  if (opts.valueHead && !loaded.info.config.value_head) {
    // the same fresh head on both backends: zeros (zero output)
    for (const [name, v] of loaded.model.namedWeights()) if (name.startsWith('value_head.')) v.assign(tf.zerosLike(v));
  }
  return rt;
}

export function torchFrom(probe: TorchProbe, dir: string, opts: { valueHead?: boolean; resume?: boolean } = {}): Promise<TorchRuntime> {
  return TorchRuntime.fromFolder(dir, { ...opts, probe, threads: 1 });
}

export function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

export function rowsOf(rt: ModelRuntime): number[][] {
  const tok = rt.tokenizer;
  return ['the box is there', 'the answer</answer> (P X)', '<|im_start|>the is'].map((t) => tok.encode(t));
}

/** PPO rows over `ids` (old log-probs near the model's, deterministic advantages / returns, a fresh value head's old values). */
export function ppoRows(ids: number[][], stats: TokenStat[]): TrainRow[] {
  return ids.map((r, i) => ({
    ids: r,
    arrays: {
      lossMask: r.map((_, t) => (t >= 3 ? 1 : 0)), oldLogprobs: stats[i]!.logprobs.map((x, t) => x + 0.05 * Math.sin(t + i)),
      advantages: r.map((_, t) => Math.cos(t * 0.7 + i)), returns: r.map((_, t) => 0.5 * Math.sin(t + 2 * i)), oldValues: r.map(() => 0),
    },
  }));
}

export const PPO_PARAMS = { clipLow: 0.2, clipHigh: 0.28, dualClip: 3, entropyCoef: 0.01, valueCoef: 0.5, valueClip: 0.5 };
