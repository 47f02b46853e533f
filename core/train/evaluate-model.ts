// Evaluation play: held-out puzzles from the evaluation seed range, n samples per puzzle at the
// eval temperature, summarised (summary.ts). Used by the eval stage (core/eval/evaluate.ts) and by
// the RL stage's Pass@k tracking, so it lives here, next to playEpisodes, below both.
import type { StageContext } from '../api/stage.js';
import { groupSpecs, playEpisodes, type RolloutResult } from './rollout.js';
import { rolloutDeps } from './episodes.js';
import type { ModelRuntime } from './runtime.js';
import { summarizeEpisodes, type EvalSummary } from './summary.js';

export interface EvaluateOptions {
  puzzles: number; samples: number; k: number[]; temperature: number; stage: string; step: number; file?: string;
  /** Episodes finished so far of all (at most about once a second, and at the last one), for the stage's progress. */
  onProgress?: (done: number, total: number) => void;
}

/** Play the evaluation puzzles and summarise them (episodes go to rollouts/<file>.jsonl when `file` is set). */
export async function evaluateModel(
  ctx: StageContext,
  runtime: ModelRuntime,
  opts: EvaluateOptions,
): Promise<{ summary: EvalSummary; results: RolloutResult[] }> {
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
  const results = await playEpisodes(specs, limits, ctx.config.seeds.base * 13 + 101 + opts.step, counted);
  if (opts.file && !ctx.signal.aborted) for (const r of results) ctx.episode(opts.file, r.record);
  const summary = summarizeEpisodes(
    results.map((r) => r.record),
    opts.k,
    ctx.config.seeds.base,
  );
  return { summary, results };
}
