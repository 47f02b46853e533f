// GRPO (Shao et al. 2024): critic-free. Each episode's total reward is normalised within its
// group (the episodes that share a puzzle seed), and that advantage is given to every token the
// model wrote in the episode. The loss is the registered 'grpo' loss (clipped surrogate, entropy
// bonus, optional KL to the frozen reference).
import { grpoAdvantages } from './groups.js';
import { responseMask, type samplingStats, type TurnSample } from './ppo.js';
import type { TrainRow } from './runtime.js';

export function buildGrpoRows(
  samples: TurnSample[],
  episodeRewards: number[],
  episodeGroups: number[],
  stats: Awaited<ReturnType<typeof samplingStats>>,
): { rows: TrainRow[]; advantageMean: number; advantageStd: number } {
  const advantages = grpoAdvantages(episodeRewards, episodeGroups);
  const rows = samples.map((s, i) => {
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
  });
  const used = [...new Set(samples.map((s) => s.episode))].map((e) => advantages[e]!);
  const advantageMean = used.length ? used.reduce((a, c) => a + c, 0) / used.length : 0;
  const advantageStd = used.length ? Math.sqrt(used.reduce((a, c) => a + (c - advantageMean) ** 2, 0) / used.length) : 0;
  return { rows, advantageMean, advantageStd };
}
