// The key metrics of a run, picked from its latest metric values (names: docs/metrics.md).
// Held-out evaluation (eval/…) is preferred; training-time values (rollout/…, rl/…) fill in, and
// each number says which one it is. A world-model accuracy over zero well-formed turns is not 0:
// it is undefined ("n/a (0 well-formed turns)").
export type MetricSource = 'eval' | 'rollout' | 'rl';

export interface KeyMetrics {
  success: number | null;
  successSource: MetricSource | null;
  passAt1: number | null;
  passAtK: number | null;
  k: number | null;
  passSource: MetricSource | null;    // eval: the final evaluation; rl: held-out seeds tracked during RL
  wmAccuracy: number | null;      // world-model prediction cell accuracy
  wmSource: MetricSource | null;
  wmTurns: number | null;         // well-formed turns the WM accuracy is over (0: undefined)
  wmExact: number | null;         // world-model prediction exact-match rate
}

function firstOf(latest: Record<string, number>, names: string[]): { value: number; name: string } | null {
  for (const n of names) { const v = latest[n]; if (v !== undefined && Number.isFinite(v)) return { value: v, name: n }; }
  return null;
}

const sourceOf = (name: string | undefined): MetricSource | null => (name ? (name.split('/')[0] as MetricSource) : null);

/** Largest k > 1 with a `<prefix>/passAt<k>` value. */
function largestK(latest: Record<string, number>, prefix: string): number | null {
  let best: number | null = null;
  for (const name of Object.keys(latest)) {
    const m = new RegExp(`^${prefix}/passAt(\\d+)$`).exec(name);
    if (m) { const k = Number(m[1]); if (k > 1 && (best === null || k > best)) best = k; }
  }
  return best;
}

export function keyMetrics(latest: Record<string, number>): KeyMetrics {
  const kEval = largestK(latest, 'eval');
  const kRl = largestK(latest, 'rl');
  const k = kEval ?? kRl;
  const success = firstOf(latest, ['eval/success', 'rollout/success']);
  const pass1 = firstOf(latest, ['eval/passAt1', 'rl/passAt1']);
  // an evaluation that ran decides (its accuracy, or n/a over its 0 well-formed turns); training rollouts fill in otherwise
  const evalRan = latest['eval/wmTurns'] !== undefined;
  const wm = firstOf(latest, evalRan ? ['eval/wmPredictionCellAccuracy'] : ['eval/wmPredictionCellAccuracy', 'rollout/wmPredictionCellAccuracy']);
  // the turn count of the same source as the accuracy shown, else of the source that has one
  const wmTurns = firstOf(latest, wm ? [`${sourceOf(wm.name)}/wmTurns`] : ['eval/wmTurns', 'rollout/wmTurns']);
  // runs from before wmTurns was logged: every turn a format error means no turn was scored
  const allBroken = wm && !wmTurns && latest[`${sourceOf(wm.name)}/formatErrorRate`] === 1;
  return {
    success: success?.value ?? null,
    successSource: sourceOf(success?.name),
    passAt1: pass1?.value ?? null,
    passAtK: kEval !== null ? latest[`eval/passAt${kEval}`]! : kRl !== null ? latest[`rl/passAt${kRl}`]! : null,
    k,
    passSource: sourceOf(pass1?.name) ?? (kEval !== null ? 'eval' : kRl !== null ? 'rl' : null),
    wmAccuracy: wm?.value ?? null,
    wmSource: sourceOf(wm?.name) ?? sourceOf(wmTurns?.name),
    wmTurns: wmTurns?.value ?? (allBroken ? 0 : null),
    wmExact: firstOf(latest, ['eval/wmPredictionExact'])?.value ?? null,
  };
}

/** What a source means, for labels and tooltips. */
export const SOURCE_LABEL: Record<MetricSource, { short: string; long: string }> = {
  eval: { short: 'eval', long: 'final evaluation on held-out puzzles' },
  rl: { short: 'during RL', long: 'held-out puzzles tracked during RL' },
  rollout: { short: 'training rollouts', long: 'the latest training rollouts (self-play / RL), not an evaluation' },
};

/** The WM accuracy as shown: a percentage, "n/a (0 well-formed turns)", or "–" when never measured. */
export function fmtWmAccuracy(km: Pick<KeyMetrics, 'wmAccuracy' | 'wmTurns'>, pct: (v: number | null) => string): string {
  if (km.wmAccuracy !== null && km.wmTurns !== 0) return pct(km.wmAccuracy);
  if (km.wmTurns === 0) return 'n/a (0 well-formed turns)';
  return pct(null);
}
