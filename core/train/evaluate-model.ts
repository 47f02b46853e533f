// Evaluation play: held-out puzzles from the evaluation seed range, n samples per puzzle at the
// eval temperature, summarised (summary.ts). Used by the eval stage (core/eval/evaluate.ts) and by
// the RL stage's Pass@k tracking, so it lives here, next to playEpisodes, below both.
import type { StageContext } from '../api/stage.js';
import { groupSpecs, playEpisodes, type RolloutResult } from './rollout.js';
import { rolloutDeps } from './episodes.js';
import type { ModelRuntime } from './runtime.js';
import { summarizeEpisodes, type EvalSummary } from './summary.js';
import { createRng } from '../util/rng.js';
import { openEpisodeJournal, type BatchJournal } from './episode-journal.js';

export interface EvaluateOptions {
  puzzles: number; samples: number; k: number[]; temperature: number; stage: string; step: number; file?: string;
  /** Episodes finished so far of all (at most about once a second, and at the last one), for the stage's progress. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Keep finished batches in the episode journal `key` (core/train/episode-journal.ts), so a stop during this evaluation
   * resumes from its last finished batch; `model` is the checkpoint the runtime was loaded from (its manifest ties the
   * journal to those weights). The caller clears it (the returned `journal`) once what the evaluation was for is saved.
   */
  journal?: { key: string; model: string };
}

/** Play the evaluation puzzles and summarise them (episodes go to rollouts/<file>.jsonl when `file` is set). */
export async function evaluateModel(
  ctx: StageContext,
  runtime: ModelRuntime,
  opts: EvaluateOptions,
): Promise<{ summary: EvalSummary; results: RolloutResult[]; journal: BatchJournal | null }> {
  const limits = { ...ctx.config.stages.rollout, temperature: opts.temperature };
  const specs = groupSpecs(`${opts.stage}-eval-${String(opts.step).padStart(6, '0')}`, ctx.config.seeds.evalStart, 0, opts.puzzles, opts.samples);
  const episodeStage = opts.stage === 'eval' ? 'eval' : `${opts.stage}-eval`;
  const deps = rolloutDeps(
    ctx.config,
    runtime,
    limits,
    { runId: ctx.runId, stage: episodeStage, step: opts.step, runDir: ctx.runDir },
    { signal: ctx.signal },
  );
  const seed = ctx.config.seeds.base * 13 + 101 + opts.step;
  const journal = opts.journal
    ? openEpisodeJournal(ctx, opts.journal.key, (n) => `${opts.stage}: ${n} finished batch(es) of this evaluation restored from its episode journal`,
      opts.journal.model, specs, seed, limits)
    : null;
  let finished = 0;
  let reported = Date.now();
  const counted = opts.onProgress ? {
    ...deps,
    finish: (...args: Parameters<typeof deps.finish>) => {
      const record = deps.finish(...args);
      finished++;
      if (finished === specs.length || Date.now() - reported >= 1000) { reported = Date.now(); opts.onProgress!(finished, specs.length); }
      return record;
    },
  } : deps;
  const results = await playEpisodes(specs, limits, seed, journal ? { ...counted, journal } : counted);
  if (opts.file && !ctx.signal.aborted) for (const r of results) ctx.episode(opts.file, r.record);
  const summary = summarizeEpisodes(
    results.map((r) => r.record),
    opts.k,
    ctx.config.seeds.base,
  );
  return { summary, results, journal };
}

/** A paired difference of Pass@1 between two evaluations of the same puzzles (end − start), in [-1, 1]. */
export interface PairedGain {
  /** mean over the puzzles both played of (successes / samples at the end − the same at the start) */
  mean: number;
  /** 95% percentile bootstrap over those puzzles (1,000 resamples, seeded) */
  low: number;
  high: number;
  /** puzzles in both evaluations */
  puzzles: number;
}

/**
 * The paired gain of Pass@1 from `start` to `end` (EvalSummary.perPuzzle of two evaluations of the same held-out puzzles, e.g.
 * the RL stage's tracked step 0 and the final eval): per puzzle the difference of success rates, averaged, with a percentile
 * bootstrap over puzzles. Null when they share no puzzle.
 */
export function pairedPassAt1Gain(
  start: ReadonlyArray<{ seed: number; n: number; c: number }>, end: ReadonlyArray<{ seed: number; n: number; c: number }>, seed = 0,
): PairedGain | null {
  const before = new Map(start.filter((p) => p.n > 0).map((p) => [p.seed, p.c / p.n]));
  const diffs = end.filter((p) => p.n > 0 && before.has(p.seed)).map((p) => p.c / p.n - before.get(p.seed)!);
  if (diffs.length === 0) return null;
  const mean = diffs.reduce((a, b) => a + b, 0) / diffs.length;
  const next = createRng(seed);
  const means: number[] = [];
  for (let r = 0; r < 1000; r++) {
    let sum = 0;
    for (let i = 0; i < diffs.length; i++) sum += diffs[Math.floor(next() * diffs.length)]!;
    means.push(sum / diffs.length);
  }
  means.sort((a, b) => a - b);
  return { mean, low: means[25]!, high: means[974]!, puzzles: diffs.length };
}
