// Host side of studies: runs a study's grid (methods × envs × seeds) one run at a time through
// the same API and RunHost as every other run (so the runs appear live in the run table and their
// events flow), records the study's state in <project>/studies/<name>/state.json (atomic writes),
// and announces changes as `study-changed` project events. The CLI (`spa-workbench study run`)
// uses this same runner through its in-process dispatcher, so a study started from the UI and one
// started from the CLI are the same thing: the same files, resumed the same way.
//
// Resuming: completed runs are skipped, stopped or failed runs resumed, missing runs created.
// A study recorded as running when a host opens the project was interrupted (the host exited; we
// hold the project lock now): it is marked stopped, and studies.start resumes it.
import { RESUME_SETTABLE } from '../api/run-config.js';
import type { ProjectEvent, RunSummary, StudyStatus, StudySummary, WorkbenchApi } from '../api/contract.js';
import { conflict, notFound, WorkbenchError } from '../api/errors.js';
import type { ProjectStore } from '../storage/project-store.js';
import * as path from 'node:path';
import {
  cellKey, findStudyRuns, listStudyNames, readStudySpec, readStudyState, runName, studyCells, studyDir, writeStudyReport, writeStudySpec,
  writeStudyState, type RunRef, type StudySpec, type StudyState,
} from '../eval/study.js';
import { isActiveStatus, type RunHost } from './run-host.js';

export interface StudyHostOptions {
  store: ProjectStore;
  runs: Pick<RunHost, 'isActive' | 'waitForExit'>;
  /** The dispatcher's API (runs.create / start / resume / stop / get). */
  api: () => WorkbenchApi;
  onProjectEvent(event: ProjectEvent): void;
  /** Written into state.json (who ran the study last). */
  host: string;
  /** Called after each run of a study ends (the CLI prints a line). */
  onRunEnded?(study: string, run: RunSummary, index: number, total: number): void;
  /** Called when a run is created, resumed or skipped. */
  onRunStarting?(
    study: string,
    info: {
      name: string;
      runId: string | null;
      action: 'created' | 'resumed' | 'skipped' | 'waiting' | 'recorded';
      index: number;
      total: number;
      stages: string[];
    },
  ): void;
}

interface ActiveStudy {
  name: string;
  stopRequested: boolean;
  currentRunId: string | null;
  done: Promise<void>;
}

export class StudyHost {
  private readonly active = new Map<string, ActiveStudy>();
  private disposed = false;

  constructor(private readonly o: StudyHostOptions) {}

  private get dir(): string { return this.o.store.dir; }
  isActive(name: string): boolean { return this.active.has(name); }
  activeNames(): string[] { return [...this.active.keys()]; }

  /** Studies recorded as running by a host that is gone: mark them stopped. Returns their names. */
  recoverInterrupted(): string[] {
    const names: string[] = [];
    for (const name of listStudyNames(this.dir)) {
      const state = readStudyState(this.dir, name);
      if (state?.status !== 'running' || this.active.has(name)) continue;
      const now = Date.now();
      writeStudyState(this.dir, name, {
        ...state, status: 'stopped', currentRunId: null, finishedAt: now, updatedAt: now,
        reason: 'interrupted: the workbench host exited while the study was running; start it again to resume (completed runs are skipped)',
      });
      names.push(name);
    }
    return names;
  }

  list(): StudySummary[] {
    const out: StudySummary[] = [];
    const runs = findStudyRuns([this.dir]);          // every run.json read once, not once per study
    for (const name of listStudyNames(this.dir)) {
      try { out.push(this.summary(name, runs)); } catch (err) {
        const warning = `studies/${name}/spec.json: unreadable study spec (${(err as Error).message}); skipped`;
        if (!this.o.store.warnings.includes(warning)) this.o.store.warnings.push(warning);
      }
    }
    return out;
  }

  /** One study's summary: spec, state and progress computed from the project's runs now. */
  summary(name: string, projectRuns?: RunRef[]): StudySummary {
    const spec = readStudySpec(this.dir, name);
    if (!spec) throw notFound(`study ${JSON.stringify(name)}`, 'name', `studies: ${listStudyNames(this.dir).join(', ') || '(none)'}`);
    const state = readStudyState(this.dir, name);
    // From the run folders (run.json), like studies.table: runs copied in from elsewhere count too.
    const found = projectRuns ? projectRuns.filter((r) => r.study === spec.name) : findStudyRuns([this.dir], spec.name);
    const cells = studyCells(spec);
    const runIds: string[] = [];
    let done = 0, failed = 0;
    for (const c of cells) {
      const mine = found.filter((r) => r.name === runName(spec, c.method, c.env, c.seed));
      const r = mine.find((x) => x.status === 'completed') ?? mine[mine.length - 1];
      if (!r) { if (spec.skip?.includes(cellKey(c.method, c.env, c.seed))) done++; continue; }   // recorded elsewhere counts as done
      runIds.push(path.basename(r.dir));
      if (r.status === 'completed') done++;
      else if (r.status === 'failed' || r.status === 'stopped') failed++;
    }
    const all = found;
    const live = this.active.get(name);
    let status: StudyStatus;
    if (live) status = 'running';
    else if (state && state.status !== 'running') status = state.status;
    else if (done === cells.length && cells.length > 0) status = 'completed';       // run before state files existed
    else status = runIds.length > 0 ? 'stopped' : 'pending';
    return {
      name: spec.name, methods: spec.methods, envs: spec.envs, seeds: spec.seeds, size: spec.size, set: spec.set ?? null,
      runs: all.length, completed: all.filter((r) => r.status === 'completed').length, runIds,
      status, reason: live ? null : state?.reason ?? null,
      progress: { done, failed, total: cells.length, currentRunId: live?.currentRunId ?? null },
      startedAt: state?.startedAt ?? null, finishedAt: live ? null : state?.finishedAt ?? null,
    };
  }

  /**
   * Start (or resume) a study. The spec has been validated by the caller. Returns once the study
   * is recorded as running; the grid runs in the background (`waitFor` to await it).
   */
  start(spec: StudySpec): StudySummary {
    if (this.disposed) throw new WorkbenchError('Unavailable', 'the study runner is shutting down', { where: 'studies.start' });
    if (this.active.has(spec.name))
      throw conflict(`study ${spec.name} is already running; stop it first (studies.stop) or wait for it to finish`, 'studies.start', {
        received: 'running',
      });
    writeStudySpec(this.dir, spec);
    const now = Date.now();
    this.writeState(spec.name, { status: 'running', reason: null, startedAt: now, finishedAt: null, currentRunId: null, host: this.o.host, updatedAt: now });
    const entry: ActiveStudy = { name: spec.name, stopRequested: false, currentRunId: null, done: Promise.resolve() };
    this.active.set(spec.name, entry);
    entry.done = this.execute(spec, entry).catch(() => undefined);
    this.announce(spec.name);
    return this.summary(spec.name);
  }

  /** Stop a running study: stop its current run, start no further run. */
  async stop(name: string): Promise<StudySummary> {
    const entry = this.active.get(name);
    if (!entry) {
      const s = this.summary(name);   // NotFound for unknown studies
      throw conflict(`study ${name} is not running (it is ${s.status}); start it to resume`, 'studies.stop', {
        expected: 'a running study',
        received: s.status,
      });
    }
    entry.stopRequested = true;
    const runId = entry.currentRunId;
    if (runId && this.o.runs.isActive(runId)) await this.o.api().runs.stop({ runId }).catch(() => undefined);
    return this.summary(name);
  }

  /** Resolves when the study's runner has finished (immediately when not running). */
  async waitFor(name: string): Promise<void> { await this.active.get(name)?.done; }

  /** Stop every running study (no new runs start); their current runs are stopped by the RunHost. */
  async dispose(): Promise<void> {
    this.disposed = true;
    for (const e of this.active.values()) e.stopRequested = true;
  }

  /** Await the runners after the RunHost stopped their runs. */
  async settle(): Promise<void> { await Promise.all([...this.active.values()].map((e) => e.done)); }

  // ── the runner ──

  private async execute(spec: StudySpec, entry: ActiveStudy): Promise<void> {
    const api = this.o.api();
    const cells = studyCells(spec);
    const failures: string[] = [];
    let stoppedBy: string | null = null;
    let error: string | null = null;
    try {
      for (const [i, cell] of cells.entries()) {
        if (entry.stopRequested) break;
        const name = runName(spec, cell.method, cell.env, cell.seed);
        if (spec.skip?.includes(cellKey(cell.method, cell.env, cell.seed))) {
          // recorded elsewhere (docs/results of the repository, from another machine): not run again
          this.o.onRunStarting?.(spec.name, { name, runId: '', action: 'recorded', index: i, total: cells.length, stages: [] });
          continue;
        }
        const existing = this.runsByName().get(name);
        if (existing?.status === 'completed') {
          this.o.onRunStarting?.(spec.name, {
            name,
            runId: existing.id,
            action: 'skipped',
            index: i,
            total: cells.length,
            stages: existing.stages.map((s) => s.name),
          });
          continue;
        }
        let runId: string;
        if (existing && (isActiveStatus(existing.status) && this.o.runs.isActive(existing.id))) {
          runId = existing.id;                 // started by hand: wait for it
          this.setCurrent(entry, runId);
          this.o.onRunStarting?.(spec.name, { name, runId, action: 'waiting', index: i, total: cells.length, stages: existing.stages.map((s) => s.name) });
        } else if (existing) {
          runId = existing.id;
          this.setCurrent(entry, runId);
          this.o.onRunStarting?.(spec.name, { name, runId, action: 'resumed', index: i, total: cells.length, stages: existing.stages.map((s) => s.name) });
          if (entry.stopRequested) break;
          // the study's execution settings (RESUME_SETTABLE: memory layout, rollout batch size) reach a resumed run too, so
          // `study run --set model.memory.generationRows=8` after an OOM kill applies to the cell that was killed
          const execution = Object.fromEntries(Object.entries(spec.set ?? {}).filter(([k]) => k in RESUME_SETTABLE));
          if (existing.status === 'created') await api.runs.start({ runId });
          else await api.runs.resume({ runId, ...(Object.keys(execution).length ? { set: execution } : {}) });
        } else {
          const run = await api.runs.create({
            preset: cell.method,
            size: spec.size,
            name,
            set: { 'env.id': cell.env, 'seeds.base': cell.seed, ...(spec.set ?? {}) },
          });
          runId = run.id;
          this.setCurrent(entry, runId);
          this.o.onRunStarting?.(spec.name, { name, runId, action: 'created', index: i, total: cells.length, stages: run.stages.map((s) => s.name) });
          if (!entry.stopRequested) await api.runs.start({ runId });
        }
        // A stop that arrived while the run was being started.
        if (entry.stopRequested && this.o.runs.isActive(runId)) await api.runs.stop({ runId }).catch(() => undefined);
        await this.o.runs.waitForExit(runId);
        const info = await api.runs.get({ runId });
        this.setCurrent(entry, null);
        this.o.onRunEnded?.(spec.name, info, i, cells.length);
        try { writeStudyReport([this.dir], spec, studyDir(this.dir, spec.name)); } catch { /* the report is rebuilt at the end and by `study table` */ }
        if (info.status === 'completed') continue;
        if (info.status === 'stopped' || info.status === 'created') {
          if (!entry.stopRequested) stoppedBy = `run ${runId} (${name}) was stopped`;
          break;
        }
        failures.push(`${name}${info.reason ? `: ${info.reason}` : ''}`);
      }
    } catch (err) {
      error = (err as Error).message;
    }
    try { writeStudyReport([this.dir], spec, studyDir(this.dir, spec.name)); } catch { /* best effort */ }
    const now = Date.now();
    let status: StudyStatus;
    let reason: string | null;
    if (error) { status = 'failed'; reason = `the study runner failed: ${error}`; }
    else if (entry.stopRequested) {
      status = 'stopped';
      reason = `${this.disposed ? 'stopped: the host is shutting down' : 'stopped on request'}; start it again to resume`;
    }
    else if (stoppedBy) { status = 'stopped'; reason = `${stoppedBy}; start the study again to resume`; }
    else if (failures.length) { status = 'failed'; reason = `${failures.length} of ${cells.length} run(s) failed (start the study again to resume ` +
      `them): ${failures.join(' | ').slice(0, 1000)}`; }
    else { status = 'completed'; reason = null; }
    const prev = readStudyState(this.dir, spec.name);
    this.writeState(spec.name, { status, reason, startedAt: prev?.startedAt ?? null, finishedAt: now, currentRunId: null, host: this.o.host, updatedAt: now });
    this.active.delete(spec.name);
    this.announce(spec.name);
  }

  private setCurrent(entry: ActiveStudy, runId: string | null): void {
    entry.currentRunId = runId;
    const prev = readStudyState(this.dir, entry.name);
    if (prev) this.writeState(entry.name, { ...prev, currentRunId: runId, updatedAt: Date.now() });
    this.announce(entry.name);
  }

  private writeState(name: string, state: StudyState): void {
    try { writeStudyState(this.dir, name, state); } catch (err) {
      this.o.store.warnings.push(`studies/${name}/state.json: could not write (${(err as Error).message})`);
    }
  }

  private announce(name: string): void {
    try {
      const s = this.summary(name);
      this.o.onProjectEvent({ type: 'study-changed', time: Date.now(), name, status: s.status, progress: s.progress });
    } catch { /* the study folder is gone */ }
  }

  /** The project's runs by name (the newest run wins when a name repeats). */
  private runsByName(): Map<string, RunSummary> {
    const m = new Map<string, RunSummary>();
    for (const r of this.o.store.listRuns()) if (r.name.startsWith('study:')) m.set(r.name, r);   // index is oldest first
    return m;
  }
}
