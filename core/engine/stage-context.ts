// StageContext as the engine process gives it to a stage: metrics → metrics.jsonl, episodes →
// rollouts/<file>.jsonl + rollouts/index.jsonl (byte offsets), events → events.jsonl and the host,
// atomic JSON writes inside the run folder, stage state for resume.
import type { EpisodeSummary, MetricPoint, RunEvent } from '../api/records.js';
import type { RunConfig } from '../api/run-config.js';
import { readJsonIfExists, writeJsonAtomicSync } from '../storage/atomic.js';
import { appendJsonl, JsonlWriter, readJsonl } from '../storage/jsonl.js';
import { insideRun, METRICS_FILE, projectCacheDir, readStageState, ROLLOUT_INDEX, writeStageState } from '../storage/run-files.js';
import type { StageContext, StageOutput } from '../api/stage.js';

const PROGRESS_INTERVAL_MS = 250;

/** Open JSONL writers of one engine process, shared by its stages. */
export class RunWriters {
  private readonly writers = new Map<string, JsonlWriter>();
  constructor(readonly runDir: string) {}
  get(relPath: string): JsonlWriter {
    let w = this.writers.get(relPath);
    if (!w) this.writers.set(relPath, (w = new JsonlWriter(insideRun(this.runDir, relPath, 'jsonl'))));
    return w;
  }
  /** fsync every stream appended to since the last call (at stage boundaries: a completed stage's rows survive a power loss). */
  syncAll(): void { for (const w of this.writers.values()) w.sync(); }
  closeAll(): void { for (const w of this.writers.values()) w.close(); this.writers.clear(); }
}

export interface ContextOptions {
  runId: string;
  runDir: string;
  config: RunConfig;
  stage: string;
  previous: Record<string, StageOutput>;
  signal: AbortSignal;
  emit: (event: RunEvent) => void;
  writers: RunWriters;
  now?: () => number;
}

function rolloutFile(file: string): string {
  const base = file.endsWith('.jsonl') ? file.slice(0, -6) : file;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(base) || base === 'index') {
    throw new Error(`ctx.episode: file ${JSON.stringify(file)} must be a plain name like "rl-000012" (letters, digits, ".", "_", "-"; not "index")`);
  }
  return `rollouts/${base}.jsonl`;
}

/** Ends a context made by createStageContext: its held progress event goes out, its timer is cleared (the runner, at the stage's end). */
export function closeStageContext(ctx: StageContext): void { closers.get(ctx)?.(); }
const closers = new WeakMap<StageContext, () => void>();

/**
 * The context of one stage in the engine process. Progress events are throttled to one per PROGRESS_INTERVAL_MS; one that
 * falls inside the interval is held, not dropped: it goes out when the interval ends, or before the stage's next event
 * of another kind (a metric, log, episode or checkpoint, so the order of events stays the order of the calls), or at the
 * stage's end (closeStageContext). Dropping it left a stale state for as long as the stage next stayed silent: an RL
 * step's end ("done 1/16"), 250 ms after its last update's message, was dropped and the run page showed "0/16 · update
 * 4/4" through the whole next step.
 */
export function createStageContext(o: ContextOptions): StageContext {
  const now = o.now ?? Date.now;
  let lastProgress = 0;
  let droppedNonFinite = 0;
  let held: RunEvent | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = (): void => {
    if (timer) { clearTimeout(timer); timer = null; }
    if (!held) return;
    const e = held;
    held = null;
    lastProgress = now();
    o.emit(e);
  };
  // every other event first lets a held progress event out
  const emit = (e: RunEvent): void => { flush(); o.emit(e); };
  const ctx: StageContext = {
    runId: o.runId,
    runDir: o.runDir,
    config: o.config,
    stage: o.stage,
    previous: o.previous,
    signal: o.signal,
    progress(done, total, message) {
      const t = now();
      const event: RunEvent = {
        type: 'progress', runId: o.runId, time: t, stage: o.stage, done, total, etaSeconds: null, ...(message !== undefined ? { message } : {}),
      };
      if (t - lastProgress < PROGRESS_INTERVAL_MS && done < total) {   // throttled: held until the interval ends (the last one always goes)
        held = event;
        timer ??= setTimeout(flush, Math.max(1, PROGRESS_INTERVAL_MS - (t - lastProgress)));
        timer.unref?.();
        return;
      }
      held = null;
      emit(event);
      lastProgress = t;
    },
    metric(step, values, extra) {
      const clean: Record<string, number> = {};
      for (const [k, v] of Object.entries(values)) {
        if (typeof v === 'number' && Number.isFinite(v)) clean[k] = v;
        else if (droppedNonFinite++ < 5)
          emit({
            type: 'log',
            runId: o.runId,
            time: now(),
            level: 'warn',
            stage: o.stage,
            message: `metric ${k} at step ${step} is ${String(v)}; not recorded`,
          });
      }
      const point: MetricPoint = { stage: o.stage, step, time: now(), ...(extra?.episodes !== undefined ? { episodes: extra.episodes } : {}), values: clean };
      o.writers.get(METRICS_FILE).append([point]);
      emit({ type: 'metric', runId: o.runId, time: point.time, point });
    },
    episode(file, record) {
      const rel = rolloutFile(file);
      const [span] = o.writers.get(rel).append([record]);
      const summary: EpisodeSummary = {
        id: record.id, stage: record.stage, step: record.step, seed: record.seed, group: record.group, sample: record.sample,
        success: record.success, totalReward: record.totalReward, numTurns: record.numTurns, formatErrors: record.formatErrors,
        invalidActions: record.invalidActions, file: rel, offset: span!.offset, length: span!.length,
      };
      o.writers.get(ROLLOUT_INDEX).append([summary]);
      emit({ type: 'episode', runId: o.runId, time: now(), summary });
    },
    log(level, message) {
      emit({ type: 'log', runId: o.runId, time: now(), level, message, stage: o.stage });
    },
    checkpoint(step, checkpointPath) {
      emit({ type: 'checkpoint', runId: o.runId, time: now(), stage: o.stage, step, path: checkpointPath });
    },
    writeJson(relPath, value) {
      writeJsonAtomicSync(insideRun(o.runDir, relPath, 'ctx.writeJson'), value);
    },
    appendJsonl(relPath, rows, opts) {
      if (relPath === METRICS_FILE || relPath === ROLLOUT_INDEX || relPath.startsWith('rollouts/')) o.writers.get(relPath).append(rows);
      else appendJsonl(insideRun(o.runDir, relPath, 'ctx.appendJsonl'), rows, opts);
    },
    readJson<T = unknown>(relPath: string): T | null {
      return readJsonIfExists<T>(insideRun(o.runDir, relPath, 'ctx.readJson'));
    },
    readJsonl<T = unknown>(relPath: string): T[] {
      const { rows, skipped } = readJsonl<T>(insideRun(o.runDir, relPath, 'ctx.readJsonl'));
      if (skipped.length > 0) {
        const first = skipped[0]!;
        const what = skipped.length === 1 ? `line ${first.line}` : `${skipped.length} lines (first: line ${first.line})`;
        const message = `${relPath}: skipped ${what} that did not parse${first.torn ? ' (a torn last line)' : ''}: ${first.reason}`;
        emit({ type: 'log', runId: o.runId, time: now(), level: 'warn', stage: o.stage, message });
      }
      return rows;
    },
    cacheDir(kind, key) {
      return projectCacheDir(o.runDir, kind, key);
    },
    saveState(state) {
      writeStageState(o.runDir, o.stage, state);     // checkpoint folders stored relative to the project
    },
    loadState() {
      return readStageState(o.runDir, o.stage, (message) => emit({ type: 'log', runId: o.runId, time: now(), level: 'warn', message, stage: o.stage }));
    },
  };
  closers.set(ctx, flush);
  return ctx;
}
