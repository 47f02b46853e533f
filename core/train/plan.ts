// Stage plans of the methods and strict parsing of the stage sections of a RunConfig.
// Pure (no TF.js): hosts import it to plan and validate runs.
import type { Method, RunConfig } from '../api/run-config.js';
import { StageSectionSchemas, type StageSectionName } from '../api/run-config.js';
import type { z } from 'zod';
import { loraConfigProblems } from '../model/lora-config.js';

/** Stages after the optional bootstrap, per method. */
export const METHOD_STAGES: Record<Method, string[]> = {
  'vanilla-rl': ['rl', 'eval'],
  'state-estimation-rl': ['rl', 'eval'],
  spa: ['selfplay', 'sft', 'rl', 'eval'],
  'online-wm-rl': ['rl', 'eval'],
  'rwml-rl': ['rwml', 'rl', 'eval'],
  'sft-only': ['selfplay', 'sft', 'eval'],
};

/** The plan: bootstrap first when the model is a from-scratch preset (same base for every method). */
export function methodPlan(config: RunConfig): string[] {
  const stages = [...METHOD_STAGES[config.method]];
  if (config.model.source === 'preset') stages.unshift('bootstrap');
  return stages;
}

/** Parse one stage section strictly; errors name the section and key and say what was expected. */
export function stageSection<N extends StageSectionName>(config: RunConfig, name: N): z.infer<(typeof StageSectionSchemas)[N]> {
  const schema = StageSectionSchemas[name];
  const raw = config.stages[name] ?? {};
  const result = schema.safeParse(raw);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `stages.${name}.${i.path.join('.') || '(section)'}: ${i.message}`).join('; ');
    throw new Error(`invalid run config: ${issues}. Fix the key in the run config (see docs/methods.md for every field).`);
  }
  return result.data as z.infer<(typeof StageSectionSchemas)[N]>;
}

/** Problems of the run's model.lora (empty when unset or usable); the messages name the valid target modules. */
export function loraIssues(config: RunConfig): string[] {
  return config.model.lora ? loraConfigProblems(config.model.lora, 'model.lora') : [];
}
