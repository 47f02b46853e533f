// The key metrics of a run, picked from its latest metric values (names: docs/metrics.md).
// Held-out evaluation (eval/…) is preferred; training-time values (rollout/…, rl/…) fill in.
export interface KeyMetrics {
  success: number | null;
  passAt1: number | null;
  passAtK: number | null;
  k: number | null;
  wmAccuracy: number | null;      // world-model prediction cell accuracy
  wmExact: number | null;         // world-model prediction exact-match rate
}

function first(latest: Record<string, number>, names: string[]): number | null {
  for (const n of names) { const v = latest[n]; if (v !== undefined && Number.isFinite(v)) return v; }
  return null;
}

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
  return {
    success: first(latest, ['eval/success', 'rollout/success']),
    passAt1: first(latest, ['eval/passAt1', 'rl/passAt1']),
    passAtK: kEval !== null ? latest[`eval/passAt${kEval}`]! : kRl !== null ? latest[`rl/passAt${kRl}`]! : null,
    k,
    wmAccuracy: first(latest, ['eval/wmPredictionCellAccuracy', 'rollout/wmPredictionCellAccuracy']),
    wmExact: first(latest, ['eval/wmPredictionExact']),
  };
}
