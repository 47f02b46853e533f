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
//   (checkpoint folders in done.json and state.json are stored relative to the project folder)
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunInfo } from '../api/contract.js';
import { RUN_SPEC_VERSION, RunConfigSchema } from '../api/run-config.js';
import { WorkbenchError } from '../api/errors.js';
import { moveAside, readJsonOrMoveAside, writeJsonAtomicSync, type JsonReadResult } from './atomic.js';

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
  if (typeof relPath !== 'string' || relPath.length === 0) throw new Error(`${where}: expected a relative path inside the run folder, ` +
    `received ${JSON.stringify(relPath)}`);
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

/**
 * A run.json brought to the current run spec (RUN_SPEC_VERSION), in memory: version 1 stored only the config keys that were
 * set, so its config is resolved against the schema (every stage section's defaults filled in, as the stages of version 1
 * filled them when they ran) and marked version 2. A config the schema refuses (a key since removed) is left as it is,
 * without a version, so nothing is lost; the engine names the keys when such a run is resumed. A newer version is kept as is.
 */
export function upgradeRunRecord(record: RunRecord): RunRecord {
  if ((record.schemaVersion ?? 1) >= RUN_SPEC_VERSION) return record;
  const parsed = RunConfigSchema.safeParse(record.config);
  return parsed.success ? { ...record, config: parsed.data, schemaVersion: RUN_SPEC_VERSION } : record;
}

/** Read run.json (brought to the current run spec by upgradeRunRecord); a file that fails to parse is moved aside and reported. */
export function readRunRecord(runDir: string): JsonReadResult<RunRecord> {
  return readJsonOrMoveAside(path.join(runDir, RUN_JSON), (v) => upgradeRunRecord(checkRunRecord(v)));
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

/** The file runs.create pins a run's template in: <run>/template.json. */
export const pinnedTemplatePath = (runDir: string): string => path.join(runDir, 'template.json');

/**
 * The template pinned in a run folder (written by runs.create), the one reader every caller uses: null when the run has
 * none (runs from before pinning: the caller resolves the preset); `json` as stored and `template` = validate(json).
 * One error policy: unreadable, not JSON or failing `validate` is a CorruptData error naming the file, never a silent fallback.
 */
export function readPinnedTemplate<T>(runDir: string, validate: (json: unknown) => T): { json: unknown; template: T } | null {
  const file = pinnedTemplatePath(runDir);
  let text: string;
  try { text = fs.readFileSync(file, 'utf8'); } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new WorkbenchError('CorruptData', `${file}: the run's pinned template cannot be read (${(err as Error).message})`, { where: file });
  }
  let json: unknown;
  try { json = JSON.parse(text); } catch (err) {
    throw new WorkbenchError('CorruptData', `${file}: the run's pinned template is not valid JSON (${(err as Error).message}); ` +
      'restore it or recreate the run', { where: file });
  }
  try { return { json, template: validate(json) }; } catch (err) {
    throw new WorkbenchError('CorruptData', `${file}: the run's pinned template is invalid: ${(err as Error).message}`, { where: file });
  }
}

// ── checkpoint references (done.json, state.json, manifests) ──
//
// Checkpoint paths are stored relative to the PROJECT folder ("runs/<id>/checkpoints/rl-3"), so a
// project that is moved or copied keeps pointing at its own checkpoints. Old projects stored
// absolute paths: one inside this project is used as is; one outside it that names a checkpoint of
// this project by its project-relative tail (runs/<id>/... or cache/...) is mapped back into this
// project (the project was moved or copied); anything else is refused with a clear error, never
// read from another project and never replaced by a fresh model.

/** The keys of stage outputs and stage state that hold checkpoint folders. */
export const CHECKPOINT_KEYS = ['checkpoint', 'critic'] as const;

/** The project folder of a run folder (<project>/runs/<id>). */
export function projectOfRun(runDir: string): string {
  return path.dirname(path.dirname(path.resolve(runDir)));
}

function insideDir(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** How a checkpoint folder is stored: relative to the project when inside it, else absolute (a model folder elsewhere). */
export function checkpointRef(runDir: string, absPath: string): string {
  const project = projectOfRun(runDir);
  const abs = path.resolve(absPath);
  return insideDir(project, abs) ? path.relative(project, abs).split(path.sep).join('/') : abs;
}

export class CheckpointRefError extends Error {
  constructor(message: string) { super(message); this.name = 'CheckpointRefError'; }
}

/**
 * The absolute folder a stored checkpoint reference names in this project (see above). Throws
 * CheckpointRefError for a reference that leaves the project or names another project's checkpoint.
 */
export function resolveCheckpointRef(runDir: string, ref: string, where: string): string {
  const project = projectOfRun(runDir);
  if (!path.isAbsolute(ref)) {
    const abs = path.resolve(project, ref);
    if (!insideDir(project, abs)) throw new CheckpointRefError(`${where}: checkpoint reference ${JSON.stringify(ref)} leaves the project folder ${project}`);
    return abs;
  }
  const abs = path.resolve(ref);
  if (insideDir(project, abs)) return abs;
  // An absolute path from before the project was moved or copied: map its project-relative tail.
  const parts = abs.split(path.sep);
  for (let i = parts.length - 1; i >= 0; i--) {
    if (parts[i] !== 'runs' && parts[i] !== 'cache') continue;
    const candidate = path.join(project, ...parts.slice(i));
    if (fs.existsSync(candidate)) return candidate;
  }
  // A folder of another project (an ancestor holds workbench.json) is refused; any other folder is a
  // model the user chose (model.path, e.g. a Hugging Face folder) and is used as is.
  for (let dir = path.dirname(abs); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'workbench.json'))) {
      throw new CheckpointRefError(`${where}: checkpoint ${abs} belongs to another project (${dir}) and this project (${project}) holds no copy of it; `
        + 'a run only reads checkpoints of its own project. If the project was moved or copied, move or copy its runs/ folder with it');
    }
  }
  return abs;
}

/** Replace absolute checkpoint folders by project-relative references (for done.json / state.json). */
export function storeCheckpointRefs<T extends Record<string, unknown>>(runDir: string, value: T): T {
  const out: Record<string, unknown> = { ...value };
  for (const k of CHECKPOINT_KEYS) if (typeof out[k] === 'string' && out[k] !== '') out[k] = checkpointRef(runDir, out[k] as string);
  return out as T;
}

/** Resolve stored checkpoint references to absolute folders of this project (throws CheckpointRefError). */
export function loadCheckpointRefs<T extends Record<string, unknown>>(runDir: string, value: T, where: string): T {
  const out: Record<string, unknown> = { ...value };
  for (const k of CHECKPOINT_KEYS) if (typeof out[k] === 'string' && out[k] !== '') out[k] = resolveCheckpointRef(runDir, out[k] as string, `${where} ${k}`);
  return out as T;
}

/** Write a stage's completion marker, checkpoint folders stored relative to the project. */
export function writeStageDone(runDir: string, marker: StageDone): void {
  writeJsonAtomicSync(path.join(runDir, stageDoneFile(marker.stage)), { ...marker, output: storeCheckpointRefs(runDir, marker.output) });
}

/**
 * A stage's completion marker with its checkpoint folders resolved; null when absent. A marker
 * that does not parse is moved aside (the stage runs again) and reported through `warn`.
 */
export function readStageDone(runDir: string, stage: string, warn: (message: string) => void = () => undefined, resolveRefs = true): StageDone | null {
  const r = readJsonOrMoveAside<StageDone>(path.join(runDir, stageDoneFile(stage)), (v) => {
    const d = v as StageDone;
    const ok = !!d && typeof d === 'object' && typeof d.output === 'object' && d.output !== null;
    if (!ok) throw new Error('expected { stage, completedAt, attempt, output: {...} }');
    return d;
  });
  if (r.status === 'missing') return null;
  if (r.status === 'corrupt') {
    warn(`stages/${stage}/done.json could not be read (${r.error}); ${r.movedTo ? `moved to ${path.basename(r.movedTo)}; ` : ''}the stage runs again`);
    return null;
  }
  if (!resolveRefs) return r.value;
  return { ...r.value, output: loadCheckpointRefs(runDir, r.value.output, `stages/${stage}/done.json`) };
}

/**
 * Stage-local resume state. A state.json that does not parse, or that names a checkpoint that is
 * gone, is moved aside and reported: the stage restarts from its beginning (from the checkpoint the
 * previous stage left), instead of blocking every later resume.
 */
export function readStageState(runDir: string, stage: string, warn: (message: string) => void): Record<string, unknown> | null {
  const file = path.join(runDir, stageStateFile(stage));
  const r = readJsonOrMoveAside<Record<string, unknown>>(file, (v) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('expected a JSON object');
    return v as Record<string, unknown>;
  });
  if (r.status === 'missing') return null;
  if (r.status === 'corrupt') {
    const moved = r.movedTo ? `moved to ${path.basename(r.movedTo)}; ` : '';
    warn(`stages/${stage}/state.json could not be read (${r.error}); ${moved}the stage restarts from its beginning`);
    return null;
  }
  let state: Record<string, unknown>;
  try {
    state = loadCheckpointRefs(runDir, r.value, `stages/${stage}/state.json`);
  } catch (err) {
    let moved = '';
    try { moved = `; moved to ${path.basename(moveAside(file))}`; } catch { /* read-only: leave it */ }
    warn(`${(err as Error).message}${moved}; the stage restarts from its beginning`);
    return null;
  }
  for (const k of CHECKPOINT_KEYS) {
    const dir = state[k];
    if (typeof dir === 'string' && dir !== '' && !fs.existsSync(path.join(dir, 'config.json'))) {
      let moved = '';
      try { moved = `; state moved to ${path.basename(moveAside(file))}`; } catch { /* read-only: leave it */ }
      const ref = checkpointRef(runDir, dir);
      warn(`stages/${stage}/state.json names the checkpoint ${ref}, which is missing or incomplete${moved}; the stage restarts from its beginning`);
      return null;
    }
  }
  return state;
}

export function writeStageState(runDir: string, stage: string, state: Record<string, unknown>): void {
  writeJsonAtomicSync(path.join(runDir, stageStateFile(stage)), storeCheckpointRefs(runDir, state));
}
