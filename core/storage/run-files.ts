// The layout of one run folder and the helpers both sides use: the host (reads, run.json) and
// the engine process (writes streams and stage markers inside its own run folder).
//
// runs/<run-id>/
//   run.json                 written by the HOST only (resolved config, status, stages, summary)
//   events.jsonl             engine appends status/stage/progress/log/checkpoint events;
//                            the host appends the final status only after the engine has exited
//   metrics.jsonl            engine: MetricPoint per line
//   rollouts/<file>.jsonl    engine: EpisodeRecord per line
//   rollouts/index.jsonl     engine: EpisodeSummary per line (file + byte offset + length)
//   datasets/sft-{train,val}.jsonl, datasets/sft-stats.json   pipeline (self-play stage)
//   eval/*.json              pipeline (evaluation results)
//   checkpoints/<stage>-<step>/  pipeline
//   stages/<stage>/done.json     completion marker (written atomically when the stage returns)
//   stages/<stage>/state.json    stage-local state for resume within a stage
//   template.json                the template version pinned by runs.create
//
// Outside the run folder, a stage may write only <project>/cache/<kind>/<key> (projectCacheDir).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunInfo } from '../api/contract.js';
import { readJsonOrMoveAside, writeJsonAtomicSync, type JsonReadResult } from './atomic.js';

export const RUN_JSON = 'run.json';
export const EVENTS_FILE = 'events.jsonl';
export const METRICS_FILE = 'metrics.jsonl';
export const ROLLOUT_INDEX = 'rollouts/index.jsonl';
export const SFT_STATS = 'datasets/sft-stats.json';
export const sftFile = (split: 'train' | 'val') => `datasets/sft-${split}.jsonl`;
export const stageDoneFile = (stage: string) => `stages/${stage}/done.json`;
export const stageStateFile = (stage: string) => `stages/${stage}/state.json`;

/** run.json: the RunInfo without `dir` (the folder is where the file is). */
export type RunRecord = Omit<RunInfo, 'dir'>;

export interface StageDone { stage: string; completedAt: number; attempt: number; output: Record<string, unknown> }

/** Resolve a path relative to the run folder; refuses paths that escape it. */
export function insideRun(runDir: string, relPath: string, where = 'run file'): string {
  if (typeof relPath !== 'string' || relPath.length === 0) throw new Error(`${where}: expected a relative path inside the run folder, received ${JSON.stringify(relPath)}`);
  const abs = path.resolve(runDir, relPath);
  const rel = path.relative(runDir, abs);
  if (rel.startsWith('..') || path.isAbsolute(rel) || rel === '') {
    throw new Error(`${where}: path ${JSON.stringify(relPath)} leaves the run folder ${runDir}; expected a relative path such as "eval/final.json"`);
  }
  return abs;
}

function checkRunRecord(v: unknown): RunRecord {
  const r = v as RunRecord;
  if (!r || typeof r !== 'object' || typeof r.id !== 'string' || typeof r.status !== 'string' || !Array.isArray(r.stages) || typeof r.config !== 'object') {
    throw new Error('expected a run record { id, status, stages[], config, ... }');
  }
  return r;
}

/** Read run.json; a file that fails to parse is moved aside and reported. */
export function readRunRecord(runDir: string): JsonReadResult<RunRecord> {
  return readJsonOrMoveAside(path.join(runDir, RUN_JSON), checkRunRecord);
}

export function writeRunRecord(runDir: string, record: RunRecord): void {
  writeJsonAtomicSync(path.join(runDir, RUN_JSON), record);
}

const CACHE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** <project>/cache/<kind>/<key> for a run folder <project>/runs/<id>: the project-wide cache (docs/project-format.md). */
export function projectCacheDir(runDir: string, kind: string, key: string): string {
  for (const [what, name] of [['kind', kind], ['key', key]] as const) {
    if (!CACHE_NAME.test(name)) throw new Error(`cache ${what} ${JSON.stringify(name)}: expected a plain name (letters, digits, ".", "_", "-")`);
  }
  const runs = path.dirname(path.resolve(runDir));
  if (path.basename(runs) !== 'runs') throw new Error(`${runDir}: a project cache needs a run folder inside <project>/runs/`);
  return path.join(path.dirname(runs), 'cache', kind, key);
}

/** The template pinned in a run folder (template.json, written by runs.create), parsed; null when absent. */
export function readPinnedTemplate(runDir: string): unknown | null {
  const file = path.join(runDir, 'template.json');
  let text: string;
  try { text = fs.readFileSync(file, 'utf8'); } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try { return JSON.parse(text); } catch (err) {
    throw new Error(`${file}: the run's pinned template is not valid JSON (${(err as Error).message}); restore it or recreate the run`);
  }
}
