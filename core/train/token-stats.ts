// Per-token statistics stored with RL episodes (TurnRecord.tokenStats): for each response token
// of a turn used in the update, its text, log-probability and entropy under the policy at the
// update, the critic's value (PPO) and the advantage the update used. Bounded: at most
// TOKEN_STATS_MAX tokens per turn (the rest counted in `dropped`), numbers kept to 4 significant
// digits, so a turn adds at most ~20 kB to its episode line (docs/project-format.md).
import { TOKEN_STATS_MAX, type EpisodeRecord, type TokenStats } from '../api/records.js';
import type { TurnSample } from './ppo.js';

const round = (x: number): number => (Number.isFinite(x) ? Number(x.toPrecision(4)) : 0);

export interface SampleStats {
  logprobs: number[][];
  entropies: number[][];
  values: number[][] | null;          // null: no critic values (GRPO)
  advantages: number[][];             // per sample, aligned with its ids (as in the training rows)
}

/** One turn's stats from a sample (its ids are prompt + response; stats are aligned with the ids). */
export function turnTokenStats(sample: TurnSample, i: number, stats: SampleStats, decode: (id: number) => string, max = TOKEN_STATS_MAX): TokenStats {
  const start = sample.responseStart;
  const n = sample.ids.length - start;
  const kept = Math.min(n, max);
  const slice = (xs: number[] | undefined): number[] => (xs ?? []).slice(start, start + kept).map(round);
  return {
    tokens: sample.ids.slice(start, start + kept).map(decode),
    logprobs: slice(stats.logprobs[i]),
    entropies: slice(stats.entropies[i]),
    values: stats.values ? slice(stats.values[i]) : null,
    advantages: slice(stats.advantages[i]),
    dropped: n - kept,
  };
}

/** Attach stats to the turns of the episodes the samples came from (turns of filtered-out groups get none). */
export function attachTokenStats(records: EpisodeRecord[], samples: TurnSample[], stats: SampleStats, decode: (id: number) => string): void {
  samples.forEach((sample, i) => {
    const turn = records[sample.episode]?.turns[sample.turn];
    if (turn) turn.tokenStats = turnTokenStats(sample, i, stats, decode);
  });
}
