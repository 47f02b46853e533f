// A guard for RL runs: warn once when the share of turns with a format error climbs well above where the stage started.
// Measured cause on the tiny model (docs/results/spa-cpu-v2/format-drift): with model.criticMode 'shared-trunk' the value
// step's own AdamW moves every trunk weight at criticLr toward returns it cannot predict, and the world-model reply wore away
// (5% -> 97% format errors in 19 steps with the policy frozen; a separate critic kept it at 0-5.5%). The warning says so, so
// a user sees it while the run is going rather than in its final eval.

export interface FormatDriftRule {
  window: number;   // steps averaged at the start and at the end (3)
  minRate: number;  // the recent share must reach this (0.2) ...
  minRise: number;  // ... and exceed the starting share by this much (0.15)
}

export const FORMAT_DRIFT_RULE: FormatDriftRule = { window: 3, minRate: 0.2, minRise: 0.15 };

/**
 * rates[i] = the share of turns with a format error in RL step i's rollouts (since the stage started or resumed).
 * Returns the warning, or null while the share has not drifted (or there are fewer than 2 × window steps).
 */
export function formatDriftWarning(
  rates: readonly number[],
  criticMode: 'shared-trunk' | 'separate' | null,
  rule: FormatDriftRule = FORMAT_DRIFT_RULE,
): string | null {
  if (rates.length < 2 * rule.window) return null;
  const mean = (xs: readonly number[]) => xs.reduce((a, c) => a + c, 0) / xs.length;
  const start = mean(rates.slice(0, rule.window));
  const recent = mean(rates.slice(-rule.window));
  if (!(recent >= rule.minRate && recent - start >= rule.minRise)) return null;
  const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
  const head = `rl: turns with a format error rose from ${pct(start)} (first ${rule.window} steps) to ${pct(recent)} (last ${rule.window})`;
  const why = criticMode === 'shared-trunk'
    ? "; with model.criticMode 'shared-trunk' the value step trains the policy's trunk at criticLr, which wore the world-model " +
      "format away in docs/results/spa-cpu-v2/format-drift: try model.criticMode 'separate' (or a lower stages.rl.criticLr)"
    : criticMode === 'separate'
      ? '; the critic is separate, so the policy update itself is moving the format: try a lower stages.rl.lr or stages.rl.klCoef > 0'
      : '; try a lower stages.rl.lr or stages.rl.klCoef > 0';
  return head + why;
}
