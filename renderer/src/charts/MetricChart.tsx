// One uPlot chart of one metric: several runs overlaid, the smoothed line strong and the raw
// line faint with markers on the raw values, cursor synced across charts with the same syncKey,
// drag to zoom (re-bucketed in the worker so zoomed-in data is exact), double-click to reset,
// log-scale y, stage boundaries marked on the x axis, tick labels that never repeat, pin, PNG export.
import { useEffect, useMemo, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { cssVar } from '../theme/theme.js';
import type { PrepareResponse } from './downsample.js';
import { sharedDownsampler, type Downsampler } from './downsampler.js';
import { downloadDataUrl } from '../components/download.js';
import { formatValue, logTicks, tickLabels, type StageSpan } from './chart-view.js';

export { formatValue };

export interface ChartSeries {
  key: string;            // stable id, e.g. runId
  label: string;          // legend text
  color: string;
  x: number[];
  y: number[];
}

export interface MetricChartProps {
  title: string;
  series: ChartSeries[];
  xLabel: string;
  smoothing: number;       // EMA weight in [0, 1)
  syncKey?: string;
  height?: number;
  theme: string;           // re-create on theme change (colours are read from CSS variables)
  downsampler?: Downsampler;
  testId?: string;
  log?: boolean;           // log-scale y (values <= 0 are left out and counted)
  stageSpans?: StageSpan[]; // stages on the x axis: a dashed line where each one after the first begins
  pinned?: boolean;
  onTogglePin?: () => void;
  highlightX?: number | null; // a solid line at this x (e.g. the step picked beside the chart)
}

/** `#rrggbb` / `#rgb` → rgba with alpha; other colour syntaxes are returned as they are. */
export function withAlpha(color: string, alpha: number): string {
  const m = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(color.trim());
  if (!m) return color;
  let hex = m[1]!;
  if (hex.length === 3) hex = hex.split('').map((c) => c + c).join('');
  const n = parseInt(hex, 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

/** y values for a log axis: values <= 0 (no logarithm) become gaps; returns how many were dropped. */
export function forLogScale(y: ReadonlyArray<number | null | undefined>): { y: Array<number | null>; dropped: number } {
  let dropped = 0;
  const out = y.map((v) => {
    if (v === null || v === undefined) return null;
    if (v <= 0) { dropped++; return null; }
    return v;
  });
  return { y: out, dropped };
}

/** Draw the stage boundaries: a dashed line where each stage after the first begins, its name beside it. */
function drawStageMarks(u: uPlot, spans: StageSpan[], color: string): void {
  if (spans.length < 2) return;
  const ctx = u.ctx;
  const { left, top, width, height } = u.bbox;
  const min = u.scales['x']?.min;
  const max = u.scales['x']?.max;
  if (min === undefined || max === undefined) return;
  const bounds = spans.map((sp, i) => ({
    // a stage begins halfway between the previous stage's last x and its own first x
    begin: i > 0 ? (spans[i - 1]!.end + sp.start) / 2 : sp.start,
    end: i + 1 < spans.length ? (sp.end + spans[i + 1]!.start) / 2 : sp.end,
  }));
  if (bounds.filter((b) => b.end >= min && b.begin <= max).length < 2) return;   // one stage in view: nothing to tell apart
  ctx.save();
  ctx.strokeStyle = color;
  ctx.fillStyle = color;
  ctx.lineWidth = devicePixelRatio;
  ctx.setLineDash([4 * devicePixelRatio, 3 * devicePixelRatio]);
  ctx.font = `${10 * devicePixelRatio}px system-ui, sans-serif`;
  ctx.textBaseline = 'top';
  ctx.textAlign = 'left';          // uPlot leaves the y axis's alignment on the context
  spans.forEach((sp, i) => {
    const { begin, end } = bounds[i]!;
    if (end < min || begin > max) return;                          // not in view (zoomed)
    const px = Math.round(u.valToPos(Math.max(min, begin), 'x', true));
    if (i > 0 && begin >= min) {
      ctx.beginPath();
      ctx.moveTo(px, top);
      ctx.lineTo(px, top + height);
      ctx.stroke();
    }
    if (px < left + width - 24 * devicePixelRatio) ctx.fillText(sp.stage, px + 3 * devicePixelRatio, top + 2 * devicePixelRatio);
  });
  ctx.restore();
}

/** The stages whose stretch of the x axis holds points of these series (two or more, else none: nothing to mark). */
export function stagesInRange(spans: StageSpan[], series: Array<{ x: number[] }>): string[] {
  let lo = Infinity; let hi = -Infinity;
  for (const s of series) for (const x of s.x) { if (x < lo) lo = x; if (x > hi) hi = x; }
  const hit = spans.filter((sp) => sp.end >= lo && sp.start <= hi).map((sp) => sp.stage);
  return hit.length >= 2 ? hit : [];
}

/** A solid vertical line at x (when in view). */
function drawHighlight(u: uPlot, x: number | null, color: string): void {
  const min = u.scales['x']?.min;
  const max = u.scales['x']?.max;
  if (x === null || min === undefined || max === undefined || x < min || x > max) return;
  const px = Math.round(u.valToPos(x, 'x', true));
  const ctx = u.ctx;
  ctx.save();
  ctx.strokeStyle = color;
  ctx.lineWidth = 2 * devicePixelRatio;
  ctx.beginPath();
  ctx.moveTo(px, u.bbox.top);
  ctx.lineTo(px, u.bbox.top + u.bbox.height);
  ctx.stroke();
  ctx.restore();
}

/** Tick spacings for an x axis of whole numbers (steps, episodes): no 1.25-step ticks. */
const INTEGER_INCRS = Array.from({ length: 16 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();

/** Steps and episodes are whole numbers; wall time is not. */
export function isIntegerAxis(xLabel: string): boolean {
  return !/time/i.test(xLabel);
}

export function MetricChart(props: MetricChartProps) {
  const { title, series, xLabel, smoothing, syncKey, height = 190, theme, log = false } = props;
  const ds = props.downsampler ?? sharedDownsampler();
  const hostRef = useRef<HTMLDivElement>(null);
  const readoutRef = useRef<HTMLDivElement>(null);
  const plotRef = useRef<uPlot | null>(null);
  const structureRef = useRef<string>('');
  const zoomRef = useRef<{ min: number; max: number } | null>(null);
  const reqRef = useRef(0);
  const [width, setWidth] = useState(0);
  const [zoomed, setZoomed] = useState(false);
  const [requestTick, setRequestTick] = useState(0);
  const [pointInfo, setPointInfo] = useState('');
  const [logDropped, setLogDropped] = useState(0);
  const spansRef = useRef<StageSpan[]>(props.stageSpans ?? []);
  const highlightRef = useRef<number | null>(props.highlightX ?? null);
  useEffect(() => {
    highlightRef.current = props.highlightX ?? null;
    plotRef.current?.redraw(false, false);
  }, [props.highlightX]);
  const spansKey = JSON.stringify(props.stageSpans ?? []);
  useEffect(() => {
    spansRef.current = props.stageSpans ?? [];
    plotRef.current?.redraw(false, false);
  }, [spansKey]);

  // Track the container width.
  useEffect(() => {
    const el = hostRef.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(Math.max(120, Math.floor(el.clientWidth))));
    ro.observe(el);
    setWidth(Math.max(120, Math.floor(el.clientWidth)));
    return () => ro.disconnect();
  }, []);

  const structure = useMemo(
    () => JSON.stringify([series.map((s) => [s.key, s.label, s.color]), smoothing > 0, theme, xLabel, syncKey ?? '', log]),
    [series, smoothing, theme, xLabel, syncKey, log],
  );

  // Destroy the plot on unmount.
  useEffect(() => () => { plotRef.current?.destroy(); plotRef.current = null; }, []);

  // Downsample (in the worker) whenever data, width, smoothing or zoom change; then draw.
  useEffect(() => {
    if (width === 0 || series.length === 0 || series.every((s) => s.x.length === 0)) {
      plotRef.current?.destroy();
      plotRef.current = null;
      structureRef.current = '';
      return;
    }
    const id = ++reqRef.current;
    const zoom = zoomRef.current;
    const plotWidth = Math.max(50, width - 60);
    let cancelled = false;
    ds.prepare({
      series: series.map((s) => ({ key: s.key, x: s.x, y: s.y })),
      smoothing,
      buckets: plotWidth,
      ...(zoom ? { xMin: zoom.min, xMax: zoom.max } : {}),
    }).then((res) => {
      if (cancelled || id !== reqRef.current) return; // a newer request superseded this one
      draw(res);
      setPointInfo(res.series.map((s) => s.totalPoints).reduce((a, b) => a + b, 0).toLocaleString());
    }, (err) => console.error('chart downsampling failed', err));
    return () => { cancelled = true; };

    function draw(res: PrepareResponse) {
      const tables: uPlot.AlignedData[] = [];
      let dropped = 0;
      const yOf = (y: number[]) => {
        if (!log) return y;
        const r = forLogScale(y);
        dropped += r.dropped;
        return r.y;
      };
      for (const s of res.series) {
        tables.push([s.raw.x, yOf(s.raw.y)] as unknown as uPlot.AlignedData);
        if (s.smooth) tables.push([s.smooth.x, log ? forLogScale(s.smooth.y).y : s.smooth.y] as unknown as uPlot.AlignedData);
      }
      setLogDropped(dropped);
      const data = uPlot.join(tables);
      const existing = plotRef.current;
      if (existing && structureRef.current === structure) {
        existing.setData(data, zoom === null);
        if (zoom) existing.setScale('x', zoom);
        return;
      }
      existing?.destroy();
      const axis = cssVar('--chart-axis', '#666');
      const grid = cssVar('--chart-grid', 'rgba(0,0,0,0.1)');
      const uSeries: uPlot.Series[] = [{ label: xLabel }];
      // markers sit on the raw values (uPlot shows them while points are sparse); the smoothed line has none
      series.forEach((s) => {
        if (smoothing > 0) {
          uSeries.push({ label: `${s.label} (raw)`, stroke: withAlpha(s.color, 0.35), width: 1, spanGaps: true, points: { size: 5, stroke: s.color, fill: s.color } });
          uSeries.push({ label: s.label, stroke: s.color, width: 1.75, spanGaps: true, points: { show: false } });
        } else {
          uSeries.push({ label: s.label, stroke: s.color, width: 1.5, spanGaps: true, points: { size: 5, stroke: s.color, fill: s.color } });
        }
      });
      // a log axis labels and grids only some of uPlot's 1..9 × 10^k splits (chart-view.ts logTicks)
      const logFilter = log ? { filter: (u: uPlot, splits: number[]) => logTicks(splits, Math.floor(u.bbox.height / devicePixelRatio / 18)) } : {};
      const markColor = cssVar('--fg-muted', cssVar('--chart-axis', '#666'));
      const opts: uPlot.Options = {
        width: plotWidth + 60,
        height,
        series: uSeries,
        legend: { show: false },
        scales: {
          // one x value (e.g. a single evaluation): centre it instead of uPlot's 0..100
          x: {
            time: false,
            range: (u, min, max) => {
              const xs = u.data[0];
              const only = xs.length > 0 && xs[0] === xs[xs.length - 1] ? xs[0]! : null;
              return only !== null ? [only - 1, only + 1] : [min, max];
            },
          },
          // a flat series gets a small band around its value instead of uPlot's default 0..100
          y: log
            ? { distr: 3, log: 10, range: (_u, min, max) => (min === null || max === null || !(min > 0) ? [0.1, 10] : uPlot.rangeLog(min, max, 10, true)) }
            : { range: (_u, min, max) => (min === max ? [min - (Math.abs(min) || 1) * 0.5, max + (Math.abs(max) || 1) * 0.5] : uPlot.rangeNum(min, max, 0.1, true)) },
        },
        axes: [
          { stroke: axis, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, label: xLabel, labelSize: 18, labelFont: '11px system-ui, sans-serif', font: '11px system-ui, sans-serif', size: 36,
            values: (_u, vals) => tickLabels(vals), ...(isIntegerAxis(xLabel) ? { incrs: INTEGER_INCRS } : {}) },
          { stroke: axis, grid: { stroke: grid, width: 1, ...logFilter }, ticks: { stroke: grid, width: 1, ...logFilter }, font: '11px system-ui, sans-serif', size: 56,
            values: (_u, vals) => tickLabels(vals), ...logFilter },
        ],
        cursor: {
          ...(syncKey ? { sync: { key: syncKey, setSeries: false } } : {}),
          drag: { x: true, y: false, setScale: false },
          bind: {
            dblclick: () => () => {
              zoomRef.current = null;
              setZoomed(false);
              setRequestTick((t) => t + 1);
              return null;
            },
          },
        },
        hooks: {
          draw: [(u) => { drawStageMarks(u, spansRef.current, markColor); drawHighlight(u, highlightRef.current, cssVar('--accent', '#2563eb')); }],
          setSelect: [(u) => {
            if (u.select.width < 4) return;
            const min = u.posToVal(u.select.left, 'x');
            const max = u.posToVal(u.select.left + u.select.width, 'x');
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
            zoomRef.current = { min, max };
            setZoomed(true);
            setRequestTick((t) => t + 1);
          }],
          setCursor: [(u) => {
            const el = readoutRef.current;
            if (!el) return;
            const idx = u.cursor.idx;
            if (idx === null || idx === undefined) { el.textContent = ''; return; }
            const parts: string[] = [`${xLabel} ${formatValue(u.data[0][idx] ?? null)}`];
            let col = 1;
            // the raw value first (what was logged), the smoothed one beside it
            for (const s of series) {
              const raw = u.data[col]?.[idx];
              const sm = smoothing > 0 ? u.data[col + 1]?.[idx] : undefined;
              col += smoothing > 0 ? 2 : 1;
              if (raw !== null && raw !== undefined) parts.push(`${s.label}: ${formatValue(raw)}${sm !== null && sm !== undefined ? ` (smoothed ${formatValue(sm)})` : ''}`);
              else if (sm !== null && sm !== undefined) parts.push(`${s.label}: smoothed ${formatValue(sm)}`);
            }
            el.textContent = parts.join('   ');
          }],
        },
      };
      const el = hostRef.current;
      if (!el) return;
      el.replaceChildren();
      const plot = new uPlot(opts, data, el);
      plotRef.current = plot;
      structureRef.current = structure;
      if (zoom) plot.setScale('x', zoom);
    }
  }, [series, smoothing, width, structure, requestTick, height, log]);

  const exportPng = () => {
    const plot = plotRef.current;
    if (!plot) return;
    const src = plot.ctx.canvas;
    const pad = 28 * devicePixelRatio;
    const canvas = document.createElement('canvas');
    canvas.width = src.width;
    canvas.height = src.height + pad + 20 * devicePixelRatio;
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    ctx.fillStyle = cssVar('--bg-elev', '#fff');
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.fillStyle = cssVar('--fg', '#000');
    ctx.font = `${13 * devicePixelRatio}px system-ui, sans-serif`;
    ctx.fillText(title, 8 * devicePixelRatio, 18 * devicePixelRatio);
    ctx.drawImage(src, 0, pad);
    let x = 8 * devicePixelRatio;
    const y = canvas.height - 6 * devicePixelRatio;
    ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
    for (const s of series) {
      ctx.fillStyle = s.color;
      ctx.fillRect(x, y - 7 * devicePixelRatio, 12 * devicePixelRatio, 3 * devicePixelRatio);
      x += 16 * devicePixelRatio;
      ctx.fillStyle = cssVar('--fg', '#000');
      ctx.fillText(s.label, x, y);
      x += ctx.measureText(s.label).width + 14 * devicePixelRatio;
    }
    downloadDataUrl(`${title.replace(/[^A-Za-z0-9._-]+/g, '_')}.png`, canvas.toDataURL('image/png'));
  };

  const empty = series.length === 0 || series.every((s) => s.x.length === 0);
  const marked = stagesInRange(props.stageSpans ?? [], series);
  return (
    <div className="chart-card" data-testid={props.testId ?? `chart-${title}`} data-stage-marks={marked.join(',')} data-log={log ? '1' : undefined}>
      <div className="chart-title">
        <span title={title}>{title}</span>
        <span className="spacer" />
        {zoomed && <button className="btn small ghost" onClick={() => { zoomRef.current = null; setZoomed(false); setRequestTick((t) => t + 1); }}>reset zoom</button>}
        {!empty && log && logDropped > 0 && <span className="faint" title="a log scale has no place for zero or negative values" data-testid="log-dropped">{logDropped} ≤ 0 hidden</span>}
        {!empty && <span className="faint" title="points logged (all runs)">{pointInfo} pts</span>}
        {props.onTogglePin && (
          <button className={`btn small ghost${props.pinned ? ' active' : ''}`} onClick={props.onTogglePin} aria-pressed={props.pinned === true}
            title={props.pinned ? 'Unpin: back to its group' : 'Pin to the top (remembered)'} data-testid="pin-chart">{props.pinned ? 'unpin' : 'pin'}</button>
        )}
        {!empty && <button className="btn small ghost" onClick={exportPng} title="Save this chart as PNG">PNG</button>}
      </div>
      {empty ? <div className="chart-empty">no data yet</div> : null}
      <div ref={hostRef} style={empty ? { height: 0, overflow: 'hidden' } : undefined} />
      {!empty && (
        <div className="chart-legend">
          {series.map((s) => (
            <span key={s.key}><span className="swatch" style={{ background: s.color }} />{s.label}</span>
          ))}
          <span ref={readoutRef} className="mono" />
        </div>
      )}
    </div>
  );
}
