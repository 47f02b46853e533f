// Evaluation: held-out puzzles from the evaluation seed range, n samples per puzzle at the eval
// temperature (n ≥ k). Success, Pass@1/Pass@k with intervals, average actions, format-error and
// invalid-action rates, world-model accuracy of observation and prediction, collapse signals
// (core/train/summary.ts), and state perplexity per template (the true initial state rendered by
// each template, in the context of that template's first prompt). Results: eval/<name>.json.
import type { StageDefinition } from '../api/stage.js';
import type { RunConfig } from '../api/run-config.js';
import { sessionFactory } from '../train/episodes.js';
import { evaluateModel, pairedPassAt1Gain, type PairedGain } from '../train/evaluate-model.js';
import { builtinTemplate } from '../prompts/resolve-template.js';
import { GENERATION_PREFIX, openTag } from '../prompts/reply-format.js';
import { elapsedSeconds, loadStartingModel } from '../train/stage-utils.js';
import type { ModelRuntime } from '../train/runtime.js';
import { summaryMetrics } from '../train/summary.js';
import { maskedNll } from '../train/perplexity.js';
import { versusBaseLines, worldModelVersusBase } from '../train/world-model-check.js';
import { protocolOf, referenceRows, type ReferenceRow } from './reference.js';

/**
 * Chance and oracle rows on the eval stage's own puzzles (seeds evalStart…) and protocol (the run's rollout limits), so the
 * final Pass@k is read beside them as in every study table. Monte Carlo where chance is not exact (1,000 rollouts a puzzle).
 * An env without a solver gets no rows (logged), never a guess.
 */
export function evalReferenceRows(config: RunConfig, puzzles: number, ks: number[]): { rows: ReferenceRow[]; error: string | null } {
  const limits = config.stages.rollout;
  try {
    const rows = referenceRows({
      envId: config.env.id, envOptions: config.env.options ?? {}, protocol: protocolOf(config.env.id, limits),
      seeds: Array.from({ length: puzzles }, (_, i) => config.seeds.evalStart + i), ks, monteCarlo: 1000,
    });
    return { rows, error: null };
  } catch (err) {
    return { rows: [], error: err instanceof Error ? err.message : String(err) };
  }
}

/** Perplexity of the true initial state text, per template, on the first evaluation puzzles. */
export async function statePerplexityByTemplate(
  config: RunConfig, runtime: ModelRuntime, templates: string[], rows: number,
): Promise<Record<string, { perplexity: number; tokens: number }>> {
  const out: Record<string, { perplexity: number; tokens: number }> = {};
  const limits = config.stages.rollout;
  for (const name of templates) {
    let template;
    try { template = builtinTemplate(name, 'world-model'); } catch { continue; }
    const batch: Array<{ ids: number[]; positions: number[] }> = [];
    for (let i = 0; i < rows; i++) {
      const session = sessionFactory(config, template, limits)({ seed: config.seeds.evalStart + i, group: i, sample: 0, id: `ppl-${i}` });
      const prefix = `${GENERATION_PREFIX}${openTag('observation')}\n`;   // the reply's opening, up to the state
      const promptIds = runtime.encodePrompt(session.messages(), prefix, runtime.maxContext - 256);
      const stateIds = runtime.tokenizer.encode(session.stateText());
      const ids = [...promptIds, ...stateIds];
      if (ids.length > runtime.maxContext) continue;
      batch.push({ ids, positions: Array.from({ length: stateIds.length }, (_, k) => promptIds.length + k) });   // the state tokens
    }
    const { nll, tokens } = await maskedNll(runtime, batch, 8);
    out[name] = { perplexity: tokens === 0 ? Number.NaN : Math.exp(nll / tokens), tokens };
  }
  return out;
}

export const evalStage: StageDefinition = {
  name: 'eval',
  title: 'Evaluation: Pass@k, world-model accuracy, perplexity, collapse',
  async run(ctx) {
    const started = Date.now();
    const section = ctx.config.stages.eval;
    const maxK = Math.max(...section.k);
    if (section.samples < maxK) throw new Error(`stages.eval.samples (${section.samples}) must be ≥ the largest k (${maxK}) for the unbiased ` +
      `Pass@k estimator; raise samples or lower k`);
    const { runtime, from } = await loadStartingModel(ctx, { valueHead: false });
    ctx.log('info', `evaluating ${from} on ${section.puzzles} held-out puzzles × ${section.samples} samples (seeds ${ctx.config.seeds.evalStart}…)`);
    const { summary, journal } = await evaluateModel(ctx, runtime, {
      puzzles: section.puzzles,
      samples: section.samples,
      k: section.k,
      temperature: section.temperature,
      stage: 'eval',
      step: 0,
      file: 'eval',
      onProgress: (done, total) => ctx.progress(done, total, `eval: ${done}/${total} games on held-out puzzles`),
      journal: { key: 'eval', model: from },   // a stop resumes the games from the last finished batch
    });
    if (ctx.signal.aborted) { runtime.dispose(); return {}; }
    const perplexity = section.perplexityRows > 0
      ? await statePerplexityByTemplate(ctx.config, runtime, section.templates, section.perplexityRows)
      : {};
    const metrics = summaryMetrics(summary);
    // the world model beside the base's, on the same puzzles (stages.eval.worldModelTurns)
    if (section.worldModelTurns > 0) ctx.log('info', `eval: the world model against the base on ${section.worldModelTurns} turns…`);
    const versusBase = await worldModelVersusBase(ctx, runtime, section.worldModelTurns);
    if (versusBase) {
      for (const line of versusBaseLines(versusBase)) ctx.log('info', line);
      Object.assign(metrics, {
        'eval/wmCheck/observationExact': versusBase.model.observationExact, 'eval/wmCheck/predictionExact': versusBase.model.predictionExact,
        'eval/wmCheck/baseObservationExact': versusBase.base.observationExact, 'eval/wmCheck/basePredictionExact': versusBase.base.predictionExact,
        ...(versusBase.model.conditioned && versusBase.base.conditioned ? {
          'eval/wmCheck/conditionedExact': versusBase.model.conditioned.exactChanged,
          'eval/wmCheck/baseConditionedExact': versusBase.base.conditioned.exactChanged,
          'eval/wmCheck/conditionedChance': versusBase.base.conditioned.counterfactualExactChanged,
          ...(versusBase.base.conditioned.oracleExactChanged !== undefined
            ? { 'eval/wmCheck/conditionedOracle': versusBase.base.conditioned.oracleExactChanged } : {}),
        } : {}) });
    }
    for (const [name, p] of Object.entries(perplexity)) if (Number.isFinite(p.perplexity)) metrics[`eval/statePerplexity/${name}`] = p.perplexity;
    const reference = evalReferenceRows(ctx.config, section.puzzles, section.k);
    if (reference.error) ctx.log('warn', `no chance/oracle rows for ${ctx.config.env.id}: ${reference.error}`);
    for (const row of reference.rows) {
      for (const [k, v] of Object.entries(row.passAt)) metrics[`eval/${row.kind}/passAt${k}`] = v;
      ctx.log('info', `${row.label.padEnd(30)} ${Object.entries(row.passAt).map(([k, v]) => `Pass@${k} ${(100 * v).toFixed(1)}%`).join('  ')}` +
        ` (${row.how}; same ${row.puzzles} puzzles)`);
    }
    const rlGain = rlGainOverStart(ctx, summary.perPuzzle);
    if (rlGain) metrics['eval/rlGain/passAt1'] = rlGain.mean;
    ctx.metric(0, metrics, { episodes: summary.episodes });
    const result = {
      kind: 'eval', stage: 'eval', step: 0, model: from, method: ctx.config.method, env: ctx.config.env, template: ctx.config.template,
      temperature: section.temperature, k: section.k, ...summary, statePerplexity: perplexity, ...(versusBase ? { worldModelVersusBase: versusBase } : {}),
      reference: reference.rows.map(({ perPuzzle: _p, ...row }) => row),
      ...(rlGain ? { rlGainOverStart: rlGain } : {}),
      wallSeconds: elapsedSeconds(started),
    };
    ctx.writeJson('eval/final.json', result);
    journal?.clear();
    runtime.dispose();
    const passAt = Object.fromEntries(Object.entries(summary.passAtK).map(([k, v]) => [`passAt${k}`, v.mean]));
    return { evalFile: 'eval/final.json', success: summary.success.mean, ...passAt, wallSeconds: elapsedSeconds(started) };
  },
};

/**
 * RL's own gain over its start (issue 34): this eval's Pass@1 minus the RL stage's tracked Pass@1 at step 0 (the model RL
 * started from, eval/rl-step-000000.json, on the first rl.passAtKPuzzles of the same held-out puzzles), paired per puzzle.
 * Logged with its interval; null (nothing logged) when the run tracked no step 0.
 */
function rlGainOverStart(ctx: Parameters<StageDefinition['run']>[0], perPuzzle: ReadonlyArray<{ seed: number; n: number; c: number }>): PairedGain | null {
  const start = ctx.readJson<{ perPuzzle?: Array<{ seed: number; n: number; c: number }> }>('eval/rl-step-000000.json');
  const gain = start?.perPuzzle ? pairedPassAt1Gain(start.perPuzzle, perPuzzle, ctx.config.seeds.base) : null;
  if (!gain) return null;
  const pts = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;
  ctx.log('info', `RL gain over its start (Pass@1, this eval − RL step 0, paired on ${gain.puzzles} puzzles): ${pts(gain.mean)} points ` +
    `[${pts(gain.low)}, ${pts(gain.high)}] (95% bootstrap over puzzles)`);
  return gain;
}
