// GRPO (Shao et al. 2024): critic-free. Each episode's total reward is normalised within its
// group (the episodes that share a puzzle seed), and that advantage is given to every token the
// model wrote in the episode. The loss is the registered 'grpo' loss (clipped surrogate, entropy
// bonus, optional KL to the frozen reference). Dr. GRPO (Liu et al. 2025) removes only the group
// mean (no division by the group's std). REINFORCE with the batch-mean baseline (Williams 1992; normalised over the batch as
// REINFORCE++, Hu 2025) takes the mean and std over all the step's episodes instead of each group's. All are rows of
// RL_ALGORITHMS (rl-algorithms.ts).
import { groupRewardCharts, grpoAdvantages } from './groups.js';
import { aggregatedBatch, responseMask, tagRowEpisodes, type samplingStats, type TurnSample } from './ppo.js';
import type { TrainRow } from './runtime.js';
import type { RlAlgorithm } from './rl-algorithms.js';

export function buildGrpoRows(
  samples: TurnSample[],
  episodeRewards: number[],
  episodeGroups: number[],
  stats: Awaited<ReturnType<typeof samplingStats>>,
  opts: { normalizeStd?: boolean } = {},
): { rows: TrainRow[]; advantageMean: number; advantageStd: number } {
  const advantages = grpoAdvantages(episodeRewards, episodeGroups, opts);
  const rows = tagRowEpisodes(samples.map((s, i) => {
    const mask = responseMask(s);
    return {
      ids: s.ids,
      arrays: {
        lossMask: mask,
        oldLogprobs: stats.logprobs[i]!,
        advantages: mask.map((m) => m * advantages[s.episode]!),
        ...(stats.refLogprobs ? { refLogprobs: stats.refLogprobs[i]! } : {}),
      },
    };
  }), samples);
  const used = [...new Set(samples.map((s) => s.episode))].map((e) => advantages[e]!);
  const advantageMean = used.length ? used.reduce((a, c) => a + c, 0) / used.length : 0;
  const advantageStd = used.length ? Math.sqrt(used.reduce((a, c) => a + (c - advantageMean) ** 2, 0) / used.length) : 0;
  return { rows, advantageMean, advantageStd };
}

/**
 * A critic-free row: group-relative advantages, the 'grpo' loss on the policy only. `baseline` 'batch': every episode of the
 * step in one group (REINFORCE with the batch-mean baseline), so an all-lose puzzle group still gets negative advantages.
 */
function groupRelative(id: string, summary: string, normalizeStd: boolean, baseline: 'group' | 'batch' = 'group'): RlAlgorithm {
  return {
    id,
    summary,
    needsCritic: false,
    buildRows: ({ samples, episodeRewards, groups, stats }) => {
      const built = buildGrpoRows(samples, episodeRewards, baseline === 'batch' ? groups.map(() => 0) : groups, stats, { normalizeStd });
      return {
        rows: built.rows,
        charts: { 'charts/advantageMean': built.advantageMean, 'charts/advantageStd': built.advantageStd, ...groupRewardCharts(episodeRewards, groups) },
      };
    },
    update: ({ policy }, batch, lossParams, section) =>
      policy.trainStep('grpo', aggregatedBatch(batch, section), lossParams, section.lr, section.gradClip),
  };
}

export const grpoAlgorithm = groupRelative('grpo', 'GRPO: critic-free, episode reward normalised within its puzzle group (mean and std)', true);
export const drGrpoAlgorithm = groupRelative('dr-grpo', 'Dr. GRPO: GRPO without the division by the group std (mean removed only)', false);
export const reinforceAlgorithm = groupRelative('reinforce',
  'REINFORCE with the batch-mean baseline: episode reward minus the mean over all the step\'s episodes, over their std', true, 'batch');
