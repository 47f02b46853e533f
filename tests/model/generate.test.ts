// Generation: K/V-cache generation equals recompute; seeded sampling; stop strings; EOS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { CausalLM } from '../../core/model/transformer.js';
import { generate, sampleToken } from '../../core/model/generate.js';
import { Rng } from '../../core/util/rng.js';
import { charTokenizer, tinyConfig, useTestBackend } from './helpers.js';

const tok = charTokenizer();
let model: CausalLM;
beforeAll(async () => {
  await useTestBackend();
  // Larger init so that the distribution is far from uniform and samples differ by seed.
  model = new CausalLM(tinyConfig({ vocab_size: tok.vocabSize, initializer_range: 0.5 }), { seed: 1 });
});
afterAll(() => model.dispose());

describe('generate', () => {
  it('cached generation (JS-cache session and tensor cache) equals full recompute (greedy and sampled, ragged batch)', () => {
    const long = 'abcdefghijklmnoabcdefghijklmnoabcdefghijklmno'; // >= 32 tokens: tiled prefill
    for (const prompts of [['abc', 'hello', 'o'], [long, 'ab']]) {
      for (const opts of [{ temperature: 0 }, { temperature: 1, topK: 8, topP: 0.9, seed: 5 }]) {
        const plain = generate(model, tok, prompts, { maxNewTokens: 10, ...opts, stopTokenIds: [], useCache: false });
        for (const cacheImpl of ['session', 'tensors'] as const) {
          const cached = generate(model, tok, prompts, { maxNewTokens: 10, ...opts, stopTokenIds: [], useCache: true, cacheImpl });
          expect(cached.map((r) => r.tokens)).toEqual(plain.map((r) => r.tokens));
          cached.forEach((r, b) => r.logprobs.forEach((lp, i) => expect(lp).toBeCloseTo(plain[b]!.logprobs[i]!, 3)));
          expect(cached[0]!.tokens).toHaveLength(10);
        }
      }
    }
  });

  it('the wasm SIMD decode attention equals the JS loops', () => {
    const prompts = ['abcdefghijklmno', 'hello', 'o'];
    const opts = { maxNewTokens: 24, temperature: 1, seed: 9, stopTokenIds: [], useCache: true, cacheImpl: 'session' as const };
    const simd = generate(model, tok, prompts, opts);
    process.env.SPA_NO_SIMD = '1';
    try {
      const js = generate(model, tok, prompts, opts);
      expect(simd.map((r) => r.tokens)).toEqual(js.map((r) => r.tokens));
      simd.forEach((r, b) => r.logprobs.forEach((lp, i) => expect(lp).toBeCloseTo(js[b]!.logprobs[i]!, 4)));
    } finally {
      delete process.env.SPA_NO_SIMD;
    }
  });

  it('a row gives the same tokens alone as in a padded batch', () => {
    const alone = generate(model, tok, ['o'], { maxNewTokens: 8, temperature: 0, stopTokenIds: [] });
    const batched = generate(model, tok, ['hello', 'o'], { maxNewTokens: 8, temperature: 0, stopTokenIds: [] });
    expect(batched[1]!.tokens).toEqual(alone[0]!.tokens);
  });

  it('seeded sampling is reproducible and the seed matters', () => {
    const a = generate(model, tok, ['abc', 'abc'], { maxNewTokens: 16, seed: 1, stopTokenIds: [] });
    const b = generate(model, tok, ['abc', 'abc'], { maxNewTokens: 16, seed: 1, stopTokenIds: [] });
    const c = generate(model, tok, ['abc', 'abc'], { maxNewTokens: 16, seed: 2, stopTokenIds: [] });
    expect(a.map((r) => r.tokens)).toEqual(b.map((r) => r.tokens));
    expect(a.map((r) => r.tokens)).not.toEqual(c.map((r) => r.tokens));
  });

  it('stops on a stop string (kept in the text) and on EOS', () => {
    // Find what greedy produces, then use a piece of it as the stop string.
    const free = generate(model, tok, ['ab'], { maxNewTokens: 10, temperature: 0, stopTokenIds: [] })[0]!;
    const stop = free.text.slice(2, 4);
    const stopped = generate(model, tok, ['ab'], { maxNewTokens: 10, temperature: 0, stop: [stop], stopTokenIds: [] })[0]!;
    expect(stopped.finishReason).toBe('stop');
    expect(stopped.text.endsWith(stop)).toBe(true);
    expect(stopped.text).toBe(free.text.slice(0, free.text.indexOf(stop) + stop.length));
    const firstToken = free.tokens[0]!;
    const eos = generate(model, tok, ['ab'], { maxNewTokens: 10, temperature: 0, stopTokenIds: [firstToken] })[0]!;
    expect(eos.finishReason).toBe('eos');
    expect(eos.tokens).toEqual([firstToken]);
    expect(eos.text).toBe('');
  });

  it('does not leak tensors', () => {
    generate(model, tok, ['abc'], { maxNewTokens: 3 });
    const before = tf.memory().numTensors;
    generate(model, tok, ['abc', 'de'], { maxNewTokens: 5 });
    generate(model, tok, ['abc', 'de'], { maxNewTokens: 5, cacheImpl: 'tensors' });
    generate(model, tok, ['abc'], { maxNewTokens: 5, useCache: false });
    expect(tf.memory().numTensors).toBe(before);
  });

  it('top-k 1 is greedy; top-p keeps the nucleus', () => {
    const row = new Float32Array([0.1, 3, 0.2, 2.9, -1]);
    const rng = new Rng(3);
    for (let i = 0; i < 20; i++) expect(sampleToken(row, rng, 1, 1, 1)).toBe(1);
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) seen.add(sampleToken(row, rng, 1, 0, 0.6));
    expect([...seen].sort()).toEqual([1, 3]);
  });
});
