// Pass@k with the unbiased estimator of Chen et al. (2021): for a puzzle with n samples of which
// c succeed, pass@k = 1 − C(n−c, k)/C(n, k), computed as the stable product
// 1 − Π_{i=n−c+1}^{n} (1 − k/i). Averaged over puzzles, with a bootstrap confidence interval
// over puzzles (seeded) and a Wilson interval for the plain success rate.
import { createRng } from '../util/rng.js';

export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 1 || k < 1 || c < 0 || c > n) {
    throw new Error(`passAtK: expected integers n ≥ 1, 0 ≤ c ≤ n, k ≥ 1; received n=${n}, c=${c}, k=${k}`);
  }
  if (k > n) throw new Error(`passAtK: expected k ≤ n (draw at least k samples per puzzle); received n=${n}, k=${k}. Raise eval samples to ≥ k.`);
  if (n - c < k) return 1;
  let prod = 1;
  for (let i = n - c + 1; i <= n; i++) prod *= 1 - k / i;
  return 1 - prod;
}

/** Brute force: the fraction of all k-subsets of the n samples that contain at least one success. */
export function passAtKBruteForce(n: number, c: number, k: number): number {
  let total = 0, hit = 0;
  const choose = (start: number, left: number, anySuccess: boolean): void => {
    if (left === 0) { total++; if (anySuccess) hit++; return; }
    for (let i = start; i <= n - left; i++) choose(i + 1, left - 1, anySuccess || i < c);
  };
  choose(0, k, false);
  return total === 0 ? 0 : hit / total;
}

export interface Interval { mean: number; low: number; high: number; level: number; method: string }

/** Mean pass@k over puzzles with a percentile bootstrap interval over puzzles. */
export function passAtKWithInterval(
  perPuzzle: Array<{ n: number; c: number }>,
  k: number,
  opts: { resamples?: number; level?: number; seed?: number } = {},
): Interval {
  const level = opts.level ?? 0.95;
  const scores = perPuzzle.map(({ n, c }) => passAtK(n, c, k));
  return bootstrapMean(scores, { resamples: opts.resamples ?? 1000, level, seed: opts.seed ?? 0 });
}

export function bootstrapMean(scores: number[], opts: { resamples: number; level: number; seed: number }): Interval {
  if (scores.length === 0) return { mean: Number.NaN, low: Number.NaN, high: Number.NaN, level: opts.level, method: 'bootstrap' };
  const mean = scores.reduce((a, c) => a + c, 0) / scores.length;
  const rng = createRng(opts.seed);
  const means: number[] = [];
  for (let r = 0; r < opts.resamples; r++) {
    let s = 0;
    for (let i = 0; i < scores.length; i++) s += scores[Math.floor(rng() * scores.length)]!;
    means.push(s / scores.length);
  }
  means.sort((a, b) => a - b);
  const alpha = (1 - opts.level) / 2;
  const at = (q: number): number => means[Math.min(means.length - 1, Math.max(0, Math.floor(q * (means.length - 1))))]!;
  return { mean, low: at(alpha), high: at(1 - alpha), level: opts.level, method: 'bootstrap over puzzles' };
}

/** Wilson score interval for a binomial proportion (successes out of trials). */
export function wilsonInterval(successes: number, trials: number, level = 0.95): Interval {
  if (trials === 0) return { mean: Number.NaN, low: Number.NaN, high: Number.NaN, level, method: 'wilson' };
  const z = level === 0.95 ? 1.959963984540054 : level === 0.9 ? 1.6448536269514722 : level === 0.99 ? 2.5758293035489004 : 1.959963984540054;
  const p = successes / trials;
  const denom = 1 + (z * z) / trials;
  const centre = (p + (z * z) / (2 * trials)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / trials + (z * z) / (4 * trials * trials))) / denom;
  return { mean: p, low: Math.max(0, centre - half), high: Math.min(1, centre + half), level, method: 'wilson' };
}
