// Per-step group diagnostics of the RL stage (issue 23 item 4, docs/results/rl-learns): the share of puzzle groups whose
// episodes all got the same reward (no group-relative signal) and the mean within-group reward std, charted by every
// algorithm row over all groups played (before the spread filter).
import { describe, expect, it } from 'vitest';
import { groupRewardCharts } from '../../core/train/groups.js';
import { rlAlgorithm, type RlRowsInput } from '../../core/train/rl-algorithms.js';
import { StageSectionSchemas, type RlSection } from '../../core/api/run-config.js';

describe('groupRewardCharts', () => {
  it('counts the groups with one reward and averages the within-group population std (hand-worked)', () => {
    // group 0: [1, 1, 1] (one reward), group 1: [0, 1] (std 0.5), group 2: [0, 0] (one reward), group 3: [2, 0, 1] (std √(2/3))
    const charts = groupRewardCharts([1, 1, 1, 0, 1, 0, 0, 2, 0, 1], [0, 0, 0, 1, 1, 2, 2, 3, 3, 3]);
    expect(charts['charts/uniformRewardGroups']).toBe(0.5);
    expect(charts['charts/groupRewardStd']).toBeCloseTo((0 + 0.5 + 0 + Math.sqrt(2 / 3)) / 4, 12);
  });

  it('is 0 / 0 for no episodes and refuses mismatched lengths naming both', () => {
    expect(groupRewardCharts([], [])).toEqual({ 'charts/uniformRewardGroups': 0, 'charts/groupRewardStd': 0 });
    expect(() => groupRewardCharts([1, 0], [0])).toThrow(/2 rewards and 1 group ids/);
  });

  it('is charted by every algorithm row over all groups, including those the filter dropped (no sample of group 1 is kept)', () => {
    const rewards = [1, 0, 1, 1];
    const samples = [0, 1].map((e) => ({ episode: e, turn: 0, ids: [1, 2, 3, 4], responseStart: 2 }));   // group 0's episodes only
    for (const algorithm of ['ppo', 'grpo', 'dr-grpo', 'reinforce']) {
      const input: RlRowsInput = {
        samples, turnRewards: rewards.map((r) => [r]), episodeRewards: rewards, groups: [0, 0, 1, 1],
        stats: { logprobs: samples.map(() => [0, 0, -1, -1]), values: samples.map(() => [0, 0, 0, 0]), refLogprobs: null, entropies: [] } as never,
        section: { ...StageSectionSchemas.rl.parse({}), algorithm } as RlSection,
      };
      const { charts } = rlAlgorithm(algorithm).buildRows(input);
      expect(charts['charts/uniformRewardGroups'], algorithm).toBe(0.5);
      expect(charts['charts/groupRewardStd'], algorithm).toBeCloseTo(0.25, 12);
    }
  });
});
