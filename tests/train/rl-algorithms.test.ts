// RL algorithms are rows of one table (core/train/rl-algorithms.ts; issue 22): the stage's update and row building go
// through the row named by rl.algorithm; a variant is one file plus one row; Dr. GRPO is reachable from the run config; the
// losses every row registers are known wherever the table is imported (the runtime and the data-parallel worker entry).
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { getLoss } from '../../core/model/losses.js';
import { RL_ALGORITHMS, rlAlgorithm, type RlRowsInput } from '../../core/train/rl-algorithms.js';
import { rlUpdate } from '../../core/train/rl-stage.js';
import { inexpressibleRlOptions } from '../../core/interop/export-bundle.js';
import { RunConfigSchema, StageSectionSchemas } from '../../core/api/run-config.js';
import type { RlSection } from '../../core/api/run-config.js';
import type { TrainRow } from '../../core/train/runtime.js';
import { rlooAlgorithm } from './fixtures/rloo-variant.js';

const section = (algorithm: string): RlSection => ({ ...StageSectionSchemas.rl.parse({}), algorithm } as RlSection);

/** A trainable that records which loss ran, at which learning rate. */
function recorder(name: string, log: string[]) {
  return { trainStep: async (loss: string, _rows: TrainRow[], _p: Record<string, unknown>, lr: number) => { log.push(`${name}:${loss}@${lr}`); return { 'losses/policy': 0, 'losses/value': 0, 'charts/gradNorm': 0 }; } };
}

/** Two groups of two one-turn episodes, one sample each (prompt of 2 tokens, response of 2). */
function input(rewards: number[]): RlRowsInput {
  const samples = rewards.map((_, e) => ({ episode: e, turn: 0, ids: [1, 2, 3, 4], responseStart: 2 }));
  return {
    samples, turnRewards: rewards.map((r) => [r]), episodeRewards: rewards, groups: [0, 0, 1, 1],
    stats: { logprobs: samples.map(() => [0, 0, -1, -1]), values: samples.map(() => [0, 0, 0, 0]), refLogprobs: null, entropies: [] } as never,
    section: section('grpo'),
  };
}

afterEach(() => { delete RL_ALGORITHMS.rloo; });

describe('RL_ALGORITHMS', () => {
  it('adds a GRPO variant as one file plus one row, and the stage dispatch runs its rows and its own registered loss', async () => {
    expect(() => rlAlgorithm('rloo')).toThrow(/unknown RL algorithm "rloo".*ppo, grpo, dr-grpo, reinforce/);
    RL_ALGORITHMS.rloo = rlooAlgorithm;                                     // the one row
    const log: string[] = [];
    await rlUpdate(recorder('policy', log), null, null, [], {}, section('rloo'));
    expect(log).toEqual([`policy:rloo@${section('rloo').lr}`]);
    expect(getLoss('rloo').needs.values).toBe(false);
    const built = rlAlgorithm('rloo').buildRows(input([1, 0, 1, 1]));
    // leave-one-out: episode 0's baseline is episode 1's reward (0), so its advantage is 1 on its response tokens only
    expect(built.rows[0]!.arrays.advantages).toEqual([0, 0, 1, 1]);
    expect(built.rows[2]!.arrays.advantages).toEqual([0, 0, 0, 0]);
  });

  it('reaches Dr. GRPO from the run config: the mean is removed, not divided by the group std', () => {
    const config = RunConfigSchema.parse({ stages: { rl: { algorithm: 'dr-grpo' } } });
    const rl = config.stages.rl;
    expect(rl.algorithm).toBe('dr-grpo');
    const dr = rlAlgorithm(rl.algorithm).buildRows(input([3, 1, 2, 2]));
    const grpo = rlAlgorithm('grpo').buildRows(input([3, 1, 2, 2]));
    expect(dr.rows[0]!.arrays.advantages!.slice(2)).toEqual([1, 1]);            // 3 - mean(3, 1)
    expect(grpo.rows[0]!.arrays.advantages![2]).toBeCloseTo(1 / Math.SQRT2, 4); // divided by the unbiased std √2
    expect(() => RunConfigSchema.parse({ stages: { rl: { algorithm: 'dr_grpo' } } })).toThrow(/algorithm/);
  });

  it('reaches REINFORCE with the batch-mean baseline: an all-lose group gets negative advantages, which GRPO gives 0', () => {
    // group 0 all lost (0, 0), group 1 all won (1, 1): no group has a spread
    const rewards = [0, 0, 1, 1];
    const grpo = rlAlgorithm('grpo').buildRows(input(rewards));
    expect(grpo.rows.every((r) => r.arrays.advantages!.every((a) => a === 0))).toBe(true);
    const config = RunConfigSchema.parse({ stages: { rl: { algorithm: 'reinforce' } } });
    const built = rlAlgorithm(config.stages.rl.algorithm).buildRows(input(rewards));
    // batch mean 0.5, unbiased std sqrt(1/3): (r - 0.5) / 0.577 on the response tokens only
    const a = 0.5 / Math.sqrt(1 / 3);
    built.rows.forEach((r, e) => {
      expect(r.arrays.advantages!.slice(0, 2).map(Math.abs)).toEqual([0, 0]);   // the prompt (0 x a negative advantage is -0)
      for (const x of r.arrays.advantages!.slice(2)) expect(x).toBeCloseTo(rewards[e] ? a : -a, 4);
    });
    expect(rlAlgorithm('reinforce').needsCritic).toBe(false);
    // RAGEN's reinforce_plus_plus whitens token returns, not episode rewards: the export refuses it by name
    expect(inexpressibleRlOptions(config.stages.rl).map(([o]) => o)).toEqual(['rl.algorithm "reinforce"']);
  });

  it('runs PPO as policy loss at lr then value loss on the critic at criticLr, and refuses PPO without a critic', async () => {
    const log: string[] = [];
    const s = section('ppo');
    await rlUpdate(recorder('policy', log), recorder('critic', log), null, [], {}, s);
    expect(log).toEqual([`policy:ppo-policy@${s.lr}`, `critic:value@${s.criticLr}`]);
    await expect(rlUpdate(recorder('policy', []), null, null, [], {}, s)).rejects.toThrow(/PPO needs a critic/);
    expect(rlAlgorithm('ppo').needsCritic).toBe(true);
    expect(rlAlgorithm('grpo').needsCritic).toBe(false);
  });

  it('is the one import of the RL losses in the runtime and the worker-thread entry', () => {
    for (const name of ['ppo', 'ppo-policy', 'value', 'grpo']) expect(getLoss(name).fn).toBeTypeOf('function');
    for (const file of ['runtime.ts', 'dp-worker-entry.ts']) {
      const source = readFileSync(fileURLToPath(new URL(`../../core/train/${file}`, import.meta.url)), 'utf8');
      expect(source, file).toMatch(/import '\.\/rl-algorithms\.js';/);
      expect(source, file).not.toMatch(/import '\.\/losses\.js';/);
    }
  });

  it('moves the reward of a turn without model tokens by one rule: to the previous turn that has tokens', () => {
    // turns 0 and 2 have tokens, turn 1 none (its reward 1 must land on turn 0's last token, not on turn 2's)
    const samples = [{ episode: 0, turn: 0, ids: [1, 2, 3], responseStart: 1 }, { episode: 0, turn: 2, ids: [1, 4, 5], responseStart: 1 }];
    const stats = { logprobs: samples.map(() => [0, 0, 0]), values: samples.map(() => [0, 0, 0]), refLogprobs: null, entropies: [] } as never;
    const s = { ...StageSectionSchemas.rl.parse({}), rewardPlacement: 'per-turn', advantage: 'gae', gamma: 0.5, lambda: 1 } as RlSection;
    const built = rlAlgorithm('ppo').buildRows({ samples, turnRewards: [[0, 1, 0]], episodeRewards: [1], groups: [0], stats, section: s });
    expect(built.rows[0]!.arrays.returns!.slice(1)).toEqual([0.5, 1]);   // turn 0: the reward on its last token
    expect(built.rows[1]!.arrays.returns!.slice(1)).toEqual([0, 0]);     // turn 2: nothing after it
  });
});
