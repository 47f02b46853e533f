// Export a workbench run as a bundle that runs the same experiment at scale with SPA's released
// recipe (RAGEN v1 + verl on Ray): the self-play SFT data in the release's parquet columns (and as
// JSONL), a RAGEN env whose text state equals the run's template state, a Hydra config with the
// run's settings on RAGEN's keys (checked against RAGEN_PPO_KEYS), env vars, a launch script
// (SFT, then PPO from the SFT checkpoint) with GPU counts as arguments, a SLURM wrapper, a
// pinned-stack manifest, the recorder that brings validation rollouts back, and a README.
// The bundle is written to a temporary sibling folder and renamed into place when complete.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { RunConfigSchema, type RlSection, type RolloutSection, type RunConfig } from '../api/run-config.js';
import { getEnvDefinition } from '../envs/index.js';
import { WorkbenchError } from '../api/errors.js';
import { previewPrompt, TemplateSchema, type PromptTemplate } from '../prompts/index.js';
import { builtinTemplate } from '../prompts/resolve-template.js';
import { readJsonl } from '../storage/jsonl.js';
import { readRegularTextSync } from '../util/regular-file.js';
import { insideRun, readPinnedTemplate, readRunRecord, ROLLOUT_INDEX, sftFile } from '../storage/run-files.js';
import type { EpisodeRecord } from '../api/records.js';
import { writeSpaSftParquet, type SpaSftRow } from './parquet.js';
import { ragenChat, ragenPrefix, ragenTurnsOf, type RagenEnvId } from './spa-chat.js';
import { isRagenPpoKey, isSpaSftKey, RAGEN_CUSTOM_ENV_KEYS, RAGEN_ENV_CONFIG_KEYS } from './ragen-keys.js';

/** Where the shipped Python files live (resources/interop/ of the repository). */
export const INTEROP_RESOURCES = fileURLToPath(new URL('../../resources/interop/', import.meta.url));

/** The stack SPA's release was run with (SPA README; RAGEN and verl commits read from the repositories). */
export const PINNED_STACK = {
  spa: { repo: 'https://github.com/shiqichen17/SPA', commit: '3848e68', date: '2025-11-01',
    note: 'clone inside the RAGEN checkout (SPA README, "Repository Setup")' },
  ragen: { repo: 'https://github.com/RAGEN-AI/RAGEN', commit: '5eb79b8', date: '2025-09-06',
    note: 'RAGEN v1; SPA configs use its keys (rollout_filter_ratio/type), renamed in RAGEN-2' },
  verl: { repo: 'https://github.com/volcengine/verl', commit: '1e47e412', date: '2025-05-04',
    note: 'the submodule RAGEN 5eb79b8 pins; no "file" logger before verl 0.6' },
  python: '3.12 (the flash-attn wheel SPA names is cp312)',
  torch: '2.6.0+cu124',
  vllm: '0.8.5.post1',
  'flash-attn': '2.7.3 (flash_attn-2.7.3+cu12torch2.6cxx11abiFALSE)',
  baseModel: 'Qwen/Qwen2.5-1.5B-Instruct (SPA default model_path)',
  verified: 'On the CPU, in the workbench tests: the parquet read back by pyarrow and pandas; the config composed by Hydra over SPA 3848e68 ' +
    'config/ and passing RAGEN 5eb79b8 train.py\'s pre-training checks; the SFT chat layout against SPA_agent\'s ctx_manager; workbench_env.py on ' +
    'RAGEN\'s FrozenLake class; the recorder on RAGEN\'s EnvStateManager. The recipe itself was not run by the workbench (no GPU).',
};

export interface ExportOptions {
  runDir: string;
  out: string;                 // bundle folder (must not exist, or be empty)
  model?: string;              // model for SFT/PPO: a local HF folder or hub id (default: see modelReference)
  values?: BundleValues;       // 'run' (default): the run's own settings; 'paper': the release's _3_frozen_lake / _2_sokoban settings
  now?: number;
}

export interface ExportResult {
  dir: string;
  values: BundleValues;
  files: string[];
  warnings: string[];
  model: { path: string; kind: 'checkpoint' | 'hf-folder' | 'base'; note: string };
}

const RAGEN_ENV: Record<string, { type: string; tag: string }> = {
  sokoban: { type: 'workbench_sokoban', tag: 'WorkbenchSokoban' },
  frozenlake: { type: 'workbench_frozen_lake', tag: 'WorkbenchFrozenLake' },
};
const PY_VARIABLES = new Set(['grid', 'rows', 'cols', 'spa_coordinates', 'coordinate_listing', 'relations', 'json']);

/** The template's state part as a Python format string for workbench_env.py; throws naming what cannot be carried over. */
export function stateFormatFor(template: PromptTemplate): string {
  const src = template.parts.state;
  let out = '';
  let last = 0;
  for (const m of src.matchAll(/\{\{-?\s*([a-z_]+)\s*-?\}\}|\{%/g)) {
    if (m[0] === '{%' || !PY_VARIABLES.has(m[1]!)) {
      throw new WorkbenchError('ValidationError',
        `export --to spa-ragen: the template's state part uses ` +
          `${m[0] === '{%' ? 'a Liquid tag' : `{{ ${m[1]} }}`}, which the RAGEN env cannot render; ` +
          `it supports {{ ${[...PY_VARIABLES].join(' }}, {{ ')} }} joined by plain text`, {
        where: 'template.parts.state', expected: 'grid, spa_coordinates, coordinate_listing, relations, json, rows, cols', received: src.slice(0, 120),
      });
    }
    out += src.slice(last, m.index).replace(/\{/g, '{{').replace(/\}/g, '}}') + `{${m[1]}}`;
    last = m.index! + m[0].length;
  }
  return out + src.slice(last).replace(/\{/g, '{{').replace(/\}/g, '}}');
}

/** Which numbers the bundle trains with: the run's own, or the SPA release's. */
export const BUNDLE_VALUES = ['run', 'paper'] as const;
export type BundleValues = typeof BUNDLE_VALUES[number];

/**
 * The SPA release's PPO and SFT settings (`--values paper`), as its `_3_frozen_lake` / `_2_sokoban` runs compose them:
 * SPA 3848e68 config/base.yaml (seeds, mini-batch, response length, filter ratio, groups 32x8 / val 128x8, max turn,
 * test_freq), config/ppo_trainer.yaml (actor lr 1e-6, critic lr 1e-5, dual clip 3, value clip 0.5), config/envs.yaml
 * (max_actions_per_traj 10, max_tokens 100), train_ppo_sfted.sh:50-62 (1000 steps, save_freq 100, bi_level_gae False) and
 * sft/finetune_ft.sh:44-63 (SFT lr 1e-4, 5 epochs, batch 16, max length 2048). tests/interop/spa-config.test.ts checks
 * them against Hydra's composition of the release's own _3_frozen_lake.
 */
export const PAPER_VALUES = {
  ppo: {
    ppo_mini_batch_size: 64, micro_batch_size_per_gpu: 1, seed: { train: 10000, val: 123 },
    actor: { entropy_coeff: 0.001, clip_ratio_low: 0.2, clip_ratio_high: 0.28, clip_ratio_c: 3, use_kl_loss: false, kl_loss_coef: 0,
      kl_loss_type: 'kl', ppo_epochs: 1, grad_clip: 1, optim: { lr: 1e-6 } },
    rollout: { response_length: 400, temperature: 1, top_p: 1, top_k: -1, rollout_filter_ratio: 0.25, rollout_filter_type: 'std',
      val_kwargs: { do_sample: true, temperature: 1 } },
    critic: { optim: { lr: 1e-5 }, cliprange_value: 0.5 },
    algorithm: { adv_estimator: 'gae', gamma: 1, lam: 1, high_level_gamma: 0.95, kl_ctrl: { kl_coef: 0 } },
    agent_proxy: { max_turn: 5, max_actions_per_turn: 5 },
    es_manager: { format_penalty: -0.1, train: { env_groups: 32, group_size: 8 }, val: { env_groups: 128, group_size: 8 } },
    custom_env: { max_actions_per_traj: 10, max_tokens: 100 },
    trainer: { total_training_steps: 1000, test_freq: 10, save_freq: 100 },
    biLevelGae: false,
  },
  sft: { lr: 1e-4, epochs: 5, batchSize: 16, maxLength: 2048 },
} as const;

/** The Hydra config with the release's settings written over the run's (templates, env and its options stay the run's). */
function withPaperValues(cfg: Record<string, any>): Record<string, unknown> {
  const p = PAPER_VALUES.ppo;
  const tag = Object.keys(cfg.custom_envs)[0]!;
  cfg.ppo_mini_batch_size = p.ppo_mini_batch_size;
  cfg.micro_batch_size_per_gpu = p.micro_batch_size_per_gpu;
  cfg.seed = { ...p.seed };
  cfg.actor_rollout_ref.actor = { ...cfg.actor_rollout_ref.actor, ...p.actor, optim: { ...p.actor.optim } };
  cfg.actor_rollout_ref.rollout = { ...cfg.actor_rollout_ref.rollout, ...p.rollout, val_kwargs: { ...p.rollout.val_kwargs } };
  cfg.critic = { ...p.critic, optim: { ...p.critic.optim } };
  cfg.algorithm = { ...p.algorithm, kl_ctrl: { ...p.algorithm.kl_ctrl } };
  cfg.agent_proxy = { ...cfg.agent_proxy, ...p.agent_proxy };
  cfg.es_manager.format_penalty = p.es_manager.format_penalty;
  for (const split of ['train', 'val'] as const) {
    const g = p.es_manager[split];
    cfg.es_manager[split] = { env_groups: g.env_groups, group_size: g.group_size, env_configs: { tags: [tag], n_groups: [g.env_groups] } };
  }
  Object.assign(cfg.custom_envs[tag], p.custom_env);
  cfg.trainer = { ...cfg.trainer, ...p.trainer };
  return cfg;
}

/**
 * The run's resolved spec (RunConfigSchema, core/api/run-config.ts): the values the run used, every default filled in, so the
 * bundle reads them and keeps no default of its own. A config the schema refuses is an error naming its keys.
 */
export function resolvedSpec(config: RunConfig): RunConfig {
  const parsed = RunConfigSchema.safeParse(config);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  throw new WorkbenchError('ValidationError', `export: the run's config does not fit the run spec (core/api/run-config.ts): ` +
    issues.map((i) => `${i.path}: ${i.message}`).join('; '), { where: 'run.json config', issues });
}

/** The env's options as the run's env resolved them: its own option defaults (EnvDefinition.options) under the run's. */
function envOptionsOf(config: RunConfig): Record<string, unknown> {
  const defaults = Object.fromEntries(getEnvDefinition(config.env.id).options.map((o) => [o.name, o.default]));
  return { ...defaults, ...config.env.options };
}

/** RAGEN v1 (verl) advantage estimator and std normalisation of each RL algorithm (RL_ALGORITHMS rows; a new row must be added). */
// 'reinforce' (the batch-mean baseline) is not mapped: verl's reinforce_plus_plus whitens token returns over the batch, not
// episode rewards, so the export refuses it by name (inexpressibleRlOptions)
const RAGEN_ALGORITHM: Partial<Record<RlSection['algorithm'], { adv_estimator: 'gae' | 'grpo'; norm_adv_by_std_in_grpo?: boolean }>> = {
  ppo: { adv_estimator: 'gae' },
  grpo: { adv_estimator: 'grpo', norm_adv_by_std_in_grpo: true },
  'dr-grpo': { adv_estimator: 'grpo', norm_adv_by_std_in_grpo: false },   // Dr. GRPO: no division by the group's std
};

/**
 * RL options of the run that the bundle cannot express on RAGEN v1's keys: each is refused by name (`--values paper` replaces
 * the RL settings with the release's, so it is not checked there). Returns [option, why] pairs; empty: everything maps.
 */
export function inexpressibleRlOptions(rl: RlSection): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (!(rl.algorithm in RAGEN_ALGORITHM)) out.push([`rl.algorithm ${JSON.stringify(rl.algorithm)}`, 'no RAGEN advantage estimator is mapped to it']);
  if (rl.worldModelReward !== 0) out.push([`rl.worldModelReward ${rl.worldModelReward}`, 'RAGEN v1 has no world-model reward (VAGEN\'s per-turn state score)']);
  if (rl.formatBonus !== 0) out.push([`rl.formatBonus ${rl.formatBonus}`, 'RAGEN v1 has a format penalty (es_manager.format_penalty -0.1), no bonus']);
  if (rl.executeOnFormatError) out.push(['rl.executeOnFormatError true', 'RAGEN v1 executes nothing from a reply that fails the format check']);
  if (rl.rewardPlacement !== 'last-token') out.push([`rl.rewardPlacement ${JSON.stringify(rl.rewardPlacement)}`,
    'RAGEN v1 (gae) puts the episode reward on the last token']);
  if (rl.entropyOn !== 'all' && rl.entropyCoef > 0) out.push([`rl.entropyOn ${JSON.stringify(rl.entropyOn)}`,
    'RAGEN v1\'s entropy_coeff covers every response token']);
  if (rl.entropyCap !== null && rl.entropyCoef > 0) out.push([`rl.entropyCap ${rl.entropyCap}`, 'RAGEN v1\'s entropy bonus is uncapped']);
  if (rl.lossOn !== 'reply') out.push([`rl.lossOn ${JSON.stringify(rl.lossOn)}`, 'RAGEN v1\'s loss covers every response token']);
  if (rl.selfImitation.steps > 0) out.push([`rl.selfImitation.steps ${rl.selfImitation.steps}`,
    'RAGEN v1 has no self-imitation (its trainer updates on the step\'s own rollouts only)']);
  return out;
}

/**
 * Rollout options the bundle cannot express on RAGEN v1: refused by name, as inexpressibleRlOptions (`--values paper` is not
 * checked: the bundle's rollouts are RAGEN's either way). Returns [option, why] pairs; empty: everything maps.
 */
export function inexpressibleRolloutOptions(rollout: Pick<RolloutSection, 'history'>): Array<[string, string]> {
  if (rollout.history === 'text') return [];
  return [[`rollout.history ${JSON.stringify(rollout.history)}`,
    'RAGEN v1 re-renders every turn\'s prompt from the chat\'s text (RAGEN 5eb79b8 ctx_manager.py:240-267 get_lm_inputs)']];
}

/**
 * SFT options of the run that SPA's SFT trainer (SPA@3848e68 sft/spa_sft_trainer.py: one cross-entropy over every target token
 * of each row, the rows as written) cannot express: each is refused by name, as inexpressibleRlOptions (`--values paper` is not
 * checked). Returns [option, why] pairs; empty: everything maps.
 */
export function inexpressibleSftOptions(sft: RunConfig['stages']['sft']): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (sft.decisionSteps > 0) out.push([`sft.decisionSteps ${sft.decisionSteps}`, 'SPA\'s SFT trainer has no decision phase after its epochs']);
  if (sft.moveWeight !== 1) out.push([`sft.moveWeight ${sft.moveWeight}`, 'SPA\'s SFT trainer weighs every target token the same']);
  if (sft.maskActionSpans) out.push(['sft.maskActionSpans true', 'SPA\'s SFT trainer trains the whole reply of every row']);
  return out;
}

/**
 * How the bundle weighs the tokens of an update against the run's rl.lossAggregation. RAGEN runs micro_batch_size_per_gpu 1
 * (one episode per backward, gradients accumulated over the mini-batch), so its token-mean is each episode's token mean,
 * averaged over episodes: seq-mean-token-mean in effect. seq-mean-token-mean is therefore exact; seq-mean-token-sum is the
 * actor's loss_agg_mode (the critic has no such key and stays a per-episode mean); token-mean (every token of the update
 * weighs the same) cannot be expressed at micro-batch 1, so the bundle says so (a warning in its README and the export's result).
 */
export function lossAggregationOf(rl: RlSection): { lossAggMode?: 'seq-mean-token-sum'; warning?: string } {
  if (rl.lossAggregation === 'seq-mean-token-sum') {
    return { lossAggMode: 'seq-mean-token-sum', warning: 'rl.lossAggregation seq-mean-token-sum: the actor sums each episode\'s tokens ' +
      '(loss_agg_mode seq-mean-token-sum); RAGEN\'s critic has no such setting and takes each episode\'s token mean.' };
  }
  if (rl.lossAggregation === 'token-mean') {
    return { warning: 'rl.lossAggregation token-mean (every token of an update weighs the same) has no RAGEN counterpart at ' +
      'micro_batch_size_per_gpu 1: the cluster weighs each episode the same (seq-mean-token-mean), so longer episodes count less ' +
      'there than they did in the run.' };
  }
  return {};
}

/** verl's ppo_mini_batch_size for the run's update layout: miniBatchSize, or the kept batch split into updatesPerStep parts. */
function miniBatchOf(rl: RlSection): number {
  if (rl.updatesPerStep === 0) return rl.miniBatchSize;
  const kept = Math.floor(rl.groups * rl.groupSize * rl.keepGroupsFraction + 1e-9);
  return Math.max(1, Math.ceil(kept / rl.updatesPerStep));
}

/** The model the bundle trains: the run's own checkpoint when it ran on a real (HF) model, else the named base model. */
export function modelReference(runDir: string, config: RunConfig, override?: string): ExportResult['model'] {
  if (override) return { path: override, kind: 'hf-folder', note: 'given with --model' };
  if (config.model.source === 'hf-folder' && config.model.path) {
    const ckDir = path.join(runDir, 'checkpoints');
    const policies = fs.existsSync(ckDir) ? fs.readdirSync(ckDir).filter((d) => fs.existsSync(path.join(ckDir, d,
      'config.json')) && !d.includes('critic')).sort() : [];
    const latest = policies.length ? path.join(ckDir, policies[policies.length - 1]!) : null;
    if (latest) return { path: latest, kind: 'checkpoint', note: `the run's latest policy checkpoint (HF safetensors folder) of ${config.model.path}` };
    return { path: config.model.path, kind: 'hf-folder', note: 'the run\'s base model folder (the run wrote no checkpoint)' };
  }
  return {
    path: 'Qwen/Qwen2.5-1.5B-Instruct', kind: 'base',
    note: `the run used the workbench's ${config.model.source === 'preset' ? `"${config.model.preset}" preset (a from-scratch character-level model`
      + ' that verl cannot load)' : 'own checkpoint format'}; the bundle names SPA's base model instead`,
  };
}

/** Attention heads of known base models (their config.json num_attention_heads), for launch.sh's tensor-parallel check. */
export const KNOWN_MODEL_HEADS: Readonly<Record<string, number>> = {
  'Qwen/Qwen2.5-0.5B-Instruct': 14, 'Qwen/Qwen2.5-1.5B-Instruct': 12, 'Qwen/Qwen2.5-3B-Instruct': 16, 'Qwen/Qwen2.5-7B-Instruct': 28,
};

/**
 * One string as an OmegaConf literal: every `${` becomes `\${` (and backslashes right before it are doubled), so
 * text such as `${HOME}` or `${oc.env:VAR}` in a template reaches the prompt as written instead of being resolved
 * on the cluster (an InterpolationKeyError, or an environment variable's value in the prompt). OmegaConf's grammar:
 * `\${x}` is the text `${x}`; `\\` right before `${` is one backslash; other backslashes are literal.
 */
export function omegaConfLiteral(text: string): string {
  return text.replace(/(\\*)\$\{/g, (_, backslashes: string) => `${backslashes}${backslashes}\\\${`);
}

/** A copy of a Hydra config with every string (keys too) an OmegaConf literal (omegaConfLiteral): escaping by construction. */
export function literalStrings<T>(value: T): T {
  if (typeof value === 'string') return omegaConfLiteral(value) as T;
  if (Array.isArray(value)) return value.map((v) => literalStrings(v)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [omegaConfLiteral(k), literalStrings(v)])) as T;
  }
  return value;
}

/** num_attention_heads of a local HF folder, or of a known hub model; null when unknown. */
export function attentionHeads(modelPath: string): number | null {
  const file = path.join(modelPath, 'config.json');
  if (fs.existsSync(file)) {
    try {
      // a regular file of at most 1 MiB only: a FIFO named config.json froze the serve host (N3, core/util/regular-file.ts)
      const text = readRegularTextSync(file, { maxBytes: 1024 ** 2, what: 'config.json' });
      const heads = (JSON.parse(text) as { num_attention_heads?: unknown }).num_attention_heads;
      return typeof heads === 'number' && Number.isInteger(heads) && heads > 0 ? heads : null;
    } catch { return null; }
  }
  return KNOWN_MODEL_HEADS[modelPath] ?? null;
}

/** The Hydra config: `defaults: [base]` and the run's settings on RAGEN's keys. */
export function hydraConfig(runConfig: RunConfig, template: PromptTemplate, experiment: string, modelPath: string,
  values: BundleValues = 'run'): Record<string, unknown> {
  const config = resolvedSpec(runConfig);
  const env = RAGEN_ENV[config.env.id];
  if (!env) {
    throw new WorkbenchError('ValidationError',
      `export --to spa-ragen: env ${config.env.id} has no RAGEN v1 counterpart (Sudoku entered RAGEN only in Dec 2025, RAGEN-2); export a Sokoban or ` +
        `FrozenLake run`, {
      where: 'config.env.id', expected: 'sokoban or frozenlake', received: config.env.id,
    });
  }
  const { rl, rollout, eval: evalSection } = config.stages;
  const options = envOptionsOf(config);
  const budget = getEnvDefinition(config.env.id).budget;   // the rollout limits a run leaves unset are its env's
  const preview = previewPrompt(template, config.env.id, options, 0);
  const firstUser = preview.messages.find((m) => m.role === 'user')?.content ?? '';
  const instruction = firstUser.split(/\nTurn 1:/)[0]!.trim();
  const groups = rl.groups;
  const valGroups = evalSection.puzzles;
  const envConfig: Record<string, unknown> = config.env.id === 'sokoban'
    ? { dim_x: options.height, dim_y: options.width, num_boxes: options.numBoxes, max_steps: options.maxSteps, search_depth: options.searchDepth }
    : { size: options.size, p: options.p, is_slippery: options.isSlippery !== false && (options.successRate as number) < 1,
      success_rate: options.successRate };
  envConfig.state_format = stateFormatFor(template);
  const maxActionsPerGame = rollout.maxActionsPerGame ?? budget.maxActionsPerGame;
  const refused = values === 'paper' ? []
    : [...inexpressibleRlOptions(rl), ...inexpressibleSftOptions(config.stages.sft), ...inexpressibleRolloutOptions(rollout)];
  if (refused.length) {
    throw new WorkbenchError('ValidationError', `export --to spa-ragen: the run uses ${refused.map(([o, why]) => `${o} (${why})`).join('; ')}; ` +
      'the bundle would train something else, so it is not written. Export a run without these settings, or use --values paper (the ' +
      'release\'s SFT and RL settings)', { where: 'config.stages', received: refused.map(([o]) => o).join(', ') });
  }
  // two-level advantages have no safe RAGEN counterpart: RAGEN@5eb79b8's bi_level_gae (ragen/trainer/core_algos.py:4) takes turn
  // ends from the non-zero rewards (a zero-reward turn merges into the next) and raises IndexError (core_algos.py:77-80) on any
  // episode whose total reward is 0; refused by name (peers-check F-BILEVEL-TURNS). --values paper runs bi_level_gae False.
  if (values !== 'paper' && (rl.advantage === 'turn-then-token' || rl.advantage === 'turn-level')) {
    throw new WorkbenchError('ValidationError',
      `export --to spa-ragen: rl.advantage ${JSON.stringify(rl.advantage)} has no safe RAGEN counterpart: RAGEN's bi_level_gae ` +
        '(RAGEN@5eb79b8 ragen/trainer/core_algos.py:4) merges zero-reward turns and raises IndexError (core_algos.py:77-80) on every ' +
        "episode whose total reward is 0; export a run with rl.advantage 'gae', or use --values paper (bi_level_gae False, as SPA ran)", {
        where: 'config.stages.rl.advantage', expected: "'gae'", received: String(rl.advantage),
      });
  }
  const algorithm = RAGEN_ALGORITHM[rl.algorithm];
  if (!algorithm) throw new Error(`export --to spa-ragen: rl.algorithm ${JSON.stringify(rl.algorithm)} has no RAGEN advantage estimator mapped`);
  const cfg: Record<string, any> = {
    defaults: ['base'],
    model_path: modelPath,
    ppo_mini_batch_size: miniBatchOf(rl),
    micro_batch_size_per_gpu: 1,
    seed: { train: config.seeds.rlStart, val: config.seeds.evalStart },
    actor_rollout_ref: {
      actor: {
        entropy_coeff: rl.entropyCoef, clip_ratio_low: rl.clipLow, clip_ratio_high: rl.clipHigh,
        clip_ratio_c: rl.dualClip === null ? 1e9 : rl.dualClip, use_kl_loss: rl.klCoef > 0, kl_loss_coef: rl.klCoef,
        kl_loss_type: rl.klEstimator === 'k1' ? 'kl' : 'low_var_kl', ppo_epochs: rl.ppoEpochs, grad_clip: rl.gradClip,
        optim: { lr: rl.lr, betas: [...rl.adamBetas] },
        ...(values !== 'paper' && lossAggregationOf(rl).lossAggMode ? { loss_agg_mode: lossAggregationOf(rl).lossAggMode } : {}),
      },
      rollout: {
        response_length: rollout.maxNewTokens, temperature: rollout.temperature, top_p: rollout.topP,
        top_k: rollout.topK > 0 ? rollout.topK : -1,
        rollout_filter_ratio: rl.keepGroupsFraction, rollout_filter_type: 'std',
        val_kwargs: { do_sample: true, temperature: evalSection.temperature },
      },
    },
    critic: { optim: { lr: rl.criticLr, betas: [...rl.adamBetas] }, cliprange_value: rl.valueClip === null ? 1e9 : rl.valueClip },
    algorithm: {
      ...algorithm, gamma: rl.gamma, lam: rl.lambda, high_level_gamma: rl.turnGamma,
      kl_ctrl: { kl_coef: 0 },
    },
    agent_proxy: {
      max_turn: rollout.maxTurns ?? budget.maxTurns, max_actions_per_turn: rollout.maxActionsPerTurn ?? budget.maxActionsPerTurn, action_sep: '||',
      enable_think: true,
    },
    es_manager: {
      format_penalty: -0.1,
      train: { env_groups: groups, group_size: rl.groupSize, env_configs: { tags: [env.tag], n_groups: [groups] } },
      val: { env_groups: valGroups, group_size: evalSection.samples, env_configs: { tags: [env.tag], n_groups: [valGroups] } },
    },
    custom_envs: {
      [env.tag]: {
        env_type: env.type, max_actions_per_traj: maxActionsPerGame, env_instruction: instruction, env_instruction_add_worldmodel: instruction,
        max_tokens: 100, env_config: envConfig,
      },
    },
    trainer: {
      project_name: 'spa-workbench', experiment_name: experiment, total_training_steps: rl.steps,
      test_freq: rl.passAtKEvery > 0 ? rl.passAtKEvery : 10, save_freq: Math.max(1, Math.min(100, rl.steps)),
      logger: ['console', 'wandb'], val_before_train: true,
    },
  };
  return values === 'paper' ? withPaperValues(cfg) : cfg;
}

function flatKeys(obj: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(obj).flatMap(([k, v]) => {
    const key = prefix ? `${prefix}.${k}` : k;
    return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length ? flatKeys(v as Record<string, unknown>, key) : [key];
  });
}

/** Keys of a Hydra config that RAGEN/verl do not know (the defaults list and custom_envs checked by their own lists). */
export function unknownRagenKeys(cfg: Record<string, unknown>): string[] {
  const bad: string[] = [];
  for (const key of flatKeys(cfg)) {
    if (key === 'defaults') continue;
    if (key.startsWith('custom_envs.')) {
      const [, , field, sub] = key.split('.');
      if (!RAGEN_CUSTOM_ENV_KEYS.includes(field!)) bad.push(key);
      else if (field === 'env_config' && sub) {
        const envType = String((cfg.custom_envs as Record<string, Record<string, unknown>>)[key.split('.')[1]!]?.env_type ?? '').replace(/^workbench_/, '');
        if (sub !== 'state_format' && sub !== 'success_rate' && !(RAGEN_ENV_CONFIG_KEYS[envType] ?? []).includes(sub)) bad.push(key);
      }
      continue;
    }
    if (!isRagenPpoKey(key)) bad.push(key);
  }
  return bad;
}

// Paths are quoted twice by construction: "…" for bash (a space never splits an argument) and '…' for Hydra's override
// grammar (a ',' or '(' stays part of the value); launch.sh refuses the paths Hydra cannot take even quoted (hydra_safe).
const SFT_OVERRIDES = (lr: number, epochs: number, batch: number, maxLength: number) => [
  `data.train_files="'$DATA/wm_train.parquet'"`, `data.val_files="'$DATA/wm_val.parquet'"`, 'data.prompt_key=prompt', 'data.response_key=response',
  `data.max_length=${maxLength}`, 'data.truncation=left', `data.train_batch_size=${batch}`, 'data.micro_batch_size_per_gpu=1',
  `optim.lr=${lr}`, `model.partial_pretrain="'$MODEL_PATH'"`, 'model.target_modules=all-linear', 'model.enable_gradient_checkpointing=False',
  `trainer.default_local_dir="'$OUT/sft'"`, `trainer.experiment_name="'$EXPERIMENT-sft'"`, 'trainer.project_name=spa-workbench-sft',
  `trainer.total_epochs=${epochs}`, 'trainer.default_hdfs_dir=null', "trainer.logger=['console']",
];

/** The SFT launch overrides (key=value), each key checked against SPA's SFT trainer keys. */
export function sftOverrides(config: RunConfig, values: BundleValues = 'run'): string[] {
  const sft = values === 'paper' ? PAPER_VALUES.sft : resolvedSpec(config).stages.sft;
  const list = SFT_OVERRIDES(sft.lr, sft.epochs, sft.batchSize, sft.maxLength);
  const bad = list.map((o) => o.split('=')[0]!).filter((k) => !isSpaSftKey(k));
  if (bad.length) throw new Error(`sftOverrides: keys unknown to SPA's sft_trainer.yaml: ${bad.join(', ')} (a bug in the exporter)`);
  return list;
}

/** What launch.sh checks before it starts anything (RAGEN train.py:130-138, SPA spa_sft_trainer.py:123, 189-199, 602; vLLM's TP | heads). */
export interface LaunchFacts {
  miniBatch: number;            // ppo_mini_batch_size (micro_batch_size_per_gpu is 1)
  sftBatch: number;             // SFT data.train_batch_size
  rows: { train: number; val: number };
  heads: number | null;         // attention heads of the exported model (null: unknown)
  modelPath: string;            // the model those heads belong to
}


/** launch.sh's checks before anything starts (GPUs, TP against the heads, mini-batch, SFT rows); `--check` stops after them. */
function launchChecks(facts: LaunchFacts): string {
  return `# --- checks before anything starts (each would otherwise fail after setup or after SFT's GPU hours) ---
# GPUs: under SLURM CUDA_VISIBLE_DEVICES is already set; RAGEN train.py:136 wants exactly --gpus ids in it.
if [ -n "\${CUDA_VISIBLE_DEVICES:-}" ]; then
  IFS=, read -r -a DEVS <<< "$CUDA_VISIBLE_DEVICES"
  if [ "\${#DEVS[@]}" -lt "$GPUS" ]; then
    die "--gpus $GPUS but CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES lists \${#DEVS[@]} device(s)" \\
      "(SLURM: ask for --gres=gpu:$GPUS, or pass --gpus \${#DEVS[@]})"
  fi
  CUDA_VISIBLE_DEVICES="$(IFS=,; echo "\${DEVS[*]:0:$GPUS}")"   # the first --gpus of the allocated devices
else
  CUDA_VISIBLE_DEVICES="$(seq -s, 0 $((GPUS - 1)))"
fi
export CUDA_VISIBLE_DEVICES
# Tensor parallel: vLLM needs it to divide the model's attention heads.
HEADS=""
if [ -f "$MODEL_PATH/config.json" ]; then
  HEADS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("num_attention_heads", ""))' "$MODEL_PATH/config.json" 2>/dev/null || true)
elif [ "$MODEL_PATH" = "$(cat "$HERE/model.txt")" ]; then   # the exported model (its path is data in model.txt, never script text)
  HEADS=${facts.heads ?? '""'}
fi
if [ -z "$TP" ]; then
  TP=$GPUS
  if [ -n "$HEADS" ]; then   # the largest divisor of both --gpus and the heads
    while [ $((HEADS % TP)) -ne 0 ] || [ $((GPUS % TP)) -ne 0 ]; do TP=$((TP - 1)); done
  fi
fi
if [ -n "$HEADS" ] && [ $((HEADS % TP)) -ne 0 ]; then
  die "--tp $TP does not divide the model's $HEADS attention heads (vLLM needs heads % tp == 0); use a divisor of $HEADS"
fi
[ "$TP" -le "$GPUS" ] || die "--tp $TP is more than --gpus $GPUS"
# RAGEN train.py reads both keys and SPA's config has neither (SPA train_ppo_sfted.sh:61-62 adds them with '+').
TP_CHECK=True; [ "$TP" = "$GPUS" ] || TP_CHECK=False
# PPO mini-batch against the GPU count (RAGEN train.py:130-133, micro_batch_size_per_gpu 1).
MINI=${facts.miniBatch}
if ! { [ "$GPUS" -le "$MINI" ] && [ $((MINI % GPUS)) -eq 0 ]; }; then
  die "ppo_mini_batch_size $MINI must be a multiple of --gpus $GPUS (RAGEN train.py:130-133); use --gpus dividing $MINI or re-export with another mini-batch"
fi
if [ "$SKIP_SFT" = 0 ]; then
  # SFT (SPA sft/spa_sft_trainer.py): the batch splits over the GPUs (:123); every GPU needs a validation row, or the
  # validation loss is torch.stack([]) on an empty list (:189-199, :602); the train rows must fill one batch.
  SFT_BATCH=${facts.sftBatch}; TRAIN_ROWS=${facts.rows.train}; VAL_ROWS=${facts.rows.val}
  [ $((SFT_BATCH % SFT_GPUS)) -eq 0 ] || die "SFT batch $SFT_BATCH is not divisible by --sft-gpus $SFT_GPUS (spa_sft_trainer.py:123)"
  [ "$VAL_ROWS" -ge "$SFT_GPUS" ] || die "data/wm_val has $VAL_ROWS row(s) but SFT on $SFT_GPUS GPUs needs at least one per GPU (the release's \
DistributedSampler drops the rest and the validation loss fails on an empty list, spa_sft_trainer.py:189-199,602); pass --sft-gpus $VAL_ROWS or less"
  [ "$TRAIN_ROWS" -ge "$SFT_BATCH" ] || die "data/wm_train has $TRAIN_ROWS row(s), fewer than one SFT batch of $SFT_BATCH (no training step would run)"
fi
if [ "$CHECK_ONLY" = 1 ]; then
  echo "ok GPUS=$GPUS SFT_GPUS=$SFT_GPUS TP=$TP TP_CHECK=$TP_CHECK HEADS=\${HEADS:-unknown} CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
  exit 0
fi

`;
}

function launchScript(experiment: string, configName: string, sft: string[], hasSft: boolean, biLevel: boolean, grpo: boolean,
  facts: LaunchFacts): string {
  return `#!/usr/bin/env bash
# SFT on the exported self-play data, then PPO from the SFT checkpoint, with SPA's recipe on RAGEN v1 + verl.
# Usage: ./launch.sh --ragen <RAGEN checkout with SPA/ inside> [--gpus N] [--sft-gpus N] [--tp N] [--model PATH] [--out DIR] [--skip-sft]
#        ./launch.sh --check [--gpus N] [--sft-gpus N] [--tp N]   # only the checks below; prints the settings it would use
set -euo pipefail
HERE="$(cd "$(dirname "\${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/env.sh"
RAGEN=""; GPUS=1; SFT_GPUS=""; TP=""; OUT="$HERE/outputs"; SKIP_SFT=${hasSft ? 0 : 1}; CHECK_ONLY=0
MODEL_PATH="\${MODEL_PATH:-$(cat "$HERE/model.txt")}"
while [ $# -gt 0 ]; do
  case "$1" in
    --ragen) RAGEN="$2"; shift 2;;
    --gpus) GPUS="$2"; shift 2;;
    --sft-gpus) SFT_GPUS="$2"; shift 2;;
    --tp) TP="$2"; shift 2;;
    --model) MODEL_PATH="$2"; shift 2;;
    --out) OUT="$2"; shift 2;;
    --skip-sft) SKIP_SFT=1; shift;;
    --check) CHECK_ONLY=1; shift;;
    *) echo "launch.sh: unknown argument $1" >&2; exit 2;;
  esac
done
die() { echo "launch.sh: $*" >&2; exit 2; }
for v in GPUS SFT_GPUS TP; do
  [ -z "\${!v}" ] || [[ "\${!v}" =~ ^[1-9][0-9]*$ ]] || die "--$(tr _ - <<< "\${v,,}"): expected a positive integer, received '\${!v}'"
done
SFT_GPUS="\${SFT_GPUS:-$GPUS}"
# Paths reach Hydra single-quoted ('…': a space, ',' or '(' stays inside one value); Hydra's grammar cannot take a ', a
# backslash or \${ even there (an escape, an interpolation), so such a path is refused here rather than misread on the cluster.
hydra_safe() {
  case "$2" in
    *"'"*|*"\\\\"*|*"\\\${"*) die "$1 $2: holds a ' or a \\\\ or \\\${, which Hydra's override parser reads as syntax; use a path without them (a link works)";;
  esac
}
hydra_safe --model "$MODEL_PATH"; hydra_safe --out "$OUT"; hydra_safe "the bundle folder" "$HERE"

${launchChecks(facts)}[ -n "$RAGEN" ] || die "--ragen <RAGEN checkout> is required (see README.md)"
[ -d "$RAGEN/SPA" ] || die "$RAGEN/SPA not found; clone SPA inside the RAGEN checkout (README.md)"
EXPERIMENT="${experiment}"; DATA="$HERE/data"
mkdir -p "$OUT"
bash "$HERE/install_env.sh" "$RAGEN"
cp "$HERE/config/${configName}.yaml" "$RAGEN/SPA/config/${configName}.yaml"
export PYTHONPATH="$HERE:\${PYTHONPATH:-}"          # ragen_recorder.py for the validation hook
export SPA_WORKBENCH_RECORD_DIR="$OUT/workbench_rollouts"
export WANDB_DIR="$OUT"                             # wandb/ inside the output folder (import reads it from there)

cd "$RAGEN/SPA"
if [ "$SKIP_SFT" = 0 ]; then
  MODE=add_worldmodel torchrun --standalone --nnodes=1 --nproc_per_node="$SFT_GPUS" -m sft.spa_sft_trainer \\
${sft.map((o) => `    ${o} \\`).join('\n')}
    2>&1 | tee "$OUT/sft.log"
  shopt -s nullglob; STEPS=("$OUT"/sft/global_step_*); shopt -u nullglob
  [ "\${#STEPS[@]}" -gt 0 ] || { echo "launch.sh: SFT wrote no global_step_* folder under $OUT/sft" >&2; exit 1; }
  LAST=$(printf '%s\\n' "\${STEPS[@]}" | sort -V | tail -1)   # run_spa.sh:111; sort -t_ broke on a '_' in the path
  MODEL_PATH="$LAST"
fi

MODE=base python ../train.py --config-path=SPA/config --config-name ${configName} \\
  model_path="'$MODEL_PATH'" \\
  system.CUDA_VISIBLE_DEVICES="'$CUDA_VISIBLE_DEVICES'" \\
  trainer.n_gpus_per_node="$GPUS" \\
  actor_rollout_ref.rollout.tensor_model_parallel_size="$TP" \\
  trainer.default_local_dir="'$OUT/ppo'" \\
  trainer.experiment_name="'$EXPERIMENT'" \\
  +algorithm.bi_level_gae=${biLevel ? 'True' : 'False'} \\
  +actor_rollout_ref.rollout.tp_size_check="$TP_CHECK" \\
${grpo ? '  +grpo_advantage_length_weight=False \\\n' : ''}  trainer.validation_data_dir="'$OUT/val_generations'" \\
  hydra.run.dir="'$OUT/hydra'" \\
  2>&1 | tee "$OUT/ppo.log"
echo "done: checkpoints in $OUT/ppo, validation rollouts in $SPA_WORKBENCH_RECORD_DIR (spa-workbench import $OUT --project <P>)"
`;
}

const SLURM = (experiment: string) => `#!/usr/bin/env bash
# Optional SLURM wrapper: sbatch --gres=gpu:4 slurm.sbatch --ragen /path/to/RAGEN --gpus 4
#SBATCH --job-name=${experiment.slice(0, 60)}
#SBATCH --nodes=1
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=32
#SBATCH --mem=256G
#SBATCH --time=48:00:00
#SBATCH --output=%x-%j.out
set -euo pipefail
HERE="\${SLURM_SUBMIT_DIR:-$(cd "$(dirname "\${BASH_SOURCE[0]}")" && pwd)}"
exec bash "$HERE/launch.sh" "$@"
`;

const ENV_SH = `# Environment the recipe reads (sourced by launch.sh).
export MODEL=\${MODEL:-1.5B}                       # SPA configs read \${oc.env:MODEL}
export RENDER_MODE=\${RENDER_MODE:-text_with_coordinates}  # read by no public code; kept because SPA's configs name it
export MODE=\${MODE:-base}                         # ctx_manager.mode: add_worldmodel (SFT data) | base (PPO)
export PYTHONHASHSEED=\${PYTHONHASHSEED:-10000}     # as SPA's train_ppo_sfted.sh
export VLLM_ATTENTION_BACKEND=\${VLLM_ATTENTION_BACKEND:-XFORMERS}
export WANDB_MODE=\${WANDB_MODE:-offline}          # set to online with WANDB_API_KEY to stream
`;

const INSTALL_ENV = `#!/usr/bin/env bash
# Install the workbench env (workbench_env.py) into a RAGEN v1 checkout and add the recorder hook. Idempotent.
set -euo pipefail
HERE="$(cd "$(dirname "\${BASH_SOURCE[0]}")" && pwd)"
RAGEN="$1"
cp "$HERE/workbench_env.py" "$RAGEN/ragen/env/workbench_env.py"
grep -q "_workbench_register" "$RAGEN/ragen/env/__init__.py" || cat >> "$RAGEN/ragen/env/__init__.py" <<'EOF'

# SPA Workbench export: workbench_sokoban / workbench_frozen_lake (state text = the workbench template's)
from .workbench_env import register as _workbench_register
_workbench_register(REGISTERED_ENVS, REGISTERED_ENV_CONFIGS)
EOF
python "$HERE/ragen_recorder.py" patch "$RAGEN"
`;

const TO_PARQUET = `"""Rebuild wm_train.parquet / wm_val.parquet from the JSONL twins with pandas (if a parquet reader disagrees with ours)."""
import sys
import pandas as pd

for split in ('train', 'val'):
    df = pd.read_json(f'wm_{split}.jsonl', lines=True)   # prompt: list of {role, content}
    df.to_parquet(f'wm_{split}.parquet', index=False)
    print(split, len(df), 'rows ->', f'wm_{split}.parquet', file=sys.stderr)
`;

const VALUES_NOTE: Record<BundleValues, string> = {
  run: 'the run\'s own settings (the default): its groups, steps, learning rates, clips, response length, turns and seeds on ' +
    'RAGEN\'s keys. Export with `--values paper` for the SPA release\'s settings.',
  paper: 'the SPA release\'s settings (`--values paper`): train groups 32x8, val groups 128x8, 1000 steps (test every 10, save every ' +
    '100), PPO mini-batch 64, actor lr 1e-6, critic lr 1e-5, response length 400, max turn 5, rollout filter ratio 0.25, seeds ' +
    '10000 (train) / 123 (val), 10 actions per game, SFT lr 1e-4 for 5 epochs at batch 16 (SPA 3848e68 config/base.yaml, ' +
    'ppo_trainer.yaml, train_ppo_sfted.sh, sft/finetune_ft.sh). The template (instruction, state text) and the env with its ' +
    'options are the run\'s.',
};

function readme(o: {
  runId: string; runName: string; experiment: string; configName: string; env: string; model: ExportResult['model']; values: BundleValues;
  rows: { train: number; val: number };
  stateFormat: string; warnings: string[] }): string {
  return `# ${o.runName} — SPA/RAGEN bundle

Exported by SPA Workbench from run \`${o.runId}\` (${o.env}). Runs the same experiment at scale with SPA's
released recipe on RAGEN v1 + verl (Ray): self-play SFT, then PPO from the SFT checkpoint.

## Values
This bundle trains with ${VALUES_NOTE[o.values]}

## Contents
- \`data/wm_train.parquet\`, \`data/wm_val.parquet\` — the run's self-play SFT rows (${o.rows.train} train / ${o.rows.val} val) in the
  release's columns: \`data_source, prompt (list of {role, content}), response, ability, reward_model, extra_info\`.
  \`data/wm_*.jsonl\` hold the same rows; \`python data/to_parquet.py\` (in data/) rebuilds the parquet with pandas.
  Written with hyparquet-writer; read back by pyarrow and pandas in the workbench's tests.
- \`config/${o.configName}.yaml\` — Hydra config (\`defaults: [base]\`) with the run's settings on RAGEN's keys.
- \`workbench_env.py\`, \`install_env.sh\` — env types \`workbench_sokoban\` / \`workbench_frozen_lake\`: RAGEN's envs with a text
  render equal to the workbench template's state (format \`${JSON.stringify(o.stateFormat)}\`), so SFT rows and PPO prompts agree.
- \`launch.sh\` (SFT then PPO; \`--gpus N --sft-gpus N --tp N\`), \`slurm.sbatch\`, \`env.sh\`.
- \`stack.json\` — the pinned stack; \`model.txt\` / \`model.json\` — the model; \`ragen_recorder.py\` — validation rollouts → JSONL.

## Setup (once)
\`\`\`
git clone https://github.com/RAGEN-AI/RAGEN && cd RAGEN && git checkout 5eb79b8 && git submodule update --init   # verl 1e47e412
git clone https://github.com/shiqichen17/SPA && (cd SPA && git checkout 3848e68)
bash scripts/setup_ragen.sh        # RAGEN's setup (SPA README "Environment Setup"): pip install -e verl, -e ., requirements (gym_sokoban, ray, …)
pip install torch==2.6.0 --index-url https://download.pytorch.org/whl/cu124 && pip install vllm==0.8.5.post1   # then flash-attn 2.7.3 (stack.json)
\`\`\`
Without \`setup_ragen.sh\` SFT stops at \`import verl\` (RAGEN's verl/ is a submodule, not an installed package).
SPA's own scripts hard-code \`JAVA_HOME\` and cluster paths; \`launch.sh\` does not use them.

## Run
\`\`\`
./launch.sh --ragen /path/to/RAGEN --gpus 4            # SFT on 4 GPUs, then PPO with tensor parallel 4
sbatch --gres=gpu:4 slurm.sbatch --ragen /path/to/RAGEN --gpus 4
./launch.sh --check --gpus 8                            # only the checks below; prints the GPUs, TP and device ids it would use
\`\`\`
Before anything starts, launch.sh refuses (naming the numbers): a \`--tp\` that does not divide the model's attention heads (the
default TP is the largest divisor of both \`--gpus\` and the heads), fewer \`CUDA_VISIBLE_DEVICES\` ids than \`--gpus\` (SLURM; more
are cut to the first \`--gpus\`), a PPO mini-batch that \`--gpus\` does not divide (RAGEN train.py:130-133), and SFT on more GPUs
than there are val rows (${o.rows.val}) or than divide the SFT batch (SPA sft/spa_sft_trainer.py:123,189-199,602).
Outputs: \`outputs/sft/global_step_*\` (HF folders), \`outputs/ppo/global_step_*\` (verl FSDP shards; convert with
\`python scripts/model_merger.py --backend fsdp --hf_model_path <base> --local_dir outputs/ppo/global_step_N/actor --target_dir <out>\`),
\`outputs/workbench_rollouts/val_step*.jsonl\` (recorder), \`outputs/val_generations/<step>.jsonl\` (verl's validation dump),
\`outputs/ppo.log\` (verl console metrics, 3 decimals), \`outputs/hydra/.hydra/config.yaml\`, \`outputs/wandb/\`. Bring the run back:
\`spa-workbench import outputs --project <P>\` (or \`wandb sync outputs/wandb/offline-run-*\` for the full-precision W&B history).

## Model
${o.model.kind === 'base' ? 'Base model' : 'Model'}: \`${o.model.path}\` — ${o.model.note}. Override with \`--model\` or \`MODEL_PATH\` (a local HF ` +
  `folder for clusters without hub access).

## What differs from the workbench run
- Puzzles come from RAGEN's generator (gym-sokoban), not the workbench's, so the same seed gives a different level; the text of a state
  is the same function of the board.
- PPO prompts are built by RAGEN's ctx_manager: the instruction is the template's, followed by RAGEN's symbol and action lines;
  the turn lines are RAGEN's ("Turn k:\\nState:\\n…\\nYou have N actions left…").
- SPA's released SFT does not simply mask the state spans: it replaces each <observation>…</observation> and
  <prediction>…</prediction> content with a placeholder token (two added special tokens, embeddings resized;
  sft/spa_sft_dataset.py:174-196, sft/spa_sft_trainer.py:232-239), and masks the position after each placeholder. The model never
  sees state text in its own turns and learns to emit the placeholder. The workbench's \`maskStateSpans\` only drops the span
  tokens from the loss, so it is close to, not equal to, the release.
- SFT rows are re-rendered in the chat layout of the release's SFT data (SPA 3848e68 SPA_agent/ctx_manager.py:179-194, 339-358;
  generate_sft_data.py:254-268): system "You're a helpful assistant. ", the instruction with RAGEN's symbol and action lines, then
  "Turn k:\nState:\n…\nYou have N actions left. Always output: <think> <observation> … Max response length: …" and "Reward:\n<r>"
  messages; the replies are the run's (ground-truth states). RAGEN's PPO prompt of the same game differs only in its format line
  ("<think> [Your thoughts] </think> <answer> …", RAGEN ctx_manager.py:256), as in the release. The state text is the only part
  shared with the workbench template; the workbench's own turn lines and system prompt are not used.
${o.warnings.map((w) => `- ${w}`).join('\n')}

Not verified by the workbench: the recipe itself (no GPU where it was built). Verified on the CPU: the formats (pyarrow, pandas,
omegaconf), the config composed by Hydra over SPA 3848e68's config/ and passing RAGEN 5eb79b8's train.py checks, the SFT chat layout
against SPA_agent's ctx_manager, the env on RAGEN's FrozenLake class, and the recorder on RAGEN's EnvStateManager
(docs/scale-out.md in the workbench lists each test).
`;
}

/** The run's self-play episodes by id (the files rollouts/index.jsonl names for stage selfplay); empty when the run kept none. */
function readRunEpisodes(runDir: string): Map<string, EpisodeRecord> {
  const out = new Map<string, EpisodeRecord>();
  const indexFile = path.join(runDir, ROLLOUT_INDEX);
  if (!fs.existsSync(indexFile)) return out;
  const files = new Set(readJsonl<{ stage?: string; file?: string }>(indexFile).rows.filter((e) => e.stage === 'selfplay' && typeof e.file === 'string')
    .map((e) => e.file!));
  for (const rel of files) {
    const file = insideRun(runDir, rel, 'rollouts/index.jsonl file');
    if (!fs.existsSync(file)) continue;
    for (const e of readJsonl<EpisodeRecord>(file).rows) if (e && typeof e.id === 'string' && Array.isArray(e.turns)) out.set(e.id, e);
  }
  return out;
}

function runTemplateOf(runDir: string, config: RunConfig): PromptTemplate {
  const pinned = readPinnedTemplate(runDir, (json) => TemplateSchema.parse(json));
  if (pinned) return pinned.template;
  return builtinTemplate(config.template.preset, config.template.responseFormat);
}

/** Write the bundle; throws a ValidationError naming what cannot be exported. */
export function exportSpaRagenBundle(opts: ExportOptions): ExportResult {
  const read = readRunRecord(opts.runDir);
  if (read.status !== 'ok') throw new WorkbenchError('NotFound', `export: no readable run.json in ${opts.runDir}`, { where: 'runDir',
    expected: 'a run folder' });
  const run = read.value;
  if (run.status === 'imported') throw new WorkbenchError('ValidationError',
    `export: run ${run.id} was imported from SPA/RAGEN; export the original run`, { where: 'runId', received: run.status });
  const config = resolvedSpec(run.config);
  const template = runTemplateOf(opts.runDir, config);
  const warnings: string[] = [];
  const out = path.resolve(opts.out);
  if (fs.existsSync(out) && (!fs.statSync(out).isDirectory() || fs.readdirSync(out).length > 0)) {
    throw new WorkbenchError('Conflict', `export: ${out} exists and is not an empty folder; choose a new folder`, { where: '--out',
      expected: 'a new or empty folder', received: out });
  }
  const slug = `${run.name}`.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '').slice(0, 40) || 'run';
  const configName = `workbench_${slug}`;
  const experiment = `workbench-${run.id}`.slice(0, 120);
  const model = modelReference(opts.runDir, config, opts.model);
  if (model.kind === 'base') warnings.push(`Model: ${model.note}.`);

  const values: BundleValues = opts.values ?? 'run';
  if (!(BUNDLE_VALUES as readonly string[]).includes(values)) {
    throw new WorkbenchError('ValidationError', `export: --values must be ${BUNDLE_VALUES.join(' or ')}, received ${JSON.stringify(values)}`,
      { where: '--values', expected: BUNDLE_VALUES.join(' | '), received: String(values) });
  }
  const cfg = hydraConfig(config, template, experiment, model.path, values);
  const unknown = unknownRagenKeys(cfg);
  if (unknown.length) throw new Error(`export: the Hydra config has keys RAGEN does not know: ${unknown.join(', ')} (a bug in the exporter)`);
  const customEnv = (cfg.custom_envs as Record<string, { env_instruction_add_worldmodel: string; max_actions_per_traj: number; max_tokens: number;
    env_config: { state_format: string } }>)[RAGEN_ENV[config.env.id]!.tag]!;

  // SFT rows in the release's layout (M5): SPA_agent's ctx_manager chat rebuilt from the run's episodes, the kept replies unchanged
  const episodes = readRunEpisodes(opts.runDir);
  const prefix = ragenPrefix(config.env.id as RagenEnvId, customEnv.env_instruction_add_worldmodel, customEnv.max_actions_per_traj);
  const rows: Record<'train' | 'val', SpaSftRow[]> = { train: [], val: [] };
  let keptLayout = 0;
  for (const split of ['train', 'val'] as const) {
    const file = path.join(opts.runDir, sftFile(split));
    if (!fs.existsSync(file)) continue;
    const r = readJsonl<Record<string, unknown>>(file);
    r.rows.forEach((row, i) => {
      const messages = row.messages as { role: string; content: string }[] | undefined;
      if (!Array.isArray(messages) || messages.length < 2 || messages[messages.length - 1]!.role !== 'assistant') {
        throw new WorkbenchError('CorruptData', `export: ${sftFile(split)} row ${i + 1} has no messages ending with the assistant turn`,
          { where: `${sftFile(split)}:${i + 1} messages` });
      }
      const replies = messages.filter((m) => m.role === 'assistant').map((m) => m.content);
      const episode = typeof row.episodeId === 'string' ? episodes.get(row.episodeId) : undefined;
      const turn = typeof row.turn === 'number' ? row.turn : -1;
      let prompt: { role: string; content: string }[];
      if (episode && turn >= 0 && turn < episode.turns.length && replies.length === turn + 1) {
        const turns = ragenTurnsOf(episode, replies, customEnv.max_actions_per_traj);
        prompt = ragenChat(prefix, turns, { mode: 'add_worldmodel', maxTokens: customEnv.max_tokens, upto: turn });
      } else {
        keptLayout++;
        prompt = messages.slice(0, -1).map((m) => ({ role: m.role, content: m.content }));
      }
      rows[split].push({
        data_source: config.env.id, prompt, response: messages[messages.length - 1]!.content, ability: 'bfs',
        reward_model: "{'ground_truth': {'numbers': array([0, 0]), 'target': 0}}", extra_info: "{'index': 0, 'split': 'dummy'}",
      });
    });
  }
  if (keptLayout) warnings.push(`${keptLayout} SFT row(s) kept the workbench chat layout: their episode (rollouts/) was not found or does not ` +
    'match the row, so the SPA_agent layout could not be rebuilt.');
  if (config.env.id === 'frozenlake') {
    const o = config.env.options as Record<string, unknown>;
    if (o.randomStartGoal !== true) warnings.push('FrozenLake: RAGEN always puts start and goal at random cells (ragen/env/frozen_lake/utils.py); ' +
      'the run used the corners (randomStartGoal false), so cluster maps differ in that respect.');
    if (o.map !== undefined) warnings.push('FrozenLake: the run\'s explicit map is not carried over; RAGEN generates a random map per seed.');
    warnings.push(`FrozenLake: a slippery move goes the intended way with probability ${String(envOptionsOf(config).successRate)} (env_config.success_rate, ` +
      'applied by workbench_env.py to gymnasium\'s transition table; RAGEN itself fixes it at 1/3).');
  }
  const hasSft = rows.train.length > 0;
  if (!hasSft) warnings.push('The run has no self-play SFT rows (its method has no self-play stage); launch.sh skips SFT and runs PPO from the model.');

  const rl = config.stages.rl;
  const aggregation = values === 'paper' ? {} : lossAggregationOf(rl);
  if (aggregation.warning) warnings.push(`Loss weighting: ${aggregation.warning}`);
  const stateFormat = customEnv.env_config.state_format;
  const sft = sftOverrides(config, values);
  // RAGEN 5eb79b8 train.py:140 checks env_groups x group_size x rollout_filter_ratio >= ppo_mini_batch_size before training: the
  // workbench caps a mini-batch at the batch it has, so the bundle writes the cap (and says so) instead of failing on the cluster
  const es = cfg.es_manager as { train: { env_groups: number; group_size: number } };
  const filterRatio = Number((cfg.actor_rollout_ref as { rollout: { rollout_filter_ratio: number } }).rollout.rollout_filter_ratio);
  const effective = Math.floor(es.train.env_groups * es.train.group_size * filterRatio + 1e-9);
  if (effective < 1) {
    throw new WorkbenchError('ValidationError', `export --to spa-ragen: env_groups ${es.train.env_groups} x group_size ${es.train.group_size} x ` +
      `rollout_filter_ratio ${filterRatio} leaves no rollout to train on (RAGEN train.py:140); raise rl.groups, rl.groupSize or rl.keepGroupsFraction`,
    { where: 'config.stages.rl', expected: 'groups x groupSize x keepGroupsFraction >= 1', received: String(effective) });
  }
  if (Number(cfg.ppo_mini_batch_size) > effective) {
    warnings.push(`PPO mini-batch: the run's ${String(cfg.ppo_mini_batch_size)} is more than the ${effective} rollouts each step keeps ` +
      `(env_groups ${es.train.env_groups} x group_size ${es.train.group_size} x rollout_filter_ratio ${filterRatio}); RAGEN train.py:140 refuses ` +
      `that, so the bundle uses ppo_mini_batch_size ${effective} (the workbench caps a mini-batch at the batch).`);
    cfg.ppo_mini_batch_size = effective;
  }

  const tmp = path.join(path.dirname(out), `.${path.basename(out)}.tmp-${randomBytes(3).toString('hex')}`);
  const files: string[] = [];
  const write = (rel: string, data: string | Uint8Array, mode = 0o644) => {
    const f = path.join(tmp, rel);
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, data, { mode });
    files.push(rel);
  };
  try {
    for (const split of ['train', 'val'] as const) {
      write(`data/wm_${split}.parquet`, writeSpaSftParquet(rows[split]));
      write(`data/wm_${split}.jsonl`, rows[split].map((r) => JSON.stringify(r)).join('\n') + (rows[split].length ? '\n' : ''));
    }
    write('data/to_parquet.py', TO_PARQUET);
    write(`config/${configName}.yaml`,
      `# SPA Workbench run ${run.id}: ${values === 'paper' ? 'the SPA release\'s settings (--values paper) with the run\'s template and env'
        : 'the run\'s settings'} on RAGEN v1 keys (checked against them at export)\n${YAML.stringify(literalStrings(cfg), { lineWidth: 0 })}`);
    write('launch.sh', launchScript(experiment, configName, sft, hasSft,
      values === 'paper' ? PAPER_VALUES.ppo.biLevelGae : rl.advantage === 'turn-then-token',
      (cfg.algorithm as { adv_estimator: string }).adv_estimator === 'grpo', {
        miniBatch: Number(cfg.ppo_mini_batch_size), sftBatch: Number(sft.find((o) => o.startsWith('data.train_batch_size='))!.split('=')[1]),
        rows: { train: rows.train.length, val: rows.val.length }, heads: attentionHeads(model.path), modelPath: model.path,
      }), 0o755);
    write('slurm.sbatch', SLURM(experiment), 0o755);
    write('env.sh', ENV_SH);
    write('install_env.sh', INSTALL_ENV, 0o755);
    for (const py of ['workbench_env.py', 'ragen_recorder.py']) write(py, fs.readFileSync(path.join(INTEROP_RESOURCES, py)));
    write('model.txt', `${model.path}\n`);
    write('model.json', `${JSON.stringify(model, null, 2)}\n`);
    write('stack.json', `${JSON.stringify(PINNED_STACK, null, 2)}\n`);
    write('README.md', readme({ runId: run.id, runName: run.name, experiment, configName, env: config.env.id, model, values, rows: { train: rows.train.length,
      val: rows.val.length }, stateFormat, warnings }));
    const manifest = files.map((rel) => ({ file: rel, sha256: createHash('sha256').update(fs.readFileSync(path.join(tmp, rel))).digest('hex') }));
    const exportedAt = new Date(opts.now ?? Date.now()).toISOString();
    const bundleInfo = { format: 'spa-workbench.spa-ragen-bundle', version: 1, runId: run.id, exportedAt, values, files: manifest };
    write('bundle.json', `${JSON.stringify(bundleInfo, null, 2)}\n`);
    if (fs.existsSync(out)) fs.rmdirSync(out);
    fs.renameSync(tmp, out);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  return { dir: out, values, files, warnings, model };
}
