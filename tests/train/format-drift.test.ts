// The RL stage's format-drift guard (core/train/format-drift.ts) on the per-step format-error shares of real runs: the
// recorded spa-cpu-v2 fldet seed-0 cells and the format-drift replays (docs/results/spa-cpu-v2/format-drift, tables there).
import { describe, expect, it } from 'vitest';
import { formatDriftWarning } from '../../core/train/format-drift.js';

const V_VALUE_STEP_ONLY = [0.05, 0.045, 0.013, 0.023, 0.028, 0.049, 0.033, 0.023, 0.09, 0.056, 0.101, 0.103, 0.164, 0.237, 0.479, 0.574, 0.728, 0.867, 0.956, 0.968];
const P_SEPARATE_CRITIC = [0.05, 0.032, 0.007, 0.037, 0.018, 0.043, 0.023, 0.041, 0.034, 0.017, 0.023, 0.019, 0.022, 0.036, 0.019, 0.022, 0.034, 0.036, 0.055, 0, 0.012,
  0.035, 0.023, 0.021, 0.012];
const SPA_S0 = [0.05, 0.037, 0.007, 0.028, 0.022, 0.059, 0.018, 0.053, 0.081, 0.075, 0.073, 0.073, 0.049, 0.086, 0.049, 0.061, 0.134, 0.123, 0.206, 0.2, 0.38, 0.317,
  0.33, 0.455, 0.478, 0.564, 0.618, 0.661, 0.79, 0.851];
const VANILLA_S0 = [0.067, 0.077, 0.041, 0.063, 0.048, 0.061, 0.056, 0.014, 0.017, 0.035, 0, 0.038, 0.007, 0.025, 0.027, 0.014, 0.03, 0.017, 0.067, 0.126, 0.058, 0.074,
  0.048, 0.058, 0.049, 0.051, 0.064, 0.046, 0.052, 0.045];
// state-estimation RL starts from the base at ~30% errors and climbs to 98%
const SE_S0 = [0.291, 0.382, 0.304, 0.189, 0.309, 0.409, 0.48, 0.553, 0.562, 0.497, 0.561, 0.683, 0.659, 0.724, 0.709, 0.777, 0.812, 0.8, 0.878, 0.789, 0.853];

/** The first step (0-based) after which the guard warns, feeding it one step at a time as the RL stage does; -1 = never. */
function firstWarning(rates: number[], mode: 'shared-trunk' | 'separate' | null = 'shared-trunk'): number {
  for (let n = 1; n <= rates.length; n++) if (formatDriftWarning(rates.slice(0, n), mode)) return n - 1;
  return -1;
}

describe('format-drift guard', () => {
  it('warns on the runs that lost the format, early, and never on those that kept it', () => {
    expect(firstWarning(V_VALUE_STEP_ONLY)).toBe(14);  // 16%, 24%, 48% against a start of 4%
    expect(firstWarning(SPA_S0)).toBe(20);             // the recorded SPA cell: 21%, 20%, 38% (its final eval: 81%)
    expect(firstWarning(SE_S0)).toBe(7);               // from ~33% to 51%
    expect(firstWarning(P_SEPARATE_CRITIC)).toBe(-1);
    expect(firstWarning(VANILLA_S0)).toBe(-1);
  });
  it('needs two windows of steps, and says what to try for the critic in use', () => {
    expect(formatDriftWarning([0, 0, 0, 0.9, 0.9], 'shared-trunk')).toBeNull();
    const shared = formatDriftWarning([0, 0, 0, 0.9, 0.9, 0.9], 'shared-trunk')!;
    expect(shared).toMatch(/rose from 0% \(first 3 steps\) to 90% \(last 3\)/);
    expect(shared).toMatch(/criticMode 'separate'/);
    expect(formatDriftWarning([0, 0, 0, 0.9, 0.9, 0.9], 'separate')).toMatch(/policy update itself.*klCoef/);
    expect(formatDriftWarning([0, 0, 0, 0.9, 0.9, 0.9], null)).not.toMatch(/critic/);
    // high but flat (a model that never had the format) is not drift
    expect(formatDriftWarning([0.9, 0.95, 0.9, 0.92, 0.9, 0.93], 'shared-trunk')).toBeNull();
  });
});
