// Summary of evaluation episodes (pure): success, Pass@k with intervals, actions, error rates,
// world-model accuracy of observation and prediction, collapse signals. The eval stage adds
// state perplexity and writes the result to eval/<stage>-<step>.json.
import type { EpisodeRecord, WmScore } from '../api/records.js';
import { passAtKWithInterval, wilsonInterval, type Interval } from './pass-at-k.js';
import { collapseSignals, type CollapseSignals } from './collapse.js';

export interface WmAccuracy { turns: number; parsed: number; exact: number; cellAccuracy: number; entityF1: number }

export interface EvalSummary {
  episodes: number;
  puzzles: number;
  samplesPerPuzzle: number;
  success: Interval;                       // Wilson interval over all samples
  passAtK: Record<string, Interval>;       // k → mean over puzzles with a bootstrap interval over puzzles
  avgActions: number;
  avgTurns: number;
  formatErrorRate: number;
  invalidActionRate: number;
  wm: { observation: WmAccuracy; prediction: WmAccuracy };
  collapse: CollapseSignals;
  perPuzzle: Array<{ seed: number; n: number; c: number }>;
}

function wmAccuracy(scores: Array<WmScore | null>): WmAccuracy {
  const present = scores.filter((s): s is WmScore => s !== null);
  const parsed = present.filter((s) => s.parsed);
  const mean = (xs: number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, c) => a + c, 0) / xs.length);
  return {
    turns: present.length,
    parsed: present.length === 0 ? 0 : parsed.length / present.length,
    exact: mean(present.map((s) => (s.exact ? 1 : 0))),
    cellAccuracy: mean(present.map((s) => (s.parsed ? s.cellAccuracy : 0))),
    entityF1: mean(present.map((s) => (s.parsed ? s.meanF1 : 0))),
  };
}

export function summarizeEpisodes(episodes: EpisodeRecord[], ks: number[], seed = 0): EvalSummary {
  const bySeed = new Map<number, { n: number; c: number }>();
  for (const ep of episodes) {
    const entry = bySeed.get(ep.seed) ?? { n: 0, c: 0 };
    entry.n++;
    if (ep.success) entry.c++;
    bySeed.set(ep.seed, entry);
  }
  const perPuzzle = [...bySeed.entries()].sort((a, b) => a[0] - b[0]).map(([s, v]) => ({ seed: s, ...v }));
  const minN = perPuzzle.length === 0 ? 0 : Math.min(...perPuzzle.map((p) => p.n));
  const passAtK: Record<string, Interval> = {};
  for (const k of ks) {
    if (k > minN) continue; // n ≥ k is required; the stage validates the config up front
    passAtK[String(k)] = passAtKWithInterval(perPuzzle, k, { seed });
  }
  const turns = episodes.flatMap((e) => e.turns);
  const successes = episodes.filter((e) => e.success).length;
  const firstAnswers = episodes
    .filter((e) => e.turns.length > 0)
    .map((e) => ({ puzzle: String(e.seed), answer: e.turns[0]!.parsed.answer ?? e.turns[0]!.response }));
  return {
    episodes: episodes.length,
    puzzles: perPuzzle.length,
    samplesPerPuzzle: minN,
    success: wilsonInterval(successes, episodes.length),
    passAtK,
    avgActions: episodes.length === 0 ? 0 : episodes.reduce((a, e) => a + e.numActions, 0) / episodes.length,
    avgTurns: episodes.length === 0 ? 0 : episodes.reduce((a, e) => a + e.numTurns, 0) / episodes.length,
    formatErrorRate: turns.length === 0 ? 0 : turns.filter((t) => t.flags.formatError).length / turns.length,
    invalidActionRate: turns.length === 0 ? 0 : turns.filter((t) => t.flags.invalidAction).length / turns.length,
    wm: {
      observation: wmAccuracy(turns.map((t) => (t.flags.formatError ? null : t.wm.observation))),
      prediction: wmAccuracy(turns.map((t) => (t.flags.formatError ? null : t.wm.prediction))),
    },
    collapse: collapseSignals(
      turns.map((t) => ({ puzzle: '', turn: t.turn, response: t.response })),
      firstAnswers,
    ),
    perPuzzle,
  };
}

/** Flat metric values of a summary (names in docs/metrics.md). */
export function summaryMetrics(summary: EvalSummary, prefix = 'eval'): Record<string, number> {
  const out: Record<string, number> = {
    [`${prefix}/success`]: summary.success.mean,
    [`${prefix}/avgActions`]: summary.avgActions,
    [`${prefix}/formatErrorRate`]: summary.formatErrorRate,
    [`${prefix}/invalidActionRate`]: summary.invalidActionRate,
    [`${prefix}/wmObservationExact`]: summary.wm.observation.exact,
    [`${prefix}/wmPredictionExact`]: summary.wm.prediction.exact,
    [`${prefix}/wmObservationCellAccuracy`]: summary.wm.observation.cellAccuracy,
    [`${prefix}/wmPredictionCellAccuracy`]: summary.wm.prediction.cellAccuracy,
    [`${prefix}/wmObservationEntityF1`]: summary.wm.observation.entityF1,
    [`${prefix}/wmPredictionEntityF1`]: summary.wm.prediction.entityF1,
    [`${prefix}/collapse/distinctResponseRatio`]: summary.collapse.distinctResponseRatio,
    [`${prefix}/collapse/distinctBigramRatio`]: summary.collapse.distinctBigramRatio,
    [`${prefix}/collapse/repeatedRunRate`]: summary.collapse.repeatedRunRate,
    [`${prefix}/collapse/inputDependence`]: summary.collapse.inputDependence,
  };
  // Scored (well-formed) turns: with none, the world-model accuracies are not 0 but undefined, so they are left out.
  out[`${prefix}/wmTurns`] = summary.wm.prediction.turns;
  for (const side of ['Observation', 'Prediction'] as const) {
    if (summary.wm[side === 'Observation' ? 'observation' : 'prediction'].turns > 0) continue;
    for (const m of ['Exact', 'CellAccuracy', 'EntityF1']) delete out[`${prefix}/wm${side}${m}`];
  }
  for (const [k, v] of Object.entries(summary.passAtK)) out[`${prefix}/passAt${k}`] = v.mean;
  for (const key of Object.keys(out)) if (!Number.isFinite(out[key]!)) delete out[key];
  return out;
}
