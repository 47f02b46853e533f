// Data-parallel training: one worker thread + the main thread give the same update as one thread.
import { beforeAll, describe, expect, it } from 'vitest';
import { CausalLM } from '../../core/model/transformer.js';
import { Trainer } from '../../core/model/trainer.js';
import { DataParallelTrainer } from '../../core/model/workers/data-parallel.js';
import { randomIds, tinyConfig, useTestBackend } from './helpers.js';

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
});
