// Stage plans of the methods. Pure (no TF.js): hosts import it to plan and validate runs.
// The stage sections are typed in the run config itself (core/api/run-config.ts StagesSchema): a
// parsed RunConfig holds every section with its defaults, so a stage reads `config.stages.rl`.
import type { Method, RunConfig } from '../api/run-config.js';
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

/** Problems of the run's model.lora (empty when unset or usable); the messages name the valid target modules. */
export function loraIssues(config: RunConfig): string[] {
  return config.model.lora ? loraConfigProblems(config.model.lora, 'model.lora') : [];
}
