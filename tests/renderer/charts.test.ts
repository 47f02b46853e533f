// Chart downsampler and smoothing: min/max of every bucket kept, spikes never dropped,
// debiased EMA, range re-bucketing. Pure functions; runs in Node.
import { describe, expect, it } from 'vitest';
import { emaSmooth, m4Downsample, minMaxBuckets, prepareSeries, sortByX } from '../../renderer/src/charts/downsample.js';
import { createRng as rng } from '../../core/util/rng.js'; // seeded, so failures reproduce

function noisy(n: number, seed: number): { x: number[]; y: number[] } {
  const r = rng(seed);
  const x = Array.from({ length: n }, (_, i) => i);
  const y = x.map(() => r());
  return { x, y };
}

describe('m4Downsample', () => {
  it('never drops a single-point spike, up or down, wherever it lands', () => {
    const r = rng(7);
    for (let trial = 0; trial < 30; trial++) {
      const { x, y } = noisy(20_000, trial);
      const at = Math.floor(r() * x.length);
      const up = trial % 2 === 0;
      y[at] = up ? 1000 : -1000;
      const out = m4Downsample(x, y, 50 + trial);
      expect(out.x.length).toBeLessThanOrEqual(4 * (50 + trial));
      const idx = out.x.indexOf(at);
      expect(idx, `spike at x=${at} kept`).toBeGreaterThanOrEqual(0);
      expect(out.y[idx]).toBe(up ? 1000 : -1000);
    }
  });

  it('keeps the exact min and max of every bucket', () => {
    const { x, y } = noisy(10_000, 3);
    const buckets = 37;
    const out = m4Downsample(x, y, buckets);
    const inStats = minMaxBuckets(x, y, buckets);
    const outStats = minMaxBuckets(out.x, out.y, buckets);
    // same bucket edges because the output spans the same first/last x
    expect(out.x[0]).toBe(x[0]);
    expect(out.x[out.x.length - 1]).toBe(x[x.length - 1]);
    expect(outStats.min).toEqual(inStats.min);
    expect(outStats.max).toEqual(inStats.max);
  });

  it('returns points in x order, each an original point', () => {
    const { x, y } = noisy(5000, 11);
    const out = m4Downsample(x, y, 20);
    for (let i = 1; i < out.x.length; i++) expect(out.x[i]!).toBeGreaterThan(out.x[i - 1]!);
    for (let i = 0; i < out.x.length; i++) expect(out.y[i]).toBe(y[out.x[i]!]);
  });

  it('passes small inputs through and skips non-finite values', () => {
    const out = m4Downsample([0, 1, 2, 3], [1, Number.NaN, 3, 4], 10);
    expect(out).toEqual({ x: [0, 2, 3], y: [1, 3, 4] });
    expect(m4Downsample([], [], 10)).toEqual({ x: [], y: [] });
  });

  it('re-buckets a zoomed range and keeps one neighbour outside each edge', () => {
    const { x, y } = noisy(10_000, 5);
    y[5123] = 99;
    const out = m4Downsample(x, y, 10, 5000, 6000);
    expect(out.x[0]).toBe(4999);
    expect(out.x[out.x.length - 1]).toBe(6001);
    expect(out.x.filter((v) => v < 5000 || v > 6000)).toHaveLength(2);
    expect(out.y).toContain(99);
  });

  it('rejects bad arguments with a clear message', () => {
    expect(() => m4Downsample([1, 2], [1], 4)).toThrow(/same length \(x: 2, y: 1\)/);
    expect(() => m4Downsample([1], [1], 0)).toThrow(/positive integer, got 0/);
  });
});

describe('emaSmooth', () => {
  it('is debiased: a constant series stays constant from the first point', () => {
    const out = emaSmooth([5, 5, 5, 5], 0.9);
    for (const v of out) expect(v).toBeCloseTo(5, 12);
  });

  it('matches a hand computation', () => {
    // w = 0.5: last = 0.5*1 = 0.5 → /0.5 = 1; last = 0.25 + 1.5 = 1.75 → /0.75 = 2.333...
    const out = emaSmooth([1, 3], 0.5);
    expect(out[0]).toBeCloseTo(1, 12);
    expect(out[1]).toBeCloseTo(1.75 / 0.75, 12);
  });

  it('weight 0 is the identity; NaN stays a gap', () => {
    expect(emaSmooth([1, 2, 3], 0)).toEqual([1, 2, 3]);
    const out = emaSmooth([1, Number.NaN, 1], 0.6);
    expect(Number.isNaN(out[1])).toBe(true);
    expect(out[2]).toBeCloseTo(1, 12);
    expect(() => emaSmooth([1], 1)).toThrow(/\[0, 1\)/);
  });
});

describe('prepareSeries', () => {
  it('smooths on the full data before downsampling and keeps the raw spike', () => {
    const { x, y } = noisy(50_000, 9);
    y[31_337] = 500;
    const res = prepareSeries({ id: 4, series: [{ key: 'a', x, y }], smoothing: 0.99, buckets: 100 });
    expect(res.id).toBe(4);
    const s = res.series[0]!;
    expect(s.totalPoints).toBe(50_000);
    expect(Math.max(...s.raw.y)).toBe(500);
    const fullSmooth = emaSmooth(y, 0.99);
    expect(Math.max(...s.smooth!.y)).toBeCloseTo(Math.max(...fullSmooth), 12);
  });

  it('sorts out-of-order points by x', () => {
    expect(sortByX([2, 1, 3], [20, 10, 30])).toEqual({ x: [1, 2, 3], y: [10, 20, 30] });
  });
});
