// `doctor`: examine a project folder and (with repair) fix what is safe. Examination only reads:
// nothing is moved or written. Repair takes the project lock and never deletes data:
//   - a stale lock (its process is gone, or the pid now names another process) is removed;
//   - leftovers of interrupted writes are cleaned (unfinished temp copies removed; a checkpoint
//     swap cut between its two renames is restored), see temp-files.ts;
//   - a run whose run.json is missing or damaged gets it back: from a moved-aside copy that turns
//     out to be readable, else rebuilt from the run index (workbench.json) and the resolved config
//     saved in the run's newest checkpoint manifest; it is marked failed with a reason saying so.
//     The damaged file stays where it was moved (name.corrupt-<time>).
// Everything else is reported with what to do: moved-aside files (kept for the user), damaged
// stage markers, torn or ill-shaped JSONL lines.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RunSummarySchema, type RunSummary } from '../api/contract.js';
import { RunConfigSchema } from '../api/run-config.js';
import { WorkbenchError } from '../api/errors.js';
import { writeJsonAtomicSync } from './atomic.js';
import { readJsonl } from './jsonl.js';
import { acquireProjectLock, inspectProjectLock, type HolderState, type LockInfo } from './lock.js';
import { CHECKPOINT_KEYS, EVENTS_FILE, METRICS_FILE, resolveCheckpointRef, ROLLOUT_INDEX, RUN_JSON, type RunRecord } from './run-files.js';
import { cleanTempLeftovers, findTempLeftovers, type TempLeftover } from './temp-files.js';

export interface DoctorRun {
  id: string;
  problem: 'run.json missing' | 'run.json damaged';
  detail: string;
  movedAside: string[];
  /** How repair can (or did) bring run.json back; null: it cannot (the data files are kept). */
  repair: string | null;
  repaired: boolean;
}

export interface DoctorReport {
  project: string;
  examinedAt: number;
  repair: boolean;
  lock: { state: HolderState | 'unreadable'; holder: (LockInfo & Record<string, unknown>) | null; file: string; removed: boolean } | null;
  runs: { total: number; damaged: DoctorRun[] };
  movedAside: Array<{ path: string; bytes: number; modifiedAt: number }>;
  tempLeftovers: Array<Pick<TempLeftover, 'relPath' | 'kind' | 'pid' | 'bytes' | 'stale' | 'action'> & { done: boolean }>;
  stageMarkers: Array<{ path: string; problem: string }>;
  streams: Array<{ path: string; badLines: number; tornLast: boolean }>;
  workbenchJson: 'ok' | 'missing' | 'damaged';
  repairs: string[];
  /** What is still wrong after this pass (0 = healthy). */
  problems: number;
  notes: string[];
}

function readJson(file: string): { status: 'ok'; value: unknown } | { status: 'missing' } | { status: 'damaged'; error: string } {
  let text: string;
  try { text = fs.readFileSync(file, 'utf8'); } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'missing' };
    return { status: 'damaged', error: (err as Error).message };
  }
  try { return { status: 'ok', value: JSON.parse(text) as unknown }; } catch (err) { return { status: 'damaged', error: (err as Error).message }; }
}

function isRunRecord(v: unknown): v is RunRecord {
  const r = v as RunRecord;
  return !!r && typeof r === 'object' && typeof r.id === 'string' && typeof r.status === 'string'
    && Array.isArray(r.stages) && !!r.config && typeof r.config === 'object';
}

/** Files named `<x>.corrupt-<time>` below the project (bounded walk, rollouts skipped). */
function findMovedAside(root: string): DoctorReport['movedAside'] {
  const out: DoctorReport['movedAside'] = [];
  const walk = (dir: string, depth: number) => {
    let entries: fs.Dirent[];
    try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (/\.corrupt-\d{4}-/.test(e.name)) {
        try { const st = fs.statSync(full); out.push({ path: path.relative(root, full), bytes: st.size, modifiedAt: st.mtimeMs }); } catch { /* gone */ }
      } else if (e.isDirectory() && depth < 5 && e.name !== 'rollouts' && !e.name.startsWith('.')) walk(full, depth + 1);
    }
  };
  walk(root, 0);
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

/** The newest checkpoint manifest of a run that carries the resolved config (extra.config). */
function configFromCheckpoints(runDir: string): { config: unknown; from: string } | null {
  const dir = path.join(runDir, 'checkpoints');
  let names: string[];
  try { names = fs.readdirSync(dir).filter((n) => !n.startsWith('.')); } catch { return null; }
  const found: Array<{ config: unknown; from: string; time: number }> = [];
  for (const n of names) {
    const m = readJson(path.join(dir, n, 'manifest.json'));
    if (m.status !== 'ok') continue;
    const extra = (m.value as { extra?: { config?: unknown }; created?: string }).extra;
    const parsed = RunConfigSchema.safeParse(extra?.config);
    if (parsed.success) found.push({ config: parsed.data, from: `checkpoints/${n}/manifest.json`,
      time: Date.parse((m.value as { created?: string }).created ?? '') || 0 });
  }
  found.sort((a, b) => b.time - a.time);
  return found[0] ?? null;
}

/** The run index entries of workbench.json, read without changing anything. */
function indexSummaries(root: string): { status: DoctorReport['workbenchJson']; byId: Map<string, RunSummary> } {
  const r = readJson(path.join(root, 'workbench.json'));
  const byId = new Map<string, RunSummary>();
  if (r.status !== 'ok') return { status: r.status === 'missing' ? 'missing' : 'damaged', byId };
  const runs = (r.value as { runs?: unknown })?.runs;
  if (!Array.isArray(runs)) return { status: 'damaged', byId };
  for (const s of runs) { const ok = RunSummarySchema.safeParse(s); if (ok.success) byId.set(ok.data.id, ok.data); }
  return { status: 'ok', byId };
}

export interface DoctorOptions { repair?: boolean; purpose?: string }

export function runDoctor(projectDir: string, options: DoctorOptions = {}): DoctorReport {
  const root = path.resolve(projectDir);
  if (!fs.existsSync(path.join(root, 'workbench.json')) && !fs.existsSync(path.join(root, 'runs'))) {
    throw new WorkbenchError('NotFound', `${root} is not a SPA Workbench project (no workbench.json, no runs/)`, { where: 'doctor --project',
      expected: 'a project folder', received: root });
  }
  const repair = options.repair === true;
  const report: DoctorReport = {
    project: root, examinedAt: Date.now(), repair, lock: null, runs: { total: 0, damaged: [] }, movedAside: [], tempLeftovers: [],
    stageMarkers: [], streams: [], workbenchJson: 'ok', repairs: [], problems: 0, notes: [],
  };

  // ── the lock ──
  const lock = inspectProjectLock(root);
  if (lock) report.lock = { state: lock.state, holder: lock.info ? { ...lock.info } : null, file: path.relative(root, lock.file), removed: false };
  const heldByLive = lock !== null && (lock.state === 'alive' || lock.state === 'other-host' || lock.state === 'unreadable');
  let held: ReturnType<typeof acquireProjectLock> | null = null;
  if (repair) {
    if (heldByLive) {
      const who = lock!.info ? `process ${lock!.info.pid} on ${lock!.info.host}` : 'an unreadable lock file';
      const message = `doctor --repair: the project is in use (${who}); close it there first, or run doctor without --repair to only examine it`;
      throw new WorkbenchError('Conflict', message, {
        where: 'doctor', expected: 'a project no live process holds', received: lock!.state,
      });
    }
    held = acquireProjectLock(root, options.purpose ?? 'doctor');   // takes over a stale lock (removes it)
    if (held.tookOver && report.lock) {
      report.lock.removed = true;
      report.repairs.push(`removed the stale lock of process ${held.tookOver.pid} (${lock!.state})`);
    }
  }
  try {
    // ── workbench.json and runs ──
    const index = indexSummaries(root);
    report.workbenchJson = index.status;
    if (index.status !== 'ok') report.notes.push(`workbench.json is ${index.status}: opening the project rebuilds the run index from the run folders`);
    const runsDir = path.join(root, 'runs');
    const ids = fs.existsSync(runsDir) ? fs.readdirSync(runsDir).filter((e) => { try { return fs.statSync(path.join(runsDir,
      e)).isDirectory(); } catch { return false; } }) : [];
    report.runs.total = ids.length;
    for (const id of ids) examineRun(root, path.join(runsDir, id), id, index.byId.get(id) ?? null, report, repair);

    // ── leftovers, moved-aside files ──
    const leftovers = findTempLeftovers(root);
    const cleaned = repair ? cleanTempLeftovers(root, leftovers) : null;
    const done = new Set([...(cleaned?.removed ?? []), ...(cleaned?.restored ?? [])].map((t) => t.path));
    report.tempLeftovers = leftovers.map((t) => ({ relPath: t.relPath, kind: t.kind, pid: t.pid, bytes: t.bytes, stale: t.stale, action: t.action,
      done: done.has(t.path) }));
    if (cleaned) {
      if (cleaned.removed.length) report.repairs.push(`removed ${cleaned.removed.length} unfinished temp file(s)/folder(s) of interrupted writes`);
      for (const t of cleaned.restored) report.repairs.push(`restored ${path.relative(root, t.target!)} from ${t.relPath}`);
      for (const e of cleaned.errors) report.notes.push(`could not clean ${e}`);
    }
    report.movedAside = findMovedAside(root);
    const aside = report.movedAside.length;
    if (aside) report.notes.push(`${aside} moved-aside file(s) (*.corrupt-*) are kept for you to inspect; doctor never deletes them`);
  } finally {
    held?.release();
  }
  report.problems = (report.lock && report.lock.state !== 'alive' && report.lock.state !== 'other-host' && !report.lock.removed ? 1 : 0)
    + report.runs.damaged.filter((r) => !r.repaired).length
    + report.tempLeftovers.filter((t) => t.stale && !t.done && t.action !== 'keep').length
    + report.stageMarkers.length + report.streams.filter((s) => s.badLines > 0).length
    + (report.workbenchJson === 'ok' ? 0 : 1);
  return report;
}

function examineRun(root: string, runDir: string, id: string, summary: RunSummary | null, report: DoctorReport, repair: boolean): void {
  const rel = (p: string) => path.relative(root, p);
  const aside = (() => { try { return fs.readdirSync(runDir).filter((f) => f.startsWith(`${RUN_JSON}.corrupt-`)).sort(); } catch { return []; } })();
  const r = readJson(path.join(runDir, RUN_JSON));
  if (r.status !== 'ok' || !isRunRecord(r.value)) {
    const problem: DoctorRun['problem'] = r.status === 'missing' ? 'run.json missing' : 'run.json damaged';
    let detail = aside.length ? 'moved aside by an earlier open' : 'no run.json';
    if (r.status === 'damaged') detail = r.error;
    else if (r.status === 'ok') detail = 'not a run record { id, status, stages, config }';
    const entry: DoctorRun = { id, problem, detail, movedAside: aside, repair: null, repaired: false };
    // a moved-aside copy that reads fine (moved for a passing reason) is the best source
    let record: RunRecord | null = null;
    for (const f of [...aside].reverse()) {
      const c = readJson(path.join(runDir, f));
      if (c.status === 'ok' && isRunRecord(c.value) && c.value.id === id) { record = c.value; entry.repair = `restore from ${f}`; break; }
    }
    if (!record && summary) {
      const cfg = configFromCheckpoints(runDir);
      if (cfg) {
        record = {
          ...summary, status: summary.status === 'completed' ? 'completed' : 'failed',
          reason: `run.json was rebuilt by doctor from the run index and ${cfg.from}${summary.reason ? ` (before: ${summary.reason})` : ''}`,
          config: cfg.config as RunRecord['config'], versions: {},
        };
        entry.repair = `rebuild from the run index and ${cfg.from}`;
      }
    }
    const why = summary ? 'no checkpoint manifest with the config' : 'the run is not in the index';
    if (!record) report.notes.push(`runs/${id}: run.json cannot be rebuilt (${why}); its data files are kept`);
    if (repair && record && r.status !== 'ok') {
      if (r.status === 'damaged') {
        // keep the damaged bytes under the moved-aside name, never overwrite them
        const stamp = new Date().toISOString().replace(/[:.]/g, '-');
        fs.renameSync(path.join(runDir, RUN_JSON), path.join(runDir, `${RUN_JSON}.corrupt-${stamp}`));
      }
      writeJsonAtomicSync(path.join(runDir, RUN_JSON), record);
      entry.repaired = true;
      report.repairs.push(`runs/${id}/run.json: ${entry.repair}`);
    }
    report.runs.damaged.push(entry);
  }
  // stage markers: parse, and their checkpoint references resolve to existing folders
  const stagesDir = path.join(runDir, 'stages');
  let stages: string[] = [];
  try { stages = fs.readdirSync(stagesDir); } catch { /* none */ }
  for (const stage of stages) {
    for (const name of ['done.json', 'state.json']) {
      const file = path.join(stagesDir, stage, name);
      const m = readJson(file);
      if (m.status === 'missing') continue;
      if (m.status === 'damaged') {
        const then = name === 'done.json' ? 'runs the stage again' : 'restarts the stage';
        report.stageMarkers.push({ path: rel(file), problem: `does not parse (${m.error}); the next resume moves it aside and ${then}` });
        continue;
      }
      const holder = name === 'done.json' ? (m.value as { output?: Record<string, unknown> })?.output : m.value as Record<string, unknown>;
      for (const k of CHECKPOINT_KEYS) {
        const ref = holder?.[k];
        if (typeof ref !== 'string' || ref === '') continue;
        try {
          const abs = resolveCheckpointRef(runDir, ref, rel(file));
          if (!fs.existsSync(path.join(abs, 'config.json'))) report.stageMarkers.push({ path: rel(file), problem: `${k} ${ref} is missing or incomplete` });
        } catch (err) { report.stageMarkers.push({ path: rel(file), problem: (err as Error).message }); }
      }
    }
  }
  // JSONL streams: lines that do not parse (torn by a crash, or garbage)
  for (const stream of [METRICS_FILE, EVENTS_FILE, ROLLOUT_INDEX]) {
    const file = path.join(runDir, stream);
    if (!fs.existsSync(file)) continue;
    const j = readJsonl(file);
    if (j.skipped.length) report.streams.push({ path: rel(file), badLines: j.skipped.length, tornLast: j.skipped.some((s) => s.torn) });
  }
}

/** A human summary of the report (the CLI's text output). */
export function formatDoctorReport(r: DoctorReport): string {
  const lines = [`project ${r.project}${r.repair ? ' (repair)' : ''}`];
  if (r.lock) {
    const h = r.lock.holder;
    const start = h && typeof h.procStart === 'number' ? `, process start ${h.procStart}` : '';
    const holder = h ? ` (pid ${h.pid} on ${h.host}, ${h.purpose ?? 'workbench'}, since ${new Date(h.startedAt).toISOString()}${start})` : '';
    lines.push(`lock: ${r.lock.state}${holder}${r.lock.removed ? ' - removed' : ''}`);
  } else lines.push('lock: none');
  lines.push(`workbench.json: ${r.workbenchJson}`, `runs: ${r.runs.total}, damaged: ${r.runs.damaged.length}`);
  for (const d of r.runs.damaged) {
    lines.push(`  ${d.id}: ${d.problem} (${d.detail})${d.repair ? `; repair: ${d.repair}` : '; cannot be rebuilt'}${d.repaired ? ' - done' : ''}`);
  }
  if (r.tempLeftovers.length) lines.push(`temp leftovers: ${r.tempLeftovers.length}`);
  for (const t of r.tempLeftovers) {
    lines.push(`  ${t.relPath} (${t.kind}, pid ${t.pid}, ${t.stale ? 'stale' : 'writer alive'}) -> ${t.action}${t.done ? ' - done' : ''}`);
  }
  if (r.movedAside.length) lines.push(`moved-aside files: ${r.movedAside.length}`);
  for (const m of r.movedAside) lines.push(`  ${m.path} (${m.bytes} bytes)`);
  for (const s of r.stageMarkers) lines.push(`stage marker ${s.path}: ${s.problem}`);
  for (const s of r.streams) lines.push(`${s.path}: ${s.badLines} unreadable line(s)${s.tornLast ? ' (a torn last line)' : ''}; readers skip them`);
  for (const x of r.repairs) lines.push(`repaired: ${x}`);
  for (const n of r.notes) lines.push(`note: ${n}`);
  lines.push(r.problems === 0 ? 'healthy' : `${r.problems} problem(s)${r.repair ? ' left' : '; run with --repair to fix what is safe'}`);
  return `${lines.join('\n')}\n`;
}
