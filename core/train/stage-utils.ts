// Helpers shared by the pipeline's stages: which model a stage starts from, checkpoint paths,
// and a small timer for wall-clock reporting.
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { StageContext } from '../api/stage.js';
import { checkpointRef } from '../storage/run-files.js';
import { verifyCheckpoint } from '../model/checkpoint.js';
import { createRuntime, loadRuntime, saveRuntime, useBackend, type ModelRuntime } from './runtime.js';
import { methodPlan } from './plan.js';
import { memorySettings } from '../model/memory.js';

/**
 * The checkpoint folder a stage should start from: the latest earlier stage's output, else the base
 * model. An earlier stage that names a checkpoint which is gone is an error (never a fresh model in
 * its place: the run would silently train from random weights).
 */
export function startingCheckpoint(ctx: StageContext): string | null {
  const plan = methodPlan(ctx.config);
  const before = plan.slice(0, Math.max(0, plan.indexOf(ctx.stage)));
  for (let i = before.length - 1; i >= 0; i--) {
    const stage = before[i]!;
    const out = ctx.previous[stage];
    if (!out || typeof out.checkpoint !== 'string' || out.checkpoint === '') continue;
    if (existsSync(join(out.checkpoint, 'config.json'))) return out.checkpoint;
    const ref = checkpointRef(ctx.runDir, out.checkpoint);
    throw new Error(`stage ${ctx.stage} starts from the checkpoint of stage ${stage}, ${ref}, but that folder is missing or incomplete (no config.json). `
      + `Restore it, or delete runs/${ctx.runId}/stages/${stage}/done.json to run stage ${stage} again; the run will not continue from a fresh model`);
  }
  const model = ctx.config.model;
  if (model.source !== 'preset') {
    if (!model.path)
      throw new Error(
        `model.source is "${model.source}" but model.path is missing; set model.path to a local Hugging Face folder or checkpoint folder`,
      );
    return resolve(model.path);
  }
  return null;
}

let backendShown: string | null = null;   // the backend summary already logged by this engine process

/**
 * The backend line for the log: once per engine process (not at every stage start), the backend
 * and its features at info, the backends not taken and why (often long) at debug.
 */
export function backendLogLines(summary: string): Array<['info' | 'debug', string]> {
  if (summary === backendShown) return [];
  backendShown = summary;
  const at = summary.indexOf('; not used: ');
  if (at < 0) return [['info', summary]];
  return [
    ['info', `${summary.slice(0, at)} (other backends not available: see the debug line)`],
    ['debug', `backends not used: ${summary.slice(at + '; not used: '.length)}`],
  ];
}

/** Resume a stage's own checkpoint (weights and AdamW moments) on the run's backend, which may differ from the one that wrote it. */
export async function resumeModel(ctx: StageContext, dir: string, opts: { valueHead: boolean }): Promise<ModelRuntime> {
  for (const [level, line] of backendLogLines(await useBackend(ctx.config))) ctx.log(level, line);
  return loadRuntime(dir, { valueHead: opts.valueHead, resume: true });
}

/** Load the model a stage starts from (a fresh preset model when there is nothing earlier). */
export async function loadStartingModel(ctx: StageContext, opts: { valueHead: boolean; seed?: number }): Promise<{ runtime: ModelRuntime; from: string }> {
  for (const [level, line] of backendLogLines(await useBackend(ctx.config))) ctx.log(level, line);
  const dir = startingCheckpoint(ctx);
  if (dir) return { runtime: await loadRuntime(dir, { valueHead: opts.valueHead }), from: dir };
  const runtime = await createRuntime(ctx.config, { seed: opts.seed ?? ctx.config.seeds.base, valueHead: opts.valueHead });
  return { runtime, from: startingModelRef(ctx, opts.seed) };
}

/** The `from` loadStartingModel gives, without loading it: the starting checkpoint, else the fresh preset model's name. */
export function startingModelRef(ctx: StageContext, seed?: number): string {
  return startingCheckpoint(ctx) ?? `fresh ${ctx.config.model.preset} model (seed ${seed ?? ctx.config.seeds.base})`;
}

/**
 * model.memory.resumePointMinutes (ours): `due()` is true once that many minutes of wall time have passed since the stage
 * (re)started or since the last time it was true; never with 0. A resume point written then is the one a stop writes, so a
 * resume from it gives the uninterrupted run's numbers (tests/train/sft-resume-bookkeeping.test.ts; RL's update points:
 * tests/train/rl-update-resume.test.ts); a hard kill loses at most the steps since it.
 */
export function timedResumePoint(): { due(): boolean } {
  const everyMs = memorySettings().resumePointMinutes * 60_000;
  let last = Date.now();
  return {
    due() {
      if (everyMs <= 0 || Date.now() - last < everyMs) return false;
      last = Date.now();
      return true;
    },
  };
}

/**
 * Problems that make a stored checkpoint unusable (empty = intact): config.json missing, or files
 * that do not match the hashes in manifest.json (a damaged cache must not be reused by every
 * later run).
 */
export async function checkpointProblems(dir: string): Promise<string[]> {
  if (!existsSync(join(dir, 'config.json'))) return [`${join(dir, 'config.json')}: missing`];
  try { return await verifyCheckpoint(dir); } catch (err) { return [(err as Error).message]; }
}

export function checkpointDir(ctx: StageContext, name: string): string {
  return join(ctx.runDir, 'checkpoints', name);
}

export async function writeCheckpoint(
  ctx: StageContext,
  runtime: ModelRuntime,
  name: string,
  step: number,
  metrics: Record<string, number> = {},
  parent: string | null = null,
  opts: { resumePoint?: boolean } = {},
): Promise<string> {
  const dir = checkpointDir(ctx, name);
  // the parent is stored relative to the project when it is one of its checkpoints (moved/copied projects)
  const parentRef = parent && isAbsolute(parent) ? checkpointRef(ctx.runDir, parent) : parent;
  // resumePoint false (a stage's final checkpoint, a milestone): no AdamW moments, weights in model.memory.checkpointDtype
  await saveRuntime(runtime, dir, { stage: ctx.stage, step, runId: ctx.runId, parent: parentRef, metrics, config: ctx.config }, opts);
  ctx.checkpoint(step, dir);
  return dir;
}

export function elapsedSeconds(start: number): number { return Math.round((Date.now() - start) / 100) / 10; }

export function mean(xs: number[]): number { return xs.length === 0 ? 0 : xs.reduce((a, c) => a + c, 0) / xs.length; }

/** Average each key over a list of stat records. */
export function meanStats(list: Array<Record<string, number>>): Record<string, number> {
  const sums: Record<string, number> = {}, counts: Record<string, number> = {};
  for (const stats of list)
    for (const [k, v] of Object.entries(stats))
      if (Number.isFinite(v)) {
        sums[k] = (sums[k] ?? 0) + v;
        counts[k] = (counts[k] ?? 0) + 1;
      }
  return Object.fromEntries(Object.keys(sums).map((k) => [k, sums[k]! / counts[k]!]));
}
