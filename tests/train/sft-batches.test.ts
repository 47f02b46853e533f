// SFT batches (epochBatches): every row once per epoch, ceil(n / batch) batches, rows of like
// length together (little padding), the same batches for the same seed (a resumed epoch replays
// them) and other batches for another seed.
import { describe, expect, it } from 'vitest';
import { epochBatches } from '../../core/train/sft.js';
import { Rng } from '../../core/util/rng.js';

function padding(lengths: number[], batches: number[][]): number {
  return batches.reduce((a, b) => a + b.reduce((x, i) => x + Math.max(...b.map((j) => lengths[j]!)) - lengths[i]!, 0), 0);
}

describe('SFT epoch batches', () => {
  const rng = new Rng(7);
  // 40 long multi-turn rows among 1,000 short drills, as a quick run with drills has
  const lengths = Array.from({ length: 1040 }, (_, i) => (i < 40 ? 900 + rng.int(300) : 420 + rng.int(60)));
  it('covers every row once in ceil(n / batch) batches', () => {
    const batches = epochBatches(lengths, 32, 1);
    expect(batches).toHaveLength(Math.ceil(1040 / 32));
    expect(batches.flat().sort((a, b) => a - b)).toEqual(lengths.map((_, i) => i));
    expect(batches.filter((b) => b.length < 32).map((b) => b.length)).toEqual([lengths.length % 32]);
  });
  it('pads far less than a plain shuffle', () => {
    const grouped = padding(lengths, epochBatches(lengths, 32, 1));
    const order = Array.from({ length: 1040 }, (_, i) => i);
    for (let i = order.length - 1; i > 0; i--) { const j = rng.int(i + 1); [order[i], order[j]] = [order[j]!, order[i]!]; }
    const plain = padding(lengths, Array.from({ length: Math.ceil(1040 / 32) }, (_, b) => order.slice(b * 32, b * 32 + 32)));
    expect(grouped).toBeLessThan(plain * 0.5);
  });
  it('is fixed by the seed', () => {
    expect(epochBatches(lengths, 32, 5)).toEqual(epochBatches(lengths, 32, 5));
    expect(epochBatches(lengths, 32, 6)).not.toEqual(epochBatches(lengths, 32, 5));
    expect(epochBatches([], 8, 1)).toEqual([]);
  });
});
