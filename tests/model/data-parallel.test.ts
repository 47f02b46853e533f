// Data-parallel training: one worker thread + the main thread give the same update as one thread.
import { beforeAll, describe, expect, it } from 'vitest';
import { CausalLM } from '../../core/model/transformer.js';
import { Trainer } from '../../core/model/trainer.js';
import { DataParallelTrainer } from '../../core/model/workers/data-parallel.js';
import { randomIds, tinyConfig, useTestBackend } from './helpers.js';
import { buildCharTokenizer } from '../../core/model/tokenizer.js';
import { generate } from '../../core/model/generate.js';

beforeAll(useTestBackend);

describe('DataParallelTrainer', () => {
  it('splits the batch across a worker and matches single-thread training over two steps', async () => {
    const a = new CausalLM(tinyConfig(), { seed: 31 });
    const b = a.clone();
    const inputIds = randomIds(4, 8, 17, 5);
    const lossMask = inputIds.map((r) => r.map((_, t) => (t > 0 ? 1 : 0))); // equal token counts per row
    const options = { schedule: { lr: 1e-2, kind: 'constant' as const } };
    const single = new Trainer(a, options);
    const dp = await DataParallelTrainer.create(b, options, { workers: 1 });
    try {
      for (let step = 0; step < 2; step++) {
        const r1 = single.step({ lossName: 'sft', batch: { inputIds, lossMask } });
        const r2 = await dp.step({ lossName: 'sft', batch: { inputIds, lossMask } });
        expect(r2.loss).toBeCloseTo(r1.loss, 4);
        expect(r2.gradNorm).toBeCloseTo(r1.gradNorm, 3);
      }
      const wa = a.namedWeights();
      for (const [k, v] of b.namedWeights()) {
        const x = v.dataSync(); const y = wa.get(k)!.dataSync();
        let max = 0;
        for (let i = 0; i < x.length; i++) max = Math.max(max, Math.abs(x[i]! - y[i]!));
        expect(max, k).toBeLessThan(1e-4);
      }
      await expect(dp.step({ lossName: 'no-such-loss', batch: { inputIds, lossMask } })).rejects.toThrow(/unknown loss "no-such-loss"/);
    } finally {
      await dp.dispose();
      single.dispose(); a.dispose(); b.dispose();
    }
  });

  it('generates across workers exactly as one thread does, after a training step (weights resynced)', async () => {
    const tokenizer = buildCharTokenizer({ chars: 'abcdefgh<>/', tagTokens: [] });
    const model = new CausalLM(tinyConfig({ vocab_size: tokenizer.vocabSize, initializer_range: 0.3 }), { seed: 41 });
    const dp = await DataParallelTrainer.create(model, { schedule: { lr: 5e-2, kind: 'constant' } }, { workers: 1, tokenizer: { json: tokenizer.toJson(), config: tokenizer.configJson() } });
    try {
      const prompts = ['abc', 'hgf', 'a', 'bbbb', 'ceg'];
      const options = { maxNewTokens: 8, temperature: 1, seed: 3, stopTokenIds: [] as number[] };
      const check = async () => {
        const split = await dp.generate(tokenizer, prompts, options);
        const single = generate(model, tokenizer, prompts, options);
        expect(split.map((r) => r.tokens)).toEqual(single.map((r) => r.tokens));
        return single;
      };
      const before = await check();
      const inputIds = randomIds(4, 8, tokenizer.vocabSize, 9);
      await dp.step({ lossName: 'sft', batch: { inputIds, lossMask: inputIds.map((r) => r.map((_, t) => (t > 0 ? 1 : 0))) } });
      const after = await check();                       // workers got the new weights
      expect(after.map((r) => r.tokens)).not.toEqual(before.map((r) => r.tokens));
    } finally {
      await dp.dispose();
      model.dispose();
    }
  });
});
