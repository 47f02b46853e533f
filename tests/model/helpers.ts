// Shared test helpers: a backend for fast tests and a tiny config.
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../core/model/backend.js';
import { parseModelConfig, type ModelConfig, type ModelConfigInput } from '../../core/model/config.js';

export async function useTestBackend(): Promise<void> {
  await initBackend({ backend: (process.env.SPA_TEST_BACKEND as 'wasm' | 'cpu' | undefined) ?? 'wasm', ignoreEnv: true });
}

export function tinyConfig(overrides: ModelConfigInput = {}): ModelConfig {
  return parseModelConfig({
    vocab_size: 17, hidden_size: 16, intermediate_size: 24, num_hidden_layers: 2,
    num_attention_heads: 4, num_key_value_heads: 2, max_position_embeddings: 64, rope_theta: 10000,
    tie_word_embeddings: false, attention_bias: true, ...overrides,
  });
}

export function maxAbsDiff(a: tf.Tensor, b: tf.Tensor): number {
  return tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0]!);
}

/** Deterministic pseudo-random ids in [0, vocab). */
export function randomIds(rows: number, cols: number, vocab: number, seed = 1): number[][] {
  let s = seed >>> 0;
  const next = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 4294967296; };
  return Array.from({ length: rows }, () => Array.from({ length: cols }, () => Math.floor(next() * vocab)));
}

/** A character tokenizer for tests: id 0 pad, 1 eos, then the alphabet. */
export function charTokenizer(alphabet = 'abcdefghijklmno<>/') {
  const chars = [...alphabet];
  return {
    vocabSize: chars.length + 2,
    eosTokenId: 1,
    padTokenId: 0,
    encode: (text: string) => [...text].map((c) => { const i = chars.indexOf(c); if (i < 0) throw new Error(`char ${c}`); return i + 2; }),
    decode: (ids: number[]) => ids.filter((i) => i >= 2).map((i) => chars[i - 2]).join(''),
  };
}
