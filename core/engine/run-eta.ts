// The whole run's ETA: the running stage's own ETA (from its progress) plus, for each stage still
// to come, the median time that stage took in the project's earlier completed runs of the same
// preset, size, method and env, else in the bench's measurement of that preset, size and env
// (bench/results/spa-stages*.json), so a first run has an ETA from its first minute. Stages never
// measured are counted, not guessed: the ETA then says "+ N stages not estimated".
import type { RunSummary, StageState } from '../api/contract.js';
import { median, readBenchStageTimes, stageSeconds, type BenchStageTimes } from './run-estimate.js';

let benchCache: BenchStageTimes[] | null = null;
/** The bench's stage times, read once per process. */
function benchTimes(): BenchStageTimes[] { return (benchCache ??= readBenchStageTimes()); }

export interface RunEta {
  /** Seconds until the last estimated stage ends; null when nothing is estimated yet. */
  seconds: number | null;
  /** Stages to come (including the running one) with no estimate. */
  unestimated: number;
}

type RunLike = Pick<RunSummary, 'id' | 'preset' | 'size' | 'method' | 'env' | 'status' | 'stages' | 'progress'>;

/** `history`: other runs of the project (any status; only completed stages of comparable runs count). */
export function estimateRunEta(run: RunLike, history: ReadonlyArray<RunLike>, now = Date.now(), bench: ReadonlyArray<BenchStageTimes> = benchTimes()): RunEta {
  const comparable = history.filter((h) => h.id !== run.id && h.preset === run.preset && h.size === run.size && h.method === run.method && h.env === run.env);
  const measured = bench.filter((b) => b.preset === run.preset && b.size === run.size && b.env === run.env);
  const pastSeconds = (name: string): number | null => {
    const xs = comparable.map((h) => h.stages.find((s) => s.name === name)).filter((s): s is StageState => !!s)
      .map(stageSeconds).filter((x): x is number => x !== null);
    if (xs.length) return median(xs);
    const ys = measured.map((b) => b.stageSeconds[name]).filter((x): x is number => typeof x === 'number');
    return ys.length ? median(ys) : null;
  };
  let seconds = 0;
  let estimated = 0;
  let unestimated = 0;
  for (const s of run.stages) {
    if (s.status === 'completed' || s.status === 'skipped') continue;
    const p = run.progress?.stage === s.name ? run.progress : null;
    if (s.status === 'running' && p && (p.etaSeconds !== null || (p.total > 0 && p.done >= p.total))) {
      seconds += p.etaSeconds ?? 0;                            // all steps done: only its wrap-up is left
      estimated++;
      continue;
    }
    const past = pastSeconds(s.name);
    if (past === null) { unestimated++; continue; }
    // a running stage without its own ETA yet: what is left of its usual time
    const elapsed = s.status === 'running' && s.startedAt !== null ? Math.max(0, (now - s.startedAt) / 1000) : 0;
    seconds += Math.max(0, past - elapsed);
    estimated++;
  }
  return { seconds: estimated > 0 ? Math.round(seconds) : null, unestimated };
}

/**
 * "run ETA 4m10s", "run ETA 4m10s + 2 stages not measured yet", "2 stages not measured yet", or "" when nothing is
 * left. Under a second beside unmeasured stages only those are named (never "ETA 0s + 2 stages"; the UI says the same).
 */
export function formatRunEta(eta: RunEta, duration: (ms: number) => string): string {
  const rest = eta.unestimated > 0 ? `${eta.unestimated} stage${eta.unestimated === 1 ? '' : 's'} not measured yet` : '';
  if (eta.seconds === null || (rest && eta.seconds < 1)) return rest;
  return `run ETA ${duration(eta.seconds * 1000)}${rest ? ` + ${rest}` : ''}`;
}

/**
 * The running stage's own ETA from its progress events, at the rate of THIS attempt. A resumed stage reports its
 * progress counted from the stage's start (an SFT resumed after epoch 1 of 4 first reports 205/816), so the rate is
 * taken from the steps done since the attempt's first progress event, not from `done` over the time since the resume
 * (which made a 10 s/step SFT print "ETA 2m28s" for 608 steps). Fresh stages (first event at done <= 1) measure from
 * the stage's start, as before. One tracker per host process; keyed by run, stage and the attempt's start time.
 */
export class StageEtaTracker {
  private readonly first = new Map<string, { time: number; done: number }>();

  /**
   * Seconds left for `event`'s stage, or null while there is no rate yet (no step done in this attempt).
   * `startedAt`: the stage's start in this attempt (epoch ms, from its 'running' event); null when unknown.
   */
  eta(runId: string, event: { stage: string; time: number; done: number; total: number }, startedAt: number | null): number | null {
    if (!startedAt || event.total <= event.done) return null;
    const key = `${runId}\u0000${event.stage}\u0000${startedAt}`;
    let base = this.first.get(key);
    if (!base) {
      base = event.done <= 1 ? { time: startedAt, done: 0 } : { time: event.time, done: event.done };
      if (this.first.size > 256) this.first.clear();           // a long-lived host: forget old attempts
      this.first.set(key, base);
    }
    const stepsThisAttempt = event.done - base.done;
    if (stepsThisAttempt <= 0) return null;
    return ((event.time - base.time) / 1000) * (event.total - event.done) / stepsThisAttempt;
  }
}
