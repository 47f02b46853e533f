// The run configuration: the one typed, validated description of a run (issue 36: one run spec).
// Every hyperparameter lives here once, with its default, its bounds and a one-line `.describe()`
// (units; where the default comes from: paper = arXiv 2510.15047's reference settings, release =
// the released SPA/RAGEN code, ours = chosen here). Unknown keys are errors (strict objects).
// `RunConfigSchema.parse` fills every default, so a parsed RunConfig is the resolved spec: stages
// read `config.stages.rl.lr` directly, and run.json stores it (with RUN_SPEC_VERSION). The CLI, the
// New Run form (runs.configSchema), the export bundle and the memory model read the same values.
// This file must not import Node modules (the renderer type-checks against it).
import { z } from 'zod';

export const MethodSchema = z.enum([
  'vanilla-rl',        // raw grid, plain format, PPO
  'state-estimation-rl', // coordinates template, world-model format, no SFT, PPO
  'spa',               // coordinates + self-play SFT (GT replaced) + PPO
  'online-wm-rl',      // VAGEN-style world-model reward during RL, no SFT
  'rwml-rl',           // RWML-style GRPO on next-state prediction, then PPO
  'sft-only',          // self-play SFT, no RL
]);
export type Method = z.infer<typeof MethodSchema>;

/**
 * The env a run gets when its config names none: the one place the default env is written (engine, presets, imports, the CLI's
 * `run` and `start --run`, and the desktop app's demo read it). FrozenLake: it has a shipped base (resources/bases/frozenlake),
 * so `run spa --size quick` and `npm start` reach self-play in seconds; Sokoban and Sudoku train a base first (~90 min).
 */
export const DEFAULT_ENV_ID = 'frozenlake';

/**
 * The run sizes, in the order they are offered: the one list (the API's SizeSchema, the CLI, studies, presets and the
 * memory-model doc read it). `preset: true`: every method preset defines its own settings at that size
 * (core/train/presets.ts SIZE_SETTINGS); the GPU sizes are the paper size's recipe with memory settings for one card
 * (core/engine/presets.ts); custom is a config that came from no preset. Adding a size: one row here plus its settings in
 * SIZE_SETTINGS and TEMPLATE_BY_SIZE (core/train/presets.ts; TypeScript names both until they are there).
 */
export const RUN_SIZES = [
  { id: 'smoke', preset: true, description: 'seconds on one CPU core: a micro model and a handful of games (the tests)' },
  { id: 'quick', preset: true, description: 'the main job (npm start): minutes on a 2-core CPU with the tiny model, from the shipped base' },
  { id: 'standard', preset: true, description: 'the study size: quick\'s model and base, more self-play, SFT, RL and a 128 x 8 final eval' },
  {
    id: 'cpu-real', preset: true,
    description: 'a small pretrained model folder (model.path) on a CPU: LoRA, the compact format, SFT of the world model in ~2.5 CPU-hours',
  },
  { id: 'paper', preset: true, description: 'the reference settings of arXiv 2510.15047 (a 1.5B model on 4 GPUs)' },
  { id: 'gpu-24g', preset: false, description: 'the paper recipe on a local model folder, memory settings for one 24 GB GPU' },
  { id: 'gpu-80g', preset: false, description: 'the paper recipe on a local model folder, memory settings for one 80 GB GPU' },
  { id: 'custom', preset: false, description: 'a config that came from no preset' },
] as const;
export type Size = (typeof RUN_SIZES)[number]['id'];
type PresetSizeRow = Extract<(typeof RUN_SIZES)[number], { preset: true }>;
/** A size every method preset defines settings for. */
export type PresetSize = PresetSizeRow['id'];
export const SizeSchema = z.enum(RUN_SIZES.map((s) => s.id) as [Size, ...Size[]]);
/** The sizes with per-preset settings, in RUN_SIZES order. */
export const PRESET_SIZES: PresetSize[] = RUN_SIZES.filter((s): s is PresetSizeRow => s.preset).map((s) => s.id);
export const PresetSizeSchema = z.enum(PRESET_SIZES as [PresetSize, ...PresetSize[]]);

export const EnvConfigSchema = z.object({
  id: z.string().default(DEFAULT_ENV_ID)
    .describe('registered env id; source: ours'),
  options: z.record(z.string(), z.unknown()).default({})
    .describe('env constructor arguments (validated by the env); source: ours'),
}).strict();

export const TemplateRefSchema = z.object({
  preset: z.string().default('spa')
    .describe('template preset name (core/prompts presets or the pipeline\'s tiny-* variants); source: ours'),
  hash: z.string().optional()
    .describe('pin a saved version by content hash; source: ours'),
  responseFormat: z.enum(['plain', 'world-model']).default('world-model'),
}).strict();

/**
 * The value an unset RunConfig.model.memory field has: the runtimes' defaults (core/model/memory.ts DEFAULT_MEMORY, which
 * tests/engine/run-spec.test.ts keeps equal to these) and what the memory model assumes (core/engine/memory-model.ts).
 */
export const MEMORY_DEFAULTS = {
  tokensPerMicroBatch: 6144, gradientCheckpointing: 'auto', generationRows: 64, frozenDtype: 'auto', checkpointDtype: 'auto',
  optimizerDtype: 'auto', optimizerState: 'resume', keepMilestones: 5, resumePointMinutes: 20,
} as const;

/**
 * The settings a stopped or failed run may change when it is resumed (`spa-workbench resume RUN --set key=value`, runs.resume
 * `set`): how the work is laid out in memory and in batches, never what the method computes. Each with what it changes.
 * Any other key is refused (a change of the method is a new run). Source: ours (study v4's amendments of 2026-11-30,
 * docs/results/study-v4/README.md: a run OOM-killed at its RL rollout peak resumed with fewer generation rows).
 */
export const RESUME_SETTABLE: Readonly<Record<string, string>> = {
  'model.memory.generationRows': 'rows prefilled and decoded together: the same sampling distribution (padding changes rounding)',
  'model.memory.tokensPerMicroBatch': 'the chunks a step\'s gradient is accumulated in: the same step up to floating-point rounding',
  'model.memory.gradientCheckpointing': 'activations recomputed in backward or kept: the same numbers, less memory or less time',
  'model.memory.keepMilestones': 'how many RL milestone checkpoints are kept',
  'model.memory.resumePointMinutes': 'how often SFT writes a mid-epoch resume point and RL one inside a step\'s update: a resume from one is exact',
  'stages.rollout.batchSize':
    'episodes played together (and journalled together): each batch\'s sampling seed changes, the distribution does not',
};

/** RunConfig.model.memory: how the model runtime trades memory for compute, and what checkpoints hold (core/model/memory.ts). */
export const ModelMemorySchema = z.object({
  tokensPerMicroBatch: z.number().int().positive().optional()
    .describe('padded tokens per forward/backward; gradients accumulate to one step (6144); source: ours'),
  gradientCheckpointing: z.union([z.boolean(), z.literal('auto')]).optional()
    .describe('recompute layer activations in backward (auto: real models); source: ours'),
  generationRows: z.number().int().positive().optional()
    .describe('rows prefilled and decoded together on torch (64); source: ours'),
  frozenDtype: z.enum(['auto', 'bf16', 'f32']).optional()
    .describe('KL reference / LoRA base weights (auto: bf16 for real models); source: ours'),
  checkpointDtype: z.enum(['auto', 'bf16', 'f16', 'f32']).optional()
    .describe('weights of checkpoints without moments (auto: bf16 for real models); source: ours'),
  optimizerDtype: z.enum(['auto', 'bf16', 'f32']).optional()
    .describe('AdamW moments (auto: bf16 for real models, torch; stochastic rounding); source: ours'),
  optimizerState: z.enum(['resume', 'all', 'none']).optional()
    .describe('AdamW moments: only in a stage\'s resume point (default), everywhere, never; source: ours'),
  keepMilestones: z.number().int().nonnegative().nullable().optional()
    .describe('RL milestones kept besides the final one (5; null: all); source: ours'),
  resumePointMinutes: z.number().nonnegative().optional()
    .describe('minutes between SFT\'s mid-epoch resume points, so a hard kill loses at most that much (20; 0: none); source: ours'),
}).strict();

export const ModelConfigSchema = z.object({
  source: z.enum(['preset', 'hf-folder', 'checkpoint']).default('preset'),
  preset: z.string().default('tiny')
    .describe('model size preset when source = preset; source: ours'),
  path: z.string().optional()
    .describe('local HF folder or checkpoint folder; source: ours'),
  lora: z.object({ rank: z.number().int().positive(), alpha: z.number().positive(), targetModules: z.array(z.string()) }).strict().optional(),
  criticMode: z.enum(['shared-trunk', 'separate']).default('shared-trunk'),
  overrides: z.record(z.string(), z.unknown()).optional()
    .describe('model config fields over the preset (e.g. a smaller width for smoke runs); source: ours'),
  memory: ModelMemorySchema.optional(),                       // memory and checkpoint-size settings (docs/checkpoints.md); unset: defaults
  // how a folder's chat is laid out and dated (core/model/chat.ts ChatSettings): layout auto = the folder's template, Qwen3's as ChatML
  // with every turn verbatim (verl's Qwen3 multi-turn layout); date 'YYYY-MM-DD' for templates that print one (default 2024-07-26)
  chat: z.object({ layout: z.enum(['auto', 'template', 'chatml']).optional(), date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional() })
    .strict().optional()
    .describe("a folder chat's layout (auto: its template; Qwen3's as verl's ChatML) and date (YYYY-MM-DD, default 2024-07-26); source: ours"),
}).strict();

export const SeedsSchema = z.object({
  base: z.number().int().default(0)
    .describe('master seed of the run; source: ours'),
  selfplayStart: z.number().int().default(1_000_000)
    .describe('self-play puzzle seeds start here; source: ours'),
  rlStart: z.number().int().default(2_000_000)
    .describe('RL puzzle seeds start here (disjoint range); source: ours'),
  evalStart: z.number().int().default(3_000_000)
    .describe('evaluation puzzle seeds start here (disjoint range); source: ours'),
}).strict();

// ───────────────────────── stage sections (RunConfig.stages.<name>) ─────────────────────────
// Each stage's settings; parsed strictly by the pipeline when a run is planned, so an unknown or
// ill-typed key is an error that names the stage and the key. Defaults are the "quick" size on a
// tiny model; presets override them per size.

/** Limits and sampling shared by every stage that plays episodes. */
export const RolloutSectionSchema = z.object({
  maxTurns: z.number().int().positive().optional()
    .describe('turns per episode (default: the env\'s budget, reference 5); source: paper'),
  maxActionsPerTurn: z.number().int().positive().optional()
    .describe('actions kept per answer (default: the env\'s budget, reference 5); source: paper'),
  maxActionsPerGame: z.number().int().positive().optional()
    .describe('action budget per game (default: the env\'s budget, reference 10; Sudoku 50); source: paper'),
  maxNewTokens: z.number().int().positive().default(160)
    .describe('generation limit per turn (tokens); source: ours'),
  maxContextTokens: z.number().int().positive().default(1024)
    .describe('prompt tokens kept: older turns are dropped first; source: ours'),
  temperature: z.number().min(0).default(1)
    .describe('sampling temperature (reference: 1); source: paper'),
  topP: z.number().gt(0).max(1).default(1)
    .describe('nucleus sampling mass; source: ours'),
  topK: z.number().int().min(0).default(0)
    .describe('top-k (0 = off); source: ours'),
  batchSize: z.number().int().positive().default(32)
    .describe('episodes generated together in one batch; source: ours'),
  history: z.enum(['text', 'tokens']).default('text')
    .describe('what a later turn\'s prompt holds of the earlier ones: text = the chat re-rendered and re-tokenized from the ' +
      'messages\' text every turn, as the release does (RAGEN 5eb79b8 ctx_manager.py:240-267 get_lm_inputs; a reply\'s text ' +
      'can re-tokenize to other ids than the model sampled) | tokens = token in, token out: the previous prompt and the ' +
      'sampled ids, then the template\'s tokens after the reply (its end-of-turn, if the model did not write it, and the next ' +
      'user message), as verl\'s agent loop does (verl/experimental/agent_loop/tool_agent_loop.py ToolAgentLoop.run: ' +
      'prompt_ids += response_ids); a turn whose history would pass maxContextTokens is rendered from text (oldest turns ' +
      'dropped), and the next turn continues that prompt\'s ids when they fit; source: release (text), verl (tokens)'),
}).strict();
export type RolloutSection = z.infer<typeof RolloutSectionSchema>;

/** One extension phase of the bootstrap (stages.bootstrap.extend). */
export const BootstrapPhaseSchema = z.object({
  steps: z.number().int().positive()
    .describe('optimizer steps of this phase; source: ours'),
  batchSize: z.number().int().positive().optional()
    .describe('sequences per step (default: the section\'s); source: ours'),
  lr: z.number().positive().optional()
    .describe('peak lr of this phase\'s cosine (default: the section\'s); source: ours'),
  copyDrills: z.number().min(0).max(1).optional()
    .describe('copy-drill share of this phase\'s data (default: the section\'s); source: ours'),
}).strict();
export type BootstrapPhase = z.infer<typeof BootstrapPhaseSchema>;

export const BootstrapSectionSchema = z.object({
  games: z.number().int().positive().default(400)
    .describe('random-policy games written as training text; source: ours'),
  steps: z.number().int().nonnegative().default(300)
    .describe('optimizer steps of pretraining; source: ours'),
  batchSize: z.number().int().positive().default(8)
    .describe('sequences per step; source: ours'),
  lr: z.number().positive().default(2e-3)
    .describe('peak learning rate (cosine, 5% warmup); source: ours'),
  templates: z.array(z.string()).default(['tiny-vanilla', 'tiny-spa'])
    .describe('templates (each with its response format) mixed in, so one base serves every method; the run\'s own template is always added; source: ours'),
  maxLength: z.number().int().positive().default(2048)
    .describe('tokens per game row (later turns are cut); source: ours'),
  turns: z.number().int().positive().optional()
    .describe('turns per bootstrap game (default: the rollout/env budget); fewer = shorter, cheaper rows; source: ours'),
  cache: z.boolean().default(true)
    .describe('share the checkpoint per (env, templates, model, seed) under <project>/cache/; source: ours'),
  decoyPool: z.number().int().nonnegative().default(0)
    .describe('observation \'decoy\' only: states come from this many unrelated decoy puzzles (0 = a fresh decoy per turn); source: ours'),
  observation: z.enum(['true', 'decoy']).default('true')
    .describe('true: <observation> = the true state, <prediction> = a counterfactual (the state after other random actions); ' +
      'decoy: the old anti-grounded data (audit B2); source: ours'),
  prediction: z.enum(['counterfactual', 'copy']).default('counterfactual')
    .describe('counterfactual: <prediction> = the state after other random actions; copy: the observation again ("nothing moves", issue 23); source: ours'),
  copyDrills: z.number().min(0).max(1).default(0.2)
    .describe('share of extra short rows that copy a state into <observation> (teaches copying); source: ours'),
  saveEvery: z.number().int().nonnegative().default(50)
    .describe('save the state every N steps so a stopped bootstrap resumes (0 = only at the end); source: ours'),
  gateTurns: z.number().int().nonnegative().default(50)
    .describe('held-out turns for the gate (0 = no gate); source: ours'),
  gateObservationExact: z.number().min(0).max(1).default(0.8)
    .describe('gate: observation exact match on held-out turns ≥ this; source: ours'),
  gateKeepRate: z.number().min(0).max(1).default(0.7)
    .describe('gate: share of generated world-model turns self-play would keep ≥ this; source: ours'),
  shipped: z.boolean().default(true)
    .describe('use the shipped base (resources/bases/<env>) when env, templates, model, settings match; source: ours'),
  extend: z.array(BootstrapPhaseSchema).default([])
    .describe('further phases after `steps`, each warm from the last with a fresh AdamW and its own cosine schedule (5% warmup), ' +
      'its data rebuilt with its own batch size, lr and copy-drill share (unset = the section\'s); e.g. a base that failed its gate extended; source: ours'),
}).strict();
export type BootstrapSection = z.infer<typeof BootstrapSectionSchema>;

export const SelfplaySectionSchema = z.object({
  games: z.number().int().positive().default(64)
    .describe('self-play games (reference: 5 × 256); source: ours (paper: 5 × 256)'),
  policy: z.enum(['model', 'random']).default('model')
    .describe('\'random\' = random-action ablation (well-formed random turns); source: ours'),
  groundTruthReplacement: z.boolean().default(true)
    .describe('false = self-belief ablation (train on the model\'s own states); source: ours'),
  alignPlan: z.boolean().default(false)
    .describe('true: the reasoning is rewritten as "I will try <the answer\'s actions>." so the prediction follows its plan (tiny models); source: ours'),
  drills: z.number().int().nonnegative().default(0)
    .describe('one-action world-model drills: the random-action generator plays this many extra one-turn games of one action on fresh ' +
      'self-play seeds (from selfplayStart + 700000); after ground-truth replacement each is a row whose prediction is the true state after ' +
      'one action, the dynamics in the shortest turn the format allows (0 = none, as the paper); source: paper'),
  drillLookahead: z.boolean().default(false)
    .describe('the drills write the lookahead reply\'s candidates (lookaheadForm) before their random move; SFT trains the ' +
      'candidates as predictions with the state contents, never the move. FrozenLake only; source: ours'),
  lookahead: z.number().int().nonnegative().default(0)
    .describe('lookahead decision games (ours, issue 34; not in the paper, whose reply commits the move before its prediction): ' +
      'games on fresh self-play seeds (from selfplayStart + 800000) written by a one-step rule on the true next states, in the ' +
      'lookahead reply: the observation, each action\'s predicted outcome (lookaheadForm), ' +
      'then "I will try A.", the prediction and the answer; A = the goal, else an ice move nearer the goal, else ice, else stay, ' +
      'else a hole (ties at random). Each game is one train row in which every reply is trained, whole (the decision is a label ' +
      'from true states: a setup that injects a scripted rule). FrozenLake only; 0 = none; source: ours'),
  lookaheadForm: z.enum(['cells', 'grids', 'none']).default('cells')
    .describe('the lookahead reply\'s candidates: \'grids\' = each action ("Left:") with the whole state its intended move gives ' +
      '(the world model\'s own prediction, ~4 x 20 characters on a 4 x 4 lake) | \'cells\' = one line of each action\'s landing ' +
      'cell ("Left O, Down _, Right G, Up #.", ~30 characters; the 2 x 64 model did not learn to read the neighbour cells: ' +
      'docs/results/mainjob-v3) | \'none\' = no candidates: the paper\'s order, "I will try A." with the rule\'s move (a state-aware ' +
      'label of the policy rows only); applies to lookahead games and drills; source: ours'),
  lookaheadTurns: z.number().int().positive().default(1)
    .describe('turns per lookahead game, at most rollout.maxTurns (a game also ends at a hole or the goal); more than 1 teaches ' +
      'the reply after earlier turns too (replies with history); source: ours'),
  valFraction: z.number().min(0).lt(1).default(0.1)
    .describe('validation share, split by whole game; source: ours'),
}).strict();
export type SelfplaySection = z.infer<typeof SelfplaySectionSchema>;

export const SftSectionSchema = z.object({
  epochs: z.number().int().nonnegative().default(3)
    .describe('passes over the train rows (reference: 5); source: ours (paper: 5)'),
  lr: z.number().positive().default(1e-3)
    .describe('peak lr (reference 1e-4 for 1.5B; tiny models need more); source: ours (paper: 1e-4 for 1.5B)'),
  warmupFraction: z.number().min(0).max(1).default(0.1)
    .describe('linear warmup share of the cosine schedule (reference: 0.1); source: paper'),
  batchSize: z.number().int().positive().default(8)
    .describe('rows per step (reference global batch: 16); source: ours (paper: 16)'),
  weightDecay: z.number().min(0).default(0.01)
    .describe('AdamW weight decay (reference: 0.01); source: paper'),
  gradClip: z.number().positive().default(1)
    .describe('clip by global norm (reference: 1.0); source: paper'),
  maskStateSpans: z.boolean().default(false)
    .describe('the paper\'s ablation: exclude observation/prediction contents from the loss; source: paper'),
  maskActionSpans: z.boolean().default(false)
    .describe('train only the observation/prediction contents of the policy\'s own self-play rows (as the drills already are): ' +
      'their plan and answer are the starting policy\'s own state-blind moves (science-review-2 section 2a.5), so SFT does not ' +
      'train the move on them; the lookahead rows (selfplay.lookahead) keep their whole reply. The mirror of maskStateSpans; ' +
      'both together leave the policy rows out; source: ours'),
  maxLength: z.number().int().positive().default(1024)
    .describe('tokens per row; longer prompts lose their oldest turns; source: ours'),
  moveWeight: z.number().positive().default(1)
    .describe('weight of the token that chooses the move (core/train/ppo.ts decisionTokenMask: the first character after ' +
      '"I will try ", else of the <answer>\'s contents) in each trained reply, against 1 for every other target token (1 = ' +
      'the plain cross-entropy of SPA\'s SFT). The move is 1 token of ~69 in a compact reply, so unweighted its gradient is ' +
      'diluted; rl.selfImitation weights it 20 (curve (a)); source: ours'),
  decisionSteps: z.number().int().nonnegative().default(0)
    .describe('after the epochs, this many optimizer steps on the lookahead rows alone (selfplay.lookahead: whole games whose ' +
      'moves are the one-step rule\'s, state-aware labels), every reply token a target with the move token (core/train/ppo.ts ' +
      'decisionTokenMask) weighing decisionMoveWeight, at sft.lr held constant, batchSize rows a step drawn in a seeded order. ' +
      'Mixed into SFT with the drills the move stayed state-blind (docs/results/mainjob-v3); alone, the shipped base learns the ' +
      'rule\'s move on held-out boards in ~100 steps of 32 (bench/mainjob-stateform-bc.py). 0 = none (SPA\'s SFT); needs ' +
      'selfplay.lookahead > 0; source: ours'),
  decisionDrills: z.number().min(0).default(0.5)
    .describe('drill rows (selfplay.drills: one random move each, the state contents trained) beside each decision step\'s ' +
      'batchSize lookahead rows, as a share of batchSize (0.5: 16 drills beside 32 games). The lookahead rows show the rule\'s ' +
      'moves only; without drills the phase cut the prediction given a random action from 69% to 49% (session 8); source: ours'),
  decisionMoveWeight: z.number().positive().default(20)
    .describe('the weight of the move token in the decision phase (sft.decisionSteps), against 1 for every other reply token; the ' +
      'move alone (no other target) made the 2 x 64 model write move letters everywhere (session 8), so the reply stays in the ' +
      'loss; 20 as rl.selfImitation.moveWeight (curve (a)); source: ours'),
  lossAggregation: z.enum(['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum']).default('token-mean')
    .describe('how one step\'s per-token cross-entropy combines (verl agg_loss, verl/trainer/ppo/core_algos.py): token-mean (every ' +
      'target token weighs the same) | seq-mean-token-mean (each row\'s token mean, then the mean over rows: SPA\'s SFT trainer, ' +
      'SPA@3848e68 sft/spa_sft_trainer.py:470-473 with micro-batch 1, sft/finetune_ft.sh:52-53; SPA then sums the rows\' gradients, ' +
      'a ×rows scale that matters only through gradClip) | seq-mean-token-sum (row token sums, mean over rows); source: verl, SPA'),
}).strict();
export type SftSection = z.infer<typeof SftSectionSchema>;

export const RlSectionSchema = z.object({
  algorithm: z.enum(['ppo', 'grpo', 'dr-grpo', 'reinforce']).default('ppo')
    .describe('a row of RL_ALGORITHMS (core/train/rl-algorithms.ts): PPO with a critic, critic-free GRPO, Dr. GRPO (no std ' +
      'normalisation), or REINFORCE with the step\'s batch-mean baseline (every episode\'s reward minus the mean over all the ' +
      'step\'s episodes, over their std: a move lost on a puzzle whose whole group lost still gets a negative advantage, which ' +
      'GRPO\'s group mean gives 0; Williams 1992, the batch normalisation of REINFORCE++, Hu 2025); source: ours'),
  steps: z.number().int().nonnegative().default(20)
    .describe('RL iterations (reference: 1000); source: ours (paper: 1000)'),
  groups: z.number().int().positive().default(4)
    .describe('puzzles per step (reference: 32); source: ours (paper: 32)'),
  groupSize: z.number().int().positive().default(4)
    .describe('episodes per puzzle, same seed (reference: 8); source: ours (paper: 8)'),
  keepGroupsFraction: z.number().gt(0).max(1).default(1)
    .describe('keep the groups with the largest reward spread (reference: 0.25); source: ours (paper: 0.25)'),
  gamma: z.number().min(0).max(1).default(1)
    .describe('GAE discount (reference: 1); source: paper'),
  lambda: z.number().min(0).max(1).default(1)
    .describe('GAE lambda (reference: 1); source: paper'),
  advantage: z.enum(['gae', 'turn-then-token', 'turn-level']).default('gae')
    .describe('gae: token GAE over the episode\'s model tokens | turn-then-token: two-level GAE (turn GAE on each turn\'s last-token ' +
      'value, then token GAE inside the turn; RAGEN@5eb79b8 ragen/trainer/core_algos.py:4 bi-level GAE, except that a zero-reward turn ' +
      'stays a turn) | turn-level: turn GAE on V(s_j), the value before turn j\'s reply, and every token of turn j gets A_j (Turn-PPO\'s ' +
      'turn-level advantage), so the tokens that choose the action carry the turn\'s advantage; source: RAGEN, Turn-PPO'),
  turnGamma: z.number().min(0).max(1).default(0.95)
    .describe('turn-level discount for turn-then-token; source: ours'),
  rewardPlacement: z.enum(['last-token', 'per-turn']).default('last-token')
    .describe('episode reward on the last model token, or each turn\'s reward on its last token; source: ours'),
  clipLow: z.number().min(0).default(0.2)
    .describe('ratio floor 1 − clipLow; source: ours'),
  clipHigh: z.number().min(0).default(0.28)
    .describe('ratio ceiling 1 + clipHigh; source: ours'),
  dualClip: z.number().gt(1).nullable().default(3)
    .describe('dual-clip bound for negative advantages (null = off); source: ours'),
  valueClip: z.number().positive().nullable().default(0.5)
    .describe('value clipping range (null = off); source: ours'),
  entropyCoef: z.number().min(0).default(0.001)
    .describe('entropy bonus (reference: 0.001); source: paper'),
  entropyOn: z.enum(['all', 'action']).default('all')
    .describe('tokens the entropy bonus covers: all = every token of the policy loss (the release\'s, verl entropy_coeff) | action = ' +
      'only the token that chooses the move (core/train/ppo.ts decisionTokenMask: the first token of the move after the plan\'s ' +
      '"I will try ", else of the <answer>\'s contents), its mean over the update\'s episodes as rl.lossAggregation says. On the ' +
      'tiny character-level base a bonus on every token flattens the format (entropyCoef 0.3: format errors 0 -> 0.97 in 3 updates) ' +
      'while one at the move holds its marginal (bench/results/rl-curves/README.md); source: ours (the science review\'s pilot, ' +
      'bench/rl-curves-pilot.py --entropy, puts its bonus at the decision)'),
  entropyCap: z.number().positive().nullable().default(null)
    .describe('nats: the bonus counts each token\'s entropy up to this (min(H_t, cap), no gradient above it); null = uncapped. ln 4 = ' +
      '1.386 on a 4-move env holds the move uniform over the moves without pushing mass onto other tokens: uncapped, a bonus of 0.03 ' +
      'on the move token (entropyOn action) took its entropy from 1.39 to 4.06 nats and broke the format after ~6,000 episodes ' +
      '(bench/results/rl-curves/README.md, session 3); source: ours'),
  valueCoef: z.number().min(0).default(0.5)
    .describe('weight of the value loss in the shared-trunk loss; source: ours'),
  klCoef: z.number().min(0).default(0)
    .describe('KL to the frozen starting model (reference: 0 = off); source: paper'),
  klEstimator: z.enum(['k1', 'k3']).default('k3')
    .describe('KL estimator; source: ours'),
  lr: z.number().positive().default(1e-4)
    .describe('actor lr (reference 1e-6 for 1.5B); source: ours (paper: 1e-6 for 1.5B)'),
  warmupSteps: z.number().int().nonnegative().default(0)
    .describe('linear warmup of the actor lr over the first N RL steps: step k (0-based) trains at lr * k / N while k < N, then at lr ' +
      '(step 0 at 0: AdamW\'s moments fill before the weights move); 0 = off. As verl\'s actor.optim.lr_warmup_steps with its ' +
      'constant schedule (verl/workers/fsdp_workers.py builds verl/utils/torch_functional.py get_constant_schedule_with_warmup, ' +
      'stepped once per training step); the critic\'s lr is not warmed; source: verl'),
  criticLr: z.number().positive().default(5e-4)
    .describe('critic lr (reference 1e-5); value head when shared; source: ours (paper: 1e-5)'),
  ppoEpochs: z.number().int().positive().default(1)
    .describe('passes over each batch; source: ours'),
  miniBatchSize: z.number().int().positive().default(8)
    .describe('turns per optimizer step, or episodes with updateRows episode (all the rows of an episode whose turns do not chain); source: ours'),
  gradClip: z.number().positive().default(1)
    .describe('clip by global norm; source: ours'),
  worldModelReward: z.number().min(0).default(0)
    .describe('online-wm-rl: weight of 0.5·obs + 0.5·pred score added per turn (VAGEN); source: VAGEN'),
  formatBonus: z.number().default(0)
    .describe('reward added to every well-formatted turn (VAGEN\'s format bonus); source: VAGEN'),
  passAtKEvery: z.number().int().nonnegative().default(10)
    .describe('track Pass@k on held-out seeds every N steps (0 = off); source: ours'),
  passAtKPuzzles: z.number().int().positive().default(8)
    .describe('puzzles for the tracked Pass@k; source: ours'),
  executeOnFormatError: z.boolean().default(false)
    .describe('execute the actions of a reply that fails the format check (RAGEN: false, nothing runs); source: RAGEN'),
  formatCheck: z.enum(['plain', 'world-model']).nullable().default(null)
    .describe('tags a reply must have: plain = think/answer (the release\'s PPO), null = the template\'s format; source: release'),
  worldModelScore: z.enum(['entity-f1', 'exact', 'cell-accuracy']).default('entity-f1')
    .describe('online-wm-rl score of a state (VAGEN: entity F1); cell accuracy pays ~0.7 for any grid; source: VAGEN'),
  updatesPerStep: z.number().int().nonnegative().default(0)
    .describe('optimizer updates per RL step over the kept batch (release: 1); 0 = minibatches of miniBatchSize; source: ours (release: 1)'),
  updateRows: z.enum(['turn', 'episode']).default('turn')
    .describe('what one update row is: turn = each model turn with its history as its own row (miniBatchSize counts turns) | ' +
      'episode = each episode as one row with every reply trained, as RAGEN trains (one sequence per trajectory, loss mask on ' +
      'every assistant turn: ragen/llm_agent/ctx_manager.py get_masks_and_scores; miniBatchSize counts episodes). The same loss ' +
      'per token; episode rows compute an episode\'s history once instead of again for every later turn (5.6x fewer tokens on ' +
      'study v4\'s 10-turn vanilla episodes); source: ours (release: episode)'),
  adamBetas: z.tuple([z.number().min(0).lt(1), z.number().min(0).lt(1)]).default([0.9, 0.999])
    .describe('AdamW betas of actor and critic (release: 0.9, 0.999); source: release'),
  lossAggregation: z.enum(['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum']).default('token-mean')
    .describe('how the per-token policy, entropy, KL and value terms of one update combine (verl agg_loss, ' +
      'verl/trainer/ppo/core_algos.py): token-mean (every model token weighs the same) | seq-mean-token-mean (each episode\'s token mean, ' +
      'then the mean over the update\'s episodes: what SPA\'s PPO ran, RAGEN with ppo_micro_batch_size_per_gpu 1, SPA@3848e68 ' +
      'config/base.yaml:12, RAGEN@5eb79b8 ragen/workers/actor/dp_actor.py:356-360, workers/critic/dp_critic.py:253-255) | ' +
      'seq-mean-token-sum (episode token sums, mean over episodes); source: verl, release'),
  maskStateSpans: z.boolean().default(false)
    .describe('leave the contents of <observation>/<prediction> out of the policy loss (the tags, reasoning and move stay), so the ' +
      'update is about the move and not the world model\'s text (the RL counterpart of sft.maskStateSpans; the release trains every ' +
      'reply token, false); source: ours'),
  lossOn: z.enum(['reply', 'action']).default('reply')
    .describe('reply tokens the loss covers (policy, KL, entropy, value and the advantage whitening): reply = every reply token (less the ' +
      'state contents with maskStateSpans) | action = only the tokens that choose the move (core/train/ppo.ts decisionTokenMask), so the ' +
      'update is REINFORCE on the decision as in the science review\'s pilot (bench/rl-curves-pilot.py); a reply that names no move ' +
      'trains nothing. On the tiny base the move\'s advantage on every reply token let the answer part from the plan (the answer ' +
      'collapsed onto one move in 1 update at lr 2e-3; bench/results/rl-curves/README.md, session 3); source: ours'),
  responseMask: z.enum(['reply', 'after-system']).default('reply')
    .describe('tokens the loss and the advantage whitening cover: reply = the model\'s own reply tokens (RAGEN\'s default) | ' +
      'after-system = every token after the system prompt, environment text included, as SPA\'s released PPO config ' +
      '(SPA@3848e68 config/base.yaml:16 enable_response_mask False; RAGEN@5eb79b8 ragen/llm_agent/ctx_manager.py:45-49); ' +
      'after-system is not implemented yet and the RL stage refuses it by name; source: release'),
  selfImitation: z.object({
    steps: z.number().int().nonnegative().default(0)
      .describe('optimizer steps of self-imitation after each RL step\'s update (0 = off); source: ours'),
    batch: z.number().int().positive().default(16)
      .describe('replayed turns per self-imitation step, drawn uniformly with replacement from the buffer; source: ours'),
    lr: z.number().positive().nullable().default(null)
      .describe('lr of the self-imitation steps (null = rl.lr; not warmed up); source: ours'),
    moveWeight: z.number().positive().default(20)
      .describe('weight of the token that chooses the move (core/train/ppo.ts decisionTokenMask) against 1 for every other reply token ' +
        'in the replayed cross-entropy; source: ours (curve (a): the move alone wrecked the format, the whole reply unweighted did not learn)'),
    filter: z.enum(['won', 'well-formed', 'plan', 'plan-only']).default('plan')
      .describe('which turns of a won episode enter the buffer: won = all | well-formed = the format check passes, the answer names a ' +
        'legal move and written states are exact where scored | plan = well-formed and the reasoning says "I will try A." with A the ' +
        'answer (the plan the product\'s SFT rows write; a reply without it is left out) | plan-only = plan without the check of ' +
        'the written states (a wrong prediction does not keep a turn out: for comparing arms whose world models differ); source: ours'),
    source: z.enum(['won-episodes', 'rewarded-turns']).default('won-episodes')
      .describe('which turns are candidates for the buffer (then `filter` applies): won-episodes = every turn of a won episode | ' +
        'rewarded-turns = every turn, of any episode, whose own reward (the env\'s turn reward after penalties) is above 0: ' +
        'turn-level credit, for envs with per-turn rewards (frozenlake env.options.progressReward); the same as won-episodes on ' +
        'a one-turn task; `gamma` applies to won-episodes only; source: ours'),
    capacity: z.number().int().positive().default(1024)
      .describe('distinct (prompt, reply) turns the buffer keeps; the oldest leaves first; source: ours'),
    gamma: z.number().gt(0).max(1).default(1)
      .describe('replay priority of a won episode\'s turn k of T: gamma^(T-1-k), the discounted return of the win (the winning turn 1); ' +
        'turns are drawn in proportion to it (1 = uniform). Below 1 the moves far from the win, often detours, are replayed less; ' +
        'source: Oh et al. 2018 (prioritized replay by the discounted return)'),
    minBuffer: z.number().int().nonnegative().default(0)
      .describe('distinct turns the buffer must hold before the replay starts (0 = from the first win). On curve (a) torch seed 2 ' +
        'the replay of the first 9-15 wins, none of them a Left, made Left unplayed after one step (0 of 64 answers at step 1, 0 of ' +
        '256 in the final eval), so the boards won by Left never entered the buffer; source: ours (Oh et al. start the replay once ' +
        'the buffer holds a batch)'),
    moments: z.enum(['shared', 'own']).default('shared')
      .describe('AdamW moments of the replay steps: shared = the RL update\'s | own = a second set over the same weights (the ' +
        'runtime\'s valueView, as the shared-trunk value step has; saved in the resume point), so the RL update\'s gradients do ' +
        'not set the replay\'s step size. own needs a critic-free algorithm or a separate critic (the shared trunk\'s value step ' +
        'holds that second set); source: ours'),
  }).strict().default({
    steps: 0, batch: 16, lr: null, moveWeight: 20, filter: 'plan', source: 'won-episodes', capacity: 1024, gamma: 1, minBuffer: 0, moments: 'shared',
  })
    .describe('self-imitation (Oh et al. 2018, "Self-Imitation Learning", ICML): after each RL step\'s update, the policy trains on ' +
      'its own distinct won turns, kept in a buffer across steps (core/train/self-imitation.ts), with the GRPO loss at ratio 1 = a ' +
      'weighted cross-entropy on the reply. Met curve (a) where reward-only GRPO collapsed onto one move ' +
      '(bench/results/rl-curves/README.md, session 4); not in SPA/RAGEN: the export refuses steps > 0 by name; source: ours'),
}).strict();
export type RlSection = z.infer<typeof RlSectionSchema>;

export const RwmlSectionSchema = z.object({
  steps: z.number().int().nonnegative().default(10)
    .describe('GRPO steps on next-state prediction; source: ours'),
  examples: z.number().int().positive().default(8)
    .describe('(state, action) examples per step; source: ours'),
  groupSize: z.number().int().positive().default(4)
    .describe('predictions sampled per example; source: ours'),
  threshold: z.number().min(0).max(1).default(0.9)
    .describe('similarity ≥ threshold → reward 1 else 0; source: ours'),
  similarity: z.enum(['structured', 'embedding']).default('structured')
    .describe('grid match (cell accuracy) or embedding cosine; source: ours'),
  embeddingModel: z.string().optional()
    .describe('local feature-extraction model folder (similarity = embedding); source: ours'),
  keepCorrectFraction: z.number().min(0).max(1).default(0.25)
    .describe('share of already-right examples kept (subsampling); source: ours'),
  klCoef: z.number().min(0).default(0.01)
    .describe('KL to the starting model (k3); source: ours'),
  lr: z.number().positive().default(1e-4)
    .describe('learning rate; source: ours'),
  maxNewTokens: z.number().int().positive().default(96)
    .describe('prediction length limit; source: ours'),
  clipLow: z.number().min(0).default(0.2)
    .describe('GRPO ratio floor 1 − clipLow; source: ours'),
  clipHigh: z.number().min(0).default(0.28)
    .describe('GRPO ratio ceiling 1 + clipHigh; source: ours'),
  dualClip: z.number().gt(1).nullable().default(3)
    .describe('dual-clip bound (null = off); source: ours'),
  entropyCoef: z.number().min(0).default(0)
    .describe('entropy bonus; source: ours'),
  miniBatchSize: z.number().int().positive().default(8)
    .describe('prediction rows per optimizer step; source: ours'),
  gradClip: z.number().positive().default(1)
    .describe('clip by global norm; source: ours'),
}).strict();
export type RwmlSection = z.infer<typeof RwmlSectionSchema>;

export const EvalSectionSchema = z.object({
  puzzles: z.number().int().positive().default(16)
    .describe('held-out puzzles (reference: 128); source: ours (paper: 128)'),
  samples: z.number().int().positive().default(4)
    .describe('samples per puzzle, n ≥ max k (reference: 8); source: ours (paper: 8)'),
  k: z.array(z.number().int().positive()).default([1, 4])
    .describe('Pass@k values reported; source: ours'),
  temperature: z.number().min(0).default(1)
    .describe('sampling temperature (reference: 1); source: paper'),
  perplexityRows: z.number().int().nonnegative().default(32)
    .describe('rows used for state perplexity (0 = skip); source: ours'),
  templates: z.array(z.string()).default(['tiny-raw-grid', 'tiny-spa'])
    .describe('templates compared by state perplexity (raw grid vs grid + coordinates); source: ours'),
  worldModelTurns: z.number().int().nonnegative().default(0)
    .describe('first turns of eval puzzles on which the world model is compared with the base\'s (0 = skip); source: ours'),
}).strict();
export type EvalSection = z.infer<typeof EvalSectionSchema>;

/** The known stage sections, by stage name. */
export const StageSectionSchemas = {
  rollout: RolloutSectionSchema,
  bootstrap: BootstrapSectionSchema,
  selfplay: SelfplaySectionSchema,
  sft: SftSectionSchema,
  rl: RlSectionSchema,
  rwml: RwmlSectionSchema,
  eval: EvalSectionSchema,
} as const;
export type StageSectionName = keyof typeof StageSectionSchemas;

/**
 * RunConfig.stages: one typed section per pipeline stage, each fully defaulted (`stages.rl.lr` is always there after a
 * parse), plus any other section by name for the diagnostic and plug-in stages (`stages.plan.order`, `stages['diag-wait']`):
 * those are plain JSON records their own stage checks.
 */
export const StagesSchema = z.object({
  rollout: RolloutSectionSchema.prefault({}).describe('limits and sampling of every stage that plays episodes'),
  bootstrap: BootstrapSectionSchema.prefault({}).describe('the base model pretraining on random-policy games (from-scratch presets)'),
  selfplay: SelfplaySectionSchema.prefault({}).describe('self-play data: games, policy, ground-truth replacement, drills'),
  sft: SftSectionSchema.prefault({}).describe('supervised finetuning on the self-play rows'),
  rl: RlSectionSchema.prefault({}).describe('RL: the algorithm, its batch shape, losses, clipping, KL, optimizer'),
  rwml: RwmlSectionSchema.prefault({}).describe('RWML: GRPO on next-state prediction (rwml-rl)'),
  eval: EvalSectionSchema.prefault({}).describe('the final evaluation: Pass@k, state perplexity, world model versus base'),
}).catchall(z.record(z.string(), z.unknown()).describe('a diagnostic or plug-in stage\'s own settings (checked by that stage)'));
export type Stages = z.infer<typeof StagesSchema>;

/** The version of the run spec's layout that run.json records (RunInfo.schemaVersion); runs without one are version 1. */
export const RUN_SPEC_VERSION = 2;

export const RunConfigSchema = z.object({
  name: z.string().min(1).max(200).optional()
    .describe('display name; defaults to method + env; source: ours'),
  method: MethodSchema.default('spa'),
  size: SizeSchema.default('quick').describe('the size whose settings the preset used (RUN_SIZES); source: ours'),
  env: EnvConfigSchema.default({ id: DEFAULT_ENV_ID, options: {} }),
  template: TemplateRefSchema.default({ preset: 'spa', responseFormat: 'world-model' }),
  model: ModelConfigSchema.default({ source: 'preset', preset: 'tiny', criticMode: 'shared-trunk' }),
  seeds: SeedsSchema.default({ base: 0, selfplayStart: 1_000_000, rlStart: 2_000_000, evalStart: 3_000_000 }),
  backend: z.enum(['auto', 'tensorflow-gpu', 'tensorflow', 'wasm', 'cpu', 'torch']).default('auto')
    .describe('auto: torch (a PyTorch worker) when a Python with torch answers, else TF.js wasm; see docs/compute.md; source: ours'),
  workers: z.union([z.literal('auto'), z.number().int().min(0).max(31)]).optional()
    .describe('wasm only: data-parallel worker threads besides the main one (auto: one per further core, at most 3); SPA_WASM_WORKERS overrides; source: ours'),
  stages: StagesSchema.prefault({}),
}).strict();
export type RunConfig = z.infer<typeof RunConfigSchema>;
export type RunConfigInput = z.input<typeof RunConfigSchema>;

