// RL that learns, through the product's own run path (issue 34 item 3, the CI check): vanilla RL (GRPO) from the
// shipped base (resources/bases/frozenlake-compact, the main job's model and compact plain format) on a one-step
// FrozenLake bandit: one move, no holes, the goal next to the start (chance 25% for a well-formed reply). The success
// rate of the last two RL steps' rollouts must rise over the first step's and the final evaluation must beat chance.
// The tiny size is one context (an explicit map, the goal above the start): the machinery has to turn the group-relative
// advantage of one token of the reply into the rewarded move. The contextual version (a random start, the goal at
// goalDistance 1: issue 34's curve (a)) is bench/rl-curves.sh; from this base it does not learn within a CI budget
// (bench/results/rl-curves/README.md). Functional only: no timing.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunConfigSchema, type RunConfig, type RunConfigInput } from '../../core/api/run-config.js';
import { mergeConfig, presetConfig } from '../../core/train/presets.js';
import { executeRun } from '../../core/engine/runner.js';
import { loadStage, planStages } from '../../core/engine/stages.js';
import { readJsonl, tempProject } from './helpers.js';

const BASE = fileURLToPath(new URL('../../resources/bases/frozenlake-compact', import.meta.url));

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
    const overrides = banditOverrides();
    const config: RunConfig = RunConfigSchema.parse(mergeConfig(presetConfig('vanilla-rl', 'quick', overrides) as Record<string, unknown>,
      overrides as Record<string, unknown>));
    const project = tempProject('spa-bandit-');
    const runDir = join(project, 'runs', 'bandit');
    const outcome = await executeRun({
      runId: 'bandit', runDir, config, stages: planStages(config), attempt: 1, signal: new AbortController().signal, loadStage, send: () => undefined,
    });
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
