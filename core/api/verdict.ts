// The result of a run or a study cell stated in words, by one rule shared by the Studies table
// (core/eval/study.ts) and the Run view's Final evaluation (renderer/src/components/FinalEvalPanel.tsx):
//   - Pass@1 against the chance row on the same puzzles: "below chance" when the whole 95% interval
//     lies under chance, "above chance" when it lies wholly over it, else "indistinguishable from chance";
//     under SMALL_N_PUZZLES puzzles the interval is first widened to Wilson's over the puzzles (widenForSmallN);
//   - the world model against the run's base: "learned" when the Wilson 95% interval of the model's
//     prediction-given-the-action rate over the n state-changing turns lies wholly above the base's rate
//     on the same turns, else "not learned".
// Pure and import-free: it runs in the engine and in the renderer (which imports nothing else from
// core at run time; see eslint.config.js).

/** A mean with its interval, as fractions in [0, 1]; low/high null when no interval is known. */
export interface VerdictInterval { mean: number; low: number | null; high: number | null }

export type ChanceVerdict = 'below chance' | 'indistinguishable from chance' | 'above chance';
export type WorldModelVerdict = 'learned' | 'not learned';

/**
 * Pass@1 (or any success-type rate) against a reference value (the chance row's Pass@1 on the same
 * puzzles). With no interval (low/high null) nothing can be told apart: "indistinguishable from chance".
 * Throws on a non-finite chance or mean (a caller bug: no verdict without both numbers).
 */
export function chanceVerdict(passAt1: VerdictInterval, chance: number): ChanceVerdict {
  if (!Number.isFinite(chance) || !Number.isFinite(passAt1.mean)) {
    throw new Error(`chanceVerdict: expected finite Pass@1 and chance rates; received mean=${passAt1.mean}, chance=${chance}`);
  }
  if (passAt1.low === null || passAt1.high === null || !Number.isFinite(passAt1.low) || !Number.isFinite(passAt1.high)) return 'indistinguishable from chance';
  if (passAt1.high < chance) return 'below chance';
  if (passAt1.low > chance) return 'above chance';
  return 'indistinguishable from chance';
}

/**
 * Wilson score 95% interval of a proportion `rate` observed over `n` trials. The same formula as
 * core/train/pass-at-k.ts wilsonInterval (a test checks they agree); repeated here because this
 * module imports nothing. n must be a positive integer; rate may be a mean of per-puzzle Pass@k.
 */
export function wilson95(rate: number, n: number): { low: number; high: number } {
  if (!Number.isInteger(n) || n < 1 || !Number.isFinite(rate) || rate < 0 || rate > 1) {
    throw new Error(`wilson95: expected a rate in [0, 1] over an integer n ≥ 1; received rate=${rate}, n=${n}`);
  }
  const z = 1.959963984540054;
  const p = rate;
  const denom = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denom;
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/** Fewer puzzles than this: a percentile bootstrap over them says little, so Pass@k intervals are widened to Wilson's. */
export const SMALL_N_PUZZLES = 20;

/**
 * A Pass@k interval over `puzzles` puzzles as the verdict reads it: under SMALL_N_PUZZLES puzzles the
 * bootstrap's bounds are widened to the Wilson interval over the puzzles (2 puzzles that all failed
 * give [0, 66%], not [0, 0]); the Studies table's cells (core/eval/study.ts clusteredPassAtK) and the
 * Run view's verdict both go through here.
 */
export function widenForSmallN(
  iv: { mean: number; low: number; high: number }, puzzles: number,
): { mean: number; low: number; high: number; widened: boolean } {
  if (puzzles >= SMALL_N_PUZZLES || !Number.isFinite(iv.mean) || !Number.isInteger(puzzles) || puzzles < 1) return { ...iv, widened: false };
  const w = wilson95(Math.min(1, Math.max(0, iv.mean)), puzzles);
  return { mean: iv.mean, low: Math.min(iv.low, w.low), high: Math.max(iv.high, w.high), widened: true };
}

/**
 * The world model against its base: `model` and `base` are the shares of the n state-changing turns
 * whose prediction given the action was exactly right (eval/wmCheck/conditionedExact and
 * baseConditionedExact; final.json worldModelVersusBase.*.conditioned.exactChanged over changedTurns).
 * "learned" when the model's Wilson 95% interval lies wholly above the base's rate.
 */
export function worldModelVerdict(model: number, base: number, n: number): { verdict: WorldModelVerdict; low: number; high: number } {
  if (!Number.isFinite(base)) throw new Error(`worldModelVerdict: expected a finite base rate; received ${base}`);
  const { low, high } = wilson95(model, n);
  return { verdict: low > base ? 'learned' : 'not learned', low, high };
}
