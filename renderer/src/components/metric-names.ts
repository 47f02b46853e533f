// One name per number: what the UI calls each headline metric, everywhere it is shown (the Run
// view's header and Final evaluation, the Runs table and its groups, Compare). Two metrics whose
// denominators differ never share a name: "prediction exact, eval episodes" (well-formed turns of
// the eval episodes) is not "prediction exact, first turns" (the world-model check's first turns,
// a malformed reply counted wrong), and a cell accuracy of the eval (format-error turns dropped) is
// not one of the training rollouts (format-error turns counted 0). docs/metrics.md, section
// "Names on screen", lists the same pairs; tests/renderer/metric-names.test.ts holds them equal.

/** metric (docs/metrics.md name) → its one name on screen. */
export const METRIC_NAMES = {
  'eval/success': 'success',
  'eval/passAt<k>': 'Pass@k',
  'eval/wmObservationExact': 'observation exact, eval episodes',
  'eval/wmPredictionExact': 'prediction exact, eval episodes',
  'eval/wmObservationCellAccuracy': 'observation cell accuracy, eval episodes',
  'eval/wmPredictionCellAccuracy': 'prediction cell accuracy, eval episodes',
  'eval/wmCheck/observationExact': 'observation exact, first turns',
  'eval/wmCheck/predictionExact': 'prediction exact, first turns',
  'eval/wmCheck/conditionedExact': 'prediction given the action',
  'rollout/wmObservationCellAccuracy': 'observation cell accuracy, training rollouts',
  'rollout/wmPredictionCellAccuracy': 'prediction cell accuracy, training rollouts',
} as const;

export type NamedMetric = keyof typeof METRIC_NAMES;

/** The on-screen name of a metric; Pass@k with its k. Throws for a metric without a name here (a caller bug). */
export function nameOf(metric: NamedMetric | `eval/passAt${number}`): string {
  const k = /^eval\/passAt(\d+)$/.exec(metric);
  if (k) return `Pass@${k[1]}`;
  const name = (METRIC_NAMES as Record<string, string>)[metric];
  if (name === undefined) throw new Error(`nameOf: no on-screen name for ${metric} (add it to METRIC_NAMES and docs/metrics.md)`);
  return name;
}

/** "n = 32 episodes" style suffix; "n unknown" when the count was not recorded. */
export function nText(n: number | null | undefined, unit: string): string {
  return n === null || n === undefined || !Number.isFinite(n) ? 'n unknown' : `n = ${n} ${unit}`;
}
