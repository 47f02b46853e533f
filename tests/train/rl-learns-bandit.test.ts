// RL that learns, through the product's own run path (issue 34 item 3, the CI check): vanilla RL (GRPO) from the
// shipped base (resources/bases/frozenlake-compact, the main job's model and compact plain format) on a one-step
// FrozenLake bandit: one move, no holes, the goal next to the start (chance 25% for a well-formed reply). The success
// rate of the last two RL steps' rollouts must rise over the first step's and the final evaluation must beat chance.
// The tiny size is one context (an explicit map, the goal above the start): the machinery has to turn the group-relative
// advantage of one token of the reply into the rewarded move. The contextual version (a random start, the goal at
// goalDistance 1: issue 34's curve (a)) is bench/rl-curves.sh; from this base reward-only GRPO does not learn it within
// 2,048 episodes (the move's marginal collapses), nor does the science review's reference (REINFORCE on the move token only)
// (bench/results/rl-curves/README.md). On the contextual bandit this file checks what the machinery must do on every batch
// (second describe): the update trains the policy that played (sampling and training log-probabilities agree, ratio 1), the
// move token carries the group-relative sign of its reward, and one update raises the rewarded move's log-probability at the
// batch's states. The third describe is curve (a) at a tiny size with rl.selfImitation (the policy replays its distinct won
// turns; core/train/self-imitation.ts): the tracked Pass@1 on the same held-out puzzles must rise well over the start's.
// Functional only: no timing.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RunConfigSchema, type RunConfig, type RunConfigInput } from '../../core/api/run-config.js';
import { mergeConfig, presetConfig } from '../../core/train/presets.js';
import { executeRun } from '../../core/engine/runner.js';
import { loadStage, planStages } from '../../core/engine/stages.js';
import { loadRuntime, useBackend, type ModelRuntime } from '../../core/train/runtime.js';
import { groupSpecs, playEpisodes } from '../../core/train/rollout.js';
import { rolloutDeps, runTemplate, sessionFactory } from '../../core/train/episodes.js';
import { samplingStats, turnSamples } from '../../core/train/ppo.js';
import { rlAlgorithm } from '../../core/train/rl-algorithms.js';
import { ensureRlOptimizer, passAtKFile, rlUpdate } from '../../core/train/rl-stage.js';
import { readJsonl, tempProject } from './helpers.js';

const BASE = fileURLToPath(new URL('../../resources/bases/frozenlake-compact', import.meta.url));

/** vanilla-rl at the quick size with `overrides` on top (the main job's compact plain format from the shipped base). */
function quickConfig(overrides: RunConfigInput): RunConfig {
  return RunConfigSchema.parse(mergeConfig(presetConfig('vanilla-rl', 'quick', overrides) as Record<string, unknown>, overrides as Record<string, unknown>));
}

/** Runs `config` through the product's run path (executeRun) in a fresh project; returns the outcome and the run folder. */
async function runThroughProduct(config: RunConfig, runId: string) {
  const runDir = join(tempProject(`spa-${runId}-`), 'runs', runId);
  const outcome = await executeRun({
    runId, runDir, config, stages: planStages(config), attempt: 1, signal: new AbortController().signal, loadStage, send: () => undefined,
  });
  return { outcome, runDir };
}

/** The one-context bandit at a tiny size (6 RL steps of 48 episodes), on wasm (the install without torch). */
function banditOverrides(): RunConfigInput {
  return {
    backend: 'wasm',
    env: { id: 'frozenlake', options: { map: ['FFFF', 'FGFF', 'FSFF', 'FFFF'], isSlippery: false, maxSteps: 1 } },
    model: { source: 'checkpoint', path: BASE },
    stages: {
      plan: { order: ['rl', 'eval'] },
      rollout: { maxTurns: 1 },
      rl: {
        algorithm: 'grpo', steps: 6, groups: 12, groupSize: 4, updatesPerStep: 1, lr: 3e-4, passAtKEvery: 0,
        lossAggregation: 'seq-mean-token-mean',
      },
      eval: { puzzles: 4, samples: 8, k: [1], perplexityRows: 0, worldModelTurns: 0 },
    },
  } as RunConfigInput;
}

describe('RL learns a one-step bandit from the shipped base (product run path)', () => {
  it('GRPO raises the success of the rewarded move over the start', async () => {
    const { outcome, runDir } = await runThroughProduct(quickConfig(banditOverrides()), 'bandit');
    expect(outcome.status).toBe('completed');
    const success = (step: number) => {
      const episodes = readJsonl(join(runDir, 'rollouts', `rl-${String(step).padStart(6, '0')}.jsonl`)) as Array<{ success: boolean }>;
      expect(episodes.length).toBe(48);
      return episodes.filter((e) => e.success).length / episodes.length;
    };
    const start = success(0);
    const end = (success(4) + success(5)) / 2;
    expect(start).toBeLessThan(0.5);                 // the base plays the move about at chance
    expect(end).toBeGreaterThan(start + 0.2);        // and RL makes it the likely one
    const evalFile = readJsonl(join(runDir, 'rollouts', 'eval.jsonl')) as Array<{ success: boolean }>;
    expect(evalFile.filter((e) => e.success).length / evalFile.length).toBeGreaterThan(0.45);
  }, 300_000);
});

const MOVES = ['Left', 'Down', 'Right', 'Up'] as const;
/** The move token's index in the reply "I will try <Move>." (character tokenizer; the prompt ends with <think>). */
const MOVE_INDEX = 'I will try '.length;

/** Issue 34's curve (a) at a tiny size: no holes, a random start, the goal next to it, one move (chance 25%). */
function contextualBandit(): RunConfig {
  const overrides = {
    backend: 'wasm',
    env: { id: 'frozenlake', options: { isSlippery: false, p: 1, goalDistance: 1, maxSteps: 1 } },
    model: { source: 'checkpoint', path: BASE },
    stages: {
      rollout: { maxTurns: 1 },
      rl: { algorithm: 'grpo', groups: 8, groupSize: 4, updatesPerStep: 1, lr: 1e-4, lossAggregation: 'seq-mean-token-mean' },
    },
  } as RunConfigInput;
  return quickConfig(overrides);
}

/** log p(move | prompt) of each of the 4 moves at the move token, teacher-forced after "I will try ". */
async function moveLogprobs(runtime: ModelRuntime, prompts: number[][]): Promise<number[][]> {
  const lead = runtime.tokenizer.encode('I will try ');
  const firsts = MOVES.map((m) => runtime.tokenizer.encode(m)[0]!);
  const stats = await runtime.tokenStats(prompts.flatMap((p) => firsts.map((f) => ({ ids: [...p, ...lead, f] }))), false);
  return prompts.map((_, i) => firsts.map((_, a) => stats[i * 4 + a]!.logprobs.at(-1)!));
}

describe('RL machinery on the contextual bandit (issue 34 curve (a), tiny size)', () => {
  it('trains the policy that played, credits the move token with its reward\'s sign, and one update raises the rewarded move', async () => {
    const config = contextualBandit();
    const section = config.stages.rl;
    const limits = config.stages.rollout;
    await useBackend(config);
    const policy = await loadRuntime(BASE, { valueHead: false });
    try {
      ensureRlOptimizer(policy, section.adamBetas);
      const specs = groupSpecs('rl-000000', config.seeds.rlStart, 0, section.groups, section.groupSize);
      const results = await playEpisodes(specs, limits, 11, rolloutDeps(config, policy, limits, { runId: 'bandit', stage: 'rl', step: 0 }));
      expect(results).toHaveLength(32);
      // the puzzles differ (a contextual bandit): several distinct boards, and each one's rewarded move from the env itself
      const boards = new Set(results.map((r) => r.record.initialState.text));
      expect(boards.size).toBeGreaterThanOrEqual(4);
      const session = sessionFactory(config, runTemplate(config), limits);
      const rewarded = results.map((r) => MOVES.findIndex((m) => session(r.spec).simulate([m]).rewards.some((x) => x > 0)));
      expect(rewarded.every((a) => a >= 0)).toBe(true);
      expect(new Set(rewarded).size).toBeGreaterThanOrEqual(2);

      const samples = turnSamples(results, () => true);
      const stats = await samplingStats(policy, samples, { batchSize: 8 });
      // 1. the update's old log-probabilities are the sampling ones (same weights, same context, temperature 1)
      let worst = 0;
      samples.forEach((s, i) => results[s.episode]!.tokens[s.turn]!.logprobs.forEach((g, k) => {
        worst = Math.max(worst, Math.abs(g - stats.logprobs[i]![s.responseStart + k]!));
      }));
      expect(worst).toBeLessThan(1e-3);

      // 2. the move token carries the episode's group-relative advantage: positive for a win in a mixed group, negative for a loss
      const rewards = results.map((r) => r.record.totalReward);
      const groups = results.map((r) => r.spec.group);
      const built = rlAlgorithm('grpo').buildRows({ samples, turnRewards: rewards.map((x) => [x]), episodeRewards: rewards, groups, stats, section });
      let mixed = 0;
      samples.forEach((s, i) => {
        const mates = rewards.filter((_, e) => groups[e] === groups[s.episode]);
        const mean = mates.reduce((a, c) => a + c, 0) / mates.length;
        const a = built.rows[i]!.arrays.advantages![s.responseStart + MOVE_INDEX]!;
        expect(built.rows[i]!.arrays.lossMask![s.responseStart + MOVE_INDEX]).toBe(1);
        expect(Math.sign(a)).toBe(Math.sign(rewards[s.episode]! - mean));
        if (rewards[s.episode] !== mean) mixed++;
      });
      expect(mixed).toBeGreaterThan(0);   // some groups have both a win and a loss: there is something to learn

      // 3. one update: ratio 1 on the first minibatch, and the rewarded move's log-probability at the batch's states rises
      const prompts = results.map((r) => r.tokens[0]!.promptIds);
      const before = await moveLogprobs(policy, prompts);
      const update = await rlUpdate(policy, null, null, built.rows, { clipLow: 0.2, clipHigh: 0.28, dualClip: 3, entropyCoef: 0, klCoef: 0 }, section);
      expect(update['losses/approxKl']).toBeLessThan(1e-6);
      const after = await moveLogprobs(policy, prompts);
      const gain = prompts.reduce((x, _, i) => x + after[i]![rewarded[i]!]! - before[i]![rewarded[i]!]!, 0) / prompts.length;
      expect(gain).toBeGreaterThan(0);
    } finally {
      policy.dispose();
    }
  }, 300_000);
});

describe('curve (a) at a tiny size with self-imitation (product run path; issue 34 item 3, the CI check)', () => {
  it('the tracked Pass@1 on the same held-out puzzles rises from about chance to well above it in 512 episodes', async () => {
    const overrides = {
      backend: 'wasm', workers: 0,
      env: { id: 'frozenlake', options: { isSlippery: false, p: 1, goalDistance: 1, maxSteps: 1 } },
      model: { source: 'checkpoint', path: BASE },
      seeds: { base: 0, rlStart: 2_000_000 },
      stages: {
        plan: { order: ['rl'] },
        rollout: { maxTurns: 1 },
        rl: {
          algorithm: 'grpo', steps: 8, groups: 16, groupSize: 4, updatesPerStep: 1, lr: 1e-4, lossAggregation: 'seq-mean-token-mean',
          passAtKEvery: 8, passAtKPuzzles: 32, selfImitation: { steps: 8, batch: 16, lr: 2e-3 },
        },
        eval: { samples: 4, k: [1] },
      },
    } as RunConfigInput;
    const { outcome, runDir } = await runThroughProduct(quickConfig(overrides), 'curve-a');
    expect(outcome.status).toBe('completed');
    // the tracked Pass@k files: the same 32 held-out puzzles x 4 samples at step 0 and step 8
    const pass1 = (step: number) => {
      const file = JSON.parse(readFileSync(join(runDir, passAtKFile(step)), 'utf8')) as { passAtK: Record<string, { mean: number }>; puzzles: number };
      expect(file.puzzles).toBe(32);
      return file.passAtK['1']!.mean;
    };
    const start = pass1(0), end = pass1(8);
    expect(start).toBeLessThan(0.45);          // the shipped base is state-blind: about chance (0.25)
    expect(end).toBeGreaterThan(start + 0.2);  // here 0.28 -> 0.65; without self-imitation 0.28 -> 0.24 (checked)
    // the buffer grew from the policy's own wins
    const points = readJsonl(join(runDir, 'metrics.jsonl')) as Array<{ stage: string; values: Record<string, number> }>;
    const buffers = points.filter((p) => p.stage === 'rl' && 'sil/buffer' in p.values).map((p) => p.values['sil/buffer']!);
    expect(buffers).toHaveLength(8);
    expect(buffers.at(-1)!).toBeGreaterThan(buffers[0]!);
  }, 600_000);
});
