// Charts grouped by metric namespace (eval/, rl/, rollout/, losses/, charts/, ...), key groups
// first and open; the others collapsed so that a run with many metrics stays light.
import { useState } from 'react';
import { breakable } from '../components/widgets.js';
import { MetricChart, formatValue, type ChartSeries } from './MetricChart.js';
import type { StageSpan } from './chart-view.js';

export interface ChartSpec { name: string; series: ChartSeries[] }

const ORDER = ['eval', 'rl', 'rollout', 'losses', 'charts', 'selfplay', 'sft', 'bootstrap'];
const OPEN_BY_DEFAULT = new Set(['eval', 'rl', 'rollout', 'losses', 'diag']);

/** A metric logged once per run (e.g. a final evaluation) is shown as a number, not a chart. */
export function isScalar(c: ChartSpec): boolean {
  return c.series.length > 0 && c.series.every((s) => s.x.length <= 1);
}

/** Rates and accuracies (fractions 0..1 by the engine's convention) read better as percentages. */
export function isFractionMetric(name: string): boolean {
  return /(^|\/)(success|passAt\d+|[A-Za-z]*(Rate|Accuracy|Exact))$/.test(name);
}

/** A tile's number: a fraction metric as a percentage, anything else compact. */
export function tileValue(name: string, v: number | undefined): string {
  if (v !== undefined && Number.isFinite(v) && isFractionMetric(name) && v >= 0 && v <= 1) return `${(100 * v).toFixed(1)}%`;
  return formatValue(v);
}

export function groupOf(name: string): string {
  const i = name.indexOf('/');
  return i > 0 ? name.slice(0, i) : 'other';
}

export function groupCharts(charts: ChartSpec[]): Array<{ group: string; charts: ChartSpec[] }> {
  const groups = new Map<string, ChartSpec[]>();
  for (const c of charts) {
    const g = groupOf(c.name);
    const list = groups.get(g) ?? [];
    list.push(c);
    groups.set(g, list);
  }
  const rank = (g: string) => { const i = ORDER.indexOf(g); return i < 0 ? ORDER.length : i; };
  return [...groups.entries()].sort((a, b) => rank(a[0]) - rank(b[0]) || a[0].localeCompare(b[0])).map(([group, list]) => ({ group, charts: list }));
}

export interface ChartGroupsProps {
  charts: ChartSpec[]; xLabel: string; smoothing: number; syncKey: string; theme: string; testId?: string;
  log?: boolean;                 // log-scale y on every chart
  stageSpans?: StageSpan[];      // the stages on the x axis, marked on every chart
  pinned?: string[];             // metric names shown first, in their own section (in this order)
  onTogglePin?: (name: string) => void;
}

export function ChartGroups(props: ChartGroupsProps) {
  const pinned = props.pinned ?? [];
  const pinnedCharts = pinned.map((n) => props.charts.find((c) => c.name === n)).filter((c): c is ChartSpec => c !== undefined);
  const groups = groupCharts(props.charts.filter((c) => !pinned.includes(c.name)));
  const [open, setOpen] = useState<Record<string, boolean>>({});
  // none of the usual groups (e.g. an imported verl run: actor/, critic/, timing_s/): open them all
  const noneUsual = !groups.some((g) => OPEN_BY_DEFAULT.has(g.group));
  const isOpen = (g: string) => open[g] ?? (OPEN_BY_DEFAULT.has(g) || groups.length <= 2 || noneUsual);
  const chart = (c: ChartSpec) => (
    <MetricChart key={c.name} title={c.name} series={c.series} xLabel={props.xLabel} smoothing={props.smoothing} syncKey={props.syncKey} theme={props.theme}
      log={props.log ?? false} {...(props.stageSpans ? { stageSpans: props.stageSpans } : {})}
      {...(props.onTogglePin ? { pinned: pinned.includes(c.name), onTogglePin: () => props.onTogglePin!(c.name) } : {})} />
  );
  return (
    <div data-testid={props.testId}>
      {pinnedCharts.length > 0 && (
        <section className="chart-group" data-group="pinned" data-testid="pinned-charts">
          <div className="chart-group-head">pinned <span className="faint">({pinnedCharts.length})</span></div>
          <div className="charts-grid">{pinnedCharts.map(chart)}</div>
        </section>
      )}
      {groups.map(({ group, charts }) => (
        <section key={group} className="chart-group" data-group={group}>
          <button className="chart-group-head" aria-expanded={isOpen(group)} onClick={() => setOpen((o) => ({ ...o, [group]: !isOpen(group) }))}>
            <span className="caret">{isOpen(group) ? '▾' : '▸'}</span> {group}/ <span className="faint">({charts.length})</span>
          </button>
          {isOpen(group) && (
            <>
              {charts.some(isScalar) && (
                <div className="value-tiles">
                  {charts.filter(isScalar).map((c) => (
                    <div className="value-tile" key={c.name} data-testid={`value-${c.name}`} title={`${c.name}: logged once${c.series[0] ? ` at ${props.xLabel} ${c.series[0].x[0]}` : ''}`}>
                      <div className="value-name">{breakable(c.name.slice(group.length + 1) || c.name)}</div>
                      {c.series.map((s) => (
                        <div key={s.key} className="value-row">
                          {c.series.length > 1 && <span className="swatch" style={{ background: s.color }} />}
                          <span className="value-num" title={`${formatValue(s.y[0])} as logged`}>{tileValue(c.name, s.y[0])}</span>
                          {c.series.length > 1 && <span className="faint value-run">{s.label}</span>}
                        </div>
                      ))}
                    </div>
                  ))}
                </div>
              )}
              <div className="charts-grid">
                {charts.filter((c) => !isScalar(c)).map(chart)}
              </div>
            </>
          )}
        </section>
      ))}
    </div>
  );
}
