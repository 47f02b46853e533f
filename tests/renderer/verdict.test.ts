// The verdict rule shared by the Studies table and the Run view (core/api/verdict.ts): the three
// Pass@1 verdicts at their boundaries, the world model against the base, bad input refused, and its
// import-free Wilson interval equal to the engine's (core/train/pass-at-k.ts).
import { describe, expect, it } from 'vitest';
import { chanceVerdict, SMALL_N_PUZZLES, widenForSmallN, wilson95, worldModelVerdict } from '../../core/api/verdict.js';
import { clusteredPassAtK } from '../../core/eval/study.js';
import { wilsonInterval } from '../../core/train/pass-at-k.js';

describe('chanceVerdict', () => {
  it('is below / above only when the whole interval is on one side of chance', () => {
    expect(chanceVerdict({ mean: 0.125, low: 0.031, high: 0.25 }, 0.301)).toBe('below chance');
    expect(chanceVerdict({ mean: 0.6, low: 0.45, high: 0.75 }, 0.301)).toBe('above chance');
    expect(chanceVerdict({ mean: 0.2, low: 0.05, high: 0.301 }, 0.301)).toBe('indistinguishable from chance'); // touching: not below
    expect(chanceVerdict({ mean: 0.4, low: 0.301, high: 0.5 }, 0.301)).toBe('indistinguishable from chance');
    expect(chanceVerdict({ mean: 0.9, low: null, high: null }, 0.1)).toBe('indistinguishable from chance'); // no interval: nothing told apart
  });
  it('refuses a missing number', () => {
    expect(() => chanceVerdict({ mean: Number.NaN, low: 0, high: 1 }, 0.3)).toThrow(/finite Pass@1 and chance/);
    expect(() => chanceVerdict({ mean: 0.2, low: 0, high: 1 }, Number.NaN)).toThrow(/chance=NaN/);
  });
});

describe('worldModelVerdict', () => {
  it('learned when the Wilson interval of the model lies above the base', () => {
    expect(worldModelVerdict(0.6, 0, 45).verdict).toBe('learned');
    expect(worldModelVerdict(0.2, 0.1, 10).verdict).toBe('not learned');
    expect(worldModelVerdict(0.1, 0.1, 1000).verdict).toBe('not learned');
  });
  it('computes the engine\'s Wilson interval', () => {
    for (const [c, n] of [[0, 45], [27, 45], [5, 16], [16, 16], [1, 1]] as const) {
      const a = wilson95(c / n, n), b = wilsonInterval(c, n);
      expect(a.low).toBeCloseTo(b.low, 12);
      expect(a.high).toBeCloseTo(b.high, 12);
    }
  });
  it('refuses bad n or rates', () => {
    expect(() => wilson95(0.5, 0)).toThrow(/integer n ≥ 1/);
    expect(() => wilson95(1.5, 10)).toThrow(/rate in \[0, 1\]/);
    expect(() => worldModelVerdict(0.5, Number.NaN, 10)).toThrow(/finite base/);
  });
});

describe('widenForSmallN (shared with the Studies table)', () => {
  it('widens a bootstrap over fewer than 20 puzzles to Wilson\'s, and leaves larger sets alone', () => {
    expect(SMALL_N_PUZZLES).toBe(20);
    const w = widenForSmallN({ mean: 0, low: 0, high: 0 }, 2);      // 2 puzzles that all failed
    expect(w.widened).toBe(true);
    expect(w.high).toBeCloseTo(0.658, 3);
    expect(widenForSmallN({ mean: 0.05, low: 0, high: 0.125 }, 24)).toEqual({ mean: 0.05, low: 0, high: 0.125, widened: false });
  });
  it('is what a study cell\'s interval goes through (the same numbers)', () => {
    const cells = [0, 1, 2].map((p) => ({ runSeed: 0, puzzle: p, n: 4, c: p === 0 ? 1 : 0 }));
    const study = clusteredPassAtK(cells, 1);
    const mine = widenForSmallN({ mean: study.mean, low: 0, high: 0 }, 3);
    expect(study.high).toBeCloseTo(Math.max(mine.high), 12);
    expect(study.method).toContain('widened to Wilson over 3 puzzles');
  });
});
