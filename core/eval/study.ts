// Studies: a grid of runs (methods × envs × seeds) executed one after another in a project
// through the WorkbenchApi (so every run is a normal, inspectable run), resumable (completed runs
// are skipped, stopped or failed ones resumed), and a comparison in the paper's layout:
// Pass@1 / Pass@k per env and method with 95% intervals (two-way bootstrap over run seeds and
// puzzles, widened to Wilson's at small n), chance and oracle rows on the same puzzles
// (core/eval/reference.ts), paired per-(seed, puzzle) differences between methods, plus CSV and PNG
// curves (RL reward/success per step, Pass@k across RL steps).
//
// A study's files live in <project>/studies/<name>/: spec.json (the grid), state.json (status,
// current run, times; written by whichever host runs the study: the CLI or the API's study
// runner, core/engine/study-host.ts) and the report (table.md, table.csv, PNGs, study.json).
import { chanceVerdict, SMALL_N_PUZZLES as SHARED_SMALL_N_PUZZLES, widenForSmallN, type ChanceVerdict } from '../api/verdict.js';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { passAtK, type Interval } from '../train/pass-at-k.js';
import { protocolOf, referenceRows, type ReferenceRow } from './reference.js';
import { PRESET_SIZES, StageSectionSchemas, type PresetSize } from '../api/run-config.js';
import { createRng } from '../util/rng.js';
import { lineChartPng, type Series } from './png-chart.js';
import { readJsonl } from '../storage/jsonl.js';
import { writeFileAtomicSync, writeJsonAtomicSync } from '../storage/atomic.js';
import { worldModelMarkdown, worldModelRows, type WorldModelRow } from './study-world-model.js';

export interface StudySpec {
  name: string;               // study name (folder under <project>/studies/)
  methods: string[];          // preset ids
  envs: string[];             // env ids
  seeds: number[];            // run seeds (seeds.base)
  size: PresetSize;           // a preset size (RUN_SIZES rows with preset: true)
  set?: Record<string, unknown>; // dotted-path overrides for every run
  skip?: string[];            // cells recorded elsewhere (e.g. docs/results on another machine) as "method:env:seed": not run here
}

/** The key of a cell in StudySpec.skip. */
export function cellKey(method: string, env: string, seed: number): string { return `${method}:${env}:${seed}`; }

export function parseStudySpec(raw: unknown, where: string): StudySpec {
  const o = raw as Partial<StudySpec>;
  const problems: string[] = [];
  if (!o || typeof o !== 'object') throw new Error(`${where}: expected a JSON object { name, methods, envs, seeds, size }; ` +
    `received ${JSON.stringify(raw)?.slice(0, 80)}`);
  if (typeof o.name !== 'string' || !/^[A-Za-z0-9._-]+$/.test(o.name)) problems.push('name: letters, digits, ".", "_" or "-"');
  for (const key of ['methods', 'envs'] as const)
    if (!Array.isArray(o[key]) || o[key]!.length === 0 || !o[key]!.every((x) => typeof x === 'string'))
      problems.push(`${key}: a non-empty array of strings`);
  if (!Array.isArray(o.seeds) || o.seeds.length === 0 || !o.seeds.every((x) => Number.isInteger(x))) problems.push('seeds: a non-empty array of integers');
  if (!(PRESET_SIZES as readonly string[]).includes(String(o.size))) problems.push(`size: ${PRESET_SIZES.join(' | ')}`);
  if (o.skip !== undefined && (!Array.isArray(o.skip) || !o.skip.every((x) => typeof x === 'string' && x.split(':').length === 3))) {
    problems.push('skip: an array of "method:env:seed" strings');
  }
  if (problems.length) throw new Error(`${where}: invalid study: ${problems.join('; ')}`);
  return {
    name: o.name!, methods: o.methods!, envs: o.envs!, seeds: o.seeds!, size: o.size!, ...(o.set ? { set: o.set } : {}),
    ...(o.skip?.length ? { skip: o.skip } : {}),
  };
}

export function runName(spec: Pick<StudySpec, 'name'>, method: string, env: string, seed: number): string {
  return `study:${spec.name}:${method}:${env}:s${seed}`;
}

/** The grid's cells in execution order: seed, then env, then method (so partial studies already compare methods). */
export function studyCells(spec: Pick<StudySpec, 'methods' | 'envs' | 'seeds'>): Array<{ method: string; env: string; seed: number }> {
  const cells = spec.methods.flatMap((method) => spec.envs.flatMap((env) => spec.seeds.map((seed) => ({ method, env, seed }))));
  cells.sort(
    (a, b) =>
      a.seed - b.seed || spec.envs.indexOf(a.env) - spec.envs.indexOf(b.env) || spec.methods.indexOf(a.method) - spec.methods.indexOf(b.method),
  );
  return cells;
}

// ───────────────────────── study files (spec.json, state.json) ─────────────────────────

export const STUDY_NAME_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;
export type StudyStatus = 'pending' | 'running' | 'stopped' | 'completed' | 'failed';

/** state.json: what the host running the study last recorded. */
export interface StudyState {
  status: StudyStatus;
  reason: string | null;          // why it stopped or failed
  startedAt: number | null;       // last start (or resume), ms
  finishedAt: number | null;      // last end, ms
  currentRunId: string | null;    // the run being executed (while running)
  host: string | null;            // who ran it last: "cli", "serve", "electron", ...
  updatedAt: number;
}

export function studyDir(project: string, name: string): string { return join(resolve(project), 'studies', name); }

/** Names of the studies of a project (folders under studies/ holding a spec.json), sorted. */
export function listStudyNames(project: string): string[] {
  const root = join(resolve(project), 'studies');
  if (!existsSync(root)) return [];
  return readdirSync(root).filter((n) => STUDY_NAME_RE.test(n) && existsSync(join(root, n, 'spec.json'))).sort();
}

export function readStudySpec(project: string, name: string): StudySpec | null {
  const file = join(studyDir(project, name), 'spec.json');
  if (!existsSync(file)) return null;
  let raw: unknown;
  try { raw = JSON.parse(readFileSync(file, 'utf8')); } catch (err) { throw new Error(`${file}: not valid JSON (${(err as Error).message})`); }
  return parseStudySpec(raw, file);
}

export function writeStudySpec(project: string, spec: StudySpec): void {
  writeJsonAtomicSync(join(studyDir(project, spec.name), 'spec.json'), spec);
}

const STATUSES: StudyStatus[] = ['pending', 'running', 'stopped', 'completed', 'failed'];

/** state.json, or null when missing or unreadable (studies run before state files existed have none). */
export function readStudyState(project: string, name: string): StudyState | null {
  const s = readJson<Partial<StudyState>>(join(studyDir(project, name), 'state.json'));
  if (!s || !STATUSES.includes(s.status as StudyStatus)) return null;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    status: s.status as StudyStatus, reason: typeof s.reason === 'string' ? s.reason : null,
    startedAt: num(s.startedAt), finishedAt: num(s.finishedAt),
    currentRunId: typeof s.currentRunId === 'string' ? s.currentRunId : null,
    host: typeof s.host === 'string' ? s.host : null, updatedAt: num(s.updatedAt) ?? 0,
  };
}

export function writeStudyState(project: string, name: string, state: StudyState): void {
  writeJsonAtomicSync(join(studyDir(project, name), 'state.json'), state);
}

export interface StudyCell { method: string; env: string; seed: number; runId: string | null; status: string; wallSeconds: number | null }

// ───────────────────────── the comparison ─────────────────────────

/** What the table needs of a run's final evaluation (eval/final.json, or the `eval` of a record). */
export interface StudyRunEval {
  perPuzzle: Array<{ seed: number; n: number; c: number }>;
  passAtK?: Record<string, Interval>;
  k?: number[];
  wm?: unknown;                   // the world model on the eval's rollouts (study-world-model.ts reads it)
  worldModelVersusBase?: unknown; // the first turns beside the base
}

/** The fields of StudyRunEval from eval/final.json or a record's `eval` (the caller checked perPuzzle). */
export function studyRunEval(e: Partial<StudyRunEval> & Pick<StudyRunEval, 'perPuzzle'>): StudyRunEval {
  return {
    perPuzzle: e.perPuzzle, ...(e.passAtK ? { passAtK: e.passAtK } : {}), ...(Array.isArray(e.k) ? { k: e.k } : {}),
    ...(e.wm ? { wm: e.wm } : {}), ...(e.worldModelVersusBase ? { worldModelVersusBase: e.worldModelVersusBase } : {}),
  };
}

/**
 * Per-step metric values of a run, by stage then metric, in the order metrics.jsonl holds them
 * (a step logged twice, e.g. around a resume, appears twice): what the study curves plot.
 */
export type RunCurves = Record<string, Record<string, { steps: number[]; values: number[] }>>;

export interface RunConfigLike { env?: { id?: string; options?: Record<string, unknown> }; seeds?: { evalStart?: number }; stages?: Record<string, unknown> }

/**
 * A run of a study as the table, the reference rows and the curves see it, whichever the source:
 * a run folder in a project (loadProjectRuns) or a record under docs/results (study-records.ts).
 */
export interface StudyRun {
  name: string;                   // study:<study>:<method>:<env>:s<seed>
  study: string; method: string; env: string; seed: number;
  runId: string;
  status: string;                 // run.json status; a record is always 'completed'
  wallSeconds: number;            // whole seconds (run.json durationMs rounded, as records hold it)
  eval: StudyRunEval | null;      // null: not evaluated (not finished, or no eval/final.json)
  config: RunConfigLike | null;
  curves: RunCurves | null;       // null: not loaded, or an old record without curves
  origin: 'run folder' | 'record';
  source: string;                 // the run folder or the record file (messages only; never in the report)
}

function readJson<T>(path: string): T | null {
  try { return JSON.parse(readFileSync(path, 'utf8')) as T; } catch { return null; }
}

export interface RunRef { dir: string; name: string; study: string; method: string; env: string; seed: number; status: string; durationMs: number }

/** Runs of a study (every study when `studyName` is omitted) found in project folders, by the study's run names in run.json. */
export function findStudyRuns(projects: string[], studyName?: string): RunRef[] {
  const out: RunRef[] = [];
  for (const project of projects) {
    const runsDir = join(resolve(project), 'runs');
    if (!existsSync(runsDir)) continue;
    for (const id of readdirSync(runsDir)) {
      const run = readJson<{ name?: string; status?: string; durationMs?: number }>(join(runsDir, id, 'run.json'));
      const m = /^study:([^:]+):([^:]+):([^:]+):s(-?\d+)$/.exec(run?.name ?? '');
      if (!m || (studyName !== undefined && m[1] !== studyName)) continue;
      out.push({
        dir: join(runsDir, id),
        name: run!.name!,
        study: m[1]!,
        method: m[2]!,
        env: m[3]!,
        seed: Number(m[4]),
        status: run!.status ?? 'unknown',
        durationMs: run!.durationMs ?? 0,
      });
    }
  }
  return out;
}

/** The metrics a run's curves keep: those studyCurves plots, every RL Pass@k, and the eval's world-model check. */
export function isCurveMetric(stage: string, metric: string): boolean {
  if (metric.startsWith('eval/wmCheck/')) return true;
  return stage === 'rl' && (metric === 'rollout/success' || metric === 'rollout/reward' || metric.startsWith('rl/passAt') || metric.startsWith('rl/wm'));
}

/** The curves of a run folder, from its metrics.jsonl (null when it has none of the curve metrics). */
export function readRunCurves(runDir: string): RunCurves | null {
  const curves: RunCurves = {};
  for (const row of readJsonl<Record<string, unknown>>(join(runDir, 'metrics.jsonl')).rows) {
    const values = row.values as Record<string, unknown> | undefined;
    if (typeof row.stage !== 'string' || typeof row.step !== 'number' || !values || typeof values !== 'object') continue;
    for (const [metric, value] of Object.entries(values)) {
      if (typeof value !== 'number' || !isCurveMetric(row.stage, metric)) continue;
      const series = ((curves[row.stage] ??= {})[metric] ??= { steps: [], values: [] });
      series.steps.push(row.step);
      series.values.push(value);
    }
  }
  return Object.keys(curves).length ? curves : null;
}

/** A run folder as a StudyRun: its eval/final.json (when it holds perPuzzle), config and, when asked, curves. */
export function loadProjectRun(ref: RunRef, opts: { curves?: boolean } = {}): StudyRun {
  const final = readJson<Partial<StudyRunEval>>(join(ref.dir, 'eval', 'final.json'));
  const config = readJson<{ config?: RunConfigLike }>(join(ref.dir, 'run.json'))?.config ?? null;
  return {
    name: ref.name, study: ref.study, method: ref.method, env: ref.env, seed: ref.seed, runId: basename(ref.dir), status: ref.status,
    wallSeconds: Math.round(ref.durationMs / 1000),
    eval: final && Array.isArray(final.perPuzzle) ? studyRunEval({ ...final, perPuzzle: final.perPuzzle }) : null,
    config, curves: opts.curves === false ? null : readRunCurves(ref.dir), origin: 'run folder', source: ref.dir,
  };
}

/** One order for every source (method, env, seed, run id), so the same runs give the same report whether read from folders or records. */
export function sortStudyRuns<T extends Pick<StudyRun, 'method' | 'env' | 'seed' | 'runId'>>(runs: readonly T[]): T[] {
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...runs].sort((a, b) => cmp(a.method, b.method) || cmp(a.env, b.env) || a.seed - b.seed || cmp(a.runId, b.runId));
}

/** The runs of a study in project folders, loaded and sorted. */
export function loadProjectRuns(projects: string[], studyName: string, opts: { curves?: boolean } = {}): StudyRun[] {
  return sortStudyRuns(findStudyRuns(projects, studyName).map((r) => loadProjectRun(r, opts)));
}

function asStudyRuns(runs: ReadonlyArray<StudyRun | RunRef>, curves: boolean): StudyRun[] {
  return sortStudyRuns(runs.map((r) => ('dir' in r ? loadProjectRun(r, { curves }) : r)));
}

export interface TableCell {
  method: string; env: string; runs: number; completed: number; passAt: Record<string, Interval>; success: number | null; wallSeconds: number;
  meanWallSeconds?: number;            // mean wall seconds of the evaluated runs
  atOrBelowChance?: boolean;           // Pass@1 mean ≤ the chance row's Pass@1 on the same puzzles
  versusChance?: ChanceVerdict;        // Pass@1's interval against the chance row (core/api/verdict.ts, as the Run view states it)
  puzzles?: number;                    // distinct eval puzzles
  sharedPuzzles?: boolean;             // every run seed played the same eval puzzles
}

/** A paired comparison of two methods on the (run seed, puzzle) cells both played. */
export interface PairedDifference { env: string; a: string; b: string; k: number; cells: number; diff: Interval; smallN: boolean }

export interface StudyTableData {
  cells: TableCell[]; ks: number[]; references: ReferenceRow[]; differences: PairedDifference[]; notes: string[];
  worldModel: WorldModelRow[];         // criterion 1's numbers, per method with a world-model format
}

/** One (run seed, puzzle) cell of a method's evaluation: its pass@k estimate. */
interface ClusterValue { runSeed: number; puzzle: number; n: number; c: number }

/** Fewer puzzles than this: intervals are widened to Wilson's and differences say n is too small (core/api/verdict.ts, shared with the Run view). */
export const SMALL_N_PUZZLES = SHARED_SMALL_N_PUZZLES;

/**
 * Two-way (crossed) bootstrap of a mean over (run seed, puzzle) cells: each resample draws run seeds
 * and puzzles with replacement and averages the cells present, so both the seed-to-seed and the
 * puzzle-to-puzzle variation enter the interval (pooled puzzles counted once per seed understate it).
 */
export function twoWayBootstrap(
  values: Array<{ runSeed: number; puzzle: number; value: number }>,
  opts: { resamples?: number; level?: number; seed?: number } = {},
): Interval {
  const level = opts.level ?? 0.95;
  if (values.length === 0) return { mean: Number.NaN, low: Number.NaN, high: Number.NaN, level, method: 'two-way bootstrap' };
  const seeds = [...new Set(values.map((v) => v.runSeed))];
  const puzzles = [...new Set(values.map((v) => v.puzzle))];
  const at = new Map(values.map((v) => [`${v.runSeed}|${v.puzzle}`, v.value]));
  const mean = values.reduce((a, v) => a + v.value, 0) / values.length;
  const rng = createRng(opts.seed ?? 0);
  const means: number[] = [];
  for (let r = 0; r < (opts.resamples ?? 1000); r++) {
    const S = seeds.map(() => seeds[Math.floor(rng() * seeds.length)]!);
    const P = puzzles.map(() => puzzles[Math.floor(rng() * puzzles.length)]!);
    let sum = 0, count = 0;
    for (const s of S) for (const p of P) { const v = at.get(`${s}|${p}`); if (v !== undefined) { sum += v; count++; } }
    if (count > 0) means.push(sum / count);
  }
  means.sort((x, y) => x - y);
  const alpha = (1 - level) / 2;
  const q = (x: number): number => means[Math.min(means.length - 1, Math.max(0, Math.floor(x * (means.length - 1))))]!;
  return { mean, low: q(alpha), high: q(1 - alpha), level, method: `two-way bootstrap over ${seeds.length} run seed(s) x ${puzzles.length} puzzle(s)` };
}

/**
 * Pass@k of a method over (run seed, puzzle) cells: the two-way bootstrap, widened to the Wilson
 * interval over the distinct puzzles when there are fewer than SMALL_N_PUZZLES (so 2 puzzles that
 * all failed give [0, 66%], not [0, 0]).
 */
export function clusteredPassAtK(cells: ClusterValue[], k: number, opts: { seed?: number } = {}): Interval {
  const values = cells.map((c) => ({ runSeed: c.runSeed, puzzle: c.puzzle, value: passAtK(c.n, c.c, k) }));
  const boot = twoWayBootstrap(values, { seed: opts.seed ?? 0 });
  const puzzles = new Set(cells.map((c) => c.puzzle)).size;
  const wide = widenForSmallN(boot, puzzles);   // the rule the Run view's verdict uses too
  if (!wide.widened) return boot;
  return { ...boot, low: wide.low, high: wide.high, method: `${boot.method}, widened to Wilson over ${puzzles} puzzles (small n)` };
}

type EvaluatedRun = StudyRun & { eval: StudyRunEval };

function clusters(evals: EvaluatedRun[]): ClusterValue[] {
  return evals.flatMap((e) => e.eval.perPuzzle.map((p) => ({ runSeed: e.seed, puzzle: p.seed, n: p.n, c: p.c })));
}

/** Chance and oracle rows for an env, on the puzzles and protocol of its first evaluated run (in sortStudyRuns order). */
export function studyReferences(runs: readonly StudyRun[], env: string, ks: number[]): ReferenceRow[] {
  const first = runs.find((e) => e.env === env && e.eval && e.config);
  if (!first || !first.config || !first.eval) return [];
  const config = first.config;
  const rollout = StageSectionSchemas.rollout.safeParse(config.stages?.rollout ?? {});
  const puzzleSeeds = [...new Set(first.eval.perPuzzle.map((p) => p.seed))].sort((a, b) => a - b);
  try {
    return referenceRows({
      envId: config.env?.id ?? env, envOptions: config.env?.options ?? {},
      protocol: protocolOf(config.env?.id ?? env, rollout.success ? rollout.data : {}), seeds: puzzleSeeds, ks,
    });
  } catch {
    return []; // an env without a solver or a config from an older version: no reference rows
  }
}

/**
 * Pass@k per (method, env) over (run seed, puzzle) clusters, chance and oracle rows, and paired differences.
 * `runs`: StudyRun (from loadProjectRuns or the records), or RunRef (run folders, loaded here).
 */
export function studyTable(runs: ReadonlyArray<StudyRun | RunRef>, methods: string[], envs: string[]): StudyTableData {
  const ks = new Set<number>();
  const cells: TableCell[] = [];
  const notes: string[] = [];
  const studyRuns = asStudyRuns(runs, true);      // curves: the world-model rows read RL step 0
  const all = studyRuns.filter((r): r is EvaluatedRun => r.eval !== null);
  for (const e of all) for (const k of e.eval.k ?? Object.keys(e.eval.passAtK ?? {}).map(Number)) ks.add(k);
  const kList = [...ks].sort((a, b) => a - b);
  const references = envs.flatMap((env) => studyReferences(all, env, kList));
  const byCell = new Map<string, ClusterValue[]>();
  for (const method of methods) for (const env of envs) {
    const mine = studyRuns.filter((r) => r.method === method && r.env === env);
    const evals = all.filter((e) => e.method === method && e.env === env);
    const values = clusters(evals);
    byCell.set(`${method}|${env}`, values);
    const passAt: Record<string, Interval> = {};
    if (values.length > 0) {
      const minN = Math.min(...values.map((p) => p.n));
      for (const k of kList) if (k <= minN) passAt[String(k)] = clusteredPassAtK(values, k);
    }
    const successes = values.reduce((a, p) => a + p.c, 0), samples = values.reduce((a, p) => a + p.n, 0);
    const puzzleSets = evals.map((e) => e.eval.perPuzzle.map((p) => p.seed).sort((a, b) => a - b).join(','));
    const chance = references.find((r) => r.env === env && r.kind === 'chance')?.passAt['1'];
    cells.push({
      method,
      env,
      runs: mine.length,
      completed: evals.length,
      passAt,
      success: samples ? successes / samples : null,
      wallSeconds: mine.reduce((a, r) => a + r.wallSeconds, 0),
      ...(evals.length ? { meanWallSeconds: evals.reduce((a, r) => a + r.wallSeconds, 0) / evals.length } : {}),
      puzzles: new Set(values.map((v) => v.puzzle)).size,
      sharedPuzzles: evals.length > 1 && new Set(puzzleSets).size === 1,
      ...(chance !== undefined && passAt['1'] ? { atOrBelowChance: passAt['1'].mean <= chance, versusChance: chanceVerdict(passAt['1'], chance) } : {}),
    });
  }
  const differences: PairedDifference[] = [];
  for (const env of envs) for (let i = 0; i < methods.length; i++) for (let j = i + 1; j < methods.length; j++) {
    const a = byCell.get(`${methods[i]}|${env}`) ?? [], b = byCell.get(`${methods[j]}|${env}`) ?? [];
    const other = new Map(b.map((v) => [`${v.runSeed}|${v.puzzle}`, v]));
    const paired = a.filter((v) => other.has(`${v.runSeed}|${v.puzzle}`));
    if (paired.length === 0) continue;
    for (const k of kList) {
      if (paired.some((v) => v.n < k || other.get(`${v.runSeed}|${v.puzzle}`)!.n < k)) continue;
      const values = paired.map((v) => {
        const w = other.get(`${v.runSeed}|${v.puzzle}`)!;
        return { runSeed: v.runSeed, puzzle: v.puzzle, value: passAtK(v.n, v.c, k) - passAtK(w.n, w.c, k) };
      });
      const puzzles = new Set(paired.map((v) => v.puzzle)).size;
      differences.push({ env, a: methods[i]!, b: methods[j]!, k, cells: paired.length, diff: twoWayBootstrap(values), smallN: puzzles < SMALL_N_PUZZLES });
    }
  }
  for (const env of envs) {
    const envCells = cells.filter((c) => c.env === env && c.completed > 0);
    if (envCells.some((c) => c.sharedPuzzles)) notes.push(`${env}: every run seed is evaluated on the same held-out puzzles (seeds.evalStart); ` +
      `intervals resample run seeds and puzzles (two-way bootstrap), differences are paired per (run seed, puzzle).`);
    if (envCells.some((c) => (c.puzzles ?? 0) < SMALL_N_PUZZLES)) notes.push(`${env}: fewer than ${SMALL_N_PUZZLES} puzzles: intervals are widened ` +
      `to Wilson's and paired differences are marked "n too small".`);
  }
  return { cells, ks: kList, references, differences, notes, worldModel: worldModelRows(studyRuns, methods, envs) };
}

const pct = (v: number): string => (100 * v).toFixed(1);
function fmtInterval(i: Interval | undefined): string { return i ? `${pct(i.mean)} [${pct(i.low)}, ${pct(i.high)}]` : '–'; }

/**
 * Markdown in the paper's layout: rows = methods, columns = envs, cell = Pass@1 / Pass@k (95% CI);
 * then the chance and oracle rows on the same puzzles, the paired differences and the notes.
 */
export function tableMarkdown(
  table: { cells: TableCell[]; ks: number[]; references?: ReferenceRow[]; differences?: PairedDifference[]; notes?: string[]; worldModel?: WorldModelRow[] },
  methods: string[],
  envs: string[],
): string {
  const kMax = table.ks.length ? Math.max(...table.ks) : 1;
  const header = `| method | ${envs.map((e) => `${e} Pass@1 / Pass@${kMax}`).join(' | ')} |`;
  const lines = [header, `|---|${envs.map(() => '---').join('|')}|`];
  for (const method of methods) {
    const row = envs.map((env) => {
      const c = table.cells.find((x) => x.method === method && x.env === env);
      if (!c || c.completed === 0) return c && c.runs > 0 ? '(not finished)' : '–';
      const verdict = c.versusChance && c.versusChance !== 'above chance' ? ` (${c.versusChance})` : '';
      return `${fmtInterval(c.passAt['1'])} / ${fmtInterval(c.passAt[String(kMax)])}${verdict}`;
    });
    lines.push(`| ${method} | ${row.join(' | ')} |`);
  }
  for (const kind of ['chance', 'oracle'] as const) {
    const refs = envs.map((env) => table.references?.find((r) => r.env === env && r.kind === kind));
    if (refs.every((r) => !r)) continue;
    const label = refs.find((r) => r)!.label;
    lines.push(`| *${label}* | ${refs.map((r) => (r ? `${pct(r.passAt['1']!)} / ${pct(r.passAt[String(kMax)] ?? Number.NaN)}` : '–')).join(' | ')} |`);
  }
  const refs = (table.references ?? []).filter((r) => r.kind === 'chance' || r.kind === 'oracle');
  if (refs.length) {
    const how = [...new Set(refs.map((r) => `${r.env} ${r.kind}: ${r.how}`))].join('; ');
    lines.push('', `Reference rows on the same puzzles and protocol: ${how}.`);
  }
  if (table.differences?.length) {
    lines.push('', '| paired difference (a − b) | env | k | mean [95% CI] | (seed, puzzle) cells |', '|---|---|---|---|---|');
    for (const d of table.differences) {
      lines.push(`| ${d.a} − ${d.b} | ${d.env} | ${d.k} | ${d.smallN ? `${pct(d.diff.mean)} (n too small for an interval)` : fmtInterval(d.diff)} ` +
        `| ${d.cells} |`);
    }
  }
  if (table.cells.some((c) => c.meanWallSeconds !== undefined)) {
    lines.push('', `| mean wall seconds per finished run | ${envs.join(' | ')} |`, `|---|${envs.map(() => '---').join('|')}|`);
    for (const method of methods) {
      const row = envs.map((env) => {
        const c = table.cells.find((x) => x.method === method && x.env === env);
        return c?.meanWallSeconds !== undefined ? `${c.meanWallSeconds.toFixed(0)} (${c.completed} run${c.completed === 1 ? '' : 's'})` : '–';
      });
      lines.push(`| ${method} | ${row.join(' | ')} |`);
    }
  }
  const wm = worldModelMarkdown(table.worldModel ?? []);
  if (wm.length) lines.push('', ...wm);
  if (table.notes?.length) lines.push('', ...table.notes.map((n) => `- ${n}`));
  return lines.join('\n');
}

export function tableCsv(table: { cells: TableCell[]; ks: number[]; references?: ReferenceRow[] }): string {
  const rows = [['method', 'env', 'runs', 'completed', 'k', 'mean', 'low', 'high', 'success', 'wallSeconds'].join(',')];
  for (const c of table.cells) for (const k of table.ks) {
    const i = c.passAt[String(k)];
    rows.push([c.method, c.env, c.runs, c.completed, k, i?.mean ?? '', i?.low ?? '', i?.high ?? '', c.success ?? '', c.wallSeconds.toFixed(0)].join(','));
  }
  for (const r of table.references ?? [])
    for (const k of table.ks) rows.push([`reference:${r.kind}`, r.env, '', '', k, r.passAt[String(k)] ?? '', '', '', '', ''].join(','));
  return rows.join('\n') + '\n';
}

/** PNG curves per env: RL success per step, and tracked Pass@1 across RL steps, one line per method (mean over seeds). */
export function studyCurves(runs: ReadonlyArray<StudyRun | RunRef>, methods: string[], envs: string[], outDir: string): string[] {
  const files: string[] = [];
  const studyRuns = asStudyRuns(runs, true);
  const charts: Array<{ metric: string; title: string; file: string }> = [
    { metric: 'rollout/success', title: 'RL rollout success', file: 'rl-success' },
    { metric: 'rollout/reward', title: 'RL rollout reward', file: 'rl-reward' },
    { metric: 'rl/passAt1', title: 'held-out Pass@1 during RL', file: 'rl-pass-at-1' },
  ];
  for (const env of envs) for (const chart of charts) {
    const series: Series[] = [];
    for (const method of methods) {
      const byStep = new Map<number, number[]>();
      for (const r of studyRuns.filter((x) => x.method === method && x.env === env)) {
        const curve = r.curves?.rl?.[chart.metric];
        if (!curve) continue;
        curve.steps.forEach((step, i) => {
          const list = byStep.get(step) ?? [];
          list.push(curve.values[i]!);
          byStep.set(step, list);
        });
      }
      if (byStep.size)
        series.push({
          name: method,
          points: [...byStep.entries()].map(([x, ys]) => [x, ys.reduce((a, c) => a + c, 0) / ys.length] as [number, number]),
        });
    }
    if (series.length === 0) continue;
    const file = join(outDir, `${chart.file}-${env}.png`);
    writeFileAtomicSync(
      file,
      lineChartPng(series, { title: `${chart.title} - ${env}`, xLabel: 'step', ...(chart.metric !== 'rollout/reward' ? { yMin: 0, yMax: 1 } : {}) }),
    );
    files.push(file);
  }
  return files;
}

/**
 * Write table.md, table.csv, curves and study.json into <outDir>. `source`: project folders (the
 * study's runs are found there), or the runs themselves (loadProjectRuns, readStudyRecords,
 * mergeStudyRuns): the same runs give the same files whichever the source.
 */
export function writeStudyReport(
  source: string[] | StudyRun[], spec: Pick<StudySpec, 'name' | 'methods' | 'envs'>, outDir: string,
): { markdown: string; files: string[] } {
  mkdirSync(outDir, { recursive: true });
  const runs = source.length > 0 && typeof source[0] === 'string'
    ? loadProjectRuns(source as string[], spec.name)
    : sortStudyRuns(source as StudyRun[]);
  const table = studyTable(runs, spec.methods, spec.envs);
  const markdown = tableMarkdown(table, spec.methods, spec.envs);
  const write = (name: string, text: string) => { const p = join(outDir, name); writeFileAtomicSync(p, text); return p; };
  const files = [write('table.md', `${markdown}\n`), write('table.csv', tableCsv(table))];
  files.push(...studyCurves(runs, spec.methods, spec.envs, outDir));
  files.push(
    write(
      'study.json',
      JSON.stringify(
        { spec, runs: runs.map((r) => ({ name: r.name, runId: r.runId, status: r.status, wallSeconds: r.wallSeconds })), table },
        null,
        2,
      ),
    ),
  );
  return { markdown, files };
}
