// The final evaluation, read off a run's latest eval/… metrics (names: docs/metrics.md): the
// world-model table the terminal prints at the end of a run (core/train/world-model-check.ts
// versusBaseLines: this model / base / chance / oracle; observation exact, prediction exact, and
// prediction exact given the action), Pass@k, and the other eval metrics, folded.

export interface WmRow {
  name: 'this model' | 'base' | 'chance' | 'oracle';
  observationExact: number | null;
  predictionExact: number | null;
  givenAction: number | null;     // prediction exact given the action, on turns it changes the state
}

export interface FinalEval {
  worldModel: WmRow[];            // empty when the eval ran no world-model check
  passAt: Array<{ k: number; value: number }>;
  /** Pass@k of the eval stage's chance and oracle rows on the same puzzles (eval/chance|oracle/passAtK); empty when not logged. */
  passAtReference: Array<{ name: 'chance' | 'oracle'; values: Record<number, number> }>;
  headline: Array<{ metric: string; label: string; value: number }>;
  other: Array<{ metric: string; value: number }>;
}

const WM = 'eval/wmCheck/';

export function finalEval(latest: Record<string, number>): FinalEval {
  const v = (name: string): number | null => { const x = latest[name]; return x !== undefined && Number.isFinite(x) ? x : null; };
  const worldModel: WmRow[] = [];
  if (v(`${WM}observationExact`) !== null || v(`${WM}predictionExact`) !== null) {
    worldModel.push({ name: 'this model', observationExact: v(`${WM}observationExact`), predictionExact: v(`${WM}predictionExact`), givenAction: v(`${WM}conditionedExact`) });
    if (v(`${WM}baseObservationExact`) !== null || v(`${WM}basePredictionExact`) !== null) {
      worldModel.push({ name: 'base', observationExact: v(`${WM}baseObservationExact`), predictionExact: v(`${WM}basePredictionExact`), givenAction: v(`${WM}baseConditionedExact`) });
    }
    if (v(`${WM}conditionedChance`) !== null) worldModel.push({ name: 'chance', observationExact: null, predictionExact: null, givenAction: v(`${WM}conditionedChance`) });
    if (v(`${WM}conditionedOracle`) !== null) worldModel.push({ name: 'oracle', observationExact: null, predictionExact: null, givenAction: v(`${WM}conditionedOracle`) });
  }
  const passAt: FinalEval['passAt'] = [];
  for (const [name, value] of Object.entries(latest)) {
    const m = /^eval\/passAt(\d+)$/.exec(name);
    if (m && Number.isFinite(value)) passAt.push({ k: Number(m[1]), value });
  }
  passAt.sort((a, b) => a.k - b.k);
  const passAtReference: FinalEval['passAtReference'] = [];
  for (const name of ['chance', 'oracle'] as const) {
    const values: Record<number, number> = {};
    for (const [metric, value] of Object.entries(latest)) {
      const m = new RegExp(`^eval/${name}/passAt(\\d+)$`).exec(metric);
      if (m && Number.isFinite(value)) values[Number(m[1])] = value;
    }
    if (Object.keys(values).length > 0) passAtReference.push({ name, values });
  }
  // headlines: exact match where it exists (cell accuracy only when no exact measure was logged)
  const headline: FinalEval['headline'] = [];
  const add = (metric: string, label: string) => { const x = v(metric); if (x !== null) headline.push({ metric, label, value: x }); };
  add('eval/success', 'success');
  add('eval/wmObservationExact', 'observation exact');
  add('eval/wmPredictionExact', 'prediction exact');
  if (v('eval/wmPredictionExact') === null) add('eval/wmPredictionCellAccuracy', 'prediction cell accuracy');
  const shown = new Set([...headline.map((h) => h.metric), ...passAt.map((p) => `eval/passAt${p.k}`)]);
  for (const n of Object.keys(latest)) if (n.startsWith(WM) || /^eval\/(chance|oracle)\/passAt\d+$/.test(n)) shown.add(n);
  const other = Object.entries(latest)
    .filter(([n, x]) => n.startsWith('eval/') && !shown.has(n) && Number.isFinite(x))
    .map(([metric, value]) => ({ metric, value }))
    .sort((a, b) => a.metric.localeCompare(b.metric));
  return { worldModel, passAt, passAtReference, headline, other };
}
