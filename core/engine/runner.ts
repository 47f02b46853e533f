// Executes a run's ordered stages inside the engine process. Each stage that returns (not
// stopped) gets a completion marker stages/<name>/done.json; on resume, completed stages are
// skipped and their outputs handed to later stages. Events go to events.jsonl (status, stage,
// progress, log, checkpoint, provenance: metrics and episodes have their own files) and to the host.
// The config is resolved once here (RunConfigSchema: every stage section with its defaults, also for
// a run.json written before the sections were typed), and the stages read that; once a stage has
// chosen the compute backend, a `provenance` event names it, its device and the code version.
import * as fs from 'node:fs';
import type { RunEvent, RunProvenance } from '../api/records.js';
import { RunConfigSchema, type RunConfig } from '../api/run-config.js';
import { computeInUse } from '../train/compute-record.js';
import { codeVersion } from './code-version.js';
import { EVENTS_FILE, readStageDone as readDoneMarker, writeStageDone, type StageDone } from '../storage/run-files.js';
import type { RunOutcome } from './protocol.js';
import type { StageDefinition, StageOutput } from '../api/stage.js';
import { closeStageContext, createStageContext, RunWriters } from './stage-context.js';

const STORED_EVENT_TYPES = new Set<RunEvent['type']>(['status', 'stage', 'progress', 'log', 'checkpoint', 'provenance']);

export interface ExecuteOptions {
  runId: string;
  runDir: string;
  config: RunConfig;
  stages: string[];
  attempt: number;
  signal: AbortSignal;
  /** Live events to the host (after they are stored). */
  send: (event: RunEvent) => void;
  loadStage: (name: string) => Promise<StageDefinition>;
}

/** A stage's completion marker for display (never throws: a marker that names a missing checkpoint still says "done"). */
export function readStageDone(runDir: string, stage: string): StageDone | null {
  try { return readDoneMarker(runDir, stage, undefined, false); } catch { return null; }
}

/**
 * Seconds a stage ran in earlier attempts of the run, from events.jsonl: each of its `running`
 * events to its terminal event (stopped, failed), or, for an attempt that died without one (the
 * host or the machine went away), to the last event its engine wrote (a later host's "interrupted"
 * status and the next attempt's start do not count).
 */
export function earlierStageSeconds(runDir: string, stage: string): number {
  let text: string;
  try { text = fs.readFileSync(`${runDir}/${EVENTS_FILE}`, 'utf8'); } catch { return 0; }
  let ms = 0, open: number | null = null, last = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let e: { type?: string; time?: unknown; stage?: string; status?: string };
    try { e = JSON.parse(line) as typeof e; } catch { continue; }
    if (typeof e.time !== 'number') continue;
    if (e.type === 'status') {
      // a new attempt, or the run's end (possibly written later by the host that found the run
      // interrupted): the stage's open span ends at the last event before it
      if (open !== null) { ms += Math.max(0, last - open); open = null; }
      if (e.status !== 'running') continue;
    }
    if (e.type === 'stage' && e.stage === stage) {
      if (e.status === 'running') open = e.time;
      else if (open !== null) { ms += Math.max(0, e.time - open); open = null; }
    }
    last = e.time;
  }
  if (open !== null) ms += Math.max(0, last - open);
  return Math.round(ms / 100) / 10;
}

/** The run's config resolved against the current schema (defaults filled in); an invalid one is an error naming each key. */
export function resolvedRunConfig(config: unknown): RunConfig {
  const parsed = RunConfigSchema.safeParse(config);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(config)'}: ${i.message}`).join('; ');
  throw new Error(`the run's config does not fit the run spec (core/api/run-config.ts): ${issues}; fix these keys in run.json's config`);
}

export async function executeRun(o: ExecuteOptions): Promise<RunOutcome> {
  fs.mkdirSync(o.runDir, { recursive: true });
  const writers = new RunWriters(o.runDir);
  let sentProvenance = '';
  const send = (event: RunEvent) => {
    if (STORED_EVENT_TYPES.has(event.type)) writers.get(EVENTS_FILE).append([event]);
    o.send(event);
  };
  const t = () => Date.now();
  // after any event, once a stage has chosen the compute backend (or changed it), tell the host what runs the run
  const emit = (event: RunEvent) => {
    send(event);
    const compute = computeInUse();
    if (!compute) return;
    const provenance: RunProvenance = { backend: compute.backend, device: compute.device, codeVersion: codeVersion() };
    const key = JSON.stringify(provenance);
    if (key === sentProvenance) return;
    sentProvenance = key;
    send({ type: 'provenance', runId: o.runId, time: t(), provenance });
  };
  emit({ type: 'status', runId: o.runId, time: t(), status: 'running' });
  const previous: Record<string, StageOutput> = {};
  let current: string | null = null;
  try {
    const config = resolvedRunConfig(o.config);
    for (const name of o.stages) {
      const done = readDoneMarker(o.runDir, name, (message) => emit({ type: 'log', runId: o.runId, time: t(), level: 'warn', stage: name, message }));
      if (done) {
        previous[name] = done.output;
        emit({ type: 'log', runId: o.runId, time: t(), level: 'info', stage: name, message: `stage ${name} already completed ` +
          `(attempt ${done.attempt}); skipped` });
        continue;
      }
      if (o.signal.aborted) break;
      current = name;
      const def = await o.loadStage(name);
      const earlier = earlierStageSeconds(o.runDir, name);      // before this attempt's events are written
      emit({ type: 'stage', runId: o.runId, time: t(), stage: name, status: 'running' });
      const ctx = createStageContext({
        runId: o.runId,
        runDir: o.runDir,
        config,
        stage: name,
        previous: { ...previous },
        signal: o.signal,
        emit,
        writers,
      });
      let output: StageOutput | void;
      try { output = await def.run(ctx); } finally { closeStageContext(ctx); }   // a held progress event goes out before the stage's end
      if (o.signal.aborted) {
        emit({ type: 'stage', runId: o.runId, time: t(), stage: name, status: 'stopped', reason: 'stopped by the user' });
        current = null;
        break;
      }
      const result: StageOutput = { ...(output ?? {}) };
      if (earlier > 0 && typeof result.wallSeconds === 'number') {
        // a stage resumed after a stop or a lost host: its wall time is all the time it ran
        result.wallSecondsThisAttempt = result.wallSeconds;
        result.wallSeconds = Math.round((result.wallSeconds + earlier) * 10) / 10;
      }
      const marker: StageDone = { stage: name, completedAt: t(), attempt: o.attempt, output: result };
      writers.syncAll();   // the stage's metrics, episodes and events are on disk before its done marker says so
      writeStageDone(o.runDir, marker);
      previous[name] = marker.output;
      emit({ type: 'stage', runId: o.runId, time: t(), stage: name, status: 'completed' });
      current = null;
    }
    if (o.signal.aborted) {
      emit({ type: 'status', runId: o.runId, time: t(), status: 'stopped', reason: 'stopped by the user' });
      return { status: 'stopped', reason: 'stopped by the user' };
    }
    emit({ type: 'status', runId: o.runId, time: t(), status: 'completed' });
    return { status: 'completed' };
  } catch (err) {
    const e = err as Error;
    const reason = `${current ? `stage ${current}: ` : ''}${e?.message ?? String(err)}`;
    if (e?.stack)
      emit({
        type: 'log',
        runId: o.runId,
        time: t(),
        level: 'error',
        stage: current ?? undefined,
        message: e.stack.split('\n').slice(0, 12).join('\n'),
      });
    if (current) emit({ type: 'stage', runId: o.runId, time: t(), stage: current, status: 'failed', reason: e?.message ?? String(err) });
    emit({ type: 'status', runId: o.runId, time: t(), status: 'failed', reason });
    return { status: 'failed', reason };
  } finally {
    writers.closeAll();
  }
}
