// The stage registry and the plan of a run. Stage implementations are loaded lazily (only the
// engine process imports them, so hosts never load TF.js); the plan is computed in the host at
// run creation and saved in run.json: the method's plan (core/train/plan.ts) unless the config
// names the stages (stages.plan.order).
import type { RunConfig } from '../api/run-config.js';
import type { StageDefinition } from '../api/stage.js';
import { methodPlan } from '../train/plan.js';

export interface StageEntry {
  name: string;
  title: string;
  /** Import the implementation (runs in the engine process only). */
  load(): Promise<StageDefinition>;
}

const registry = new Map<string, StageEntry>();

export function registerStage(entry: StageEntry): void {
  if (!/^[a-z][a-z0-9-]*$/.test(entry.name)) throw new Error(`registerStage: stage name ${JSON.stringify(entry.name)} must be lower-case kebab-case`);
  registry.set(entry.name, entry);
}

export async function loadStage(name: string): Promise<StageDefinition> {
  const entry = registry.get(name);
  if (!entry) throw new Error(`unknown stage ${JSON.stringify(name)}; registered stages: ${[...registry.keys()].join(', ') || '(none)'}`);
  const def = await entry.load();
  if (def.name !== name) throw new Error(`stage ${name}: its loader returned a stage named ${JSON.stringify(def.name)}`);
  return def;
}

export function stageTitle(name: string): string { return registry.get(name)?.title ?? name; }

/**
 * The ordered stage names of a run. `config.stages.plan.order` (an array of registered stage
 * names) overrides the method's plan — used by diagnostics and ablations.
 */
export function planStages(config: RunConfig): string[] {
  const override = config.stages.plan?.order;
  let plan: string[];
  if (override !== undefined) {
    if (!Array.isArray(override) || override.length === 0 || !override.every((s) => typeof s === 'string')) {
      throw new Error(`stages.plan.order: expected a non-empty array of stage names, received ${JSON.stringify(override)}`);
    }
    plan = override as string[];
  } else {
    plan = methodPlan(config);
  }
  const unknown = plan.filter((s) => !registry.has(s));
  if (unknown.length) throw new Error(`stages.plan: unknown stage(s) ${unknown.join(', ')}; registered stages: ${[...registry.keys()].join(', ')}`);
  if (new Set(plan).size !== plan.length) throw new Error(`stages.plan: a stage appears twice in ${plan.join(' → ')}`);
  return plan;
}

// ── registrations ──
const diag = () => import('./diagnostic-stages.js');
registerStage({ name: 'diag-wait', title: 'Diagnostic: wait', load: async () => (await diag()).makeWaitStage('diag-wait') });
registerStage({ name: 'diag-wait2', title: 'Diagnostic: wait (second)', load: async () => (await diag()).makeWaitStage('diag-wait2') });
registerStage({ name: 'diag-episodes', title: 'Diagnostic: synthetic episodes', load: async () => (await diag()).episodesStage });
registerStage({ name: 'diag-fail', title: 'Diagnostic: fail', load: async () => (await diag()).failStage });
registerStage({ name: 'diag-crash', title: 'Diagnostic: crash the engine', load: async () => (await diag()).crashStage });

// ── the SPA pipeline (core/train, core/eval) ──
const pipeline = {
  bootstrap: { title: 'Bootstrap: pretrain the tiny base on random-policy games', load: async () => (await import('../train/bootstrap.js')).bootstrapStage },
  selfplay: { title: 'Self-play data with ground-truth replacement', load: async () => (await import('../train/selfplay.js')).selfplayStage },
  sft: { title: 'SFT on the corrected self-play turns', load: async () => (await import('../train/sft.js')).sftStage },
  rl: { title: 'RL (PPO or GRPO)', load: async () => (await import('../train/rl-stage.js')).rlStage },
  rwml: { title: 'RWML: GRPO on next-state prediction', load: async () => (await import('../train/rwml.js')).rwmlStage },
  eval: { title: 'Evaluation: Pass@k, world-model accuracy, perplexity, collapse', load: async () => (await import('../eval/evaluate.js')).evalStage },
} satisfies Record<string, Omit<StageEntry, 'name'>>;
for (const [name, entry] of Object.entries(pipeline)) registerStage({ name, ...entry });
