// Studies: a grid of runs (methods × envs × seeds) executed one after another in a project
// through the WorkbenchApi (so every run is a normal, inspectable run), resumable (completed runs
// are skipped, stopped or failed ones resumed), and a comparison in the paper's layout:
// Pass@1 / Pass@k per env and method with 95% intervals (bootstrap over puzzles, pooled over
// seeds), plus CSV and PNG curves (RL reward/success per step, Pass@k across RL steps).
//
// A study's files live in <project>/studies/<name>/: spec.json (the grid), state.json (status,
// current run, times; written by whichever host runs the study: the CLI or the API's study
// runner, core/engine/study-host.ts) and the report (table.md, table.csv, PNGs, study.json).
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { passAtKWithInterval, type Interval } from '../train/pass-at-k.js';
import { lineChartPng, type Series } from './png-chart.js';
import { readJsonl } from '../storage/jsonl.js';
import { writeFileAtomicSync, writeJsonAtomicSync } from '../storage/atomic.js';

export interface StudySpec {
  name: string;               // study name (folder under <project>/studies/)
  methods: string[];          // preset ids
  envs: string[];             // env ids
  seeds: number[];            // run seeds (seeds.base)
  size: 'smoke' | 'quick' | 'paper';
  set?: Record<string, unknown>; // dotted-path overrides for every run
}

export function parseStudySpec(raw: unknown, where: string): StudySpec {
  const o = raw as Partial<StudySpec>;
  const problems: string[] = [];
  if (!o || typeof o !== 'object') throw new Error(`${where}: expected a JSON object { name, methods, envs, seeds, size }; received ${JSON.stringify(raw)?.slice(0, 80)}`);
  if (typeof o.name !== 'string' || !/^[A-Za-z0-9._-]+$/.test(o.name)) problems.push('name: letters, digits, ".", "_" or "-"');
  for (const key of ['methods', 'envs'] as const) if (!Array.isArray(o[key]) || o[key]!.length === 0 || !o[key]!.every((x) => typeof x === 'string')) problems.push(`${key}: a non-empty array of strings`);
  if (!Array.isArray(o.seeds) || o.seeds.length === 0 || !o.seeds.every((x) => Number.isInteger(x))) problems.push('seeds: a non-empty array of integers');
  if (!['smoke', 'quick', 'paper'].includes(String(o.size))) problems.push('size: smoke | quick | paper');
  if (problems.length) throw new Error(`${where}: invalid study: ${problems.join('; ')}`);
  return { name: o.name!, methods: o.methods!, envs: o.envs!, seeds: o.seeds!, size: o.size!, ...(o.set ? { set: o.set } : {}) };
}

export function runName(spec: Pick<StudySpec, 'name'>, method: string, env: string, seed: number): string {
  return `study:${spec.name}:${method}:${env}:s${seed}`;
}

/** The grid's cells in execution order: seed, then env, then method (so partial studies already compare methods). */
export function studyCells(spec: Pick<StudySpec, 'methods' | 'envs' | 'seeds'>): Array<{ method: string; env: string; seed: number }> {
  const cells = spec.methods.flatMap((method) => spec.envs.flatMap((env) => spec.seeds.map((seed) => ({ method, env, seed }))));
  cells.sort((a, b) => a.seed - b.seed || spec.envs.indexOf(a.env) - spec.envs.indexOf(b.env) || spec.methods.indexOf(a.method) - spec.methods.indexOf(b.method));
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

interface EvalFile { perPuzzle?: Array<{ seed: number; n: number; c: number }>; passAtK?: Record<string, Interval>; k?: number[]; success?: Interval; wallSeconds?: number }

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
      out.push({ dir: join(runsDir, id), name: run!.name!, study: m[1]!, method: m[2]!, env: m[3]!, seed: Number(m[4]), status: run!.status ?? 'unknown', durationMs: run!.durationMs ?? 0 });
    }
  }
  return out;
}

export interface TableCell { method: string; env: string; runs: number; completed: number; passAt: Record<string, Interval>; success: number | null; wallSeconds: number }

/** Pass@k per (method, env), pooling the puzzles of all completed seeds. */
export function studyTable(runs: RunRef[], methods: string[], envs: string[]): { cells: TableCell[]; ks: number[] } {
  const ks = new Set<number>();
  const cells: TableCell[] = [];
  for (const method of methods) for (const env of envs) {
    const mine = runs.filter((r) => r.method === method && r.env === env);
    const evals = mine.map((r) => readJson<EvalFile>(join(r.dir, 'eval', 'final.json'))).filter((e): e is EvalFile => e !== null && Array.isArray(e.perPuzzle));
    const perPuzzle = evals.flatMap((e) => e.perPuzzle!);
    const kList = evals.flatMap((e) => e.k ?? Object.keys(e.passAtK ?? {}).map(Number));
    for (const k of kList) ks.add(k);
    const passAt: Record<string, Interval> = {};
    if (perPuzzle.length > 0) {
      const minN = Math.min(...perPuzzle.map((p) => p.n));
      for (const k of [...new Set(kList)]) if (k <= minN) passAt[String(k)] = passAtKWithInterval(perPuzzle, k, { seed: 0 });
    }
    const successes = perPuzzle.reduce((a, p) => a + p.c, 0), samples = perPuzzle.reduce((a, p) => a + p.n, 0);
    cells.push({ method, env, runs: mine.length, completed: evals.length, passAt, success: samples ? successes / samples : null, wallSeconds: mine.reduce((a, r) => a + r.durationMs / 1000, 0) });
  }
  return { cells, ks: [...ks].sort((a, b) => a - b) };
}

const pct = (v: number): string => (100 * v).toFixed(1);
function fmtInterval(i: Interval | undefined): string { return i ? `${pct(i.mean)} [${pct(i.low)}, ${pct(i.high)}]` : '–'; }

/** Markdown in the paper's layout: rows = methods, columns = envs, cell = Pass@1 / Pass@k (95% CI). */
export function tableMarkdown(table: { cells: TableCell[]; ks: number[] }, methods: string[], envs: string[]): string {
  const kMax = table.ks.length ? Math.max(...table.ks) : 1;
  const header = `| method | ${envs.map((e) => `${e} Pass@1 / Pass@${kMax}`).join(' | ')} |`;
  const lines = [header, `|---|${envs.map(() => '---').join('|')}|`];
  for (const method of methods) {
    const row = envs.map((env) => {
      const c = table.cells.find((x) => x.method === method && x.env === env);
      if (!c || c.completed === 0) return c && c.runs > 0 ? '(not finished)' : '–';
      return `${fmtInterval(c.passAt['1'])} / ${fmtInterval(c.passAt[String(kMax)])}`;
    });
    lines.push(`| ${method} | ${row.join(' | ')} |`);
  }
  return lines.join('\n');
}

export function tableCsv(table: { cells: TableCell[]; ks: number[] }): string {
  const rows = [['method', 'env', 'runs', 'completed', 'k', 'mean', 'low', 'high', 'success', 'wallSeconds'].join(',')];
  for (const c of table.cells) for (const k of table.ks) {
    const i = c.passAt[String(k)];
    rows.push([c.method, c.env, c.runs, c.completed, k, i?.mean ?? '', i?.low ?? '', i?.high ?? '', c.success ?? '', c.wallSeconds.toFixed(0)].join(','));
  }
  return rows.join('\n') + '\n';
}

/** PNG curves per env: RL success per step, and tracked Pass@1 across RL steps, one line per method (mean over seeds). */
export function studyCurves(runs: RunRef[], methods: string[], envs: string[], outDir: string): string[] {
  const files: string[] = [];
  const charts: Array<{ metric: string; title: string; file: string }> = [
    { metric: 'rollout/success', title: 'RL rollout success', file: 'rl-success' },
    { metric: 'rollout/reward', title: 'RL rollout reward', file: 'rl-reward' },
    { metric: 'rl/passAt1', title: 'held-out Pass@1 during RL', file: 'rl-pass-at-1' },
  ];
  for (const env of envs) for (const chart of charts) {
    const series: Series[] = [];
    for (const method of methods) {
      const byStep = new Map<number, number[]>();
      for (const r of runs.filter((x) => x.method === method && x.env === env)) {
        for (const p of readJsonl<Record<string, unknown>>(join(r.dir, 'metrics.jsonl')).rows) {
          const values = p.values as Record<string, number> | undefined;
          if (p.stage !== 'rl' || !values || typeof values[chart.metric] !== 'number') continue;
          const list = byStep.get(p.step as number) ?? [];
          list.push(values[chart.metric]!);
          byStep.set(p.step as number, list);
        }
      }
      if (byStep.size) series.push({ name: method, points: [...byStep.entries()].map(([x, ys]) => [x, ys.reduce((a, c) => a + c, 0) / ys.length] as [number, number]) });
    }
    if (series.length === 0) continue;
    const file = join(outDir, `${chart.file}-${env}.png`);
    writeFileAtomicSync(file, lineChartPng(series, { title: `${chart.title} - ${env}`, xLabel: 'step', ...(chart.metric !== 'rollout/reward' ? { yMin: 0, yMax: 1 } : {}) }));
    files.push(file);
  }
  return files;
}

/** Write table.md, table.csv, curves and study.json into <outDir>. */
export function writeStudyReport(projects: string[], spec: Pick<StudySpec, 'name' | 'methods' | 'envs'>, outDir: string): { markdown: string; files: string[] } {
  mkdirSync(outDir, { recursive: true });
  const runs = findStudyRuns(projects, spec.name);
  const table = studyTable(runs, spec.methods, spec.envs);
  const markdown = tableMarkdown(table, spec.methods, spec.envs);
  const write = (name: string, text: string) => { const p = join(outDir, name); writeFileAtomicSync(p, text); return p; };
  const files = [write('table.md', `${markdown}\n`), write('table.csv', tableCsv(table))];
  files.push(...studyCurves(runs, spec.methods, spec.envs, outDir));
  files.push(write('study.json', JSON.stringify({ spec, runs: runs.map((r) => ({ name: r.name, dir: r.dir, status: r.status, wallSeconds: r.durationMs / 1000 })), table }, null, 2)));
  return { markdown, files };
}
