// Helpers shared by the pipeline's stages: which model a stage starts from, checkpoint paths,
// and a small timer for wall-clock reporting.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { StageContext } from '../api/stage.js';
import { createRuntime, loadRuntime, saveRuntime, useBackend, type ModelRuntime } from './runtime.js';
import { methodPlan } from './plan.js';

/** The checkpoint folder a stage should start from: the latest earlier stage's output, else the base model. */
export function startingCheckpoint(ctx: StageContext): string | null {
  const plan = methodPlan(ctx.config);
  const before = plan.slice(0, Math.max(0, plan.indexOf(ctx.stage)));
  for (let i = before.length - 1; i >= 0; i--) {
    const out = ctx.previous[before[i]!];
    if (out && typeof out.checkpoint === 'string' && existsSync(join(out.checkpoint, 'config.json'))) return out.checkpoint;
  }
  const model = ctx.config.model;
  if (model.source !== 'preset') {
    if (!model.path) throw new Error(`model.source is "${model.source}" but model.path is missing; set model.path to a local Hugging Face folder or checkpoint folder`);
    return resolve(model.path);
  }
  return null;
}

/** Load the model a stage starts from (a fresh preset model when there is nothing earlier). */
export async function loadStartingModel(ctx: StageContext, opts: { valueHead: boolean; seed?: number }): Promise<{ runtime: ModelRuntime; from: string }> {
  const summary = await useBackend(ctx.config);
  ctx.log('info', summary);
  const dir = startingCheckpoint(ctx);
  if (dir) return { runtime: await loadRuntime(dir, { valueHead: opts.valueHead }), from: dir };
  return { runtime: await createRuntime(ctx.config, { seed: opts.seed ?? ctx.config.seeds.base, valueHead: opts.valueHead }), from: `fresh ${ctx.config.model.preset} model (seed ${opts.seed ?? ctx.config.seeds.base})` };
}

export function checkpointDir(ctx: StageContext, name: string): string {
  return join(ctx.runDir, 'checkpoints', name);
}

export async function writeCheckpoint(ctx: StageContext, runtime: ModelRuntime, name: string, step: number, metrics: Record<string, number> = {}, parent: string | null = null): Promise<string> {
  const dir = checkpointDir(ctx, name);
  await saveRuntime(runtime, dir, { stage: ctx.stage, step, runId: ctx.runId, parent, metrics, config: ctx.config });
  ctx.checkpoint(step, dir);
  return dir;
}

export function elapsedSeconds(start: number): number { return Math.round((Date.now() - start) / 100) / 10; }

export function mean(xs: number[]): number { return xs.length === 0 ? 0 : xs.reduce((a, c) => a + c, 0) / xs.length; }

/** Average each key over a list of stat records. */
export function meanStats(list: Array<Record<string, number>>): Record<string, number> {
  const sums: Record<string, number> = {}, counts: Record<string, number> = {};
  for (const stats of list) for (const [k, v] of Object.entries(stats)) if (Number.isFinite(v)) { sums[k] = (sums[k] ?? 0) + v; counts[k] = (counts[k] ?? 0) + 1; }
  return Object.fromEntries(Object.keys(sums).map((k) => [k, sums[k]! / counts[k]!]));
}
