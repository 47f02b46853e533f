// The Run view's final-evaluation panel: headlines in exact match, the world-model table (this
// model / base / chance / oracle, as the terminal prints it at the end of a run), Pass@k, and the
// other eval metrics folded below. Every tooltip is the metric's meaning from docs/metrics.md.
import { fmtPct } from './format.js';
import { finalEval } from './final-eval.js';
import { metricMeaning } from './metric-glossary.js';

const tip = (metric: string) => metricMeaning(metric) ?? undefined;
const WM_COLUMNS: Array<{ key: 'observationExact' | 'predictionExact' | 'givenAction'; label: string; metric: string }> = [
  { key: 'observationExact', label: 'observation exact', metric: 'eval/wmCheck/observationExact' },
  { key: 'predictionExact', label: 'prediction exact', metric: 'eval/wmCheck/predictionExact' },
  { key: 'givenAction', label: 'prediction exact given the action', metric: 'eval/wmCheck/conditionedExact' },
];
const ROW_TIP: Record<string, string> = {
  'this model': 'the run\'s final model on the first turns of the eval puzzles',
  base: metricMeaning('eval/wmCheck/baseObservationExact') ?? 'the run\'s base (checkpoints/bootstrap)',
  chance: metricMeaning('eval/wmCheck/conditionedChance') ?? '',
  oracle: metricMeaning('eval/wmCheck/conditionedOracle') ?? '',
};

export function FinalEvalPanel({ latest }: { latest: Record<string, number> }) {
  const fe = finalEval(latest);
  if (fe.headline.length === 0 && fe.passAt.length === 0 && fe.worldModel.length === 0) return null;
  return (
    <section className="card" data-testid="final-eval" style={{ margin: '12px 0', padding: 12 }}>
      <div className="row" style={{ marginBottom: 8 }}>
        <strong>Final evaluation</strong>
        <span className="faint">held-out puzzles · hover a number for its meaning (docs/metrics.md)</span>
      </div>
      <div className="row" style={{ gap: 18, fontSize: 13, marginBottom: 10 }}>
        {fe.headline.map((h) => (
          <span key={h.metric} title={tip(h.metric)} data-testid={`final-headline-${h.metric}`}>{h.label} <strong>{fmtPct(h.value)}</strong></span>
        ))}
        {fe.passAt.map((p) => (
          <span key={p.k} title={tip(`eval/passAt${p.k}`)} data-testid={`final-pass-${p.k}`}>Pass@{p.k} <strong>{fmtPct(p.value)}</strong></span>
        ))}
      </div>
      {fe.passAt.length > 0 && fe.passAtReference.length > 0 && (
        <table className="plain" data-testid="passat-table" style={{ marginBottom: 10 }}>
          <thead>
            <tr><th>Pass@k (same puzzles)</th>{fe.passAt.map((p) => <th key={p.k} title={tip(`eval/passAt${p.k}`)}>Pass@{p.k}</th>)}</tr>
          </thead>
          <tbody>
            <tr data-testid="passat-row-this-model"><td title={ROW_TIP['this model']}>this model</td>
              {fe.passAt.map((p) => <td key={p.k} className="mono">{fmtPct(p.value)}</td>)}</tr>
            {fe.passAtReference.map((r) => (
              <tr key={r.name} data-testid={`passat-row-${r.name}`}><td title={tip(`eval/${r.name}/passAt1`)}>{r.name}</td>
                {fe.passAt.map((p) => <td key={p.k} className="mono">{r.values[p.k] === undefined ? '–' : fmtPct(r.values[p.k]!)}</td>)}</tr>
            ))}
          </tbody>
        </table>
      )}
      {fe.worldModel.length > 0 && (
        <table className="plain" data-testid="wm-table">
          <thead>
            <tr><th>world model</th>{WM_COLUMNS.map((c) => <th key={c.key} title={tip(c.metric)}>{c.label}</th>)}</tr>
          </thead>
          <tbody>
            {fe.worldModel.map((r) => (
              <tr key={r.name} data-testid={`wm-row-${r.name.replace(' ', '-')}`}>
                <td title={ROW_TIP[r.name]}>{r.name}</td>
                {WM_COLUMNS.map((c) => <td key={c.key} className="mono">{r[c.key] === null ? '–' : fmtPct(r[c.key])}</td>)}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {fe.other.length > 0 && (
        <details style={{ marginTop: 8 }} data-testid="final-other">
          <summary className="muted">{fe.other.length} other eval metrics</summary>
          <table className="plain">
            <tbody>
              {fe.other.map((o) => (
                <tr key={o.metric}><td className="mono" title={tip(o.metric)}>{o.metric}</td>
                  <td className="mono">{/rate|ratio|success|exact|accuracy|f1|dependence|passat/i.test(o.metric) ? fmtPct(o.value) : o.value.toFixed(3)}</td></tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </section>
  );
}
