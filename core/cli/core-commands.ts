// Core subcommands: start, run, list, show, export, serve, resume, stop. They drive the same
// dispatcher as the UI (in-process), so everything the product does is reachable from here.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import type { Command } from 'commander';
import { SizeSchema, type RunInfo, type RunSummary, type WorkbenchClient, type WorkbenchEvent } from '../api/contract.js';
import type { Dispatcher } from '../host/dispatcher.js';
import type { EpisodeRecord, MetricPoint } from '../api/records.js';
import { EpisodeRecordSchema, RunEventSchema } from '../api/records.js';
import { WorkbenchError } from '../api/errors.js';
import { electronBinary, repoRoot } from '../host/system-info.js';
import { parseSetArgs } from '../engine/config.js';
import { RESUME_SETTABLE } from '../api/run-config.js';
import { journalSummaries } from '../train/episode-journal.js';
import { readJsonl } from '../storage/jsonl.js';
import { holderSignalProblem, LOCK_FILE, pidAlive } from '../storage/lock.js';
import { EVENTS_FILE, insideRun, METRICS_FILE, ROLLOUT_INDEX } from '../storage/run-files.js';
import { checkMetricPoint, checkSummary } from '../storage/run-data.js';
import { onInterrupt } from './interrupt.js';
import { describeJsonError } from './json-error.js';
import { checkToken, chooseToken, rememberedLink, rememberLink, SERVE_LINKS_FILE } from './serve-link.js';
import { START_RUN_ENV, describeStartup, startupRunAction } from '../host/startup-run.js';
import { formatRunEta } from '../engine/run-eta.js';
import { workbenchHome } from '../storage/home.js';
import { isInside, realPathOf } from '../storage/real-path.js';

// The dispatcher and the server load lazily, so `--help` and other areas' commands stay quick.
async function createDispatcher(...args: Parameters<typeof import('../host/dispatcher.js').createDispatcher>): Promise<Dispatcher> {
  return (await import('../host/dispatcher.js')).createDispatcher(...args);
}
async function createInProcessClient(d: Dispatcher): Promise<WorkbenchClient> {
  return (await import('../host/in-process.js')).createInProcessClient(d);
}

const SIZES = SizeSchema.options;
type SizeArg = (typeof SIZES)[number];

function fail(message: string, code = 1): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(code);
}

function describeError(err: unknown): string {
  if (err instanceof WorkbenchError || (err instanceof Error && 'details' in err)) {
    const e = err as WorkbenchError;
    const issues = e.details?.issues?.length ? `\n${e.details.issues.slice(0, 10).map((i) => `  - ${i.path}: ${i.message}`).join('\n')}` : '';
    return `${e.name}: ${e.message.replace('list them with runs.list', 'list them with `spa-workbench list --project DIR`')}${issues}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Open (or, when `create`, create) a project in-process. */
async function openProject(dir: string, create: boolean, purpose: string): Promise<{ d: Dispatcher; api: WorkbenchClient }> {
  const d = await createDispatcher({ host: 'cli', lockPurpose: purpose });
  const api = await createInProcessClient(d);
  const abs = path.resolve(dir);
  try {
    if (fs.existsSync(path.join(abs, 'workbench.json')) || !create) await api.projects.open({ path: abs });
    else await api.projects.create({ path: abs });
  } catch (err) {
    await d.dispose();
    fail(describeError(err));
  }
  const info = await api.projects.info();
  for (const w of info.project?.warnings ?? []) process.stderr.write(`warning: ${w}\n`);
  return { d, api };
}

/** Who holds a project's lock: a live process on this machine, or any process on another one (else null: no lock, or a stale one). */
function liveLockHolder(dir: string): { pid: number; host: string; purpose?: string } | null {
  try {
    const holder = JSON.parse(fs.readFileSync(path.join(path.resolve(dir), LOCK_FILE), 'utf8')) as { pid: number; host: string; purpose?: string };
    return holder.host !== os.hostname() || pidAlive(holder.pid) ? holder : null;
  } catch { return null; }
}

/** The runs of a project, for list/show/export: through the API, or straight from the run files while another process holds the lock. */
interface RunReader { list(): Promise<RunSummary[]>; get(runId: string): Promise<RunInfo>; close(): Promise<void> }

function readRunFile(dir: string): RunInfo | null {
  try { return { ...(JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8')) as Omit<RunInfo, 'dir'>), dir }; } catch { return null; }
}

/** Reading a project never needs its lock: when a run, `serve` or the app has it open, read the run files (no writes, nothing moved aside). */
async function openForReading(dir: string): Promise<RunReader> {
  const abs = path.resolve(dir);
  const holder = liveLockHolder(abs);
  if (holder && fs.existsSync(path.join(abs, 'workbench.json'))) {
    process.stderr.write(`note: the project is open in process ${holder.pid}${holder.host !== os.hostname() ? ` on ${holder.host}` : ''} ` +
      `(${holder.purpose ?? 'workbench'}); reading its run files directly (run.json is refreshed about once a second)\n`);
    const runsDir = path.join(abs, 'runs');
    const all = (): RunInfo[] => (fs.existsSync(runsDir) ? fs.readdirSync(runsDir) : [])
      .map((id) => readRunFile(path.join(runsDir, id))).filter((r): r is RunInfo => r !== null)
      .sort((x, y) => y.createdAt - x.createdAt);
    return {
      list: async () => all().map(({ config: _c, versions: _v, dir: _d, ...summary }) => summary as RunSummary),
      get: async (runId) => {
        const info = /^[\w.-]+$/.test(runId) ? readRunFile(path.join(runsDir, runId)) : null;
        if (!info) runNotFound(runId, dir, all().length);
        return info;
      },
      close: async () => undefined,
    };
  }
  const { d, api } = await openProject(abs, false, 'cli');
  return {
    list: async () => (await api.runs.list()).runs,
    get: async (runId) => {
      try { return await api.runs.get({ runId }); } catch (err) {
        if ((err as Error)?.name === 'NotFound') runNotFound(runId, dir, (await api.runs.list()).total);
        throw err;
      }
    },
    close: () => d.dispose(),
  };
}

/** What a read-only (watched) project means, for the terminal. */
function readOnlyNote(info: { holder?: { pid: number; host: string; purpose: string; canStop: boolean } | null }): string {
  const h = info.holder;
  if (!h) return 'the project is open read-only';
  const stop = h.canStop ? '; Stop in the UI asks that process to stop, like `spa-workbench stop`' : '';
  return `process ${h.pid} on ${h.host} (${h.purpose}) holds the project: serving it read-only, following its runs live from the files${stop}`;
}

function runNotFound(runId: string, project: string, count: number): never {
  const error = new Error(`run ${JSON.stringify(runId)} not found in ${project} (${count} run${count === 1 ? '' : 's'}; list them with: ` +
    `spa-workbench list --project ${project})`);
  error.name = 'NotFound';
  throw error;
}

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

/**
 * A run's time so far: the finished attempts' summed time plus, while it runs (or stops), the time
 * since this attempt started; durationMs alone is 0 until the first attempt ends ("0s" for a run
 * that has been running for an hour). A finished attempt whose time is not in yet counts from its start and end.
 */
export function runTimeMs(r: Pick<RunSummary, 'status' | 'durationMs' | 'startedAt' | 'finishedAt'>, now = Date.now()): number {
  if ((r.status === 'running' || r.status === 'stopping') && r.startedAt) return r.durationMs + Math.max(0, now - r.startedAt);
  if (r.durationMs > 0) return r.durationMs;
  return r.startedAt && r.finishedAt && r.finishedAt > r.startedAt ? r.finishedAt - r.startedAt : 0;
}

/**
 * An RL step's update resume point kept in a stage's state.json (core/train/rl-stage.ts UpdatePoint): "step 2's update after
 * 2 of its 4 updates". None when no state has one or does not read (show prints what it can, it does not fail on it).
 */
function updatePointLines(runDir: string): string[] {
  type Point = { step?: unknown; batchesDone?: unknown; batches?: unknown };
  const out: string[] = [];
  let stages: string[] = [];
  try { stages = fs.readdirSync(path.join(runDir, 'stages')).sort(); } catch { return out; }
  for (const stage of stages) {
    let u: Point | undefined;
    try { u = (JSON.parse(fs.readFileSync(path.join(runDir, 'stages', stage, 'state.json'), 'utf8')) as { update?: Point }).update; } catch { continue; }
    if (u && typeof u.step === 'number' && typeof u.batchesDone === 'number' && typeof u.batches === 'number')
      out.push(`  ${stage} step ${u.step + 1}'s update: after ${u.batchesDone} of its ${u.batches} updates (checkpoints/rl-update)`);
  }
  return out;
}

/**
 * `spa-workbench show`'s text: name, status, what the run is doing now (its latest progress message and ETAs, while it runs),
 * stages, what is kept for a resume (journals, an RL update's resume point) and the latest metrics. `r.dir` is read for
 * the journals and stage states; a missing or unreadable file leaves its lines out.
 */
export function showLines(r: RunInfo): string[] {
  const p = r.progress;
  const running = r.status === 'running' || r.status === 'stopping';
  const whole = p?.runEtaSeconds !== undefined ? formatRunEta({ seconds: p.runEtaSeconds ?? null, unestimated: p.unestimatedStages ?? 0 }, duration) : '';
  const now = running && p ? [`now:      ${p.stage} ${p.done}/${p.total}${p.message ? ` · ${p.message}` : ''}` +
    `${p.etaSeconds !== null ? ` · stage ETA ${duration(p.etaSeconds * 1000)}` : ''}${whole ? ` · ${whole}` : ''}`] : [];
  const lines = [
    `${r.name}  (${r.id})`,
    `status:   ${r.status}${r.reason ? ` — ${r.reason}` : ''}`,
    `method:   ${r.method}   env: ${r.env}   size: ${r.size}   preset: ${r.preset ?? '-'}   template: ${r.templateHash?.slice(0, 12) ?? '-'}`,
    `created:  ${new Date(r.createdAt).toISOString()}   attempts: ${r.attempts}   ` +
      `time: ${duration(runTimeMs(r))}${r.status === 'running' ? ' so far' : ''}`,
    `folder:   ${r.dir}`,
    ...now,
    ...(r.tags?.length ? [`tags:     ${r.tags.join(', ')}`] : []),
    ...(r.notes ? [`notes:    ${r.notes.split('\n').join('\n          ')}`] : []),
    'stages:',
    ...r.stages.map((s) => `  ${s.status.padEnd(9)} ${s.name}${s.total ? ` ${s.done}/${s.total}` : ''}${s.reason ? ` — ${s.reason}` : ''}`),
  ];
  // finished episodes of a step or an eval in progress, and an RL step's scored rows, kept for a resume
  // (core/train/episode-journal.ts); an RL step's update resume point (core/train/rl-stage.ts)
  const journals = journalSummaries(r.dir);
  if (journals.length) {
    lines.push('kept for a resume (journals):',
      ...journals.map((j) => `  ${j.stage} ${j.key}: ${j.batches} finished batch${j.batches === 1 ? '' : 'es'}, ${j.items} ${j.unit}` +
        (j.unit === 'rows' ? ' with their old log-probs' : '')));
  }
  const points = updatePointLines(r.dir);
  if (points.length) lines.push('kept for a resume (update points):', ...points);
  const latest = Object.entries(r.latest);
  if (latest.length)
    lines.push(
      'latest metrics:',
      ...latest.sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `  ${k} = ${Number.isInteger(v) ? v : v.toPrecision(4)}`),
    );
  return lines;
}

function runRow(r: RunSummary): string[] {
  const done = r.stages.filter((s) => s.status === 'completed').length;
  const name = r.name.length > 40 ? `${r.name.slice(0, 39)}…` : r.name;
  const created = new Date(r.createdAt).toISOString().slice(0, 16).replace('T', ' ');
  return [r.id, name, r.status, r.method, r.env, r.size, `${done}/${r.stages.length}`, created, duration(runTimeMs(r)), (r.tags ?? []).join(',')];
}

/** The run's headline numbers for the terminal, each labelled by where it comes from (the final eval, or training rollouts). */
export function finalMetricLines(latest: Record<string, number>): string[] {
  const pct = (v: number) => `${(100 * v).toFixed(1)}%`;
  const lines: string[] = [];
  for (const source of ['eval', 'rollout'] as const) {
    const label = source === 'eval' ? 'final evaluation' : 'training rollouts (no evaluation ran)';
    const ks = Object.keys(latest).map((k) => new RegExp(`^${source}/passAt(\\d+)$`).exec(k)).filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1])).sort((a, b) => a - b);
    const parts: string[] = [];
    if (latest[`${source}/success`] !== undefined) parts.push(`success ${pct(latest[`${source}/success`]!)}`);
    for (const k of ks) parts.push(`Pass@${k} ${pct(latest[`${source}/passAt${k}`]!)}`);
    if (latest[`${source}/formatErrorRate`] !== undefined) parts.push(`format errors ${pct(latest[`${source}/formatErrorRate`]!)}`);
    const wm = latest[`${source}/wmPredictionCellAccuracy`];
    const turns = latest[`${source}/wmTurns`];
    // the UI's names (docs/metrics.md "Names on screen"): the two sources' cell accuracies have different denominators
    const wmName = source === 'eval' ? 'prediction cell accuracy, eval episodes' : 'prediction cell accuracy, training rollouts';
    if (turns === 0 || (wm === undefined && latest[`${source}/formatErrorRate`] === 1)) parts.push(`${wmName} n/a (0 well-formed turns)`);
    else if (wm !== undefined) parts.push(`${wmName} ${pct(wm)}${turns !== undefined && source === 'eval' ? ` (n = ${turns} well-formed turns)` : ''}`);
    if (parts.length) { lines.push(`  ${label}: ${parts.join(', ')}`); break; }   // the evaluation when there is one
  }
  // the eval stage's chance and oracle rows on the same puzzles (eval/chance/passAtK, eval/oracle/passAtK)
  for (const kind of ['chance', 'oracle'] as const) {
    const ks = Object.keys(latest).map((k) => new RegExp(`^eval/${kind}/passAt(\\d+)$`).exec(k)).filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1])).sort((a, b) => a - b);
    if (ks.length) lines.push(`  ${kind} (same puzzles): ${ks.map((k) => `Pass@${k} ${pct(latest[`eval/${kind}/passAt${k}`]!)}`).join(', ')}`);
  }
  return lines;
}

/**
 * Progress display: a redrawn bar on a terminal, plain lines otherwise. An info line already shown (each stage's engine reports its backend)
 * is not repeated.
 */
export function progressReporter(stream: Pick<NodeJS.WriteStream, 'write' | 'isTTY' | 'columns'>) {
  const tty = stream.isTTY === true;
  const shownInfo = new Set<string>();
  let lastLine = 0;
  let lastPct = -1;
  let barShown = false;
  const clear = () => { if (barShown) { stream.write('\r\x1b[2K'); barShown = false; } };
  return {
    event(e: WorkbenchEvent) {
      if (e.kind !== 'run') return;
      const ev = e.event;
      if (ev.type === 'stage') { clear(); stream.write(`[${ev.stage}] ${ev.status}${ev.reason ? `: ${ev.reason}` : ''}\n`); }
      else if (ev.type === 'log' && (ev.level === 'warn' || ev.level === 'error' || ev.level === 'info')) {
        const line = ev.message.split('\n')[0]!;
        if (ev.level === 'info') { if (shownInfo.has(line)) return; shownInfo.add(line); }
        clear(); stream.write(`${ev.level}: ${line}\n`);
      }
      else if (ev.type === 'progress') {
        const pct = ev.total > 0 ? Math.min(100, Math.round((100 * ev.done) / ev.total)) : 0;
        const whole = ev.runEtaSeconds !== undefined
          ? formatRunEta({ seconds: ev.runEtaSeconds ?? null, unestimated: ev.unestimatedStages ?? 0 }, duration) : '';
        const eta = `${ev.etaSeconds !== null ? ` ETA ${duration(ev.etaSeconds * 1000)}` : ''}${whole ? ` · ${whole}` : ''}`;
        if (tty) {
          const width = Math.max(10, Math.min(40, (stream.columns ?? 80) - 50 - (whole ? whole.length + 3 : 0)));
          const filled = Math.round((width * pct) / 100);
          stream.write(`\r\x1b[2K${ev.stage} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(pct).padStart(3)}% ${ev.done}/${ev.total}${eta}`);
          barShown = true;
        } else if (Date.now() - lastLine > 5000 || Math.floor(pct / 10) !== Math.floor(lastPct / 10) || ev.done === ev.total) {
          // e.g. "rl: 1/16 (6%) · RL step 2/16: update 3/4 · ETA 20h10m · run ETA 22h05m"
          const parts = [ev.message, ev.etaSeconds !== null ? `ETA ${duration(ev.etaSeconds * 1000)}` : '', whole].filter((x) => x);
          stream.write(`${ev.stage}: ${ev.done}/${ev.total} (${pct}%)${parts.map((x) => ` · ${x}`).join('')}\n`);
          lastLine = Date.now();
        }
        lastPct = pct;
      } else if (ev.type === 'status') { clear(); stream.write(`run ${ev.status}${ev.reason ? `: ${ev.reason}` : ''}\n`); }
    },
    done() { clear(); },
  };
}

/** How a finished run is printed, by `run`/`resume` here and through serve: its JSON on stdout with --json, else status, time,
 *  headline metrics and folder. */
function printRunEnd(info: RunInfo, json: boolean, out: NodeJS.WritableStream): void {
  if (json) { process.stdout.write(`${JSON.stringify(info, null, 2)}\n`); return; }
  out.write(`${info.id}: ${info.status}${info.reason ? ` (${info.reason})` : ''} in ${duration(info.durationMs)}\n`);
  const metrics = finalMetricLines(info.latest);
  if (metrics.length) out.write(`final metrics:\n${metrics.join('\n')}\n`);
  out.write(`folder: ${info.dir}\n`);
}

/** Run (or resume) until the engine exits; Ctrl-C stops gracefully, twice kills. */
async function follow(d: Dispatcher, api: WorkbenchClient, runId: string, begin: () => Promise<unknown>, json: boolean): Promise<number> {
  const out = json ? process.stderr : process.stdout;
  const reporter = progressReporter(out);
  const unsubscribe = api.subscribe({ kind: 'run', runId }, (e) => reporter.event(e));
  let finished = false;
  onInterrupt({
    stop: () => {
      if (finished) return;                    // the run is over: let the cleanup finish and exit normally
      reporter.done();
      out.write('\nstopping after the current step (Ctrl-C again to kill the engine)...\n');
      void api.runs.stop({ runId }).catch(() => undefined);
    },
    kill: () => { if (!finished) void d.dispose({ kill: true }).finally(() => process.exit(130)); },
  });
  try {
    await begin();
    await d.waitForRun(runId);
  } finally {
    finished = true;                           // handlers stay installed until the process exits
    reporter.done();
    unsubscribe();
  }
  const info = await api.runs.get({ runId });
  printRunEnd(info, json, out);
  if (!json) {
    if (info.status === 'failed' || info.status === 'stopped') out.write(`resume with: spa-workbench resume ${info.id} ` +
      `--project ${path.dirname(path.dirname(info.dir))}\n`);
  }
  return info.status === 'completed' ? 0 : info.status === 'stopped' ? 130 : 1;
}

function collect(value: string, previous: string[] = []): string[] { return [...previous, value]; }

/**
 * A project that `serve` (or the app in browser mode) holds on this machine: its API link (port and
 * token, remembered by serve for the project folder), or null when another kind of process holds it.
 */
function servingLink(dir: string): { pid: number; wsUrl: string } | null {
  const abs = path.resolve(dir);
  const holder = liveLockHolder(abs);
  if (!holder || holder.host !== os.hostname() || holder.purpose !== 'serve') return null;
  const link = rememberedLink(abs);
  return link && link.port > 0 ? { pid: holder.pid, wsUrl: `ws://127.0.0.1:${link.port}/api?token=${link.token}` } : null;
}

/**
 * Start a run in the `serve` process that holds the project (through its API, as its UI would) and
 * follow it from here: progress, Ctrl-C stops it, the exit code says how it ended. The run lives in
 * serve: closing this terminal does not stop it.
 */
async function runThroughServe(link: { pid: number; wsUrl: string }, begin: (api: WorkbenchClient) => Promise<string>, json: boolean): Promise<number> {
  const out = json ? process.stderr : process.stdout;
  const { connectWorkbench } = await import('../server/ws-client.js');
  let api: WorkbenchClient;
  try { api = await connectWorkbench(link.wsUrl); } catch (err) {
    fail(`the project is open in \`spa-workbench serve\` (process ${link.pid}) but its API could not be reached: ${describeError(err)}`);
  }
  let runId: string;
  try { runId = await begin(api); } catch (err) { api.close?.(); fail(describeError(err)); }
  out.write(`run ${runId} runs in the serve process ${link.pid} that holds the project (watch it in its window too; Ctrl-C here stops it)\n`);
  const reporter = progressReporter(out);
  const unsubscribe = api.subscribe({ kind: 'run', runId }, (e) => reporter.event(e));
  let stopping = false;
  onInterrupt({
    stop: () => {
      if (stopping) return;
      stopping = true; reporter.done(); out.write('\nstopping after the current step...\n');
      void api.runs.stop({ runId }).catch(() => undefined);
    },
    kill: () => process.exit(130),
  });
  const ACTIVE = new Set(['created', 'queued', 'running', 'stopping']);
  let info = await api.runs.get({ runId });
  while (ACTIVE.has(info.status)) {
    await new Promise((r) => setTimeout(r, 500));
    info = await api.runs.get({ runId });
  }
  reporter.done();
  unsubscribe();
  printRunEnd(info, json, out);
  api.close?.();
  return info.status === 'completed' ? 0 : info.status === 'stopped' ? 130 : 1;
}


/**
 * Problems of a run request, before any project or run folder is made: the resolved config (with its
 * stage sections and env options, see resolveRunConfig), the model folder and the template name.
 * Empty when the config is fine.
 */
export async function checkRunRequest(
  req: { preset?: string; config?: Record<string, unknown>; size?: SizeArg; set?: Record<string, unknown>; name?: string },
  projectDir?: string,
): Promise<string[]> {
  const { resolveRunConfig } = await import('../engine/config.js');
  const r = resolveRunConfig(req);
  if (!r.ok || !r.config) return r.issues.map((i) => `${i.path}: ${i.message}`);
  const problems: string[] = []; // stage sections and env options: checked by resolveRunConfig
  const model = r.config.model;
  if (model.source !== 'preset' && (!model.path || !fs.existsSync(path.resolve(model.path)))) {
    problems.push(`model.path: expected an existing ${model.source} folder for model.source "${model.source}", ` +
      `received ${model.path === undefined ? 'no path' : JSON.stringify(model.path)}${model.path ? ' (not found)' : ''}`);
  }
  // The template: a preset (core/prompts or the pipeline's tiny-*), or one saved in the project (templates/<name>@<hash>.json).
  const { builtinTemplateNames } = await import('../prompts/resolve-template.js');
  const presets = builtinTemplateNames();
  const name = r.config.template.preset;
  const savedDir = projectDir ? path.join(path.resolve(projectDir), 'templates') : null;
  const saved = savedDir && fs.existsSync(savedDir) ? fs.readdirSync(savedDir).filter((f) => f.startsWith(`${name}@`) && f.endsWith('.json')) : [];
  if (!presets.includes(name) && saved.length === 0) {
    problems.push(`template.preset: unknown template ${JSON.stringify(name)}; expected a preset (${presets.join(', ')}) or a template saved in the project`);
  }
  return problems;
}

function csvCell(v: unknown): string {
  const s = v === undefined || v === null ? '' : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function metricsCsv(points: MetricPoint[]): string {
  const names = [...new Set(points.flatMap((p) => Object.keys(p.values)))].sort();
  const lines = [['stage', 'step', 'time', 'episodes', ...names].map(csvCell).join(',')];
  for (const p of points) lines.push([p.stage, p.step, p.time, p.episodes, ...names.map((n) => p.values[n])].map(csvCell).join(','));
  return `${lines.join('\n')}\n`;
}

function exportRun(info: RunInfo, out: string, format: 'json' | 'csv' | 'jsonl' | undefined): string[] {
  // rows of the wrong shape (valid JSON, but not a metric point / event / episode) are skipped and counted, like torn lines
  const skipped = (what: string) => process.stderr.write(`export: skipped ${what}\n`);
  const read = <T>(file: string, check: (v: unknown) => T): T[] => {
    const r = readJsonl<T>(path.join(info.dir, file), check);
    const first = r.skipped[0];
    if (first) skipped(`${r.skipped.length} unreadable or ill-shaped line(s) of ${file} (first: line ${first.line}: ${first.reason.slice(0, 120)})`);
    return r.rows;
  };
  const metrics = read<MetricPoint>(METRICS_FILE, checkMetricPoint);
  const events = read(EVENTS_FILE, (v) => RunEventSchema.parse(v));
  const episodeLines = (): string => {
    const index = read(ROLLOUT_INDEX, checkSummary);
    const files = [...new Set(index.map((i) => i.file))].filter((f) => { try { insideRun(info.dir, f); return true; } catch { return false; } });
    return files.map((f) => read<EpisodeRecord>(f, (v) => EpisodeRecordSchema.parse(v)).map((r) => JSON.stringify(r)).join('\n')).filter(Boolean).join('\n');
  };
  const evalFile = (f: string): unknown => {
    try { return JSON.parse(fs.readFileSync(path.join(info.dir, 'eval', f), 'utf8')) as unknown; } catch (err) {
      skipped(`eval/${f}: ${(err as Error).message}`);
      return null;
    }
  };
  const evals = fs.existsSync(path.join(info.dir, 'eval'))
    ? Object.fromEntries(fs.readdirSync(path.join(info.dir, 'eval')).filter((f) => f.endsWith('.json')).map((f) => [f.slice(0, -5), evalFile(f)]))
    : {};
  const isDir = out.endsWith('/') || out.endsWith(path.sep) || (fs.existsSync(out) && fs.statSync(out).isDirectory()) || (!format && !path.extname(out));
  const written: string[] = [];
  const write = (file: string, text: string) => { fs.mkdirSync(path.dirname(file), { recursive: true }); fs.writeFileSync(file, text); written.push(file); };
  if (isDir && format) return exportRun(info, path.join(out, `${info.id}.${format}`), format);   // one format into a folder
  if (isDir) {
    write(path.join(out, 'run.json'), `${JSON.stringify(info, null, 2)}\n`);
    write(path.join(out, 'metrics.csv'), metricsCsv(metrics));
    write(path.join(out, 'events.jsonl'), events.map((e) => JSON.stringify(e)).join('\n') + (events.length ? '\n' : ''));
    const eps = episodeLines();
    write(path.join(out, 'episodes.jsonl'), eps ? `${eps}\n` : '');
    write(path.join(out, 'eval.json'), `${JSON.stringify(evals, null, 2)}\n`);
    return written;
  }
  const fmt = format ?? (path.extname(out).slice(1) as 'json' | 'csv' | 'jsonl');
  if (fmt === 'csv') write(out, metricsCsv(metrics));
  else if (fmt === 'jsonl') { const eps = episodeLines(); write(out, eps ? `${eps}\n` : ''); }
  else if (fmt === 'json') write(out, `${JSON.stringify({ run: info, metrics, events, eval: evals }, null, 2)}\n`);
  else throw new Error(`export: cannot tell the format of ${out}; pass --format json|csv|jsonl (json: run + metrics + events + eval; csv: metrics; ` +
    `jsonl: episodes)`);
  return written;
}

/** How each platform opens a URL in the default browser; xdg-open elsewhere. */
const BROWSER_OPENERS: Partial<Record<NodeJS.Platform, { cmd: string; args: (url: string) => string[] }>> = {
  darwin: { cmd: 'open', args: (url) => [url] },
  win32: { cmd: 'cmd', args: (url) => ['/c', 'start', '', url] },
};

function openBrowser(url: string): boolean {
  const opener = BROWSER_OPENERS[process.platform] ?? { cmd: 'xdg-open', args: (u: string) => [u] };
  const cmd = opener.cmd;
  const args = opener.args(url);
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return false;
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch { return false; }
}

interface UpdateOpts { project: string; name?: string; tags?: string; addTag: string[]; removeTag: string[]; notes?: string; json?: boolean }

interface ServeOpts {
  port?: string; token?: string; newToken?: boolean; host: string; allowRemote?: boolean; project?: string; open: boolean;
  createProject?: boolean; startRun?: { preset: string; size: SizeArg; env: string };
}

/** Builds the renderer (vite) when dist-renderer/ is missing, so `start` works straight after `npm ci`. */
function ensureRendererBuilt(): void {
  if (fs.existsSync(path.join(repoRoot, 'dist-renderer', 'index.html'))) return;
  process.stdout.write('building the UI (first start only: vite build)...\n');
  const vite = path.join(repoRoot, 'node_modules', 'vite', 'bin', 'vite.js');
  const r = spawnSync(process.execPath, [vite, 'build', '--config', path.join(repoRoot, 'renderer', 'vite.config.ts'), '--logLevel', 'warn'], {
    cwd: repoRoot,
    stdio: 'inherit',
  });
  if (r.status !== 0) fail(`building the UI failed (exit ${r.status ?? r.signal}); run \`npm run build:renderer\` to see why`);
}

async function serve(opts: ServeOpts): Promise<void> {
  const explicitPort = opts.port !== undefined;
  const port = Number(opts.port ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port: expected an integer 0..65535 (0 = any free port), ` +
    `received ${JSON.stringify(opts.port)}`);
  if (opts.token !== undefined) { const bad = checkToken(opts.token); if (bad) fail(bad); }
  const d = await createDispatcher({ host: 'serve', lockPurpose: 'serve', watchWhenLocked: true });
  const { startServer } = await import('../server/server.js');
  let openRunId: string | null = null;
  let api: WorkbenchClient | null = null;
  const linkKey = opts.project ? path.resolve(opts.project) : '';
  if (opts.project) {
    api = await createInProcessClient(d);
    const abs = path.resolve(opts.project);
    if (!opts.createProject && !fs.existsSync(abs)) {
      await d.dispose();
      fail(`--project: no project folder at ${abs}; create one with \`spa-workbench start --project ${opts.project}\` or \`spa-workbench run ` +
        `<preset> --project ${opts.project}\`, or leave --project out and create it in the UI`);
    }
    try {
      if (fs.existsSync(path.join(abs, 'workbench.json')) || !opts.createProject) await api.projects.open({ path: abs });
      else await api.projects.create({ path: abs });
    } catch (err) { await d.dispose(); fail(describeError(err)); }
    const info = (await api.projects.info()).project;
    if (info?.readOnly) process.stdout.write(`note: ${readOnlyNote(info)}\n`);
    if (opts.startRun && !info?.readOnly) {
      try {
        const { runs } = await api.runs.list({ limit: 10_000 });
        const action = startupRunAction(runs, opts.startRun.preset, opts.startRun.size);
        if (action.kind === 'create') {
          const run = await api.runs.create({ preset: opts.startRun.preset, size: opts.startRun.size, set: { 'env.id': opts.startRun.env } });
          await api.runs.start({ runId: run.id });
          openRunId = run.id;
          const { preset, size, env } = opts.startRun;
          process.stdout.write(`started run ${run.id} (${preset}, ${size}, ${env}): ${run.stages.map((st) => st.name).join(' → ')}\n`);
        } else {
          if (action.kind === 'start') await api.runs.start({ runId: action.runId });
          if (action.kind === 'resume') await api.runs.resume({ runId: action.runId });
          openRunId = action.runId;
          process.stdout.write(`${describeStartup(action, opts.startRun.preset, opts.startRun.size, opts.project)}\n`);
        }
      } catch (err) { await d.dispose(); fail(describeError(err)); }
    } else if (opts.startRun) {
      openRunId = (await api.runs.list({ limit: 1 })).runs[0]?.id ?? null;
    }
  }
  const remembered = rememberedLink(linkKey);
  const token = chooseToken(linkKey, opts.token, opts.newToken === true);
  const log = (l: string) => process.stderr.write(`${l}\n`);
  const listen = (p: number) => startServer({ dispatcher: d, host: opts.host, port: p, token, allowRemote: opts.allowRemote, log });
  let server;
  try {
    if (!explicitPort && remembered && remembered.port > 0) {
      // the port of the last serve of this project, so open tabs reconnect; any free one when it is taken
      server = await listen(remembered.port).catch(() => listen(0));
    } else server = await listen(port);
  } catch (err) { await d.dispose(); fail(describeError(err)); }
  rememberLink(linkKey, { token, port: server.port });
  const url = openRunId ? `${server.url}#/run/${encodeURIComponent(openRunId)}` : server.url;
  const built = fs.existsSync(path.join(repoRoot, 'dist-renderer', 'index.html'));
  process.stdout.write(`SPA Workbench (browser mode) at:\n  ${url}\n`);
  if (!built) process.stdout.write('note: the UI is not built yet; run `npm run build:renderer` (the page says so too)\n');
  if (opts.project) process.stdout.write(`project: ${path.resolve(opts.project)}\n`);
  process.stdout.write(`the link stays valid across restarts (token remembered in ${SERVE_LINKS_FILE} of ${workbenchHome()}; --new-token replaces it)\n`);
  if (opts.open) {
    process.stdout.write(openBrowser(url) ? 'opening it in your browser...\n' : 'open that URL in a browser (no display found to open one here)\n');
  }
  process.stdout.write('Ctrl-C stops the server (active runs are stopped first).\n');
  // One progress line for the run this command started or resumed, with the whole run's ETA.
  const followed = openRunId && api && (await api.runs.get({ runId: openRunId })).status !== 'completed' ? openRunId : null;
  let unsubscribe: (() => void) | null = null;
  if (followed && api) {
    const reporter = progressReporter(process.stdout);
    let ended = false;
    unsubscribe = api.subscribe({ kind: 'run', runId: followed }, (e) => {
      reporter.event(e);
      // the run's end: what `run` prints (status, time, final metrics beside the chance and oracle rows, folder); the server stays up
      if (ended || e.kind !== 'run' || e.event.type !== 'status' || !['completed', 'failed', 'stopped'].includes(e.event.status)) return;
      ended = true;
      void d.waitForRun(followed).then(() => api.runs.get({ runId: followed })).then((info) => {
        printRunEnd(info, false, process.stdout);
        if (info.status === 'completed') process.stdout.write('the workbench stays open on it; Ctrl-C ends the server\n');
      }).catch(() => undefined);
    });
  }
  onInterrupt({
    stop: () => {
      unsubscribe?.();
      process.stdout.write('\nstopping (active runs stop after their current step; Ctrl-C again to kill them)...\n');
      void server.close().then(() => d.dispose()).finally(() => process.exit(0));
    },
    kill: () => { void d.dispose({ kill: true }).finally(() => process.exit(130)); },
  });
}

export function registerCoreCommands(program: Command): void {
  program.command('start')
    .description('open the workbench on a local project: the desktop app when the Electron binary is installed, otherwise browser mode')
    .option('--project <dir>', 'project folder (created when missing)', path.join('projects', 'default'))
    .option('--port <n>', 'browser mode: port (default: the one the last serve of this project used, else any free port; 0 = any free port)')
    .option('--token <token>', 'browser mode: access token (default: the one remembered for this project, so links survive restarts)')
    .option('--new-token', 'browser mode: replace the remembered access token')
    .option('--no-open', 'browser mode: do not open a browser')
    .option('--run <preset>', 'also create and start a run from this preset (e.g. spa) on the project')
    .option('--size <size>', `size of the --run preset: ${SIZES.join(' | ')}`, 'quick')
    // START_RUN_ENV (FrozenLake) by default: it has a shipped base, so the run reaches self-play in seconds
    .option('--env <id>', `environment of the --run preset (${START_RUN_ENV} has a shipped base; others train one first, ~90 min)`, START_RUN_ENV)
    .action(async (o: {
      project: string; port?: string; token?: string; newToken?: boolean; open: boolean; run?: string; size: string; env: string;
    }) => {
      if (!SIZES.includes(o.size as SizeArg)) fail(`--size: expected one of ${SIZES.join(', ')}, received ${JSON.stringify(o.size)}`);
      const startRun = o.run ? { preset: o.run, size: o.size as SizeArg, env: o.env } : undefined;
      if (startRun) {
        const problems = await checkRunRequest({ preset: startRun.preset, size: startRun.size, set: { 'env.id': startRun.env } }, o.project);
        if (problems.length) fail(`--run ${o.run} --size ${o.size}: ${problems.join('; ')}`);
      }
      const electron = electronBinary();
      const mainJs = path.join(repoRoot, 'dist-electron', 'main.js');
      if (electron && fs.existsSync(mainJs)) {
        const abs = path.resolve(o.project);
        if (!fs.existsSync(path.join(abs, 'workbench.json'))) {
          const { d } = await openProject(abs, true, 'cli');       // create it, then hand it to the app
          await d.dispose();
        }
        process.stdout.write(`Electron found: opening the desktop app on ${abs}\n`);
        // The desktop app owns the project (lock); it starts the requested run itself (SPA_START_RUN).
        const env = startRun ? { ...process.env, SPA_START_RUN: `${startRun.preset}:${startRun.size}:${startRun.env}` } : process.env;
        const child = spawn(electron, [repoRoot, abs], { stdio: 'inherit', env });
        child.on('exit', (code) => process.exit(code ?? 0));
        // Ctrl-C reaches the app too (same terminal): it stops its runs and quits; wait for it.
        onInterrupt({ stop: () => undefined, kill: () => { child.kill('SIGKILL'); process.exit(130); } });
        return;
      }
      process.stdout.write(electron
        ? 'Electron is installed but the desktop app is not built (npm run build:electron): using browser mode.\n'
        : 'Electron binary not installed (see README: npm run install-electron): using browser mode.\n');
      ensureRendererBuilt();
      await serve({ port: o.port, token: o.token, newToken: o.newToken, host: '127.0.0.1', project: o.project, open: o.open, createProject: true, startRun });
    });

  program.command('run')
    .description('create a run from a preset or a config file in a project, start it, and show progress until it ends')
    .argument('[preset|config.json]', 'method preset id (see `spa-workbench presets`) or a RunConfig JSON file')
    .requiredOption('--project <dir>', 'project folder (created when missing)')
    .option('--preset <id>', 'method preset id (instead of the argument)')
    .option('--config <file>', 'RunConfig JSON file (instead of the argument; with --preset: merged on top of the preset)')
    .option('--size <size>', `preset size: ${SIZES.join(' | ')}`)
    .option('--set <key=value>', 'override a config value by dotted path, e.g. --set stages.rl.steps=10 (repeatable)', collect, [])
    .option('--name <name>', 'display name of the run')
    .option('--json', 'print the final run as JSON (progress goes to stderr)')
    .action(async (
      target: string | undefined,
      o: { project: string; preset?: string; config?: string; size?: string; set: string[]; name?: string; json?: boolean },
    ) => {
      if (o.size !== undefined && !SIZES.includes(o.size as SizeArg)) fail(`--size: expected one of ${SIZES.join(', ')}, received ${JSON.stringify(o.size)}`);
      let set: Record<string, unknown>;
      try { set = parseSetArgs(o.set); } catch (err) { fail((err as Error).message); }
      const readConfig = (file: string): Record<string, unknown> => {
        if (!fs.existsSync(file)) fail(`config file ${file} not found`);
        let value: unknown;
        const text = fs.readFileSync(file, 'utf8');
        try { value = JSON.parse(text); } catch (err) { fail(`${file}: not valid JSON at ${describeJsonError(text, err)}`); }
        if (!value || typeof value !== 'object' || Array.isArray(value)) fail(`${file}: expected a JSON object (a RunConfig), ` +
          `received ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}`);
        return value as Record<string, unknown>;
      };
      const request: { preset?: string; config?: Record<string, unknown> } = {};
      if (target !== undefined) {
        if (o.preset !== undefined || o.config !== undefined) fail(`give the preset or config file once: as the argument ` +
          `(${JSON.stringify(target)}) or with --preset/--config, not both`);
        if (target.endsWith('.json') || fs.existsSync(target)) request.config = readConfig(target);
        else request.preset = target;
      } else {
        if (o.preset === undefined && o.config === undefined) fail('expected a preset id or a config file: spa-workbench run spa --project DIR, ' +
          'run --preset spa, or run my-config.json (presets: `spa-workbench presets`)');
        if (o.preset !== undefined) request.preset = o.preset;
        if (o.config !== undefined) request.config = readConfig(o.config);
      }
      // Check the whole config (stage sections, env options) before creating a run folder, so a typo
      // fails here instead of minutes later when its stage starts.
      const problems = await checkRunRequest(
        { ...request, ...(o.size ? { size: o.size as SizeArg } : {}), set, ...(o.name ? { name: o.name } : {}) },
        o.project,
      );
      if (problems.length)
        fail(
          `invalid run config${request.config && (target ?? o.config) ? ` in ${target ?? o.config}` : ''}:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
        );
      const served = servingLink(o.project);
      if (served) {
        process.exit(await runThroughServe(served, async (api) => {
          const run = await api.runs.create({ ...request, ...(o.size ? { size: o.size as SizeArg } : {}), set, ...(o.name ? { name: o.name } : {}) });
          (o.json ? process.stderr : process.stdout).write(`run ${run.id}: ${run.stages.map((s) => s.name).join(' → ')}\n`);
          await api.runs.start({ runId: run.id });
          return run.id;
        }, !!o.json));
      }
      const { d, api } = await openProject(o.project, true, 'cli run');
      let code = 1;
      try {
        const run = await api.runs.create({ ...request, ...(o.size ? { size: o.size as SizeArg } : {}), set, ...(o.name ? { name: o.name } : {}) });
        (o.json ? process.stderr : process.stdout).write(`run ${run.id}: ${run.stages.map((s) => s.name).join(' → ')}\n`);
        code = await follow(d, api, run.id, () => api.runs.start({ runId: run.id }), !!o.json);
      } catch (err) {
        process.stderr.write(`error: ${describeError(err)}\n`);
      } finally {
        await d.dispose();
      }
      process.exit(code);
    });

  program.command('presets')
    .description('list the run presets (method × size)')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const d = await createDispatcher({ host: 'cli' });
      const { presets } = await (await createInProcessClient(d)).runs.presets();
      if (o.json) process.stdout.write(`${JSON.stringify(presets, null, 2)}\n`);
      else {
        const short = (text: string) => (text.length > 70 ? `${text.slice(0, 69)}…` : text);
        const rows = presets.map((p) => [p.id, p.method, p.sizes.join(','), p.stages.join('→'), short(p.description)]);
        process.stdout.write(`${table([['PRESET', 'METHOD', 'SIZES', 'STAGES', 'DESCRIPTION'], ...rows])}\n`);
      }
      await d.dispose();
    });

  program.command('resume')
    .description('resume a stopped or failed run from its last completed stage, and follow it')
    .argument('<run>', 'run id')
    .requiredOption('--project <dir>', 'project folder')
    .option('--set <key=value>', `change an execution setting first (repeatable): ${Object.keys(RESUME_SETTABLE).join(', ')}`, collect, [])
    .option('--json', 'print the final run as JSON')
    .action(async (runId: string, o: { project: string; set: string[]; json?: boolean }) => {
      let set: Record<string, unknown> = {};
      try { set = parseSetArgs(o.set, 'model.memory.generationRows=8'); } catch (err) { fail((err as Error).message); }
      const request = { runId, ...(Object.keys(set).length ? { set } : {}) };
      const served = servingLink(o.project);
      if (served) process.exit(await runThroughServe(served, async (api) => { await api.runs.resume(request); return runId; }, !!o.json));
      const { d, api } = await openProject(o.project, false, 'cli run');
      let code = 1;
      try {
        code = await follow(d, api, runId, () => api.runs.resume(request), !!o.json);
      } catch (err) {
        process.stderr.write(`error: ${describeError(err)}\n`);
      } finally {
        await d.dispose();
      }
      process.exit(code);
    });

  program.command('stop')
    .description('stop a run that a `spa-workbench run` or `resume` process is executing (graceful: after the current step)')
    .argument('<run>', 'run id')
    .requiredOption('--project <dir>', 'project folder')
    .action(async (runId: string, o: { project: string }) => {
      const lockFile = path.join(path.resolve(o.project), LOCK_FILE);
      type Holder = { pid: number; host: string; purpose?: string; procStart?: number | null; bootId?: string | null };
      let holder: Holder | null = null;
      try { holder = JSON.parse(fs.readFileSync(lockFile, 'utf8')) as Holder; } catch { holder = null; }
      if (holder && holder.host === os.hostname() && pidAlive(holder.pid)) {
        const runJson = path.join(path.resolve(o.project), 'runs', runId, 'run.json');
        if (!/^[\w.-]+$/.test(runId) || !fs.existsSync(runJson)) fail(`run ${JSON.stringify(runId)} not found in ${o.project} (list them with: ` +
          `spa-workbench list --project ${o.project})`);
        // The holder may be running another run of this project: only signal it for an active run.
        const record = readRunFile(path.dirname(runJson));
        if (record && !['queued', 'running', 'stopping'].includes(record.status)) {
          process.stdout.write(`run ${runId} is ${record.status}${record.reason ? ` (${record.reason})` : ''}: nothing to stop\n`);
          return;
        }
        if (holder.purpose === 'cli run' || holder.purpose === 'cli study run') {
          // a planted lock naming any live pid gets no signal (issue 37 N12)
          const problem = holderSignalProblem(holder);
          if (problem) fail(`the lock file ${lockFile} names process ${holder.pid}, but ${problem}; not signalling it`);
          process.kill(holder.pid, 'SIGINT');
          const study = holder.purpose === 'cli study run' ? ' (its study stops too; run the same `study run` again to resume it)' : '';
          process.stdout.write(`asked process ${holder.pid} to stop run ${runId}${study}\n`);
          return;
        }
        fail(`the project is open in process ${holder.pid} (${holder.purpose ?? 'workbench'}); stop the run from that window or its UI`);
      }
      const reader = await openForReading(o.project);
      try {
        const r = await reader.get(runId);
        if (holder && ['queued', 'running', 'stopping'].includes(r.status)) {
          throw new Error(`run ${runId} is ${r.status} in process ${holder.pid} on ${holder.host} (${holder.purpose ?? 'workbench'}); stop it on that machine`);
        }
        process.stdout.write(`run ${runId} is ${r.status}${r.reason ? ` (${r.reason})` : ''}: nothing to stop\n`);
      } catch (err) { process.stderr.write(`error: ${describeError(err)}\n`); process.exitCode = 1; } finally { await reader.close(); }
    });

  program.command('list')
    .description('list the runs of a project')
    .requiredOption('--project <dir>', 'project folder')
    .option('--json', 'print JSON')
    .action(async (o: { project: string; json?: boolean }) => {
      const reader = await openForReading(o.project);
      try {
        const runs = await reader.list();
        if (o.json) process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
        else if (runs.length === 0) process.stdout.write('no runs yet: spa-workbench run <preset> --project ' + o.project + '\n');
        else process.stdout.write(`${table([['ID', 'NAME', 'STATUS', 'METHOD', 'ENV', 'SIZE', 'STAGES', 'CREATED', 'TIME', 'TAGS'], ...runs.map(runRow)])}\n`);
      } finally { await reader.close(); }
    });

  program.command('show')
    .description('show one run: config, stages, status, latest metrics')
    .argument('<run>', 'run id')
    .requiredOption('--project <dir>', 'project folder')
    .option('--json', 'print JSON')
    .action(async (runId: string, o: { project: string; json?: boolean }) => {
      const reader = await openForReading(o.project);
      try {
        const r = await reader.get(runId);
        if (o.json) { process.stdout.write(`${JSON.stringify(r, null, 2)}\n`); return; }
        process.stdout.write(`${showLines(r).join('\n')}\n`);
      } catch (err) { process.stderr.write(`error: ${describeError(err)}\n`); process.exitCode = 1; } finally { await reader.close(); }
    });

  program.command('export')
    .description('export a run: json (run + metrics + events + eval), csv (metrics), jsonl (episodes), or all of them into a folder')
    .argument('<run>', 'run id')
    .requiredOption('--project <dir>', 'project folder')
    .requiredOption('--out <file|dir>', 'output file, or a folder (ending in /) for everything')
    .option('--format <format>', 'json | csv | jsonl (default: from the file extension; into a folder: just <run-id>.<format>)')
    .option('--to <target>', 'spa-ragen: a bundle that runs the experiment with SPA/RAGEN on verl (core/cli/interop-commands.ts)')
    .option('--model <path>', 'with --to: the model the bundle trains (default: the run\'s checkpoint, or the named base model)')
    .option('--values <run|paper>', 'with --to: run (default) = the run\'s own settings; paper = the SPA release\'s (groups 32x8, 1000 steps, …)')
    .action(async (runId: string, o: { project: string; out: string; format?: string; to?: string; model?: string; values?: string }) => {
      if (o.to !== undefined) {
        try { (await import('./interop-commands.js')).exportTo(o.to, o.project, runId, o.out, o.model, o.values); } catch (err) { fail(describeError(err)); }
        return;
      }
      if (o.format !== undefined && !['json', 'csv', 'jsonl'].includes(o.format)) fail(`--format: expected json, csv or jsonl, ` +
        `received ${JSON.stringify(o.format)}`);
      const reader = await openForReading(o.project);
      try {
        const info = await reader.get(runId);
        // Never write into the project's own run folders (export into a run folder would overwrite run.json and events.jsonl).
        // real paths: a link (or a link above a folder still to be made) cannot lead the export into a run folder
        const runsDir = path.join(realPathOf(o.project), 'runs');
        const target = realPathOf(o.out);
        if (isInside(target, runsDir)) {
          throw new Error(`--out: ${target} is inside the project's runs folder ${runsDir}; exporting there would overwrite the runs' own files. ` +
            `Choose a folder outside it, e.g. --out out/`);
        }
        for (const f of exportRun(info, o.out, o.format as 'json' | 'csv' | 'jsonl' | undefined)) process.stdout.write(`wrote ${f}\n`);
      } catch (err) { process.stderr.write(`error: ${describeError(err)}\n`); process.exitCode = 1; } finally { await reader.close(); }
    });

  program.command('update')
    .description('rename a run, set its tags or its notes (the UI does the same)')
    .argument('<run>', 'run id')
    .requiredOption('--project <dir>', 'project folder')
    .option('--name <name>', 'new display name')
    .option('--tags <a,b,...>', 'replace the tags (comma-separated; "" clears them)')
    .option('--add-tag <tag>', 'add a tag (repeatable)', collect, [])
    .option('--remove-tag <tag>', 'remove a tag (repeatable)', collect, [])
    .option('--notes <text>', 'replace the notes ("" clears them)')
    .option('--json', 'print the updated run as JSON')
    .action(async (runId: string, o: UpdateOpts) => {
      const tagsChanged = o.tags !== undefined || o.addTag.length > 0 || o.removeTag.length > 0;
      if (o.name === undefined && !tagsChanged && o.notes === undefined) fail('nothing to change: give --name, --tags, --add-tag, --remove-tag or --notes');
      const { d, api } = await openProject(o.project, false, 'cli');
      try {
        const current = await api.runs.get({ runId });
        let tags = o.tags !== undefined ? o.tags.split(',').map((t) => t.trim()).filter(Boolean) : (current.tags ?? []);
        tags = [...tags, ...o.addTag].filter((t) => !o.removeTag.includes(t));
        const r = await api.runs.update({
          runId, ...(o.name !== undefined ? { name: o.name } : {}), ...(tagsChanged ? { tags } : {}), ...(o.notes !== undefined ? { notes: o.notes } : {}),
        });
        if (o.json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
        else process.stdout.write(`${r.id}: ${r.name}${r.tags?.length ? `  [${r.tags.join(', ')}]` : ''}${r.notes ? `\nnotes: ${r.notes}` : ''}\n`);
      } catch (err) { process.stderr.write(`error: ${describeError(err)}\n`); process.exitCode = 1; } finally { await d.dispose(); }
    });

  program.command('serve')
    .description('browser mode: serve the UI and the API on 127.0.0.1 with an access token (for headless machines: use an SSH tunnel)')
    .option('--port <n>', 'port (default: the one the last serve of this project used, else any free port; 0 = any free port)')
    .option('--token <token>', 'access token, 16-128 characters of A-Z a-z 0-9 _ - (default: the one remembered for this project, so links survive restarts)')
    .option('--new-token', 'replace the remembered access token with a new random one')
    .option('--host <address>', 'interface to bind', '127.0.0.1')
    .option('--allow-remote', 'allow binding a non-loopback interface (the token is still required)')
    .option('--project <dir>', 'open this project on start')
    .option('--no-open', 'do not open a browser')
    .action(async (o: ServeOpts) => { await serve(o); });
}
