// Resolve a run config: preset (for a size) ← partial config ← dotted `set` overrides, then
// validate with RunConfigSchema and plan the stages. Issues say where and what was expected.
// This is the one place a run's spec is resolved: the parse fills every stage section's defaults
// (core/api/run-config.ts), so the result is what the stages, the export bundle, the memory model
// and run.json read; nothing downstream keeps a default of its own.
import type { RunConfig } from '../api/run-config.js';
import { DEFAULT_ENV_ID, RunConfigSchema } from '../api/run-config.js';
import { createEnv } from '../envs/index.js';
import { LOOKAHEAD_ENV_ID } from '../envs/frozen-lake.js';
import type { Size } from '../api/run-config.js';
import { getPreset, listPresets, sizeIssues } from './presets.js';
import { planStages } from './stages.js';
import { presetEnvOptions } from '../train/presets.js';
import { loraIssues } from '../train/plan.js';

/**
 * The preset env options of the run's env (set after `set`, so a study's env.id gets them too). When the request moved the run
 * to another env than the preset's, the preset's options of its own env are dropped: only the options the request set stay.
 */
function applyPresetEnvOptions(base: Record<string, unknown>, merged: Record<string, unknown>, req: ResolveRequest): void {
  const env = isPlainObject(merged.env) ? merged.env : {};
  const id = typeof env.id === 'string' ? env.id : DEFAULT_ENV_ID;
  const baseEnv = isPlainObject(base.env) ? base.env : {};
  const moved = (typeof baseEnv.id === 'string' ? baseEnv.id : DEFAULT_ENV_ID) !== id;
  let options = isPlainObject(env.options) ? env.options : undefined;
  if (moved) {
    const requested: Record<string, unknown> = {};
    const fromConfig = (req.config?.env as { options?: unknown } | undefined)?.options;
    if (isPlainObject(fromConfig)) Object.assign(requested, fromConfig);
    for (const [k, v] of Object.entries(req.set ?? {})) {
      if (k === 'env.options' && isPlainObject(v)) Object.assign(requested, v);
      else if (k.startsWith('env.options.')) setPath(requested, k.slice('env.options.'.length), v);
    }
    options = requested;
  }
  merged.env = { ...env, options: presetEnvOptions(id, options) };
}

export interface ResolveRequest { preset?: string; config?: Record<string, unknown>; size?: Size; set?: Record<string, unknown>; name?: string }
export interface ResolveResult { ok: boolean; config: RunConfig | null; stages: string[]; issues: { path: string; message: string }[] }

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Deep merge: objects merge key by key; arrays and scalars from `over` replace. */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (k === '__proto__' || k === 'constructor' || k === 'prototype') continue;
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? deepMerge(out[k] as Record<string, unknown>, v) : v;
  }
  return out;
}

/** Set a dotted path ("stages.rl.steps") in a nested object, creating objects on the way. */
export function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  if (parts.some((p) => !p || p === '__proto__' || p === 'constructor' || p === 'prototype')) {
    throw new Error(`set ${JSON.stringify(dotted)}: expected a dotted path like "stages.rl.steps"`);
  }
  let cur = target;
  for (const p of parts.slice(0, -1)) {
    if (!isPlainObject(cur[p])) cur[p] = {};
    cur = cur[p] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]!] = value;
}

/** CLI `--set key=value`: value parsed as JSON when it is JSON, else kept as a string; `example` goes in the error message. */
export function parseSetArgs(args: readonly string[], example = 'stages.rl.steps=10'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const a of args) {
    const eq = a.indexOf('=');
    if (eq <= 0) throw new Error(`--set ${JSON.stringify(a)}: expected key=value, e.g. --set ${example}`);
    const raw = a.slice(eq + 1);
    let value: unknown = raw;
    try { value = JSON.parse(raw); } catch { /* a plain string */ }
    out[a.slice(0, eq)] = value;
  }
  return out;
}

/** A preset's default name says its env ("spa sokoban quick"): when the request moves the run to another env, so does the name. */
function renameForEnv(base: Record<string, unknown>, merged: Record<string, unknown>, req: ResolveRequest): void {
  const envOf = (c: Record<string, unknown>) => (c.env as { id?: unknown } | undefined)?.id;
  const from = envOf(base) ?? DEFAULT_ENV_ID, to = envOf(merged);
  if (req.name !== undefined || typeof from !== 'string' || typeof to !== 'string' || from === to || merged.name !== base.name) return;
  const words = String(base.name).split(' ');
  if (words.includes(from)) merged.name = words.map((w) => (w === from ? to : w)).join(' ');
}

export function resolveRunConfig(req: ResolveRequest): ResolveResult {
  const issues: ResolveResult['issues'] = [];
  let base: Record<string, unknown> = {};
  if (req.preset !== undefined) {
    const p = getPreset(req.preset);
    if (!p) {
      issues.push({ path: 'preset', message: `unknown preset ${JSON.stringify(req.preset)}; ` +
        `available: ${listPresets().map((x) => x.id).join(', ') || '(none)'}` });
      return { ok: false, config: null, stages: [], issues };
    }
    const size = req.size ?? p.sizes[0]!;
    if (!p.sizes.includes(size)) {
      issues.push({ path: 'size', message: `preset ${p.id} has no size ${JSON.stringify(size)}; available: ${p.sizes.join(', ')}` });
      return { ok: false, config: null, stages: [], issues };
    }
    base = structuredClone(p.config(size)) as Record<string, unknown>;
  }
  // a copy: `set` below writes into merged, whose untouched branches are the base's own objects
  let merged = deepMerge(structuredClone(base), req.config ?? {});
  if (req.size !== undefined) merged.size = req.size;
  if (req.name !== undefined) merged.name = req.name;
  try {
    for (const [k, v] of Object.entries(req.set ?? {})) setPath(merged, k, v);
  } catch (err) {
    issues.push({ path: 'set', message: (err as Error).message });
    return { ok: false, config: null, stages: [], issues };
  }
  if (req.preset !== undefined) applyPresetEnvOptions(base, merged, req);  // e.g. FrozenLake as RAGEN plays it (core/train/presets.ts)
  renameForEnv(base, merged, req);
  merged = JSON.parse(JSON.stringify(merged)) as Record<string, unknown>;   // plain JSON only
  const parsed = RunConfigSchema.safeParse(merged);
  if (!parsed.success) {
    for (const i of parsed.error.issues) issues.push({ path: i.path.map(String).join('.') || '(root)', message: i.message });
    return { ok: false, config: null, stages: [], issues };
  }
  let stages: string[] = [];
  try { stages = planStages(parsed.data); } catch (err) {
    issues.push({ path: 'stages.plan', message: (err as Error).message });
    return { ok: false, config: parsed.data, stages: [], issues };
  }
  // Stage sections (typed in RunConfigSchema: checked by the parse above) and env options are checked now, not when their
  // stage starts: a typo must not surface after an hour of training.
  issues.push(...sectionIssues(parsed.data));
  issues.push(...sizeIssues(parsed.data));   // quick/standard refuse a model folder; a GPU size must fit its card
  try { createEnv(parsed.data.env.id, parsed.data.env.options); } catch (err) {
    issues.push({ path: 'env.options', message: (err as Error).message });
  }
  if (issues.length > 0) return { ok: false, config: parsed.data, stages, issues };
  return { ok: true, config: parsed.data, stages, issues };
}

/** Problems across fields that the schema cannot express (each field's type and bounds were checked by the parse). */
function sectionIssues(config: RunConfig): ResolveResult['issues'] {
  const issues: ResolveResult['issues'] = [];
  // model.lora: the schema checks types; the target names are checked here (the valid ones are listed in the message)
  for (const message of loraIssues(config)) issues.push({ path: 'model.lora', message });
  // the lookahead rows are written by FrozenLake's one-step rule (core/envs/frozen-lake.ts frozenLakeLookahead): refuse them on
  // another env here, not after a bootstrap of ~90 min when self-play reaches them
  const { lookahead, drillLookahead } = config.stages.selfplay;
  if ((lookahead > 0 || drillLookahead) && config.env.id !== LOOKAHEAD_ENV_ID) {
    issues.push({ path: lookahead > 0 ? 'stages.selfplay.lookahead' : 'stages.selfplay.drillLookahead', message: `the lookahead ` +
      `rows are defined for FrozenLake only (its one-step rule on the true map); env.id is ${JSON.stringify(config.env.id)}. Set ` +
      `stages.selfplay.lookahead=0 and drillLookahead=false, or use a preset without them (spa)` });
  }
  const { k, samples } = config.stages.eval;
  const maxK = Math.max(...k);
  if (samples < maxK) issues.push({ path: 'stages.eval.samples', message: `must be ≥ the largest k (${maxK}) for the unbiased ` +
    `Pass@k estimator; received ${samples}. Raise samples or lower k` });
  return issues;
}
