// The run configuration: the one typed, validated description of a run. Saved resolved with
// every run and checkpoint. Unknown keys are errors (strict objects). Every field has a default
// and a one-line reason. OWNER: the pipeline (core/train); the API, CLI and UI read it.
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

export const EnvConfigSchema = z.object({
  id: z.string().default('sokoban'),                          // registered env id
  options: z.record(z.string(), z.unknown()).default({}),     // env constructor arguments (validated by the env)
}).strict();

export const TemplateRefSchema = z.object({
  preset: z.string().default('spa-coordinates'),              // template preset name, or a saved template name
  hash: z.string().optional(),                                // pin a saved version by content hash
  responseFormat: z.enum(['plain', 'world-model']).default('world-model'),
}).strict();

export const ModelConfigSchema = z.object({
  source: z.enum(['preset', 'hf-folder', 'checkpoint']).default('preset'),
  preset: z.string().default('tiny'),                         // model size preset when source = preset
  path: z.string().optional(),                                // local HF folder or checkpoint folder
  lora: z.object({ rank: z.number().int().positive(), alpha: z.number().positive(), targetModules: z.array(z.string()) }).strict().optional(),
  criticMode: z.enum(['shared-trunk', 'separate']).default('shared-trunk'),
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
  size: z.enum(['smoke', 'quick', 'paper', 'custom']).default('quick'),
  env: EnvConfigSchema.default({ id: 'sokoban', options: {} }),
  template: TemplateRefSchema.default({ preset: 'spa-coordinates', responseFormat: 'world-model' }),
  model: ModelConfigSchema.default({ source: 'preset', preset: 'tiny', criticMode: 'shared-trunk' }),
  seeds: SeedsSchema.default({ base: 0, selfplayStart: 1_000_000, rlStart: 2_000_000, evalStart: 3_000_000 }),
  backend: z.enum(['auto', 'tensorflow-gpu', 'tensorflow', 'wasm', 'cpu']).default('auto'),
  // Stage settings: each stage owns a typed section; the pipeline defines and validates them.
  stages: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
}).strict();
export type RunConfig = z.infer<typeof RunConfigSchema>;
export type RunConfigInput = z.input<typeof RunConfigSchema>;
