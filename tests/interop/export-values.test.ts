// Issue 36: an export for the cluster carries the values the run used. For every preset at every size, the RAGEN/verl Hydra
// config of `export --to spa-ragen` (values: run) equals the run's resolved spec on actor lr, clip ratios, KL, batch shapes and
// epochs; a run whose RL options the bundle cannot express is refused by name, never mapped silently.
import { describe, expect, it } from 'vitest';
import { listPresets } from '../../core/engine/presets.js';
import { resolveRunConfig } from '../../core/engine/config.js';
import { hydraConfig, inexpressibleRlOptions, inexpressibleSftOptions, lossAggregationOf, sftOverrides } from '../../core/interop/export-bundle.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import { RunConfigSchema, type RunConfig } from '../../core/api/run-config.js';

const templateOf = (c: RunConfig) => builtinTemplate(c.template.preset, c.template.responseFormat);
type Hydra = Record<string, any>;

const cases = listPresets().filter((p) => p.id !== 'diagnostic').flatMap((p) => p.sizes.map((size) => ({ preset: p.id, size })));

describe('export bundle: the run\'s resolved values, for every preset', () => {
  for (const { preset, size } of cases) {
    it(`${preset} ${size}`, () => {
      const r = resolveRunConfig({ preset, size, set: { 'env.id': 'frozenlake' } });
      const config = r.config!;
      const rl = config.stages.rl;
      if (preset === 'spa-random-coordinates') {   // its state text has no RAGEN renderer: refused by name (stateFormatFor)
        expect(() => hydraConfig(config, templateOf(config), 'x', 'm')).toThrow(/random_coordinates/);
        return;
      }
      if (inexpressibleSftOptions(config.stages.sft).length) {
        // spa-teacher: the decision phase and the masked policy moves have no counterpart in SPA's SFT trainer
        expect(() => hydraConfig(config, templateOf(config), 'x', 'm')).toThrow(/sft\.(decisionSteps|moveWeight|maskActionSpans)/);
        return;
      }
      if (inexpressibleRlOptions(rl).length) {
        // e.g. online-wm-rl: its world-model reward has no RAGEN v1 counterpart
        expect(() => hydraConfig(config, templateOf(config), 'x', 'm')).toThrow(/rl\.(worldModelReward|formatBonus|executeOnFormatError|rewardPlacement)/);
        return;
      }
      const cfg = hydraConfig(config, templateOf(config), 'x', 'm') as Hydra;
      const actor = cfg.actor_rollout_ref.actor, rollout = cfg.actor_rollout_ref.rollout;
      expect(actor.optim.lr).toBe(rl.lr);
      expect(actor.optim.betas).toEqual(rl.adamBetas);
      expect(cfg.critic.optim.lr).toBe(rl.criticLr);
      expect([actor.clip_ratio_low, actor.clip_ratio_high]).toEqual([rl.clipLow, rl.clipHigh]);
      expect(actor.clip_ratio_c).toBe(rl.dualClip ?? 1e9);
      expect(cfg.critic.cliprange_value).toBe(rl.valueClip ?? 1e9);
      expect(actor.use_kl_loss).toBe(rl.klCoef > 0);
      expect(actor.kl_loss_coef).toBe(rl.klCoef);
      expect(actor.kl_loss_type).toBe(rl.klEstimator === 'k1' ? 'kl' : 'low_var_kl');
      expect(actor.entropy_coeff).toBe(rl.entropyCoef);
      expect(actor.ppo_epochs).toBe(rl.ppoEpochs);
      expect(actor.grad_clip).toBe(rl.gradClip);
      expect(cfg.es_manager.train).toMatchObject({ env_groups: rl.groups, group_size: rl.groupSize });
      expect(cfg.es_manager.val).toMatchObject({ env_groups: config.stages.eval.puzzles, group_size: config.stages.eval.samples });
      expect(rollout.rollout_filter_ratio).toBe(rl.keepGroupsFraction);
      expect(rollout.response_length).toBe(config.stages.rollout.maxNewTokens);
      expect(rollout.temperature).toBe(config.stages.rollout.temperature);
      // one update over the kept batch (updatesPerStep 1, the paper's) is verl's mini-batch = the kept batch; 0: miniBatchSize
      const kept = Math.floor(rl.groups * rl.groupSize * rl.keepGroupsFraction + 1e-9);
      expect(cfg.ppo_mini_batch_size).toBe(rl.updatesPerStep > 0 ? Math.ceil(kept / rl.updatesPerStep) : rl.miniBatchSize);
      expect(cfg.algorithm).toMatchObject({ gamma: rl.gamma, lam: rl.lambda });
      expect(cfg.trainer.total_training_steps).toBe(rl.steps);
      const sft = Object.fromEntries(sftOverrides(config).map((o) => o.split('=') as [string, string]));
      expect(sft).toMatchObject({ 'optim.lr': String(config.stages.sft.lr), 'trainer.total_epochs': String(config.stages.sft.epochs),
        'data.train_batch_size': String(config.stages.sft.batchSize), 'data.max_length': String(config.stages.sft.maxLength) });
    });
  }

  it('covers the presets (refused: the world-model-reward method for RL, spa-teacher for SFT)', () => {
    expect(cases.length).toBeGreaterThan(60);
    const refused = cases.filter(({ preset, size }) => inexpressibleRlOptions(resolveRunConfig({ preset, size }).config!.stages.rl).length > 0);
    expect([...new Set(refused.map((c) => c.preset))]).toEqual(['online-wm-rl']);
    const sftRefused = cases.filter(({ preset, size }) => inexpressibleSftOptions(resolveRunConfig({ preset, size }).config!.stages.sft).length > 0);
    expect([...new Set(sftRefused.map((c) => c.preset))]).toEqual(['spa-teacher']);
  });

  it('a run.json config that stored only the keys it set (before issue 36) exports its resolved values, not the exporter\'s', () => {
    // spa smoke left rl.lr unset: the run trained at the schema default 1e-4; the exporter used to write its own 1e-6
    const sparse = { method: 'spa', size: 'smoke', env: { id: 'frozenlake', options: {} }, template: { preset: 'tiny-spa' },
      stages: { rl: { steps: 1, groups: 1, groupSize: 2 }, rollout: { maxNewTokens: 12 } } } as unknown as RunConfig;
    const resolved = RunConfigSchema.parse(sparse);
    const cfg = hydraConfig(sparse, templateOf(resolved), 'x', 'm') as Hydra;
    expect(resolved.stages.rl.lr).toBe(1e-4);
    expect(cfg.actor_rollout_ref.actor.optim.lr).toBe(1e-4);
    expect(cfg.critic.optim.lr).toBe(resolved.stages.rl.criticLr);
    expect(cfg.actor_rollout_ref.rollout.response_length).toBe(12);
    expect(cfg.agent_proxy.max_turn).toBe(5);   // unset: the env's budget (FrozenLake: 5 turns)
  });

  it('refuses by name what RAGEN v1 cannot express, and maps Dr. GRPO to grpo without std normalisation', () => {
    const base = resolveRunConfig({ preset: 'vanilla-rl', size: 'smoke', set: { 'env.id': 'frozenlake' } }).config!;
    const withRl = (rl: Record<string, unknown>) => RunConfigSchema.parse({ ...base, stages: { ...base.stages, rl: { ...base.stages.rl, ...rl } } });
    for (const [rl, name] of [[{ worldModelReward: 0.5 }, /rl\.worldModelReward 0\.5/], [{ formatBonus: 0.5 }, /rl\.formatBonus 0\.5/],
      [{ executeOnFormatError: true }, /rl\.executeOnFormatError/], [{ rewardPlacement: 'per-turn' }, /rl\.rewardPlacement "per-turn"/]] as const) {
      const c = withRl(rl);
      expect(() => hydraConfig(c, templateOf(c), 'x', 'm')).toThrow(name);
      expect(() => hydraConfig(c, templateOf(c), 'x', 'm', 'paper')).not.toThrow();   // the release's RL settings replace the run's
    }
    // token-in-token-out rollouts (rollout.history tokens): RAGEN renders every prompt from text
    const tokens = RunConfigSchema.parse({ ...base, stages: { ...base.stages, rollout: { ...base.stages.rollout, history: 'tokens' } } });
    expect(() => hydraConfig(tokens, templateOf(tokens), 'x', 'm')).toThrow(/rollout\.history "tokens" \(RAGEN v1 re-renders/);
    expect(() => hydraConfig(tokens, templateOf(tokens), 'x', 'm', 'paper')).not.toThrow();
    expect(() => hydraConfig(base, templateOf(base), 'x', 'm')).not.toThrow();
    const dr = withRl({ algorithm: 'dr-grpo' }), grpo = withRl({ algorithm: 'grpo' });
    expect((hydraConfig(dr, templateOf(dr), 'x', 'm') as Hydra).algorithm).toMatchObject({ adv_estimator: 'grpo', norm_adv_by_std_in_grpo: false });
    expect((hydraConfig(grpo, templateOf(grpo), 'x', 'm') as Hydra).algorithm).toMatchObject({ adv_estimator: 'grpo', norm_adv_by_std_in_grpo: true });
    expect((hydraConfig(base, templateOf(base), 'x', 'm') as Hydra).algorithm.adv_estimator).toBe('gae');
  });

  it('carries rl.lossAggregation where RAGEN (micro-batch 1) can, and says so where it cannot', () => {
    const base = resolveRunConfig({ preset: 'vanilla-rl', size: 'smoke', set: { 'env.id': 'frozenlake' } }).config!;
    const withAgg = (lossAggregation: string) => RunConfigSchema.parse({ ...base, stages: { ...base.stages, rl: { ...base.stages.rl, lossAggregation } } });
    const actorOf = (c: RunConfig) => (hydraConfig(c, templateOf(c), 'x', 'm') as Hydra).actor_rollout_ref.actor;
    expect(actorOf(withAgg('seq-mean-token-sum')).loss_agg_mode).toBe('seq-mean-token-sum');
    expect(actorOf(withAgg('seq-mean-token-mean'))).not.toHaveProperty('loss_agg_mode');   // RAGEN's token-mean at micro-batch 1
    expect(lossAggregationOf(withAgg('seq-mean-token-mean').stages.rl)).toEqual({});
    expect(lossAggregationOf(withAgg('token-mean').stages.rl).warning).toMatch(/token-mean .*no RAGEN counterpart.*seq-mean-token-mean/);
    expect(lossAggregationOf(withAgg('seq-mean-token-sum').stages.rl).warning).toMatch(/critic/);
  });
});
