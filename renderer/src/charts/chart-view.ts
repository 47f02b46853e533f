// The Run view's chart state and the small pure rules behind it (issue 12 item 7): tick labels
// that never repeat, smoothing off by default on short series, stages laid end to end on one
// step axis, the view state in the URL (so a link reproduces the view), and pinned charts.
import type { XMode } from './use-metrics.js';

/** Below this many points in the longest series the charts start unsmoothed (an EMA would hide the few real values). */
export const SMOOTHING_MIN_POINTS = 40;
/** The EMA weight used by default on longer series. */
export const DEFAULT_SMOOTHING = 0.6;

/** Default smoothing for the longest series shown: 0 (off) on short series, DEFAULT_SMOOTHING on long ones. */
export function defaultSmoothing(longestSeries: number): number {
  return longestSeries < SMOOTHING_MIN_POINTS ? 0 : DEFAULT_SMOOTHING;
}

/** Compact number: up to 4 significant digits, no trailing zeros, exponent for tiny/huge values. */
export function formatValue(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a < 1e-3 || a >= 1e6) return v.toExponential(2).replace(/\.?0+e/, 'e');
  if (Number.isInteger(v)) return String(v);
  return String(Number(v.toPrecision(4)));
}

/** Labels repeat when two neighbouring non-blank labels are equal (blank = a tick the axis left unlabelled). */
const hasRepeats = (labels: string[]) => {
  const shown = labels.filter((l) => l !== '');
  return shown.some((l, i) => i > 0 && l === shown[i - 1]);
};

/**
 * Axis tick labels with no label repeated: the compact form when it tells the ticks apart, else
 * as many decimals as the tick spacing needs (ticks 4.8395, 4.84, 4.8405 read "4.8395",
 * "4.8400", "4.8405", not "4.84" three times). A tick without a value (null, as uPlot passes for
 * the unlabelled ticks of a log axis) gets an empty label.
 */
export function tickLabels(vals: ReadonlyArray<number | null>): string[] {
  const finite = (v: number | null): v is number => v !== null && Number.isFinite(v);
  const compact = vals.map((v) => (finite(v) ? formatValue(v) : ''));
  if (!hasRepeats(compact)) return compact;
  const xs = vals.filter(finite);
  let spacing = Infinity;
  for (let i = 1; i < xs.length; i++) {
    const d = Math.abs(xs[i]! - xs[i - 1]!);
    if (d > 0 && d < spacing) spacing = d;
  }
  if (!Number.isFinite(spacing)) return compact;          // every tick the same value: nothing to tell apart
  for (let decimals = Math.max(0, Math.ceil(-Math.log10(spacing) - 1e-9)); decimals <= 15; decimals++) {
    const fixed = vals.map((v) => (finite(v) ? v.toFixed(decimals) : ''));
    if (!hasRepeats(fixed)) return fixed;
  }
  return vals.map((v) => (finite(v) ? String(v) : ''));
}

/**
 * The ticks a log axis labels (and grids), out of uPlot's 1..9 × 10^k splits: the densest of
 * "all", "1-2-5 multiples", "powers of ten", "every n-th power of ten" that fits `maxLabels`
 * (the plot's height over a label's height), so labels never pile up on a short chart.
 */
export function logTicks(splits: ReadonlyArray<number>, maxLabels = 8): Array<number | null> {
  const exponent = (v: number) => Math.floor(Math.log10(v) + 1e-9);
  const mantissa = (v: number) => Math.round(v / 10 ** exponent(v));
  const levels: Array<(v: number) => boolean> = [
    () => true,
    (v) => [1, 2, 5].includes(mantissa(v)),
    (v) => mantissa(v) === 1,
  ];
  const pos = splits.filter((v) => v > 0);
  for (const keep of levels) {
    if (pos.filter(keep).length <= Math.max(2, maxLabels)) return splits.map((v) => (v > 0 && keep(v) ? v : null));
  }
  const decades = pos.filter((v) => mantissa(v) === 1);
  const every = Math.ceil(decades.length / Math.max(2, maxLabels));
  return splits.map((v) => (v > 0 && mantissa(v) === 1 && exponent(v) % every === 0 ? v : null));
}

/** One stage's stretch of the x axis in a run: where its first and last points are. */
export interface StageSpan { stage: string; start: number; end: number }

/**
 * Lays stages end to end on one axis. Steps (and episodes) restart in every stage, so on the
 * "all stages" view each stage is shifted to start one past where the previous one ended; the
 * stages come in the order they first logged. Offsets are fixed when a stage first appears (a
 * stage that comes later starts after the one running now has ended), so live points append.
 */
export class StageAxis {
  private readonly order: string[] = [];
  private readonly offsets = new Map<string, number>();
  private readonly ends = new Map<string, number>();
  private readonly starts = new Map<string, number>();

  /** Register stages in order with their highest raw x (a loaded history). */
  addStage(stage: string, maxRawX: number, minRawX = 0): void {
    this.offsetOf(stage);
    this.extend(stage, minRawX);
    this.extend(stage, maxRawX);
  }

  /** The shifted x of a raw x in a stage (registers the stage when new). */
  map(stage: string, rawX: number): number {
    const x = rawX + this.offsetOf(stage);
    this.extend(stage, rawX);
    return x;
  }

  /** The shifted x of a raw x, without registering anything; null for a stage not seen yet. */
  peek(stage: string, rawX: number): number | null {
    const offset = this.offsets.get(stage);
    return offset === undefined ? null : rawX + offset;
  }

  spans(): StageSpan[] {
    return this.order.map((stage) => ({ stage, start: this.starts.get(stage)!, end: this.ends.get(stage)! }));
  }

  private offsetOf(stage: string): number {
    const known = this.offsets.get(stage);
    if (known !== undefined) return known;
    const prev = this.order[this.order.length - 1];
    const offset = prev === undefined ? 0 : Math.floor(this.ends.get(prev)!) + 1;
    this.order.push(stage);
    this.offsets.set(stage, offset);
    this.starts.set(stage, offset);
    this.ends.set(stage, offset);
    return offset;
  }

  private extend(stage: string, rawX: number): void {
    const x = rawX + this.offsets.get(stage)!;
    if (x > this.ends.get(stage)!) this.ends.set(stage, x);
    if (x < this.starts.get(stage)!) this.starts.set(stage, x);
  }
}

/** Where each stage begins and ends on a time axis: its first and last point. */
export function timeSpans(points: Array<{ stage: string; x: number }>): StageSpan[] {
  const spans = new Map<string, StageSpan>();
  for (const { stage, x } of points) {
    const s = spans.get(stage);
    if (!s) spans.set(stage, { stage, start: x, end: x });
    else { s.start = Math.min(s.start, x); s.end = Math.max(s.end, x); }
  }
  return [...spans.values()].sort((a, b) => a.start - b.start);
}

export type RunTab = 'charts' | 'log' | 'samples' | 'config' | 'system' | 'tokens';
const TABS: RunTab[] = ['charts', 'log', 'samples', 'config', 'system', 'tokens'];
const X_MODES: XMode[] = ['step', 'time', 'episodes'];

/** What a link to the Run view carries: the tab and every chart setting. */
export interface ChartViewState {
  tab: RunTab;
  x: XMode;
  stage: string;             // '' = all stages
  smoothing: number | null;  // null = the default for the series length (defaultSmoothing)
  log: boolean;              // log-scale y
  filter: string;            // metric name filter (space-separated terms)
  overlay: string[];         // other runs drawn on the same charts
}

export const DEFAULT_VIEW: ChartViewState = { tab: 'charts', x: 'step', stage: '', smoothing: null, log: false, filter: '', overlay: [] };

/** View state → URL query parameters; defaults are left out so a plain link stays plain. */
export function viewToParams(v: ChartViewState): Record<string, string> {
  const p: Record<string, string> = {};
  if (v.tab !== DEFAULT_VIEW.tab) p['tab'] = v.tab;
  if (v.x !== DEFAULT_VIEW.x) p['x'] = v.x;
  if (v.stage) p['stage'] = v.stage;
  if (v.smoothing !== null) p['smooth'] = String(Number(v.smoothing.toFixed(2)));
  if (v.log) p['log'] = '1';
  if (v.filter.trim()) p['filter'] = v.filter;
  if (v.overlay.length > 0) p['overlay'] = v.overlay.join(',');
  return p;
}

/** URL query parameters → view state; unknown or malformed values fall back to the defaults. */
export function paramsToView(p: Record<string, string> | undefined): ChartViewState {
  const get = (k: string) => p?.[k];
  const tab = TABS.find((t) => t === get('tab')) ?? DEFAULT_VIEW.tab;
  const x = X_MODES.find((m) => m === get('x')) ?? DEFAULT_VIEW.x;
  const smoothRaw = get('smooth');
  const smoothNum = smoothRaw === undefined ? NaN : Number(smoothRaw);
  const smoothing = Number.isFinite(smoothNum) && smoothNum >= 0 && smoothNum < 1 ? smoothNum : null;
  const overlay = (get('overlay') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  return { tab, x, stage: get('stage') ?? '', smoothing, log: get('log') === '1', filter: get('filter') ?? '', overlay: [...new Set(overlay)] };
}

// ── pinned charts: metric names, remembered in this browser/app (localStorage) ──

const PIN_KEY = 'spa-workbench.pinned-charts';

export function loadPinned(storage: Pick<Storage, 'getItem'> | undefined = globalThis.localStorage): string[] {
  try {
    const raw = storage?.getItem(PIN_KEY);
    const parsed: unknown = raw ? JSON.parse(raw) : [];
    return Array.isArray(parsed) ? parsed.filter((x): x is string => typeof x === 'string') : [];
  } catch { return []; }
}

export function savePinned(names: string[], storage: Pick<Storage, 'setItem'> | undefined = globalThis.localStorage): void {
  try { storage?.setItem(PIN_KEY, JSON.stringify(names)); } catch { /* storage full or disabled: pins last for this session */ }
}

/** Pin or unpin one metric; pinned charts keep the order they were pinned in. */
export function togglePinned(pinned: string[], name: string): string[] {
  return pinned.includes(name) ? pinned.filter((n) => n !== name) : [...pinned, name];
}
