// Watching a project that another process holds (a `spa-workbench run` in a terminal, a study,
// another serve): the run host of a read-only session. It polls the run folders: run.json for
// status, stages and progress (the holder rewrites it about once a second), and, for runs that
// have subscribers, the tails of events.jsonl (status, stage, progress, log, checkpoint),
// metrics.jsonl (metric events) and rollouts/index.jsonl (episode events). Those are the same
// events the holder's own UI receives, so every view follows the run live. Nothing is written.
// Stopping goes through the same mechanism as `spa-workbench stop`: SIGINT to a CLI run on this
// machine, which stops its run gracefully.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ProjectEvent, RunSummary } from '../api/contract.js';
import { RunEventSchema, type EpisodeSummary, type MetricPoint, type RunEvent } from '../api/records.js';
import { conflict, WorkbenchError } from '../api/errors.js';
import { holderCanStop, type ProjectStore } from '../storage/project-store.js';
import { liveLockHolder, type LockInfo } from '../storage/lock.js';
import { EVENTS_FILE, METRICS_FILE, ROLLOUT_INDEX, type RunRecord } from '../storage/run-files.js';
import { estimateRunEta, StageEtaTracker } from '../engine/run-eta.js';

export interface RunWatcherOptions {
  store: ProjectStore;
  onRunEvent: (runId: string, event: RunEvent) => void;
  onProjectEvent: (event: ProjectEvent) => void;
  /** Runs with live subscribers (their files are tailed). */
  watched: () => string[];
  intervalMs?: number;
}

interface Tail { file: string; offset: number }

const ACTIVE = new Set(['queued', 'running', 'stopping']);

/** New complete lines of a growing JSONL file since `tail.offset` (a torn last line waits for the next call). */
export function readNewLines(tail: Tail): string[] {
  let fd: number;
  try { fd = fs.openSync(tail.file, 'r'); } catch { return []; }
  try {
    const size = fs.fstatSync(fd).size;
    if (size < tail.offset) tail.offset = 0;                    // replaced: read it again
    if (size === tail.offset) return [];
    const buf = Buffer.alloc(Math.min(size - tail.offset, 8 * 1024 * 1024));
    const n = fs.readSync(fd, buf, 0, buf.length, tail.offset);
    const end = buf.subarray(0, n).lastIndexOf(0x0a);
    if (end < 0) return [];
    tail.offset += end + 1;
    return buf.subarray(0, end).toString('utf8').split('\n').filter((l) => l.trim());
  } finally { fs.closeSync(fd); }
}

function fileSize(file: string): number { try { return fs.statSync(file).size; } catch { return 0; } }

export class RunWatcher {
  private readonly tails = new Map<string, { events: Tail; metrics: Tail; episodes: Tail }>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private holderGone = false;
  private readonly stageEta = new StageEtaTracker();
  private goneNotice: string | null = null;

  constructor(private readonly o: RunWatcherOptions) {
    this.timer = setInterval(() => this.tick(), o.intervalMs ?? 500);
    this.timer.unref?.();
  }

  /** One poll (also called by tests). */
  tick(): void {
    const { store } = this.o;
    const before = new Map(store.listRuns().map((r) => [r.id, r.status]));
    const changed = store.refresh();
    if (changed.length) {
      for (const id of changed) {
        const r = store.getRun(id);
        if (r && before.get(id) !== r.status) this.o.onProjectEvent({ type: 'run-status', time: Date.now(), runId: id, status: r.status, reason: r.reason });
      }
      this.o.onProjectEvent({ type: 'runs-changed', time: Date.now(), runIds: changed });
    }
    const watched = new Set(this.o.watched());
    for (const id of [...this.tails.keys()]) if (!watched.has(id)) this.tails.delete(id);
    for (const id of watched) this.follow(id);
    this.checkHolder();
  }

  /**
   * Follow whoever holds the project now: when the watched process ends, say so; when another one
   * takes the lock (the next `spa-workbench run`, a study), watch that one (Stop signals it).
   * Returns the live holder, or null when none holds the project.
   */
  private checkHolder(): LockInfo | null {
    const { store } = this.o;
    const live = liveLockHolder(store.dir);
    const known = store.lockHolder;
    if (live && known && (live.pid !== known.pid || live.host !== known.host || live.startedAt !== known.startedAt)) {
      store.followHolder(live);
      this.clearGoneNotice();
      this.holderGone = false;
      this.o.onProjectEvent({ type: 'project', time: Date.now(), project: store.info() });
    } else if (live && this.holderGone) {
      this.clearGoneNotice();
      this.holderGone = false;
      this.o.onProjectEvent({ type: 'project', time: Date.now(), project: store.info() });
    } else if (!live && !this.holderGone) {
      this.holderGone = true;
      this.goneNotice = `process ${known?.pid} no longer holds the project; open it again to work on it (not only watch)`;
      store.warnings.push(this.goneNotice);
      this.o.onProjectEvent({ type: 'project', time: Date.now(), project: store.info() });
    }
    return live;
  }

  private clearGoneNotice(): void {
    if (!this.goneNotice) return;
    const at = this.o.store.warnings.indexOf(this.goneNotice);
    if (at >= 0) this.o.store.warnings.splice(at, 1);
    this.goneNotice = null;
  }

  private follow(runId: string): void {
    const dir = this.o.store.runDir(runId);
    let t = this.tails.get(runId);
    if (!t) {
      // Only what happens from now on: the past comes through runs.events, metrics.query, rollouts.query.
      const at = (rel: string): Tail => { const file = path.join(dir, rel); return { file, offset: fileSize(file) }; };
      this.tails.set(runId, (t = { events: at(EVENTS_FILE), metrics: at(METRICS_FILE), episodes: at(ROLLOUT_INDEX) }));
      return;
    }
    const summary = this.o.store.getRun(runId);
    for (const line of readNewLines(t.events)) {
      const parsed = RunEventSchema.safeParse(safeJson(line));
      if (!parsed.success) continue;
      let event = parsed.data;
      if (event.type === 'progress' && summary) event = this.withEta(event, summary);
      this.o.onRunEvent(runId, event);
    }
    for (const line of readNewLines(t.metrics)) {
      const point = safeJson(line) as MetricPoint | null;
      if (point && typeof point.step === 'number' && point.values) this.o.onRunEvent(runId, { type: 'metric', runId, time: point.time ?? Date.now(), point });
    }
    for (const line of readNewLines(t.episodes)) {
      const s = safeJson(line) as EpisodeSummary | null;
      if (s && typeof s.id === 'string') this.o.onRunEvent(runId, { type: 'episode', runId, time: Date.now(), summary: s });
    }
  }

  /** The engine stores progress without ETAs (its host adds them): add the stage's and the whole run's. */
  private withEta(event: Extract<RunEvent, { type: 'progress' }>, summary: RunSummary): RunEvent {
    const stage = summary.stages.find((s) => s.name === event.stage);
    let eta = event.etaSeconds;
    if (eta === null) eta = this.stageEta.eta(summary.id, event, stage?.startedAt ?? null);
    const now = { ...summary, progress: { stage: event.stage, done: event.done, total: event.total, etaSeconds: eta ?? null } };
    const whole = estimateRunEta(now, this.o.store.listRuns(), event.time);
    return { ...event, etaSeconds: eta ?? null, runEtaSeconds: whole.seconds, unestimatedStages: whole.unestimated };
  }

  // ── the RunHost surface the dispatcher uses ──

  recoverInterrupted(): string[] { return []; }       // the holder owns the runs' states
  activeIds(): string[] { return []; }                // nothing runs in this process
  isActive(): boolean { return false; }
  liveRecord(): RunRecord | undefined { return undefined; }
  async settleFinishing(): Promise<void> { /* nothing of ours */ }
  async waitForExit(): Promise<void> { /* nothing of ours */ }
  async dispose(): Promise<void> { if (this.timer) clearInterval(this.timer); this.timer = null; }

  async start(runId: string): Promise<RunSummary> {
    throw this.readOnly(`runs.start ${runId}`);
  }

  /** Stop a run of the holder, as `spa-workbench stop` does: SIGINT to a CLI run on this machine (it stops after the current step). */
  async stop(runId: string): Promise<RunSummary> {
    const { store } = this.o;
    store.refresh();
    const live = this.checkHolder();                 // the holder now, not the one seen when the project was opened
    const holder = store.lockHolder!;
    const r = store.getRun(runId);
    if (!r) throw new WorkbenchError('NotFound', `run ${JSON.stringify(runId)} not found`, { where: 'runs.stop runId' });
    if (!ACTIVE.has(r.status)) throw conflict(`run ${runId} is ${r.status}: nothing to stop`, 'runs.stop', { received: r.status });
    if (!live) {
      const message = `run ${runId} is marked ${r.status} but no process holds the project any more (process ${holder.pid} ended): ` +
        'nothing to stop; open the project again to take it over (the run is then marked interrupted and can be resumed)';
      throw conflict(message, 'runs.stop', { received: r.status });
    }
    if (!holderCanStop(holder)) {
      const where = `process ${holder.pid} on ${holder.host} (${holder.purpose ?? 'workbench'})`;
      const message = `run ${runId} runs in ${where}; stop it there (its window, or Ctrl-C in its terminal)`;
      throw conflict(message, 'runs.stop', { received: holder.purpose ?? 'workbench' });
    }
    process.kill(holder.pid, 'SIGINT');
    const message = `asked process ${holder.pid} (${holder.purpose}) to stop the run after its current step`;
    this.o.onRunEvent(runId, { type: 'log', runId, time: Date.now(), level: 'info', message });
    return r;
  }

  private readOnly(where: string): WorkbenchError {
    const h = this.o.store.lockHolder!;
    const who = `process ${h.pid} on ${h.host} (${h.purpose ?? 'workbench'})`;
    return new WorkbenchError('ReadOnly', `${where}: the project is open read-only, to watch: ${who} holds it`, { where });
  }
}

function safeJson(line: string): unknown { try { return JSON.parse(line); } catch { return null; } }
