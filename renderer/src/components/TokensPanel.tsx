// The Run view's Tokens tab (issue 12 item 11): histograms of the per-token statistics stored
// with RL episodes (advantages, logprobs, entropies, values), one RL step at a time with the
// same bins across steps (inspect.tokenHistograms), and each field's mean per step beside it.
import { useEffect, useMemo, useState } from 'react';
import type { Histogram, TokenField } from '../../../core/api/contract.js';
import type { Client } from '../api/client.js';
import { MetricChart, formatValue } from '../charts/MetricChart.js';
import { seriesColor } from '../theme/theme.js';
import { ErrorBanner } from './widgets.js';

const FIELDS: TokenField[] = ['advantages', 'logprobs', 'entropies', 'values'];
const FIELD_HELP: Record<TokenField, string> = {
  advantages: 'GAE advantage of each response token (what PPO pushes up or down)',
  logprobs: 'log-probability the policy gave each sampled token',
  entropies: 'entropy of the policy\'s next-token distribution at each token',
  values: 'the critic\'s value estimate at each token',
};

type Steps = Array<{ step: number; episodes: number; histograms: Record<string, Histogram | null> }>;

/** The fields some step has tokens for, in the canonical order. */
export function fieldsWithData(steps: Steps): TokenField[] {
  return FIELDS.filter((f) => steps.some((s) => s.histograms[f] && s.histograms[f]!.count > 0));
}

/** One histogram as SVG bars: bins on x (the shared edges), tokens per bin on y. */
export function HistogramBars(props: { histogram: Histogram; color: string; width?: number; height?: number; label: string }) {
  const { histogram: h, color, width = 500, height = 230, label } = props;
  const padL = 44, padB = 34, padT = 8, padR = 8;
  const plotW = width - padL - padR;
  const plotH = height - padT - padB;
  const maxCount = Math.max(1, ...h.counts);
  const bins = h.counts.length;
  const bw = plotW / Math.max(1, bins);
  const lo = h.edges[0] ?? 0;
  const hi = h.edges[h.edges.length - 1] ?? 1;
  const xOf = (v: number) => padL + (hi > lo ? ((v - lo) / (hi - lo)) * plotW : plotW / 2);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => lo + f * (hi - lo));
  return (
    <svg className="token-histogram" width="100%" viewBox={`0 0 ${width} ${height}`} role="img" aria-label={label} data-testid="token-histogram" data-bins={bins}>
      <line x1={padL} y1={padT + plotH} x2={padL + plotW} y2={padT + plotH} stroke="var(--chart-axis, #888)" />
      <line x1={padL} y1={padT} x2={padL} y2={padT + plotH} stroke="var(--chart-axis, #888)" />
      {[0, 0.5, 1].map((f) => (
        <text key={f} x={padL - 4} y={padT + plotH - f * plotH + 4} textAnchor="end" fontSize="11" fill="var(--fg-muted)">{formatValue(Math.round(f * maxCount))}</text>
      ))}
      {h.counts.map((c, i) => {
        const barH = (c / maxCount) * plotH;
        return (
          <rect key={i} x={padL + i * bw + 0.5} y={padT + plotH - barH} width={Math.max(1, bw - 1)} height={barH} fill={color} opacity={0.85}>
            <title>{`${formatValue(h.edges[i])} … ${formatValue(h.edges[i + 1])}: ${c} tokens`}</title>
          </rect>
        );
      })}
      {h.mean >= lo && h.mean <= hi && (
        <line x1={xOf(h.mean)} x2={xOf(h.mean)} y1={padT} y2={padT + plotH} stroke="var(--fg)" strokeDasharray="4 3"><title>{`mean ${formatValue(h.mean)}`}</title></line>
      )}
      {ticks.map((v, i) => (
        <text key={i} x={xOf(v)} y={padT + plotH + 14} textAnchor={i === 0 ? 'start' : i === ticks.length - 1 ? 'end' : 'middle'} fontSize="11" fill="var(--fg-muted)">{formatValue(v)}</text>
      ))}
      <text x={padL + plotW / 2} y={height - 4} textAnchor="middle" fontSize="11" fill="var(--fg-muted)">{label}</text>
    </svg>
  );
}

export function TokensPanel(props: { client: Client; runId: string; stages: string[]; active: boolean; theme: string }) {
  const { client, runId, active, theme } = props;
  const [stage, setStage] = useState(props.stages.includes('rl') ? 'rl' : props.stages[0] ?? 'rl');
  const [data, setData] = useState<{ steps: Steps } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [field, setField] = useState<TokenField>('advantages');
  const [stepIndex, setStepIndex] = useState<number | null>(null);   // null: the latest step

  useEffect(() => {
    let cancelled = false;
    const load = () => client.inspect.tokenHistograms({ runId, stage, fields: FIELDS, bins: 30 }).then((r) => {
      if (!cancelled) { setData({ steps: r.steps }); setError(null); }
    }, (e: unknown) => { if (!cancelled) setError(e); });
    void load();
    const t = active ? setInterval(() => void load(), 8000) : null;
    return () => { cancelled = true; if (t) clearInterval(t); };
  }, [client, runId, stage, active]);

  const steps = data?.steps ?? [];
  const fields = fieldsWithData(steps);
  const shownField = fields.includes(field) ? field : fields[0] ?? field;
  const index = stepIndex === null ? steps.length - 1 : Math.min(stepIndex, steps.length - 1);
  const current = steps[index];
  const hist = current?.histograms[shownField] ?? null;
  const meanSeries = useMemo(() => fields.map((f, i) => ({
    name: f,
    series: [{ key: f, label: `mean ${f}`, color: seriesColor(i), x: steps.filter((s) => s.histograms[f]).map((s) => s.step), y: steps.filter((s) => s.histograms[f]).map((s) => s.histograms[f]!.mean) }],
  })), [steps, fields.join(','), theme]);

  const stageSelect = props.stages.length > 1 && (
    <label className="row" style={{ gap: 4 }}>stage
      <select value={stage} onChange={(e) => { setStage(e.target.value); setStepIndex(null); }} data-testid="tokens-stage">
        {props.stages.map((s) => <option key={s} value={s}>{s}</option>)}
      </select>
    </label>
  );
  if (error) return <ErrorBanner error={error} title="Token statistics" />;
  if (data === null) return <div className="muted">Loading token statistics…</div>;
  if (steps.length === 0 || fields.length === 0) {
    return (
      <div>
        {stageSelect && <div className="row" style={{ marginBottom: 8 }}>{stageSelect}</div>}
        <div className="empty-state" data-testid="tokens-empty">
          No token statistics in stage “{stage}”: per-token logprobs, entropies, values and advantages are stored with RL (PPO) episodes only,
          and runs before this version did not record them.
        </div>
      </div>
    );
  }
  return (
    <div data-testid="tokens-panel">
      <div className="row" style={{ marginBottom: 10, gap: 14 }}>
        {stageSelect}
        <label className="row" style={{ gap: 4 }}>field
          <select value={shownField} onChange={(e) => setField(e.target.value as TokenField)} data-testid="tokens-field">
            {fields.map((f) => <option key={f} value={f}>{f}</option>)}
          </select>
        </label>
        <label className="row" style={{ gap: 4 }}>RL step
          <input type="range" min={0} max={steps.length - 1} step={1} value={index} onChange={(e) => setStepIndex(Number(e.target.value))}
            disabled={steps.length < 2} aria-label="RL step" data-testid="tokens-step" />
          <span className="mono" data-testid="tokens-step-value">{current?.step ?? '–'}</span>
        </label>
        <span className="faint">{FIELD_HELP[shownField]}</span>
      </div>
      <div className="grid-2">
        <div className="card">
          <h2>{shownField} at RL step {current?.step}</h2>
          {hist ? (
            <>
              <HistogramBars histogram={hist} color={seriesColor(fields.indexOf(shownField))} label={`${shownField} (bins shared by every step)`} />
              <div className="muted" style={{ fontSize: 12 }} data-testid="tokens-summary">
                {hist.count.toLocaleString()} tokens from {current!.episodes} episodes · mean {formatValue(hist.mean)} · min {formatValue(hist.min)} · max {formatValue(hist.max)}
              </div>
            </>
          ) : <div className="empty-state">No {shownField} at this step.</div>}
        </div>
        <div>
          {meanSeries.filter((m) => m.name === shownField).map((m) => (
            <MetricChart key={m.name} title={`mean ${m.name} per RL step`} series={m.series} xLabel="step" smoothing={0} theme={theme} testId="tokens-mean-chart" highlightX={current?.step ?? null} />
          ))}
        </div>
      </div>
    </div>
  );
}
