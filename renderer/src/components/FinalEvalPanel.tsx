// The Run view's final-evaluation panel: first the verdict in words (Pass@1 with its interval
// against the chance and oracle rows; the world model learned or not against the base, with n; the
// rule of the Studies table, core/api/verdict.ts), then headlines in exact match with their n, the
// world-model table (this model / base / chance / oracle, as the terminal prints it at the end of a
// run), Pass@k, and the other eval metrics folded below. Names: metric-names.ts (one per number);
// every tooltip is the metric's meaning from docs/metrics.md.
import { fmtPct } from './format.js';
import { finalEval, finalVerdict, passVerdictText, worldModelVerdictText } from './final-eval.js';
import { metricMeaning } from './metric-glossary.js';
import { nameOf, nText } from './metric-names.js';

const tip = (metric: string) => metricMeaning(metric) ?? undefined;
const WM_COLUMNS: Array<{ key: 'observationExact' | 'predictionExact' | 'givenAction'; label: string; metric: string }> = [
  { key: 'observationExact', label: nameOf('eval/wmCheck/observationExact'), metric: 'eval/wmCheck/observationExact' },
  { key: 'predictionExact', label: nameOf('eval/wmCheck/predictionExact'), metric: 'eval/wmCheck/predictionExact' },
  { key: 'givenAction', label: nameOf('eval/wmCheck/conditionedExact'), metric: 'eval/wmCheck/conditionedExact' },
];
const ROW_TIP: Record<string, string> = {
  'this model': 'the run\'s final model on the first turns of the eval puzzles',
  base: metricMeaning('eval/wmCheck/baseObservationExact') ?? 'the run\'s base (checkpoints/bootstrap)',
  chance: metricMeaning('eval/wmCheck/conditionedChance') ?? '',
  oracle: metricMeaning('eval/wmCheck/conditionedOracle') ?? '',
};

/**
 * `latest`: the run's latest metric values; `final`: eval/final.json's content (intervals and n), or
 * null while it is not loaded or absent (then the means are shown and the verdict says it has no interval).
 */
export function FinalEvalPanel({ latest, final = null }: { latest: Record<string, number>; final?: Record<string, unknown> | null }) {
  const fe = finalEval(latest);
  if (fe.headline.length === 0 && fe.passAt.length === 0 && fe.worldModel.length === 0) return null;
  const verdict = finalVerdict(latest, final);
  const headlineN = (metric: string): string | null => {
    if (metric === 'eval/success') return verdict.pass?.episodes != null ? nText(verdict.pass.episodes, 'episodes') : null;
    if (/^eval\/wm(Observation|Prediction)/.test(metric)) return nText(verdict.wmTurns, 'well-formed turns');
    return null;
  };
  return (
    <section className="card" data-testid="final-eval" style={{ margin: '12px 0', padding: 12 }}>
      <div className="row" style={{ marginBottom: 8 }}>
        <strong>Final evaluation</strong>
        <span className="faint">held-out puzzles · hover a number for its meaning (docs/metrics.md)</span>
      </div>
      {(verdict.pass || verdict.worldModel) && (
        <div data-testid="final-verdict" style={{ fontSize: 13.5, marginBottom: 10, lineHeight: 1.5 }}
          title="The Studies table's rule (core/api/verdict.ts): Pass@1's 95% interval against the chance row; the world model's Wilson 95% interval against the base's rate">
          {verdict.pass && (
            <div data-testid="verdict-pass" data-verdict={verdict.pass.verdict ?? 'none'}>
              <strong className={verdict.pass.verdict === 'above chance' ? 'ok' : verdict.pass.verdict ? 'bad' : ''}>
                {verdict.pass.verdict ? (verdict.pass.verdict === 'above chance' ? 'Plays above chance.' : verdict.pass.verdict === 'below chance' ? 'Plays below chance.' : 'Plays indistinguishably from chance.') : 'No verdict on play.'}
              </strong>{' '}{passVerdictText(verdict.pass)}
            </div>
          )}
          {verdict.worldModel && (
            <div data-testid="verdict-wm" data-verdict={verdict.worldModel.verdict ?? 'none'}>
              <strong className={verdict.worldModel.verdict === 'learned' ? 'ok' : verdict.worldModel.verdict ? 'bad' : ''}>
                {verdict.worldModel.verdict === 'learned' ? 'World model learned.' : verdict.worldModel.verdict ? 'World model not learned.' : 'No verdict on the world model.'}
              </strong>{' '}{worldModelVerdictText(verdict.worldModel)}
            </div>
          )}
        </div>
      )}
      <div className="row" style={{ gap: 18, fontSize: 13, marginBottom: 10 }}>
        {fe.headline.map((h) => (
          <span key={h.metric} title={tip(h.metric)} data-testid={`final-headline-${h.metric}`}>{h.label} <strong>{fmtPct(h.value)}</strong>
            {headlineN(h.metric) && <span className="faint"> ({headlineN(h.metric)})</span>}</span>
        ))}
        {fe.passAt.map((p) => (
          <span key={p.k} title={tip(`eval/passAt${p.k}`)} data-testid={`final-pass-${p.k}`}>{nameOf(`eval/passAt${p.k}`)} <strong>{fmtPct(p.value)}</strong>
            <span className="faint"> ({nText(verdict.pass?.puzzles, 'puzzles')})</span></span>
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
            <tr><th>world model <span className="faint" style={{ fontWeight: 'normal' }}>({nText(verdict.checkTurns, 'first turns')})</span></th>
              {WM_COLUMNS.map((c) => <th key={c.key} title={tip(c.metric)}>{c.label}{c.key === 'givenAction' && <span className="faint" style={{ fontWeight: 'normal' }}> ({nText(verdict.worldModel?.n, 'state-changing turns')})</span>}</th>)}</tr>
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
