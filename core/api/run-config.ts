// The run configuration: the one typed, validated description of a run. Saved resolved with
// every run and checkpoint. Unknown keys are errors (strict objects). Every field has a default
// and a one-line reason. The pipeline (core/train) runs it; the API, CLI and UI read it.
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

/** The env a run gets when its config names none: the one place the default env is written (engine, presets and imports read it). */
export const DEFAULT_ENV_ID = 'sokoban';

export const EnvConfigSchema = z.object({
  id: z.string().default(DEFAULT_ENV_ID),                          // registered env id
  options: z.record(z.string(), z.unknown()).default({}),     // env constructor arguments (validated by the env)
}).strict();

export const TemplateRefSchema = z.object({
  preset: z.string().default('spa'),                          // template preset name (core/prompts presets or the pipeline's tiny-* variants)
  hash: z.string().optional(),                                // pin a saved version by content hash
  responseFormat: z.enum(['plain', 'world-model']).default('world-model'),
}).strict();

/** RunConfig.model.memory: how the model runtime trades memory for compute, and what checkpoints hold (core/model/memory.ts). */
export const ModelMemorySchema = z.object({
  tokensPerMicroBatch: z.number().int().positive().optional(),  // padded tokens per forward/backward; gradients accumulate to one step (6144)
  gradientCheckpointing: z.union([z.boolean(), z.literal('auto')]).optional(), // recompute layer activations in backward (auto: real models)
  generationRows: z.number().int().positive().optional(),       // rows prefilled and decoded together on torch (64)
  frozenDtype: z.enum(['auto', 'bf16', 'f32']).optional(),      // KL reference / LoRA base weights (auto: bf16 for real models)
  checkpointDtype: z.enum(['auto', 'bf16', 'f16', 'f32']).optional(), // weights of checkpoints without moments (auto: bf16 for real models)
  optimizerDtype: z.enum(['auto', 'bf16', 'f32']).optional(),  // AdamW moments (auto: bf16 for real models, torch; stochastic rounding)
  optimizerState: z.enum(['resume', 'all', 'none']).optional(), // AdamW moments: only in a stage's resume point (default), everywhere, never
  keepMilestones: z.number().int().nonnegative().nullable().optional(), // RL milestones kept besides the final one (5; null: all)
}).strict();

export const ModelConfigSchema = z.object({
  source: z.enum(['preset', 'hf-folder', 'checkpoint']).default('preset'),
  preset: z.string().default('tiny'),                         // model size preset when source = preset
  path: z.string().optional(),                                // local HF folder or checkpoint folder
  lora: z.object({ rank: z.number().int().positive(), alpha: z.number().positive(), targetModules: z.array(z.string()) }).strict().optional(),
  criticMode: z.enum(['shared-trunk', 'separate']).default('shared-trunk'),
  overrides: z.record(z.string(), z.unknown()).optional(),    // model config fields over the preset (e.g. a smaller width for smoke runs)
  memory: ModelMemorySchema.optional(),                       // memory and checkpoint-size settings (docs/checkpoints.md); unset: defaults
}).strict();

export const SeedsSchema = z.object({
  base: z.number().int().default(0),                          // master seed of the run
  selfplayStart: z.number().int().default(1_000_000),         // self-play puzzle seeds start here
  rlStart: z.number().int().default(2_000_000),               // RL puzzle seeds start here (disjoint range)
  evalStart: z.number().int().default(3_000_000),             // evaluation puzzle seeds start here (disjoint range)
}).strict();

export const RunConfigSchema = z.object({
  name: z.string().min(1).max(200).optional(),                // display name; defaults to method + env
  method: MethodSchema.default('spa'),
  size: z.enum(['smoke', 'quick', 'standard', 'paper', 'gpu-24g', 'gpu-80g', 'custom']).default('quick'),
  env: EnvConfigSchema.default({ id: DEFAULT_ENV_ID, options: {} }),
  template: TemplateRefSchema.default({ preset: 'spa', responseFormat: 'world-model' }),
  model: ModelConfigSchema.default({ source: 'preset', preset: 'tiny', criticMode: 'shared-trunk' }),
  seeds: SeedsSchema.default({ base: 0, selfplayStart: 1_000_000, rlStart: 2_000_000, evalStart: 3_000_000 }),
  // auto: torch (a PyTorch worker) when a Python with torch answers, else TF.js wasm; see docs/compute.md
  backend: z.enum(['auto', 'tensorflow-gpu', 'tensorflow', 'wasm', 'cpu', 'torch']).default('auto'),
  // wasm only: data-parallel worker threads besides the main one (auto: one per further core, at most 3); SPA_WASM_WORKERS overrides
  workers: z.union([z.literal('auto'), z.number().int().min(0).max(31)]).optional(),
  // Stage settings: each stage owns a typed section; the pipeline defines and validates them.
  stages: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
}).strict();
export type RunConfig = z.infer<typeof RunConfigSchema>;
export type RunConfigInput = z.input<typeof RunConfigSchema>;

// ───────────────────────── stage sections (RunConfig.stages.<name>) ─────────────────────────
// Each stage's settings; parsed strictly by the pipeline when a run is planned, so an unknown or
// ill-typed key is an error that names the stage and the key. Defaults are the "quick" size on a
// tiny model; presets override them per size.

/** Limits and sampling shared by every stage that plays episodes. */
export const RolloutSectionSchema = z.object({
  maxTurns: z.number().int().positive().optional(),            // turns per episode (default: the env's budget, reference 5)
  maxActionsPerTurn: z.number().int().positive().optional(),   // actions kept per answer (default: the env's budget, reference 5)
  maxActionsPerGame: z.number().int().positive().optional(),   // action budget per game (default: the env's budget, reference 10; Sudoku 50)
  maxNewTokens: z.number().int().positive().default(160),      // generation limit per turn (tokens)
  maxContextTokens: z.number().int().positive().default(1024), // prompt tokens kept: older turns are dropped first
  temperature: z.number().min(0).default(1),                   // sampling temperature (reference: 1)
  topP: z.number().gt(0).max(1).default(1),                    // nucleus sampling mass
  topK: z.number().int().min(0).default(0),                    // top-k (0 = off)
  batchSize: z.number().int().positive().default(32),          // episodes generated together in one batch
}).strict();
export type RolloutSection = z.infer<typeof RolloutSectionSchema>;

/** One extension phase of the bootstrap (stages.bootstrap.extend). */
export const BootstrapPhaseSchema = z.object({
  steps: z.number().int().positive(),                          // optimizer steps of this phase
  batchSize: z.number().int().positive().optional(),           // sequences per step (default: the section's)
  lr: z.number().positive().optional(),                        // peak lr of this phase's cosine (default: the section's)
  copyDrills: z.number().min(0).max(1).optional(),             // copy-drill share of this phase's data (default: the section's)
}).strict();
export type BootstrapPhase = z.infer<typeof BootstrapPhaseSchema>;

export const BootstrapSectionSchema = z.object({
  games: z.number().int().positive().default(400),             // random-policy games written as training text
  steps: z.number().int().nonnegative().default(300),          // optimizer steps of pretraining
  batchSize: z.number().int().positive().default(8),           // sequences per step
  lr: z.number().positive().default(2e-3),                     // peak learning rate (cosine, 5% warmup)
  // templates (each with its response format) mixed in, so one base serves every method; the run's own template is always added
  templates: z.array(z.string()).default(['tiny-vanilla', 'tiny-spa']),
  maxLength: z.number().int().positive().default(2048),        // tokens per game row (later turns are cut)
  turns: z.number().int().positive().optional(),              // turns per bootstrap game (default: the rollout/env budget); fewer = shorter, cheaper rows
  cache: z.boolean().default(true),                            // share the checkpoint per (env, templates, model, seed) under <project>/cache/
  // observation 'decoy' only: states come from this many unrelated decoy puzzles (0 = a fresh decoy per turn)
  decoyPool: z.number().int().nonnegative().default(0),
  // true: <observation> = the true state, <prediction> = a counterfactual (the state after other random actions);
  // decoy: the old anti-grounded data (audit B2)
  observation: z.enum(['true', 'decoy']).default('true'),
  // counterfactual: <prediction> = the state after other random actions; copy: the observation again ("nothing moves", issue 23)
  prediction: z.enum(['counterfactual', 'copy']).default('counterfactual'),
  copyDrills: z.number().min(0).max(1).default(0.2),           // share of extra short rows that copy a state into <observation> (teaches copying)
  saveEvery: z.number().int().nonnegative().default(50),       // save the state every N steps so a stopped bootstrap resumes (0 = only at the end)
  gateTurns: z.number().int().nonnegative().default(50),       // held-out turns for the gate (0 = no gate)
  gateObservationExact: z.number().min(0).max(1).default(0.8), // gate: observation exact match on held-out turns ≥ this
  gateKeepRate: z.number().min(0).max(1).default(0.7),         // gate: share of generated world-model turns self-play would keep ≥ this
  shipped: z.boolean().default(true),                          // use the shipped base (resources/bases/<env>) when env, templates, model, settings match
  // further phases after `steps`, each warm from the last with a fresh AdamW and its own cosine schedule (5% warmup), its data
  // rebuilt with its own batch size, lr and copy-drill share (unset = the section's); e.g. a base that failed its gate extended
  extend: z.array(BootstrapPhaseSchema).default([]),
}).strict();
export type BootstrapSection = z.infer<typeof BootstrapSectionSchema>;

export const SelfplaySectionSchema = z.object({
  games: z.number().int().positive().default(64),              // self-play games (reference: 5 × 256)
  policy: z.enum(['model', 'random']).default('model'),        // 'random' = random-action ablation (well-formed random turns)
  groundTruthReplacement: z.boolean().default(true),           // false = self-belief ablation (train on the model's own states)
  // true: the reasoning is rewritten as "I will try <the answer's actions>." so the prediction follows its plan (tiny models)
  alignPlan: z.boolean().default(false),
  // one-action world-model drills: the random-action generator plays this many extra one-turn games of one action on fresh
  // self-play seeds (from selfplayStart + 700000); after ground-truth replacement each is a row whose prediction is the true
  // state after one action, the dynamics in the shortest turn the format allows (0 = none, as the paper)
  drills: z.number().int().nonnegative().default(0),
  valFraction: z.number().min(0).lt(1).default(0.1),           // validation share, split by whole game
}).strict();
export type SelfplaySection = z.infer<typeof SelfplaySectionSchema>;

export const SftSectionSchema = z.object({
  epochs: z.number().int().nonnegative().default(3),           // passes over the train rows (reference: 5)
  lr: z.number().positive().default(1e-3),                     // peak lr (reference 1e-4 for 1.5B; tiny models need more)
  warmupFraction: z.number().min(0).max(1).default(0.1),       // linear warmup share of the cosine schedule (reference: 0.1)
  batchSize: z.number().int().positive().default(8),           // rows per step (reference global batch: 16)
  weightDecay: z.number().min(0).default(0.01),                // AdamW weight decay (reference: 0.01)
  gradClip: z.number().positive().default(1),                  // clip by global norm (reference: 1.0)
  maskStateSpans: z.boolean().default(false),                  // the paper's ablation: exclude observation/prediction contents from the loss
  maxLength: z.number().int().positive().default(1024),        // tokens per row; longer prompts lose their oldest turns
}).strict();
export type SftSection = z.infer<typeof SftSectionSchema>;

export const RlSectionSchema = z.object({
  // a row of RL_ALGORITHMS (core/train/rl-algorithms.ts): PPO with a critic, critic-free GRPO, or Dr. GRPO (no std normalisation)
  algorithm: z.enum(['ppo', 'grpo', 'dr-grpo']).default('ppo'),
  steps: z.number().int().nonnegative().default(20),           // RL iterations (reference: 1000)
  groups: z.number().int().positive().default(4),              // puzzles per step (reference: 32)
  groupSize: z.number().int().positive().default(4),           // episodes per puzzle, same seed (reference: 8)
  keepGroupsFraction: z.number().gt(0).max(1).default(1),      // keep the groups with the largest reward spread (reference: 0.25)
  gamma: z.number().min(0).max(1).default(1),                  // GAE discount (reference: 1)
  lambda: z.number().min(0).max(1).default(1),                 // GAE lambda (reference: 1)
  advantage: z.enum(['gae', 'turn-then-token']).default('gae'),// token GAE, or two-level GAE (RAGEN)
  turnGamma: z.number().min(0).max(1).default(0.95),           // turn-level discount for turn-then-token
  rewardPlacement: z.enum(['last-token', 'per-turn']).default('last-token'), // episode reward on the last model token, or each turn's reward on its last token
  clipLow: z.number().min(0).default(0.2),                     // ratio floor 1 − clipLow
  clipHigh: z.number().min(0).default(0.28),                   // ratio ceiling 1 + clipHigh
  dualClip: z.number().gt(1).nullable().default(3),            // dual-clip bound for negative advantages (null = off)
  valueClip: z.number().positive().nullable().default(0.5),    // value clipping range (null = off)
  entropyCoef: z.number().min(0).default(0.001),               // entropy bonus (reference: 0.001)
  valueCoef: z.number().min(0).default(0.5),                   // weight of the value loss in the shared-trunk loss
  klCoef: z.number().min(0).default(0),                        // KL to the frozen starting model (reference: 0 = off)
  klEstimator: z.enum(['k1', 'k3']).default('k3'),             // KL estimator
  lr: z.number().positive().default(1e-4),                     // actor lr (reference 1e-6 for 1.5B)
  criticLr: z.number().positive().default(5e-4),               // critic lr (reference 1e-5); value head when shared
  ppoEpochs: z.number().int().positive().default(1),           // passes over each batch
  miniBatchSize: z.number().int().positive().default(8),       // sequences per optimizer step
  gradClip: z.number().positive().default(1),                  // clip by global norm
  worldModelReward: z.number().min(0).default(0),              // online-wm-rl: weight of 0.5·obs + 0.5·pred score added per turn (VAGEN)
  formatBonus: z.number().default(0),                          // reward added to every well-formatted turn (VAGEN's format bonus)
  passAtKEvery: z.number().int().nonnegative().default(10),    // track Pass@k on held-out seeds every N steps (0 = off)
  passAtKPuzzles: z.number().int().positive().default(8),      // puzzles for the tracked Pass@k
  // Format rule and update layout (fidelity audit B4/B5/B6/B10):
  executeOnFormatError: z.boolean().default(false),            // execute the actions of a reply that fails the format check (RAGEN: false, nothing runs)
  // tags a reply must have: plain = think/answer (the release's PPO), null = the template's format
  formatCheck: z.enum(['plain', 'world-model']).nullable().default(null),
  // online-wm-rl score of a state (VAGEN: entity F1); cell accuracy pays ~0.7 for any grid
  worldModelScore: z.enum(['entity-f1', 'exact', 'cell-accuracy']).default('entity-f1'),
  // optimizer updates per RL step over the kept batch (release: 1); 0 = minibatches of miniBatchSize
  updatesPerStep: z.number().int().nonnegative().default(0),
  adamBetas: z.tuple([z.number().min(0).lt(1), z.number().min(0).lt(1)]).default([0.9, 0.999]), // AdamW betas of actor and critic (release: 0.9, 0.999)
}).strict();
export type RlSection = z.infer<typeof RlSectionSchema>;

export const RwmlSectionSchema = z.object({
  steps: z.number().int().nonnegative().default(10),           // GRPO steps on next-state prediction
  examples: z.number().int().positive().default(8),            // (state, action) examples per step
  groupSize: z.number().int().positive().default(4),           // predictions sampled per example
  threshold: z.number().min(0).max(1).default(0.9),            // similarity ≥ threshold → reward 1 else 0
  similarity: z.enum(['structured', 'embedding']).default('structured'), // grid match (cell accuracy) or embedding cosine
  embeddingModel: z.string().optional(),                       // local feature-extraction model folder (similarity = embedding)
  keepCorrectFraction: z.number().min(0).max(1).default(0.25), // share of already-right examples kept (subsampling)
  klCoef: z.number().min(0).default(0.01),                     // KL to the starting model (k3)
  lr: z.number().positive().default(1e-4),                     // learning rate
  maxNewTokens: z.number().int().positive().default(96),       // prediction length limit
  clipLow: z.number().min(0).default(0.2),                     // GRPO ratio floor 1 − clipLow
  clipHigh: z.number().min(0).default(0.28),                   // GRPO ratio ceiling 1 + clipHigh
  dualClip: z.number().gt(1).nullable().default(3),            // dual-clip bound (null = off)
  entropyCoef: z.number().min(0).default(0),                   // entropy bonus
  miniBatchSize: z.number().int().positive().default(8),       // prediction rows per optimizer step
  gradClip: z.number().positive().default(1),                  // clip by global norm
}).strict();
export type RwmlSection = z.infer<typeof RwmlSectionSchema>;

export const EvalSectionSchema = z.object({
  puzzles: z.number().int().positive().default(16),            // held-out puzzles (reference: 128)
  samples: z.number().int().positive().default(4),             // samples per puzzle, n ≥ max k (reference: 8)
  k: z.array(z.number().int().positive()).default([1, 4]),     // Pass@k values reported
  temperature: z.number().min(0).default(1),                   // sampling temperature (reference: 1)
  perplexityRows: z.number().int().nonnegative().default(32),  // rows used for state perplexity (0 = skip)
  templates: z.array(z.string()).default(['tiny-raw-grid', 'tiny-spa']), // templates compared by state perplexity (raw grid vs grid + coordinates)
  worldModelTurns: z.number().int().nonnegative().default(0),  // first turns of eval puzzles on which the world model is compared with the base's (0 = skip)
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
