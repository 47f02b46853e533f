// Host side of runs: launches an engine process per active run, sends start/stop, applies the
// engine's events to run.json and the project index (the host is their only writer), forwards
// events live, and turns an engine that died (crash, OOM, SIGKILL) into a failed run with the
// reason — the host keeps serving and the run can be resumed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ProjectEvent, RunSummary, StageState } from '../api/contract.js';
import { estimateRunEta, StageEtaTracker } from './run-eta.js';
import { RunSummarySchema } from '../api/contract.js';
import type { RunEvent, RunStatus } from '../api/records.js';
import { conflict, WorkbenchError } from '../api/errors.js';
import { appendJsonl } from '../storage/jsonl.js';
import { writeJsonAtomicSync } from '../storage/atomic.js';
import type { ProjectStore } from '../storage/project-store.js';
import { EVENTS_FILE, METRICS_FILE, writeRunRecord, type RunRecord } from '../storage/run-files.js';
import type { EngineExit, EngineProcess, ProcessLauncher } from './launcher.js';
import type { EngineMessage, RunOutcome } from './protocol.js';
import { RequestTracker } from './request-tracker.js';
import { readStageDone } from './runner.js';
import { RESUME_SETTABLE, RunConfigSchema } from '../api/run-config.js';
import { setPath } from './config.js';
import { configParams } from './config-params.js';

export interface RunHostOptions {
  store: ProjectStore;
  launcher: ProcessLauncher;
  onRunEvent(runId: string, event: RunEvent): void;
  onProjectEvent(event: ProjectEvent): void;
  /** Time the engine gets to stop by itself before it is killed (ms), unless it still answers pings: see stopStepWaitMs. */
  stopGraceMs?: number;
  /**
   * How long a stop waits for the current step to end while the engine still answers pings (ms; 15 min). A torch worker's
   * step (a real model's SFT or RL update on a CPU: minutes) leaves the engine's event loop free, so it answers, and the run
   * stops after the step with its work saved; an engine that does not answer within stopGraceMs (a blocked event loop:
   * in-process TF.js training, or a hang) is killed as before. Ctrl-C twice (the CLI) kills at once.
   */
  stopStepWaitMs?: number;
  /** Time the engine gets to start and accept the run (ms). */
  startTimeoutMs?: number;
  /** Debounce of run.json/index writes for progress and metrics (ms). */
  flushIntervalMs?: number;
  maxOldSpaceMb?: number;
}

interface ActiveRun {
  id: string;
  proc: EngineProcess;
  tracker: RequestTracker;
  record: RunRecord;
  outcome: RunOutcome | null;
  stopRequested: boolean;
  killedAfterGrace: boolean;
  /** Why a stop killed the engine and when (ms after the stop request); absent for a kill without a stop's wait (dispose). */
  stopKill?: { why: 'silent' | 'step-too-long'; afterMs: number };
  attemptStart: number;
  /** This attempt's wall time is already in record.durationMs (added at the terminal status event). */
  timeCounted?: boolean;
  flushTimer: ReturnType<typeof setTimeout> | null;
  exited: Promise<void>;
}

const ACTIVE: RunStatus[] = ['queued', 'running', 'stopping'];
export const isActiveStatus = (s: RunStatus) => ACTIVE.includes(s);

export function summaryOf(record: RunRecord): RunSummary {
  return RunSummarySchema.parse(record);   // strips config/versions
}

export class RunHost {
  private readonly active = new Map<string, ActiveRun>();
  private disposed = false;
  private readonly stageEta = new StageEtaTracker();

  constructor(private readonly o: RunHostOptions) {}

  get store(): ProjectStore { return this.o.store; }
  isActive(runId: string): boolean { return this.active.has(runId); }
  activeIds(): string[] { return [...this.active.keys()]; }
  /** Live record of an active run (fresher than run.json between flushes). */
  liveRecord(runId: string): RunRecord | undefined { return this.active.get(runId)?.record; }

  /**
   * Runs that were active when the previous host exited cannot still be running (we hold the
   * lock now): mark them failed with the reason. Returns their ids.
   */
  recoverInterrupted(): string[] {
    const ids: string[] = [];
    for (const s of this.store.listRuns()) {
      if (!isActiveStatus(s.status) || this.active.has(s.id)) continue;
      const record = this.store.readRun(s.id);
      if (!record) continue;
      const orphan = stopOrphanEngine(this.store.runDir(s.id), s.id);
      const reason = orphan
        ? `interrupted: the workbench host exited while the run was active; its engine process (pid ${orphan}) was still running and has been ` +
          `stopped so that it cannot write into the run; resume it to continue`
        : 'interrupted: the workbench host exited while the run was active (its engine process is no longer running); resume it to continue';
      record.durationMs += interruptedAttemptMs(this.store.runDir(s.id), record, Date.now());
      this.finalise(record, 'failed', reason, Date.now());
      ids.push(s.id);
    }
    if (ids.length) void this.store.flush();
    return ids;
  }

  async start(runId: string, opts: { resume: boolean; set?: Record<string, unknown> }): Promise<RunSummary> {
    if (this.disposed) throw new WorkbenchError('Unavailable', 'the run host is shutting down', { where: 'runs.start' });
    if (this.active.has(runId)) throw conflict(`run ${runId} is already active`, opts.resume ? 'runs.resume' : 'runs.start', { received: 'active' });
    const record = this.store.readRun(runId);
    if (!record) throw new WorkbenchError('NotFound', `run ${runId} not found`, { where: 'runId', received: runId });
    const where = opts.resume ? 'runs.resume' : 'runs.start';
    if (opts.resume) {
      if (!['stopped', 'failed', 'created'].includes(record.status)) {
        throw conflict(`run ${runId} is ${record.status}; only a stopped or failed run can be resumed`, where, {
          expected: 'status stopped or failed',
          received: record.status,
        });
      }
    } else if (record.status !== 'created') {
      throw conflict(`run ${runId} is ${record.status}; start a created run, or resume a stopped/failed one`, where, {
        expected: 'status created',
        received: record.status,
      });
    }
    const runDir = this.store.runDir(runId);
    const now = Date.now();
    const changed = opts.set && Object.keys(opts.set).length ? resumeSettings(record, opts.set, where) : [];
    // Stages completed on earlier attempts stay completed; the rest become pending.
    record.stages = record.stages.map((s): StageState => readStageDone(runDir, s.name)
      ? { ...s, status: 'completed' }
      : { ...s, status: 'pending', reason: null, startedAt: null, finishedAt: null, done: 0, total: 0 });
    record.status = 'queued';
    record.reason = null;
    record.startedAt = now;
    record.finishedAt = null;
    record.attempts += 1;
    record.progress = null;
    this.persist(record, true);
    const settingsLine: RunEvent | null = changed.length ? {
      type: 'log', runId, time: now, level: 'info', message: `resume: execution settings changed (the method's settings are not): ${changed.join('; ')}`,
    } : null;
    // written before the engine starts (it appends to the same file after), shown live once the run is active below
    if (settingsLine) try { appendJsonl(path.join(runDir, EVENTS_FILE), [settingsLine]); } catch { /* folder deleted */ }

    const proc = this.o.launcher.launch({ runId, maxOldSpaceMb: this.o.maxOldSpaceMb });
    // who runs this attempt: a later host checks it before marking the run interrupted
    if (proc.pid !== undefined) {
      try { writeJsonAtomicSync(path.join(runDir, ENGINE_PID_FILE), { pid: proc.pid, runId, startedAt: now }); } catch { /* folder deleted */ }
    }
    const tracker = new RequestTracker();
    let readyResolve!: () => void;
    const ready = new Promise<void>((r) => { readyResolve = r; });
    let exitedResolve!: () => void;
    const run: ActiveRun = {
      id: runId, proc, tracker, record, outcome: null, stopRequested: false, killedAfterGrace: false,
      attemptStart: now, flushTimer: null, exited: new Promise<void>((r) => { exitedResolve = r; }),
    };
    this.active.set(runId, run);
    if (settingsLine) this.o.onRunEvent(runId, settingsLine);
    proc.onMessage((m: EngineMessage) => {
      switch (m.type) {
        case 'ready': readyResolve(); break;
        case 'reply': tracker.reply(m.requestId, m.result); break;
        case 'error': tracker.error(m.requestId, m.error); break;
        case 'event': this.applyEvent(run, m.event); break;
        case 'finished':
          run.outcome = m.outcome;
          try { proc.send({ type: 'shutdown' }); } catch { /* already gone */ }
          break;
      }
    });
    proc.onExit((exit) => { this.onExit(run, exit); exitedResolve(); });

    const startTimeout = this.o.startTimeoutMs ?? 120_000;
    try {
      await Promise.race([
        ready,
        run.exited.then(() => { throw new Error('engine exited'); }),
        new Promise((_, reject) => setTimeout(() => reject(new Error(`engine process did not start within ${startTimeout} ms`)), startTimeout).unref()),
      ]);
      await tracker.request(where, (requestId) => proc.send({
        type: 'start', requestId, runId, runDir, config: record.config, stages: record.stages.map((s) => s.name), attempt: record.attempts,
      }), startTimeout);
    } catch (err) {
      if (this.active.has(runId)) {
        // Not started: kill it; onExit marks the run failed with the reason.
        run.outcome ??= { status: 'failed', reason: `engine did not start: ${(err as Error).message}` };
        proc.kill('SIGKILL');
      }
      await run.exited;
    }
    return summaryOf(this.active.get(runId)?.record ?? this.store.readRun(runId) ?? record);
  }

  async stop(runId: string): Promise<RunSummary> {
    const run = this.active.get(runId);
    if (!run) {
      const record = this.store.readRun(runId);
      if (!record) throw new WorkbenchError('NotFound', `run ${runId} not found`, { where: 'runs.stop runId', received: runId });
      if (record.status === 'created') {
        this.finalise(record, 'stopped', 'stopped before it started', Date.now());
        await this.store.flush();
        return summaryOf(record);
      }
      throw conflict(`run ${runId} is not active (it is ${record.status})`, 'runs.stop', { expected: 'an active run', received: record.status });
    }
    if (!run.stopRequested) {
      run.stopRequested = true;
      run.record.status = 'stopping';
      this.persist(run.record, true);
      this.o.onProjectEvent({ type: 'run-status', time: Date.now(), runId, status: 'stopping', reason: null });
      const since = Date.now();
      let answered = true;
      try {
        await run.tracker.request('runs.stop', (requestId) => run.proc.send({ type: 'stop', requestId }), this.o.stopGraceMs ?? 15_000);
      } catch { answered = false; /* exit, or no answer within the grace */ }
      this.waitForStep(run, since, answered);
    }
    return summaryOf(run.record);
  }

  /**
   * After a stop request (sent at `since`; `answered`: the engine replied to it within stopGraceMs): kill the engine at once if
   * it did not answer; else every stopGraceMs, kill it unless it answers a ping within stopGraceMs (it is finishing a step on
   * its worker) and less than stopStepWaitMs has passed since `since`.
   */
  private waitForStep(run: ActiveRun, since: number, answered: boolean): void {
    const grace = this.o.stopGraceMs ?? 15_000;
    const cap = this.o.stopStepWaitMs ?? 15 * 60_000;
    const kill = (why: 'silent' | 'step-too-long') => {
      if (!this.active.has(run.id)) return;
      run.killedAfterGrace = true;
      run.stopKill = { why, afterMs: Date.now() - since };
      run.proc.kill('SIGKILL');
    };
    if (!answered) { kill('silent'); return; }
    const check = () => {
      if (!this.active.has(run.id)) return;   // it exited by itself
      if (Date.now() - since >= cap) { kill('step-too-long'); return; }
      run.tracker.request('runs.stop ping', (requestId) => run.proc.send({ type: 'ping', requestId }), grace).then(() => {
        if (this.active.has(run.id)) setTimeout(check, Math.max(0, Math.min(grace, since + cap - Date.now()))).unref();
      }, () => kill('silent'));
    };
    setTimeout(check, grace).unref();
  }

  /** Wait (up to `timeoutMs`) for engines that already reported their outcome to exit. */
  async settleFinishing(timeoutMs = 5000): Promise<void> {
    const finishing = [...this.active.values()].filter((r) => r.outcome !== null).map((r) => r.exited);
    if (finishing.length) await Promise.race([Promise.all(finishing), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
  }

  /** Wait until a run's engine process has exited (no-op if not active). */
  async waitForExit(runId: string): Promise<void> { await this.active.get(runId)?.exited; }

  /** Stop every active run (or kill them) and wait for their processes to exit. */
  async dispose(opts: { kill?: boolean } = {}): Promise<void> {
    this.disposed = true;
    const runs = [...this.active.values()];
    for (const r of runs) {
      if (opts.kill) { r.stopRequested = true; r.killedAfterGrace = true; r.proc.kill('SIGKILL'); }
      else void this.stop(r.id).catch(() => undefined);
    }
    await Promise.all(runs.map((r) => r.exited));
    await this.store.flush().catch(() => undefined);
  }

  // ── events and persistence ──

  private applyEvent(run: ActiveRun, event: RunEvent): void {
    const r = run.record;
    let urgent = false;
    let forwarded: RunEvent = event;
    switch (event.type) {
      case 'status':
        if (event.status === 'running' && r.status === 'queued') { r.status = 'running'; urgent = true; }
        else if (['completed', 'stopped', 'failed'].includes(event.status)) {
          // Terminal: visible at once (the process exits right after; onExit finalises).
          run.outcome = { status: event.status as RunOutcome['status'], reason: event.reason };
          // this attempt's time counts now, so what is shown on the terminal status is not "ran 0s"
          if (!run.timeCounted) { r.durationMs += Math.max(0, event.time - run.attemptStart); run.timeCounted = true; }
          r.status = event.status;
          r.reason = event.reason ?? null;
          r.finishedAt = event.time;
          urgent = true;
        }
        break;
      case 'stage': {
        const s = r.stages.find((x) => x.name === event.stage);
        if (s) {
          s.status = event.status;
          if (event.status === 'running') { s.startedAt = event.time; s.finishedAt = null; s.reason = null; }
          else { s.finishedAt = event.time; s.reason = event.reason ?? null; }
          if (event.status === 'completed' && s.total > 0) s.done = s.total;
        }
        urgent = true;
        break;
      }
      case 'progress': {
        const s = r.stages.find((x) => x.name === event.stage);
        let eta = event.etaSeconds;
        if (eta === null) eta = this.stageEta.eta(r.id, event, s?.startedAt ?? null);
        if (s) { s.done = event.done; s.total = event.total; }
        r.progress = {
          stage: event.stage,
          done: event.done,
          total: event.total,
          etaSeconds: eta ?? null,
          ...(event.message !== undefined ? { message: event.message } : {}),
        };
        const whole = estimateRunEta(r, this.store.listRuns(), event.time);
        r.progress.runEtaSeconds = whole.seconds;
        r.progress.unestimatedStages = whole.unestimated;
        forwarded = { ...event, etaSeconds: eta ?? null, runEtaSeconds: whole.seconds, unestimatedStages: whole.unestimated };
        break;
      }
      case 'metric':
        Object.assign(r.latest, event.point.values);
        break;
      case 'provenance':   // what runs this attempt (backend, device, code version): run.json `provenance`
        r.provenance = event.provenance;
        urgent = true;
        break;
      default:
        break;
    }
    this.o.onRunEvent(run.id, forwarded);
    if (urgent) this.persist(r, true);
    else if (!run.flushTimer) {
      run.flushTimer = setTimeout(() => { run.flushTimer = null; if (this.active.has(run.id)) this.persist(r, false); }, this.o.flushIntervalMs ?? 1000);
      run.flushTimer.unref();
    }
  }

  private onExit(run: ActiveRun, exit: EngineExit): void {
    if (run.flushTimer) { clearTimeout(run.flushTimer); run.flushTimer = null; }
    const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
    let status: 'completed' | 'stopped' | 'failed';
    let reason: string | null;
    if (run.outcome && !(run.killedAfterGrace && run.outcome.status !== 'stopped')) {
      status = run.outcome.status;
      reason = run.outcome.reason ?? null;
    } else if (run.killedAfterGrace) {
      status = 'stopped';
      const waited = Math.round((run.stopKill?.afterMs ?? 0) / 1000);
      reason = !run.stopKill ? 'killed (Ctrl-C twice, or the host closing)'
        : run.stopKill.why === 'step-too-long' ? `killed after its step did not end within ${waited} s of the stop`
          : `killed after it did not stop within ${waited} s (it stopped answering)`;
    } else {
      status = 'failed';
      const oom = exit.stderrTail.some((l) => /heap out of memory|Reached heap limit|Allocation failed/i.test(l));
      const hint = oom ? ' (out of memory: the engine reached its JavaScript heap limit; use a smaller size or batch, or raise the limit)'
        : exit.signal === 'SIGKILL' ? ' (killed: out of memory, or kill -9)'
        : exit.signal === 'SIGABRT' || exit.code === 134 ? ' (aborted: possibly out of memory)' : '';
      const tail = exit.stderrTail.filter((l) => l.trim() && !/^\s+at |^\s*\d+: 0x/.test(l)).slice(-4).join(' | ').slice(0, 600);
      reason = `engine process died unexpectedly (${how})${hint}${tail ? `; last output: ${tail}` : ''}`;
    }
    const time = Date.now();
    run.tracker.closeAll(how);
    this.active.delete(run.id);
    const r = run.record;
    if (!run.timeCounted) r.durationMs += Math.max(0, time - run.attemptStart);
    const hadOutcomeEvent = !!run.outcome && status === run.outcome.status && !run.killedAfterGrace;
    this.finalise(r, status, reason, time, !hadOutcomeEvent);
    void this.store.flush().catch(() => undefined);
    this.o.onProjectEvent({ type: 'engine-exit', time, runId: run.id, code: exit.code, signal: exit.signal, reason: reason ?? status });
  }

  /** Terminal state: stage states, run.json, index, events.jsonl (only when the engine did not write it). */
  private finalise(r: RunRecord, status: 'completed' | 'stopped' | 'failed', reason: string | null, time: number, appendEvent = true): void {
    for (const s of r.stages) {
      if (s.status === 'running') { s.status = status === 'completed' ? 'completed' : status; s.finishedAt = time; s.reason = reason; }
    }
    r.status = status;
    r.reason = reason;
    r.finishedAt = time;
    if (status === 'completed') r.progress = null;
    const event: RunEvent = { type: 'status', runId: r.id, time, status, ...(reason ? { reason } : {}) };
    if (appendEvent) {
      // The engine is gone, so the host is the only writer of events.jsonl now.
      try { appendJsonl(path.join(this.store.runDir(r.id), EVENTS_FILE), [event]); } catch { /* folder deleted */ }
      this.o.onRunEvent(r.id, event);
    }
    this.persist(r, true);
  }

  private persist(r: RunRecord, announce: boolean): void {
    try { writeRunRecord(this.store.runDir(r.id), r); } catch (err) {
      this.o.onProjectEvent({
        type: 'engine-exit',
        time: Date.now(),
        runId: r.id,
        code: null,
        signal: null,
        reason: `could not write run.json: ${(err as Error).message}`,
      });
    }
    this.store.putRun(summaryOf(r));
    void this.store.flush().catch(() => undefined);
    if (announce) this.o.onProjectEvent({ type: 'run-status', time: Date.now(), runId: r.id, status: r.status, reason: r.reason });
    this.o.onProjectEvent({ type: 'runs-changed', time: Date.now(), runIds: [r.id] });
  }
}

export const ENGINE_PID_FILE = 'engine.pid.json';

/**
 * The wall time of an attempt whose host died without counting it (kill -9, a machine that went
 * away): from the attempt's start (run.json startedAt, set when it began) to the last line its
 * engine wrote (events.jsonl, metrics.jsonl), at most `now`. 0 when the attempt never started or
 * the record's times are not this attempt's. So a run resumed after its host died reports the time
 * it really ran, not only its last attempt's.
 */
export function interruptedAttemptMs(runDir: string, record: Pick<RunRecord, 'startedAt' | 'finishedAt'>, now: number): number {
  const start = record.startedAt;
  if (typeof start !== 'number' || (record.finishedAt !== null && record.finishedAt >= start)) return 0;
  let last = 0;
  for (const file of [EVENTS_FILE, METRICS_FILE]) {
    try { last = Math.max(last, fs.statSync(path.join(runDir, file)).mtimeMs); } catch { /* not written */ }
  }
  return Math.max(0, Math.round(Math.min(last, now) - start));
}

/**
 * A host that died (kill -9, crash) can leave its engine running, still appending to the run
 * folder. Before a run is marked interrupted, stop that engine if it is still alive: the pid
 * from engine.pid.json must be alive and, on Linux, carry SPA_WORKBENCH_RUN_ID=<runId> in its
 * environment (so a reused pid is never signalled). Returns the pid it stopped, else null.
 */
export function stopOrphanEngine(runDir: string, runId: string): number | null {
  let pid: number;
  try {
    const info = JSON.parse(fs.readFileSync(path.join(runDir, ENGINE_PID_FILE), 'utf8')) as { pid?: unknown; runId?: unknown };
    if (typeof info.pid !== 'number' || info.runId !== runId || info.pid === process.pid) return null;
    pid = info.pid;
  } catch { return null; }
  try {
    const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
    if (!environ.split('\0').includes(`SPA_WORKBENCH_RUN_ID=${runId}`)) return null;
  } catch { return null; } // not running, not ours, or no /proc (not Linux): nothing to stop
  try { process.kill(pid, 'SIGKILL'); return pid; } catch { return null; }
}

/**
 * Apply runs.resume's `set` to a run's stored config (RunConfig dotted paths, values as JSON): only RESUME_SETTABLE keys, and
 * the result must still be a valid RunConfig. Returns "key from → to" per changed key. Errors: ValidationError naming the
 * key that is not an execution setting (with the settable ones) or the config problem; nothing is changed then.
 */
export function resumeSettings(record: RunRecord, set: Record<string, unknown>, where: string): string[] {
  const refused = Object.keys(set).filter((k) => !(k in RESUME_SETTABLE));
  if (refused.length) {
    throw new WorkbenchError('ValidationError', `${where}: ${refused.join(', ')} cannot change on resume: only execution settings can ` +
      `(${Object.keys(RESUME_SETTABLE).join(', ')}); a change of the method's settings is a new run`,
    { where: `${where} set`, received: refused.join(', ') });
  }
  const next = JSON.parse(JSON.stringify(record.config ?? {})) as Record<string, unknown>;
  const get = (obj: unknown, dotted: string): unknown =>
    dotted.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
  const changes: string[] = [];
  for (const [key, value] of Object.entries(set)) {
    const before = get(next, key);
    setPath(next, key, value);
    if (JSON.stringify(before) === JSON.stringify(value)) continue;
    changes.push(`${key} ${JSON.stringify(before) ?? 'unset'} → ${JSON.stringify(value)} (${RESUME_SETTABLE[key]})`);
  }
  const parsed = RunConfigSchema.safeParse(next);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const got = get(next, issue.path.join('.'));
    throw new WorkbenchError('ValidationError', `${where}: ${issue.path.join('.')}: ${issue.message} (received ${JSON.stringify(got)})`,
      { where: `${where} set`, received: JSON.stringify(set) });
  }
  record.config = next as RunRecord['config'];
  record.params = configParams(parsed.data);   // the run table's config columns follow the config
  return changes;
}
