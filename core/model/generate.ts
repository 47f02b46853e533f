// Batched generation with a K/V cache: temperature / top-k / top-p sampling from a seeded RNG
// (no Math.random), stop strings checked on the decoded text, EOS, max new tokens. Cached and
// uncached (full recompute each step) generation produce the same tokens.
import * as tf from '@tensorflow/tfjs';
import { CausalLM, disposeCache, type KvCache } from './transformer.js';
import { InferenceSession } from './inference.js';
import { Rng } from '../util/rng.js';

/** The minimal tokenizer generation needs (the IO module's tokenizers satisfy it). */
export interface GenerationTokenizer {
  encode(text: string): number[];
  decode(ids: number[]): string;
  eosTokenId: number;
  padTokenId: number;
}

export interface GenerateOptions {
  maxNewTokens: number;        // upper bound on generated tokens per sequence
  temperature?: number;        // 1 = model distribution; 0 = greedy
  topK?: number;               // keep the k most likely tokens (0 = off)
  topP?: number;               // nucleus: smallest set with probability >= p (1 = off)
  stop?: string[];             // stop when the decoded completion contains one (kept in the text)
  stopTokenIds?: number[];     // default [tokenizer.eosTokenId]
  seed?: number;               // sampling seed; row b uses a stream derived from (seed, rowSeedOffset + b)
  rowSeedOffset?: number;      // index of this call's first row in a larger batch (split generation stays reproducible)
  useCache?: boolean;          // K/V cache (true); false recomputes the whole sequence every step
  /**
   * K/V cache implementation: 'session' (JS cache, pre-transposed weights; fastest on wasm/cpu),
   * 'tensors' (cache as TF.js tensors; for native / GPU backends), 'auto' (default: by backend).
   */
  cacheImpl?: 'auto' | 'session' | 'tensors';
}

export interface GenerationResult {
  promptTokens: number[];
  tokens: number[];            // generated tokens (including a final EOS when it ended so)
  text: string;                // decoded completion (without EOS; cut after the stop string)
  logprobs: number[];          // log p(token) under the model at temperature 1, per generated token
  finishReason: 'stop' | 'eos' | 'length';
}

/** log softmax(row)[token], without allocating (vocabularies can be 150k wide). */
function tokenLogprob(row: Float32Array, token: number): number {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) if (row[i]! > max) max = row[i]!;
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(row[i]! - max);
  return row[token]! - max - Math.log(sum);
}

/** Choose the next token from one row of logits. Exported for tests. */
export function sampleToken(row: Float32Array, rng: Rng, temperature: number, topK: number, topP: number): number {
  const V = row.length;
  if (temperature <= 0) {
    let best = 0;
    for (let i = 1; i < V; i++) if (row[i]! > row[best]!) best = i;
    return best;
  }
  let candidates: number[] | null = null;
  if (topK > 0 && topK < V) {
    candidates = Array.from({ length: V }, (_, i) => i).sort((a, b) => row[b]! - row[a]! || a - b).slice(0, topK);
  }
  const ids = candidates ?? Array.from({ length: V }, (_, i) => i);
  let max = -Infinity;
  for (const i of ids) if (row[i]! > max) max = row[i]!;
  let weights = ids.map((i) => Math.exp((row[i]! - max) / temperature));
  let pool = ids;
  if (topP < 1) {
    const order = ids.map((_, j) => j).sort((a, b) => weights[b]! - weights[a]! || ids[a]! - ids[b]!);
    const total = weights.reduce((a, b) => a + b, 0);
    const keep: number[] = [];
    let cumulative = 0;
    for (const j of order) { keep.push(j); cumulative += weights[j]! / total; if (cumulative >= topP) break; }
    pool = keep.map((j) => ids[j]!);
    weights = keep.map((j) => weights[j]!);
  }
  const total = weights.reduce((a, b) => a + b, 0);
  let u = rng.next() * total;
  for (let j = 0; j < pool.length; j++) { u -= weights[j]!; if (u <= 0) return pool[j]!; }
  return pool[pool.length - 1]!;
}

/**
 * Generate completions for a batch of prompts (text, or token ids). Prompts are left-padded to
 * a common length; each row stops on EOS, a stop string or maxNewTokens.
 */
export function generate(model: CausalLM, tokenizer: GenerationTokenizer, prompts: Array<string | number[]>, options: GenerateOptions): GenerationResult[] {
  if (!Number.isInteger(options.maxNewTokens) || options.maxNewTokens < 1) {
    throw new Error(`generate: maxNewTokens must be a positive integer, got ${options.maxNewTokens}`);
  }
  if (prompts.length === 0) return [];
  const temperature = options.temperature ?? 1;
  const topK = options.topK ?? 0;
  const topP = options.topP ?? 1;
  if (!(topP > 0 && topP <= 1)) throw new Error(`generate: topP must be in (0, 1], got ${topP}`);
  const stops = (options.stop ?? []).filter((s) => s.length > 0);
  const stopIds = new Set(options.stopTokenIds ?? [tokenizer.eosTokenId]);
  const useCache = options.useCache ?? true;
  const seed = options.seed ?? 0;
  const maxCtx = model.config.max_position_embeddings;

  const promptTokens = prompts.map((p) => (typeof p === 'string' ? tokenizer.encode(p) : [...p]));
  promptTokens.forEach((p, b) => { if (p.length === 0) throw new Error(`generate: prompt ${b} is empty (it needs at least one token)`); });
  const B = promptTokens.length;
  const P = Math.max(...promptTokens.map((p) => p.length));
  if (P >= maxCtx) throw new Error(`generate: prompt of ${P} tokens does not fit the model context (${maxCtx})`);
  const steps = Math.min(options.maxNewTokens, maxCtx - P);
  const pad = tokenizer.padTokenId;
  const ids = promptTokens.map((p) => [...new Array<number>(P - p.length).fill(pad), ...p]);      // [B, P] left-padded
  const mask = promptTokens.map((p) => [...new Array<number>(P - p.length).fill(0), ...p.map(() => 1)]);
  const rowOffset = options.rowSeedOffset ?? 0;
  const rngs = promptTokens.map((_, b) => new Rng(seed * 1_000_003 + rowOffset + b));
  const results: GenerationResult[] = promptTokens.map((p) => ({ promptTokens: p, tokens: [], text: '', logprobs: [], finishReason: 'length' }));
  const done = new Array<boolean>(B).fill(false);
  const window = stops.length ? Math.max(...stops.map((s) => s.length)) + 8 : 0;

  let cache: KvCache | null = null;
  const impl = options.cacheImpl && options.cacheImpl !== 'auto' ? options.cacheImpl : (['wasm', 'cpu'].includes(tf.getBackend()) ? 'session' : 'tensors');
  const session = useCache && impl === 'session' ? new InferenceSession(model, B, P + steps) : null;
  let nextIds = ids;
  let nextMask = mask;
  try {
    for (let step = 0; step < steps; step++) {
      let logitsData: Float32Array;
      const V = model.config.vocab_size;
      if (session) {
        logitsData = session.step(nextIds, nextMask);                        // [B, V]
      } else if (useCache) {
        const out: { logits: tf.Tensor2D; cache: KvCache } = model.step(nextIds, nextMask, cache);
        cache = out.cache;
        logitsData = out.logits.dataSync() as Float32Array;                   // [B, V]
        out.logits.dispose();
      } else {
        const last = tf.tidy(() => {
          const { logits } = model.forward(ids, { attentionMask: mask, values: false });
          const T = ids[0]!.length;
          return tf.slice(logits!, [0, T - 1, 0], [B, 1, V]);                // [B, 1, V] last position
        });
        logitsData = last.dataSync() as Float32Array;
        last.dispose();
      }
      const chosen: number[] = [];
      for (let b = 0; b < B; b++) {
        if (done[b]) { chosen.push(pad); continue; }
        const row = logitsData.subarray(b * V, (b + 1) * V);
        const token = sampleToken(row, rngs[b]!, temperature, topK, topP);
        const r = results[b]!;
        r.tokens.push(token);
        r.logprobs.push(tokenLogprob(row, token));
        chosen.push(token);
        if (stopIds.has(token)) { done[b] = true; r.finishReason = 'eos'; continue; }
        if (stops.length) {
          const tail = tokenizer.decode(r.tokens.slice(-window));
          if (stops.some((s) => tail.includes(s))) { done[b] = true; r.finishReason = 'stop'; }
        }
      }
      nextIds = chosen.map((t) => [t]);
      // Rows already finished before this step feed a masked pad token.
      nextMask = chosen.map((_, b) => [wasDoneBefore(results[b]!, step) ? 0 : 1]);
      if (!useCache) {
        ids.forEach((row, b) => row.push(chosen[b]!));
        mask.forEach((row, b) => row.push(nextMask[b]![0]!));
      }
      if (done.every(Boolean)) break;
    }
  } finally {
    if (cache) disposeCache(cache);
    session?.dispose();
  }
  for (const r of results) {
    const textTokens = r.finishReason === 'eos' ? r.tokens.slice(0, -1) : r.tokens;
    let text = tokenizer.decode(textTokens);
    if (r.finishReason === 'stop') {
      let cut = text.length;
      for (const s of stops) { const i = text.indexOf(s); if (i >= 0) cut = Math.min(cut, i + s.length); }
      text = text.slice(0, cut);
    }
    r.text = text;
  }
  return results;
}

/** True when the row had finished before generating at `step` (it produced no token there). */
function wasDoneBefore(r: GenerationResult, step: number): boolean { return r.tokens.length < step + 1; }
