import { describe, expect, it } from 'vitest';
import { passAtK, passAtKBruteForce, passAtKWithInterval, wilsonInterval } from '../../core/train/pass-at-k.js';

describe('pass@k', () => {
  it('equals brute-force enumeration for all small n, c, k', () => {
    for (let n = 1; n <= 10; n++) for (let c = 0; c <= n; c++) for (let k = 1; k <= n; k++) {
      expect(passAtK(n, c, k)).toBeCloseTo(passAtKBruteForce(n, c, k), 12);
    }
  });
  it('hand values: pass@1 = c/n; n=8,c=1,k=8 → 1', () => {
    expect(passAtK(8, 3, 1)).toBeCloseTo(3 / 8, 12);
    expect(passAtK(8, 1, 8)).toBe(1);
    expect(passAtK(4, 1, 2)).toBeCloseTo(0.5, 12); // 1 − C(3,2)/C(4,2) = 1 − 3/6
  });
  it('is stable for large n', () => {
    const v = passAtK(1000, 3, 100);
    expect(v).toBeGreaterThan(0.27);
    expect(v).toBeLessThan(0.28);
  });
  it('refuses k > n with a clear message', () => {
    expect(() => passAtK(4, 1, 8)).toThrow(/k ≤ n/);
  });
  it('interval brackets the mean and is deterministic', () => {
    const per = [{ n: 8, c: 0 }, { n: 8, c: 8 }, { n: 8, c: 2 }, { n: 8, c: 4 }, { n: 8, c: 1 }];
    const a = passAtKWithInterval(per, 4, { seed: 1 });
    const b = passAtKWithInterval(per, 4, { seed: 1 });
    expect(a).toEqual(b);
    expect(a.low).toBeLessThanOrEqual(a.mean);
    expect(a.high).toBeGreaterThanOrEqual(a.mean);
    expect(a.high).toBeGreaterThan(a.low);
    const w = wilsonInterval(5, 10);
    expect(w.low).toBeCloseTo(0.2366, 3);
    expect(w.high).toBeCloseTo(0.7634, 3);
  });
});
