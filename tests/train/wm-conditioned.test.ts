// The world-model check's action-conditioned prediction (WorldModelCheck.conditioned): the turn is
// forced open with the true observation and "I will try A." for a random action A; the prediction
// the model writes is scored against the state after A. A model that knows the dynamics scores 1,
// one that copies the observation scores 0, on the turns A changes the state.
import { describe, expect, it } from 'vitest';
import { RunConfigSchema } from '../../core/api/run-config.js';
import { mergeConfig, presetConfig } from '../../core/train/presets.js';
import { versusBaseLines, worldModelCheck } from '../../core/train/world-model-check.js';
import { runTemplate, sessionFactory } from '../../core/train/episodes.js';
import type { ModelRuntime } from '../../core/train/runtime.js';

const config = RunConfigSchema.parse(mergeConfig(presetConfig('spa', 'smoke', {}) as Record<string, unknown>,
  { env: { id: 'frozenlake', options: { isSlippery: false } }, stages: { rollout: { batchSize: 4 } } }));
const template = runTemplate(config);

/** A stand-in model: for a forced prediction it writes `predict(observation, action)`; free turns get an ill-formed reply. */
function fakeRuntime(predict: (observation: string, action: string) => string): ModelRuntime {
  const prompts: string[] = [];
  return {
    encodePrompt: (_messages: unknown, prefix: string) => { prompts.push(prefix); return [prompts.length - 1]; },
    generate: async (ids: number[][]) => ids.map(([i]) => {
      const m = /<observation>\n([\s\S]*?)\n<\/observation>\nI will try (\w+)\.\n<prediction>\n$/.exec(prompts[i!]!);
      return { ids: [], logprobs: [], text: m ? `${predict(m[1]!, m[2]!)}\n</prediction>` : 'no idea' };
    }),
  } as unknown as ModelRuntime;
}

describe('world-model check: prediction given the action', () => {
  it('scores an oracle 1 and a copier 0 on the turns the action changes', async () => {
    const limits = config.stages.rollout;
    const sessions = new Map<string, ReturnType<ReturnType<typeof sessionFactory>>>();
    for (let i = 0; i < 12; i++) {
      const s = sessionFactory(config, template, limits)({ seed: 3_000_000 + i, group: i, sample: 0, id: `s${i}` });
      sessions.set(s.stateText(), s);
    }
    const oracle = await worldModelCheck(config, fakeRuntime((obs, a) => sessions.get(obs)!.simulate([a]).text), [template], 12, 3_000_000);
    expect(oracle!.conditioned!.changedTurns).toBeGreaterThan(3);
    expect(oracle!.conditioned!.exactChanged).toBe(1);
    const copier = await worldModelCheck(config, fakeRuntime((obs) => obs), [template], 12, 3_000_000);
    expect(copier!.conditioned!.changedTurns).toBe(oracle!.conditioned!.changedTurns);
    expect(copier!.conditioned!.exactChanged).toBe(0);
    // a deterministic lake: another action never lands on the same state as this one when both move
    expect(oracle!.conditioned!.counterfactualExactChanged).toBeLessThan(0.5);
    expect(oracle!.conditioned!.oracleExactChanged).toBe(1);   // the intended move is the move
  });
  it('on a slippery lake the oracle row (the intended move) is right about as often as the success rate', async () => {
    const slippery = RunConfigSchema.parse(mergeConfig(config as unknown as Record<string, unknown>,
      { env: { id: 'frozenlake', options: { isSlippery: true, successRate: 0.8, randomStartGoal: true } } }));
    const check = await worldModelCheck(slippery, fakeRuntime((obs) => obs), [template], 48, 3_000_000);
    const c = check!.conditioned!;
    expect(c.changedTurns).toBeGreaterThan(20);
    expect(c.oracleExactChanged).toBeGreaterThan(0.6);
    expect(c.oracleExactChanged).toBeLessThan(1);                 // some moves slipped
    expect(c.exactChanged).toBe(0);                               // the copier
  });
});

describe('the eval prints the world model beside the base, with chance and oracle rows', () => {
  it('has a chance and an oracle row under "given the action"', () => {
    const check = (exact: number) => ({
      turns: 64, seedStart: 3_000_000, observationExact: 0.9, keepRate: 0.9, predictionExact: 0.1, predictionExactChanged: 0.1,
      counterfactualExactChanged: 0, changedTurns: 30, conditioned: { exactChanged: exact, counterfactualExactChanged: 0.02, changedTurns: 45, oracleExactChanged: 0.84 },
    });
    const lines = versusBaseLines({ model: check(0.38), base: check(0.02), baseCheckpoint: 'b', template: 'tiny-spa' });
    expect(lines.find((l) => l.startsWith('this model'))).toMatch(/38% \(45\)$/);
    expect(lines.find((l) => l.startsWith('chance'))).toMatch(/–.* 2% \(45\)$/);
    expect(lines.find((l) => l.startsWith('oracle'))).toMatch(/–.* 84% \(45\)$/);
  });
});
