// Fidelity fixes of the RL stage (docs/results audit B1, B4, B5, B6, B10): FrozenLake as RAGEN
// plays it in preset runs, the format rule wired from the rl section into every session, the
// critic's own learning rate and clip in shared-trunk mode, entity-F1 world-model reward, one
// update per step, AdamW betas as the release.
import { describe, expect, it } from 'vitest';
import { RunConfigSchema, StageSectionSchemas, type RunConfig } from '../../core/api/run-config.js';
import type { TurnRecord } from '../../core/api/records.js';
import { resolveRunConfig } from '../../core/engine/config.js';
import { presetConfig } from '../../core/train/presets.js';
import { sessionFactory } from '../../core/train/episodes.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import { createRuntime, type TrainRow } from '../../core/train/runtime.js';
import type { TfjsRuntime } from '../../core/model/runtime.js';
import { ensureRlOptimizer, rlUpdate, shapedTurnReward, sharedTrunkValueView, disposeValueView, updateBatches, type Trainable } from '../../core/train/rl-stage.js';

const rl = (over: Record<string, unknown> = {}) => StageSectionSchemas.rl.parse(over);

describe('FrozenLake in preset runs (audit B1)', () => {
  it('a study cell (env.id set after the preset) plays random start/goal with success 0.8', () => {
    const r = resolveRunConfig({ preset: 'spa', size: 'quick', set: { 'env.id': 'frozenlake', 'seeds.base': 0 } });
    expect(r.ok).toBe(true);
    expect(r.config!.env.options).toEqual({ randomStartGoal: true, successRate: 0.8 });
  });
  it('options the run sets win (deterministic mechanism check, Gymnasium 1/3 robustness row)', () => {
    const det = resolveRunConfig({ preset: 'vanilla-rl', size: 'quick', set: { 'env.id': 'frozenlake', 'env.options.isSlippery': false } });
    expect(det.config!.env.options).toEqual({ randomStartGoal: true, successRate: 0.8, isSlippery: false });
    const third = resolveRunConfig({ preset: 'vanilla-rl', size: 'quick', set: { 'env.id': 'frozenlake', 'env.options.successRate': 1 / 3 } });
    expect(third.config!.env.options.successRate).toBeCloseTo(1 / 3);
    expect(presetConfig('spa', 'quick', { env: { id: 'frozenlake' } }).env).toEqual({ id: 'frozenlake', options: { randomStartGoal: true, successRate: 0.8 } });
  });
  it('other envs keep their own defaults', () => {
    expect(resolveRunConfig({ preset: 'spa', size: 'quick', set: { 'env.id': 'sokoban' } }).config!.env.options).toEqual({});
  });
});

describe('format rule from the rl section (audit B5)', () => {
  const config = (rlSection: Record<string, unknown>): RunConfig => RunConfigSchema.parse({ env: { id: 'sokoban' }, stages: { rl: rlSection } });
  const malformed = '<think>no state tags</think><answer>Right</answer>';
  it('by default a reply that fails the format check executes no action', () => {
    const s = sessionFactory(config({}), builtinTemplate('tiny-spa'), StageSectionSchemas.rollout.parse({}))({ seed: 1, group: 0, sample: 0, id: 'a' });
    const t = s.applyResponse(malformed);
    expect(t.flags.formatError).toBe(true);
    expect(t.actionsExecuted).toEqual([]);
  });
  it('rl.executeOnFormatError runs them; rl.formatCheck plain accepts think/answer', () => {
    const run = sessionFactory(config({ executeOnFormatError: true }), builtinTemplate('tiny-spa'), StageSectionSchemas.rollout.parse({}))({ seed: 1, group: 0, sample: 0, id: 'a' });
    expect(run.applyResponse(malformed).actionsExecuted).toEqual(['Right']);
    const plain = sessionFactory(config({ formatCheck: 'plain' }), builtinTemplate('tiny-spa'), StageSectionSchemas.rollout.parse({}))({ seed: 1, group: 0, sample: 0, id: 'a' });
    const t = plain.applyResponse(malformed);
    expect(t.flags.formatError).toBe(false);
    expect(t.actionsExecuted).toEqual(['Right']);
  });
  it('the plain-format state-estimation preset exists (the release baseline)', () => {
    const c = presetConfig('state-estimation-rl-plain', 'quick');
    expect(c.template).toEqual({ preset: 'tiny-compact', responseFormat: 'plain' });   // quick's compact format (issue 23)
    expect(presetConfig('state-estimation-rl-plain', 'paper').template).toEqual({ preset: 'spa', responseFormat: 'plain' });
  });
});

describe('online world-model reward scores entities (audit B6)', () => {
  const turn = (score: { cellAccuracy: number; meanF1: number; exact: boolean }): TurnRecord => ({
    reward: 0, flags: { formatError: false, invalidAction: false, actionIsEffective: true },
    wm: { observation: { parsed: true, wrongCells: [], entityF1: {}, ...score }, prediction: { parsed: true, wrongCells: [], entityF1: {}, ...score } },
  }) as unknown as TurnRecord;
  // an unrelated grid: most cells agree (floor tiles), the entities do not
  const decoy = turn({ cellAccuracy: 0.72, meanF1: 0.1, exact: false });
  it('entity F1 by default: a decoy grid earns little', () => {
    expect(shapedTurnReward(decoy, rl({ worldModelReward: 1 })).wm).toBeCloseTo(0.1);
    expect(shapedTurnReward(decoy, rl({ worldModelReward: 1, worldModelScore: 'exact' })).wm).toBe(0);
    expect(shapedTurnReward(decoy, rl({ worldModelReward: 1, worldModelScore: 'cell-accuracy' })).wm).toBeCloseTo(0.72);
  });
  it('online-wm-rl uses a format reward of 0.5 as VAGEN', () => {
    const c = presetConfig('online-wm-rl', 'quick') as { stages: { rl: Record<string, unknown> } };
    expect(c.stages.rl).toMatchObject({ worldModelScore: 'entity-f1', formatBonus: 0.5 });
  });
});

describe('updates and the critic (audit B4, B10)', () => {
  const rows = (n: number): TrainRow[] => Array.from({ length: n }, (_, i) => ({ ids: [i], arrays: {} }));
  it('updatesPerStep 1 is one update over the whole kept batch; 0 = minibatches', () => {
    const one = updateBatches(10, { updatesPerStep: 1, miniBatchSize: 4, ppoEpochs: 1 }, 0);
    expect(one).toHaveLength(1);
    expect([...one[0]!].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(updateBatches(10, { updatesPerStep: 0, miniBatchSize: 4, ppoEpochs: 2 }, 0).map((b) => b.length)).toEqual([4, 4, 2, 4, 4, 2]);
  });
  it('rl.updateRows episode: a minibatch counts episodes, an episode\'s rows (a broken chain) stay in one minibatch', () => {
    const section = { updatesPerStep: 0, miniBatchSize: 2, ppoEpochs: 2 };
    // one row per episode: the same batches as plain rows
    expect(updateBatches(7, section, 3, [0, 1, 2, 3, 4, 5, 6])).toEqual(updateBatches(7, section, 3));
    // 5 episodes, episode 1 in 3 rows and episode 3 in 2: 3 minibatches a pass, whole episodes, every row once a pass
    const groups = [0, 1, 1, 1, 2, 3, 3, 4];
    const plan = updateBatches(groups.length, section, 3, groups);
    expect(plan).toHaveLength(6);
    for (const pass of [plan.slice(0, 3), plan.slice(3)]) {
      expect(pass.flat().sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(pass.map((b) => new Set(b.map((i) => groups[i])).size)).toEqual([2, 2, 1]);
      for (const b of pass) for (const g of new Set(b.map((i) => groups[i]))) expect(b.filter((i) => groups[i] === g)).toEqual(groups.flatMap((x, i) => (x === g ? [i] : [])));
    }
    expect(updateBatches(8, { updatesPerStep: 1, miniBatchSize: 2, ppoEpochs: 1 }, 3, groups)).toHaveLength(1);
    expect(() => updateBatches(8, section, 3, [0, 1])).toThrow(/2 row episodes for 8 rows/);
  });
  it('the paper size: one update per step, separate critic at 1e-5, betas (0.9, 0.999)', () => {
    const c = presetConfig('spa', 'paper') as { model: { criticMode: string }; stages: { rl: Record<string, unknown> } };
    expect(c.model.criticMode).toBe('separate');
    expect(c.stages.rl).toMatchObject({ updatesPerStep: 1, criticLr: 1e-5, adamBetas: [0.9, 0.999] });
  });
  it('shared trunk: the value loss is its own step at criticLr (own clip), the policy loss at lr', async () => {
    const calls: Array<{ who: string; loss: string; lr: number; clip: number }> = [];
    const fake = (who: string): Trainable => ({ trainStep: async (loss, _rows, _p, lr, clip) => { calls.push({ who, loss, lr, clip }); return { 'losses/value': 1, 'charts/gradNorm': 2 }; } });
    const section = rl({ lr: 2e-4, criticLr: 1e-3, gradClip: 0.5 });
    await rlUpdate(fake('policy'), null, fake('value-view'), rows(3), {}, section);
    expect(calls).toEqual([{ who: 'policy', loss: 'ppo-policy', lr: 2e-4, clip: 0.5 }, { who: 'value-view', loss: 'value', lr: 1e-3, clip: 0.5 }]);
    calls.length = 0;
    await rlUpdate(fake('policy'), null, null, rows(3), {}, rl({ algorithm: 'grpo' }));
    expect(calls.map((c) => c.loss)).toEqual(['grpo']);
  });
  it('AdamW of RL uses the section betas; the shared-trunk value view has its own moments over the same weights', async () => {
    const config = RunConfigSchema.parse({ model: { overrides: { hidden_size: 8, intermediate_size: 16, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 2, max_position_embeddings: 64 } } });
    const runtime = await createRuntime(config, { seed: 1, valueHead: true }) as TfjsRuntime;
    ensureRlOptimizer(runtime, [0.9, 0.999]);
    expect(runtime.trainer!.optimizer.beta2).toBe(0.999);
    expect(runtime.trainer!.optimizer.weightDecay).toBe(0);
    const view = sharedTrunkValueView(runtime, [0.9, 0.999]) as TfjsRuntime;
    expect(view.model).toBe(runtime.model);
    expect(view.trainer!.optimizer).not.toBe(runtime.trainer!.optimizer);
    await disposeValueView(view);
    expect(runtime.model.namedWeights().get('model.norm.weight')!.isDisposed).toBe(false);   // the view frees only its moments
    await runtime.dispose();
  });
});
