// The time a run would take, before it is created (the New Run form's estimate): per stage, the
// median of that stage's time in the project's earlier completed runs of the same preset, size,
// method and env (as the run ETA, core/engine/run-eta.ts), else the stage times measured by the
// bench (bench/results/spa-stages*.json, same preset, size and env), else "not estimated". The
// bootstrap is looked up as the run would: the shipped base (resources/bases) or the project's
// cached base (seconds), else a base must be trained, which the estimate says in words with the
// time the shipped base's training took, scaled by steps, when nothing closer was measured.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunConfig } from '../api/run-config.js';
import type { RunEstimate, RunSummary, StageState } from '../api/contract.js';
import type { BootstrapSource } from '../train/bootstrap-source.js';

export type { BootstrapSource } from '../train/bootstrap-source.js';

/**
 * Where the bootstrap base of `config` would come from (null without a bootstrap stage) and the envs
 * with a shipped base. Loaded on demand: the bootstrap code brings the model code (TF.js) with it,
 * which a host or CLI that only lists runs should not load at start.
 */
export async function bootstrapFacts(
  config: RunConfig, hasBootstrap: boolean, projectDir: string | null,
): Promise<{ source: BootstrapSource | null; baseEnvs: string[] }> {
  const m = await import('../train/bootstrap-source.js');
  return { source: hasBootstrap ? await m.bootstrapSource(config, projectDir) : null, baseEnvs: m.shippedBaseEnvs() };
}

type RunLike = Pick<RunSummary, 'id' | 'preset' | 'size' | 'method' | 'env' | 'status' | 'stages'>;

/** One bench measurement of a whole run's stages (bench/results/spa-stages*.json, one entry per backend). */
export interface BenchStageTimes { file: string; preset: string; size: string; env: string; backend: string; stageSeconds: Record<string, number> }

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Wall seconds of a completed stage (null when it did not complete or its times are missing). */
export function stageSeconds(s: StageState): number | null {
  return s.status === 'completed' && s.startedAt !== null && s.finishedAt !== null && s.finishedAt >= s.startedAt ? (s.finishedAt - s.startedAt) / 1000 : null;
}

/** A bootstrap that trains this long (or of unknown length) is warned about; a shorter one is only estimated. */
export const LONG_BOOTSTRAP_SECONDS = 60;

/** The bench's stage-time files under `dir` (bench/results of the checkout); files that do not parse are skipped. */
export function readBenchStageTimes(dir = defaultBenchDir()): BenchStageTimes[] {
  let names: string[];
  try { names = fs.readdirSync(dir).filter((n) => /^spa-stages.*\.json$/.test(n)).sort(); } catch { return []; }
  const out: BenchStageTimes[] = [];
  for (const name of names) {
    try {
      const j = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as {
        preset?: unknown; size?: unknown; env?: unknown; results?: Record<string, { outcome?: { status?: string }; stageSeconds?: Record<string, number> }>;
      };
      if (typeof j.preset !== 'string' || typeof j.size !== 'string' || typeof j.env !== 'string' || !j.results) continue;
      for (const [backend, r] of Object.entries(j.results)) {
        if (r.outcome?.status !== 'completed' || !r.stageSeconds) continue;
        out.push({ file: name, preset: j.preset, size: j.size, env: j.env, backend, stageSeconds: r.stageSeconds });
      }
    } catch { /* not a stage-time file */ }
  }
  return out;
}

function defaultBenchDir(): string {
  return fileURLToPath(new URL('../../bench/results/', import.meta.url));
}

export interface NewRunTarget { preset: string | null; config: RunConfig; stages: string[] }

/** The estimate itself (pure: history, bench and the bootstrap's source are given). */
export function estimateNewRun(target: NewRunTarget, history: ReadonlyArray<RunLike>, bench: ReadonlyArray<BenchStageTimes>,
  bootstrap: BootstrapSource | null, baseEnvs: string[]): RunEstimate {
  const { config, preset } = target;
  const comparable = history.filter((h) => h.preset === preset && h.size === config.size && h.method === config.method && h.env === config.env.id);
  const benches = bench.filter((b) => b.preset === preset && b.size === config.size && b.env === config.env.id);
  const stages: RunEstimate['stages'] = [];
  let warning: string | null = null;
  for (const name of target.stages) {
    const past = comparable.map((h) => h.stages.find((s) => s.name === name)).filter((s): s is StageState => !!s)
      .map(stageSeconds).filter((x): x is number => x !== null);
    if (name === 'bootstrap' && bootstrap && bootstrap.kind !== 'train') {
      const source = bootstrap.kind === 'shipped' ? `the shipped base (${path.basename(bootstrap.dir)}), copied` : 'the project\'s cached base, copied';
      stages.push({ name, seconds: 1, source });
      continue;
    }
    if (name === 'bootstrap' && bootstrap?.kind === 'train') {
      const { steps, rows } = bootstrap.work;
      const ref = bootstrap.reference;
      // training time grows with the rows trained on (steps x batch size); games' lengths differ by env, so this is rough
      const scaled = ref && ref.rows > 0 ? Math.round(ref.seconds * rows / ref.rows) : null;
      // earlier runs that trained the same base measure it best (a shipped-base run of the same settings cannot be one)
      const seconds = past.length ? median(past) : scaled;
      if (seconds === null || seconds >= LONG_BOOTSTRAP_SECONDS) {
        warning = `A bootstrap base must be trained first (${bootstrap.why}): ${steps} training step${steps === 1 ? '' : 's'}`
          + `${seconds !== null ? `, about ${fmtMinutes(seconds)}` : ''}`
          + `${!past.length && ref ? ` (rough: the shipped ${ref.env} base took ${fmtMinutes(ref.seconds)} for ${ref.steps} steps)` : ''}.`
          + `${baseEnvs.length ? ` Runs on ${baseEnvs.join(' or ')} use a shipped base instead.` : ''}`;
      }
      stages.push({ name, seconds, source: past.length ? `median of ${past.length} earlier run${past.length === 1 ? '' : 's'} here`
        : scaled !== null ? `the shipped ${ref!.env} base's training time, scaled by rows trained` : null });
      continue;
    }
    if (past.length) {
      stages.push({ name, seconds: median(past), source: `median of ${past.length} earlier run${past.length === 1 ? '' : 's'} here` });
      continue;
    }
    const measured = benches.map((b) => b.stageSeconds[name]).filter((x): x is number => typeof x === 'number');
    if (measured.length) {
      const source = `bench ${benches[0]!.file} (median of ${measured.length} backend${measured.length === 1 ? '' : 's'})`;
      stages.push({ name, seconds: median(measured), source });
      continue;
    }
    stages.push({ name, seconds: null, source: null });
  }
  const known = stages.filter((s) => s.seconds !== null);
  return {
    seconds: known.length ? Math.round(known.reduce((a, s) => a + s.seconds!, 0)) : null,
    stages: stages.map((s) => ({ ...s, seconds: s.seconds === null ? null : Math.round(s.seconds * 10) / 10 })),
    unestimated: stages.filter((s) => s.seconds === null).map((s) => s.name),
    bootstrap: bootstrap?.kind ?? null,
    warning,
    shippedBaseEnvs: baseEnvs,
  };
}

function fmtMinutes(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  const m = Math.round(seconds / 60);
  return m < 90 ? `${m} min` : `${Math.floor(m / 60)} h ${m % 60} min`;
}
