// Records of a study's finished runs, kept in the repository (docs/results/<study>/<variant>/runs/
// <method>-<env>-s<seed>.json) because the machines that run long studies do not survive: one JSON per
// completed run with its eval summary (perPuzzle included), world model beside the base, gate, wall
// time per stage, config and RL curves, written once and never overwritten. `spa-workbench study
// record` writes them (docs/results/spa-cpu-v1/record-runs.mjs calls it), `study table --records`
// builds the table from them alone, with the same files as from the run folders (core/eval/study.ts).
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { writeFileAtomicSync } from '../storage/atomic.js';
import {
  findStudyRuns, readRunCurves, readStudySpec, sortStudyRuns, studyCells, studyRunEval,
  type RunConfigLike, type RunCurves, type RunRef, type StudyRun, type StudyRunEval,
} from './study.js';

/** One record file. Old records (before 2026-11-26) have no `curves` and no `eval.k`. */
export interface RunRecord {
  study: string; method: string; env: string; seed: number;
  runId: string;                    // the run folder's name in its project
  size: unknown;
  durationSeconds: number | null;   // the run's wall time, whole seconds
  stages: Record<string, { wallSeconds: number | null; shipped: unknown; cached: unknown }>;
  gate: unknown;                    // bootstrap/gate.json
  filter: unknown;                  // datasets/filter-report.json
  eval: (StudyRunEval & Record<string, unknown>) | null;   // the summary of eval/final.json
  config: RunConfigLike | null;
  curves?: RunCurves;               // per-step curve metrics (core/eval/study.ts isCurveMetric)
}

/** The file name of a cell's record. */
export function recordFileName(method: string, env: string, seed: number): string { return `${method}-${env}-s${seed}.json`; }

/** Parsed JSON of a run file, null when the file is missing; a file that does not parse is an error naming it. */
function readRunFile(file: string): unknown {
  if (!existsSync(file)) return null;
  const text = readFileSync(file, 'utf8');
  try { return JSON.parse(text) as unknown; } catch (err) { throw new Error(`${file}: not valid JSON (${(err as Error).message})`); }
}

/** The record of a completed run folder (the fields and order record-runs.mjs has always written, plus eval.k and curves). */
export function buildRunRecord(ref: RunRef): RunRecord {
  const dir = ref.dir;
  const run = readRunFile(join(dir, 'run.json')) as { size?: unknown; durationMs?: number; stages?: Array<{ name: string }>; config?: RunConfigLike };
  const stages = Object.fromEntries((run.stages ?? []).map((st) => {
    const done = readRunFile(join(dir, 'stages', st.name, 'done.json')) as { output?: Record<string, unknown> } | null;
    const output = done?.output;
    return [st.name, { wallSeconds: (output?.wallSeconds as number | undefined) ?? null, shipped: output?.shipped ?? null, cached: output?.cached ?? null }];
  }));
  const ev = readRunFile(join(dir, 'eval', 'final.json')) as Record<string, unknown> | null;
  const curves = readRunCurves(dir);
  return {
    study: ref.study, method: ref.method, env: ref.env, seed: ref.seed, runId: basename(dir), size: run.size,
    durationSeconds: typeof run.durationMs === 'number' ? Math.round(run.durationMs / 1000) : null, stages,
    gate: readRunFile(join(dir, 'bootstrap', 'gate.json')),
    filter: readRunFile(join(dir, 'datasets', 'filter-report.json')),
    eval: ev && {
      puzzles: ev.puzzles, samplesPerPuzzle: ev.samplesPerPuzzle, success: ev.success, passAtK: ev.passAtK as StudyRunEval['passAtK'],
      k: ev.k as number[] | undefined, formatErrorRate: ev.formatErrorRate, invalidActionRate: ev.invalidActionRate, avgActions: ev.avgActions,
      wm: ev.wm, worldModelVersusBase: ev.worldModelVersusBase ?? null, perPuzzle: ev.perPuzzle as StudyRunEval['perPuzzle'],
    },
    config: run.config ?? null,
    ...(curves ? { curves } : {}),
  };
}

/** Curves as one line per metric: `"rollout/success": {"steps": [0, 1], "values": [0.1, 0.2]}`. */
function formatCurves(curves: RunCurves): string {
  const stages = Object.entries(curves).map(([stage, metrics]) => {
    const lines = Object.entries(metrics).map(([metric, s]) =>
      `      ${JSON.stringify(metric)}: {"steps": ${JSON.stringify(s.steps)}, "values": ${JSON.stringify(s.values)}}`);
    return `    ${JSON.stringify(stage)}: {\n${lines.join(',\n')}\n    }`;
  });
  return `{\n${stages.join(',\n')}\n  }`;
}

/** A record's text: JSON indented by 2 (as record-runs.mjs wrote it), its curves last and compact. */
export function formatRecord(record: RunRecord): string {
  const { curves, ...rest } = record;
  const text = JSON.stringify(rest, null, 2);
  return curves ? `${text.slice(0, -2)},\n  "curves": ${formatCurves(curves)}\n}\n` : `${text}\n`;
}

function recordedNames(outDir: string): Set<string> {
  const dir = join(outDir, 'runs');
  return new Set(existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : []);
}

/** The cells of the study in `project` not yet recorded in `outDir`, as `method env seed` lines; null when the project has no such study. */
export function missingStudyCells(project: string, name: string, outDir: string): string[] | null {
  const spec = readStudySpec(project, name);
  if (!spec) return null;
  const recorded = recordedNames(outDir);
  return studyCells(spec).filter((c) => !recorded.has(recordFileName(c.method, c.env, c.seed))).map((c) => `${c.method} ${c.env} ${c.seed}`);
}

/** Record every completed run of the study not yet recorded (records are never overwritten). Returns the lines to print. */
export function recordStudyRuns(project: string, name: string, outDir: string): string[] {
  const recordDir = join(outDir, 'runs');
  mkdirSync(recordDir, { recursive: true });
  const recorded = recordedNames(outDir);
  const lines: string[] = [];
  let wrote = 0;
  const runs = findStudyRuns([project], name).filter((r) => r.status === 'completed').sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0));
  for (const ref of runs) {
    const file = recordFileName(ref.method, ref.env, ref.seed);
    if (recorded.has(file)) continue;
    writeFileAtomicSync(join(recordDir, file), formatRecord(buildRunRecord(ref)));
    recorded.add(file);
    wrote++;
    lines.push(`recorded ${file.slice(0, -5)} (${basename(ref.dir)})`);
  }
  lines.push(`${wrote} new run(s) recorded in ${recordDir}`);
  return lines;
}

/**
 * Add the curves a record lacks, from its run folder (the one with the record's runId) in `project`:
 * the whole `curves` field to old records that have none, and to records that have one the curve
 * metrics added since (e.g. rl/wm*), keeping every series they hold. Nothing else of a record changes:
 * the result is checked to parse to the old record with the run folder's curves, whose series the
 * record already held are unchanged. Returns the lines to print.
 */
export function addRecordCurves(project: string, name: string, outDir: string): string[] {
  const recordDir = join(outDir, 'runs');
  if (!existsSync(recordDir)) throw new Error(`${outDir}: no runs/ folder (records are <dir>/runs/<method>-<env>-s<seed>.json)`);
  const folders = new Map(findStudyRuns([project], name).map((r) => [basename(r.dir), r]));
  const lines: string[] = [];
  let added = 0;
  for (const file of readdirSync(recordDir).filter((f) => f.endsWith('.json')).sort()) {
    const path = join(recordDir, file);
    const text = readFileSync(path, 'utf8');
    const record = parseRunRecord(parseRecordText(text, path), path);
    if (record.study !== name) { lines.push(`${file}: study ${JSON.stringify(record.study)}, not ${JSON.stringify(name)}: left as it is`); continue; }
    const ref = folders.get(record.runId);
    if (!ref) {
      lines.push(`${file}: no run folder ${record.runId} of study ${name} in ${resolve(project)}: left ${record.curves ? 'as it is' : 'without curves'}`);
      continue;
    }
    const curves = readRunCurves(ref.dir);
    if (!curves) {
      lines.push(`${file}: run ${record.runId} logged none of the curve metrics: left ${record.curves ? 'as it is' : 'without curves'}`);
      continue;
    }
    const held = Object.entries(record.curves ?? {}).flatMap(([stage, m]) => Object.entries(m).map(([metric, series]) => ({ stage, metric, series })));
    const changed = held.filter((h) => JSON.stringify(curves[h.stage]?.[h.metric]) !== JSON.stringify(h.series));
    if (changed.length) {
      lines.push(`${file}: ${changed.map((c) => `${c.stage}/${c.metric}`).join(', ')} in run folder ${ref.dir} differ from the record's: left as it is`);
      continue;
    }
    const newMetrics = Object.entries(curves).flatMap(([stage, m]) => Object.keys(m).filter((metric) => !record.curves?.[stage]?.[metric]));
    if (newMetrics.length === 0) { lines.push(`${file}: has curves already`); continue; }
    let head = text.trimEnd();
    if (record.curves) {
      const at = head.lastIndexOf('\n  "curves": ');
      if (at < 0) throw new Error(`${path}: its curves are not the last field as \`study record\` writes them; not changed`);
      head = `${head.slice(0, at).replace(/,\s*$/, '')}\n}`;
    }
    if (!head.endsWith('}')) throw new Error(`${path}: does not end with "}"; not changed`);
    const updated = `${head.slice(0, -1).trimEnd()},\n  "curves": ${formatCurves(curves)}\n}\n`;
    const check = JSON.parse(updated) as Record<string, unknown>;
    const { curves: written, ...rest } = check;
    const { curves: _old, ...before } = JSON.parse(text) as Record<string, unknown>;
    if (JSON.stringify(rest) !== JSON.stringify(before) || JSON.stringify(written) !== JSON.stringify(curves)) {
      throw new Error(`${path}: adding curves would change more than the curves field; not changed`);
    }
    writeFileAtomicSync(path, updated);
    added++;
    lines.push(record.curves
      ? `${file}: added ${newMetrics.length} curve metric(s) (${newMetrics.join(', ')}) from ${ref.dir}`
      : `${file}: added curves of ${newMetrics.length} metric(s) (${Object.keys(curves).join(', ')}) from ${ref.dir}`);
  }
  lines.push(`curves added to ${added} record(s) in ${recordDir}`);
  return lines;
}

// ───────────────────────── reading records ─────────────────────────

function parseRecordText(text: string, file: string): unknown {
  try { return JSON.parse(text) as unknown; } catch (err) { throw new Error(`${file}: not valid JSON (${(err as Error).message})`); }
}

const isInt = (v: unknown): v is number => Number.isInteger(v);
const show = (v: unknown): string => (v === undefined ? 'nothing' : (JSON.stringify(v) ?? String(v)).slice(0, 80));

/** Check a record's fields; the error names the file and the field, what was expected and what arrived. */
export function parseRunRecord(raw: unknown, file: string): RunRecord {
  const bad = (field: string, expected: string, received: unknown): never => {
    throw new Error(`${file}: malformed record: field "${field}": expected ${expected}, received ${show(received)}`);
  };
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) bad('(record)', 'a JSON object', raw);
  const r = raw as Record<string, unknown>;
  for (const key of ['study', 'method', 'env', 'runId'] as const) if (typeof r[key] !== 'string' || r[key] === '') bad(key, 'a non-empty string', r[key]);
  if (!isInt(r.seed)) bad('seed', 'an integer', r.seed);
  if (r.durationSeconds !== null && (typeof r.durationSeconds !== 'number' || !Number.isFinite(r.durationSeconds) || r.durationSeconds < 0)) {
    bad('durationSeconds', 'seconds (a number ≥ 0) or null', r.durationSeconds);
  }
  if (r.config !== null && r.config !== undefined && (typeof r.config !== 'object' || Array.isArray(r.config))) bad('config', 'an object or null', r.config);
  if (r.eval !== null) {
    const ev = r.eval as Record<string, unknown> | undefined;
    if (!ev || typeof ev !== 'object' || Array.isArray(ev)) bad('eval', 'the eval summary (an object) or null', ev);
    if (!Array.isArray(ev!.perPuzzle)) bad('eval.perPuzzle', 'an array of { seed, n, c }', ev!.perPuzzle);
    (ev!.perPuzzle as unknown[]).forEach((p, i) => {
      const q = p as Record<string, unknown> | null;
      if (!q || typeof q !== 'object') bad(`eval.perPuzzle[${i}]`, '{ seed, n, c }', p);
      if (!isInt(q!.seed)) bad(`eval.perPuzzle[${i}].seed`, 'an integer', q!.seed);
      if (!isInt(q!.n) || q!.n < 1) bad(`eval.perPuzzle[${i}].n`, 'an integer ≥ 1 (samples)', q!.n);
      if (!isInt(q!.c) || q!.c < 0 || q!.c > (q!.n as number)) bad(`eval.perPuzzle[${i}].c`, `an integer from 0 to n (${show(q!.n)})`, q!.c);
    });
    if (ev!.k !== undefined && (!Array.isArray(ev!.k) || !ev!.k.every((k) => isInt(k) && k >= 1))) bad('eval.k', 'an array of integers ≥ 1', ev!.k);
    if (ev!.passAtK !== undefined && ev!.passAtK !== null) {
      const passAtK = ev!.passAtK as Record<string, unknown>;
      if (typeof passAtK !== 'object' || Array.isArray(passAtK)) bad('eval.passAtK', 'an object { k: interval }', passAtK);
      for (const k of Object.keys(passAtK)) if (!/^[1-9]\d*$/.test(k)) bad(`eval.passAtK.${k}`, 'keys that are integers k ≥ 1', k);
    }
  }
  if (r.curves !== undefined) {
    const curves = r.curves as Record<string, unknown>;
    if (!curves || typeof curves !== 'object' || Array.isArray(curves)) bad('curves', '{ stage: { metric: { steps, values } } }', curves);
    for (const [stage, metrics] of Object.entries(curves)) {
      if (!metrics || typeof metrics !== 'object' || Array.isArray(metrics)) bad(`curves.${stage}`, '{ metric: { steps, values } }', metrics);
      for (const [metric, s] of Object.entries(metrics as Record<string, unknown>)) {
        const series = s as { steps?: unknown; values?: unknown } | null;
        const where = `curves.${stage}.${metric}`;
        const numbers = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'number');
        if (!series || !numbers(series.steps)) bad(`${where}.steps`, 'an array of numbers', series?.steps);
        if (!numbers(series!.values)) bad(`${where}.values`, 'an array of numbers', series!.values);
        const steps = series!.steps as number[], values = series!.values as number[];
        if (steps.length !== values.length) bad(`${where}.values`, `as many values as steps (${steps.length})`, `${values.length} values`);
      }
    }
  }
  const record = r as unknown as RunRecord;
  const expected = recordFileName(record.method, record.env, record.seed);
  if (basename(file) !== expected) {
    throw new Error(`${file}: malformed record: the file name says one cell, the record another (method ${record.method}, env ${record.env}, ` +
      `seed ${record.seed}: ${expected})`);
  }
  return record;
}

/** A record as the table sees a run. */
export function recordToStudyRun(record: RunRecord, file: string): StudyRun {
  const ev = record.eval;
  return {
    name: `study:${record.study}:${record.method}:${record.env}:s${record.seed}`,
    study: record.study, method: record.method, env: record.env, seed: record.seed, runId: record.runId, status: 'completed',
    wallSeconds: Math.round(record.durationSeconds ?? 0),
    eval: ev ? studyRunEval(ev) : null,
    config: record.config ?? null, curves: record.curves ?? null, origin: 'record', source: file,
  };
}

/**
 * The runs of study `name` recorded in the folders `dirs` (each holding runs/*.json). Records of
 * another study are skipped with a note; a cell recorded in two folders counts once (the first).
 * Throws for a folder without records and for a malformed record (naming the file and the field).
 */
export function readStudyRecords(dirs: string[], name: string): { runs: StudyRun[]; notes: string[] } {
  const runs: StudyRun[] = [];
  const notes: string[] = [];
  const seen = new Map<string, string>();
  for (const dir of dirs) {
    const recordDir = join(dir, 'runs');
    const files = existsSync(recordDir) ? readdirSync(recordDir).filter((f) => f.endsWith('.json')).sort() : [];
    if (files.length === 0) {
      throw new Error(`records folder ${dir}: no runs/*.json there (expected ${join(dir, 'runs', '<method>-<env>-s<seed>.json')}, ` +
        `as \`spa-workbench study record\` writes them; give the folder that holds runs/, e.g. docs/results/spa-cpu-v1/fl08)`);
    }
    const others = new Map<string, number>();
    for (const f of files) {
      const file = join(recordDir, f);
      const record = parseRunRecord(parseRecordText(readFileSync(file, 'utf8'), file), file);
      if (record.study !== name) { others.set(record.study, (others.get(record.study) ?? 0) + 1); continue; }
      const key = `${record.method}|${record.env}|${record.seed}`;
      if (seen.has(key)) {
        notes.push(`${file}: ${record.method} on ${record.env} seed ${record.seed} is also recorded in ${seen.get(key)}; that one counts`);
        continue;
      }
      seen.set(key, file);
      runs.push(recordToStudyRun(record, file));
    }
    for (const [study, count] of others) notes.push(`${dir}: skipped ${count} record(s) of study ${JSON.stringify(study)} (not ${JSON.stringify(name)})`);
  }
  return { runs: sortStudyRuns(runs), notes };
}

/**
 * Runs from project folders and from records together. A cell (method, env, seed) present in both
 * counts once: the record wins (it is what docs/results publishes); a record without curves takes
 * them from the run folder of the same run id when that folder is among the project runs.
 */
export function mergeStudyRuns(projectRuns: StudyRun[], recordRuns: StudyRun[]): { runs: StudyRun[]; notes: string[] } {
  const key = (r: StudyRun) => `${r.method}|${r.env}|${r.seed}`;
  const recorded = new Map(recordRuns.map((r) => [key(r), r]));
  const both = new Set<string>();
  let curvesFromFolders = 0;
  const runs = recordRuns.map((r) => ({ ...r }));
  const byKey = new Map(runs.map((r) => [key(r), r]));
  for (const p of projectRuns) {
    const rec = recorded.get(key(p));
    if (!rec) { runs.push(p); continue; }
    both.add(`${p.method} ${p.env} s${p.seed}`);
    const target = byKey.get(key(p))!;
    if (!target.curves && p.curves && p.runId === rec.runId) { target.curves = p.curves; curvesFromFolders++; }
  }
  const notes: string[] = [];
  if (both.size) notes.push(`${both.size} cell(s) both in the project folders and the records; the record counts: ${[...both].join(', ')}`);
  if (curvesFromFolders) notes.push(`curves of ${curvesFromFolders} recorded run(s) without curves taken from their run folders`);
  return { runs: sortStudyRuns(runs), notes };
}
