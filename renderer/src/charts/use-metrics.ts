// Metric series of one or more runs for the charts: loaded through metrics.query, then kept
// live from the runs' `metric` events (appended, re-rendered at most every 250 ms).
import { useEffect, useRef, useState } from 'react';
import type { MetricSeries, WorkbenchEvent } from '../../../core/api/contract.js';
import type { MetricPoint } from '../../../core/api/records.js';
import type { Client } from '../api/client.js';
import { StageAxis, type StageSpan } from './chart-view.js';

export type XMode = 'step' | 'time' | 'episodes';
export const X_LABELS: Record<XMode, string> = { step: 'step', time: 'wall time (s)', episodes: 'episodes' };
/** The x label when every stage is shown: steps and episodes restart per stage, so stages are laid end to end. */
export function xLabelOf(mode: XMode, stage: string | undefined, stagesShown = 2): string {
  return mode === 'time' || stage || stagesShown < 2 ? X_LABELS[mode] : `${X_LABELS[mode]} (stages end to end)`;
}

export interface Points { x: number[]; y: number[] }
/** name → runId → points */
export type MetricStore = Map<string, Map<string, Points>>;

export interface RunMetrics {
  names: string[];
  store: MetricStore;
  version: number;
  loading: boolean;
  error: unknown;
  /** runId → where each stage lies on the x axis (for the stage marks on the charts). */
  spans: Map<string, StageSpan[]>;
}

const SERVER_MAX_POINTS = 100_000; // ask for full resolution; the worker downsamples to pixels

/** Expand server buckets to points; when the server had to downsample, keep each bucket's min and max. */
export function seriesToPoints(s: MetricSeries): Points {
  if (!s.downsampled) return { x: [...s.x], y: [...s.y] };
  const x: number[] = [];
  const y: number[] = [];
  for (let i = 0; i < s.x.length; i++) {
    const c = s.count[i] ?? 1;
    if (c <= 1 || s.min[i] === s.max[i]) { x.push(s.x[i]!); y.push(s.y[i]!); continue; }
    const prev = i > 0 ? s.x[i - 1]! : s.x[i]!;
    const next = i + 1 < s.x.length ? s.x[i + 1]! : s.x[i]!;
    const half = Math.min(s.x[i]! - prev, next - s.x[i]!) / 4 || 1e-9;
    x.push(s.x[i]! - half, s.x[i]! + half);
    y.push(s.min[i]!, s.max[i]!);
  }
  return { x, y };
}

/** The x value of a live point under an x mode, or null when the point lacks it. */
export function xOf(point: MetricPoint, mode: XMode, t0: number | undefined): number | null {
  if (mode === 'step') return point.step;
  if (mode === 'episodes') return point.episodes ?? null;
  return (point.time - (t0 ?? point.time)) / 1000;
}

export function useRunMetrics(api: Client, runIds: string[], xMode: XMode, stage: string | undefined, live = true): RunMetrics {
  const [state, setState] = useState<RunMetrics>({ names: [], store: new Map(), version: 0, loading: true, error: null, spans: new Map() });
  const key = runIds.join(',');
  const storeRef = useRef<MetricStore>(new Map());

  useEffect(() => {
    let cancelled = false;
    const store: MetricStore = new Map();
    storeRef.current = store;
    const t0 = new Map<string, number>();
    const names = new Set<string>();
    // steps and episodes restart in every stage: on the all-stages view each run's stages go end to end
    const endToEnd = !stage && xMode !== 'time';
    const axes = new Map<string, StageAxis>();
    const axisOf = (runId: string) => { let a = axes.get(runId); if (!a) { a = new StageAxis(); axes.set(runId, a); } return a; };
    const timeSpanMap = new Map<string, Map<string, StageSpan>>();
    const noteTime = (runId: string, stageName: string, x: number) => {
      let m = timeSpanMap.get(runId);
      if (!m) { m = new Map(); timeSpanMap.set(runId, m); }
      const sp = m.get(stageName);
      if (!sp) m.set(stageName, { stage: stageName, start: x, end: x });
      else { sp.start = Math.min(sp.start, x); sp.end = Math.max(sp.end, x); }
    };
    const spans = (): Map<string, StageSpan[]> => {
      const out = new Map<string, StageSpan[]>();
      if (stage) return out;
      if (endToEnd) for (const [id, a] of axes) out.set(id, a.spans());
      else for (const [id, m] of timeSpanMap) out.set(id, [...m.values()].sort((a, b) => a.start - b.start));
      return out;
    };
    let version = 0;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const publish = () => {
      timer = null;
      if (cancelled) return;
      version++;
      setState({ names: [...names], store, version, loading: false, error: null, spans: spans() });
    };
    const schedule = () => { if (!timer) timer = setTimeout(publish, 250); };
    const buffered: Array<{ runId: string; point: MetricPoint }> = [];
    let loaded = false;

    const append = (runId: string, point: MetricPoint) => {
      if (stage && point.stage !== stage) return;
      if (!t0.has(runId)) t0.set(runId, point.time);
      const rawX = xOf(point, xMode, t0.get(runId));
      if (rawX === null) return;
      const x = endToEnd ? axisOf(runId).map(point.stage, rawX) : rawX;
      if (xMode === 'time') noteTime(runId, point.stage, x);
      for (const [name, value] of Object.entries(point.values)) {
        names.add(name);
        let byRun = store.get(name);
        if (!byRun) { byRun = new Map(); store.set(name, byRun); }
        let pts = byRun.get(runId);
        if (!pts) { pts = { x: [], y: [] }; byRun.set(runId, pts); }
        pts.x.push(x);
        pts.y.push(value);
      }
    };

    const unsubs = live && runIds.length > 0
      ? runIds.map((runId) => api.subscribe({ kind: 'run', runId }, (ev: WorkbenchEvent) => {
        if (ev.kind !== 'run' || ev.event.type !== 'metric') return;
        if (!loaded) { buffered.push({ runId, point: ev.event.point }); return; }
        append(runId, ev.event.point);
        schedule();
      }))
      : [];

    (async () => {
      if (runIds.length === 0) { loaded = true; publish(); return; }
      const { names: all } = await api.metrics.names({ runIds });
      // each run's stages in the order they first logged (for laying them end to end)
      const stageOrder = new Map<string, string[]>();
      if (endToEnd) {
        for (const id of runIds) stageOrder.set(id, (await api.metrics.names({ runIds: [id] })).stages);
      }
      const loadedSeries: MetricSeries[] = [];
      for (let i = 0; i < all.length; i += 100) {
        const chunk = all.slice(i, i + 100);
        const { series } = await api.metrics.query({ runIds, names: chunk, x: xMode, maxPoints: SERVER_MAX_POINTS, ...(stage ? { stage } : {}) });
        // time: make it relative to each run's first point
        if (xMode === 'time') {
          for (const s of series) if (s.x.length > 0) t0.set(s.runId, Math.min(t0.get(s.runId) ?? Infinity, s.x[0]!));
        }
        loadedSeries.push(...series);
      }
      if (endToEnd) {
        for (const id of runIds) {
          const axis = axisOf(id);
          for (const st of stageOrder.get(id) ?? []) {
            const xs = loadedSeries.filter((s) => s.runId === id && s.stage === st && s.x.length > 0);
            if (xs.length === 0) continue;
            axis.addStage(st, Math.max(...xs.map((s) => s.x[s.x.length - 1]!)), Math.min(...xs.map((s) => s.x[0]!)));
          }
        }
      }
      for (const s of loadedSeries) {
        names.add(s.name);
        const pts = seriesToPoints(s);
        if (xMode === 'time') {
          const base = t0.get(s.runId) ?? 0;
          for (let k = 0; k < pts.x.length; k++) pts.x[k] = (pts.x[k]! - base) / 1000;
          if (pts.x.length > 0) { noteTime(s.runId, s.stage, pts.x[0]!); noteTime(s.runId, s.stage, pts.x[pts.x.length - 1]!); }
        }
        if (endToEnd) {
          const axis = axisOf(s.runId);
          for (let k = 0; k < pts.x.length; k++) pts.x[k] = axis.map(s.stage, pts.x[k]!);
        }
        let byRun = store.get(s.name);
        if (!byRun) { byRun = new Map(); store.set(s.name, byRun); }
        const prev = byRun.get(s.runId);
        if (prev) { mergeSorted(prev, pts); } else byRun.set(s.runId, pts);
      }
      loaded = true;
      // Live points that arrived while loading: keep only those newer than what was loaded.
      for (const { runId, point } of buffered.splice(0)) {
        const raw = xOf(point, xMode, t0.get(runId));
        const x = raw !== null && endToEnd ? axisOf(runId).peek(point.stage, raw) : raw;
        const anyName = Object.keys(point.values)[0];
        const existing = anyName ? store.get(anyName)?.get(runId) : undefined;
        // a stage not loaded yet (x null) is newer than everything loaded
        if (x !== null && existing && existing.x.length > 0 && x <= existing.x[existing.x.length - 1]!) continue;
        append(runId, point);
      }
      publish();
    })().catch((error: unknown) => {
      if (!cancelled) setState((s) => ({ ...s, loading: false, error }));
    });

    return () => {
      cancelled = true;
      if (timer) clearTimeout(timer);
      for (const u of unsubs) u();
    };
  }, [api, key, xMode, stage, live]);

  return state;
}

/** Merge points of another stage into a series, keeping x ascending (the chart needs sorted x). */
function mergeSorted(into: Points, add: Points): void {
  const lastX = into.x[into.x.length - 1];
  if (lastX === undefined || add.x.length === 0 || add.x[0]! >= lastX) { into.x.push(...add.x); into.y.push(...add.y); return; }
  const pairs = into.x.map((x, i) => [x, into.y[i]!] as const).concat(add.x.map((x, i) => [x, add.y[i]!] as const));
  pairs.sort((a, b) => a[0] - b[0]);
  into.x.length = 0; into.y.length = 0;
  for (const [x, y] of pairs) { into.x.push(x); into.y.push(y); }
}

/** Order metric names: key quantities first (success, pass@k, reward, WM accuracy, KL, entropy, losses). */
export function sortMetricNames(names: string[]): string[] {
  const priority = [/success/i, /pass@|passAt/i, /reward|return/i, /wm|world|accuracy|f1/i, /kl/i, /entropy/i, /loss/i];
  const rank = (n: string) => { const i = priority.findIndex((r) => r.test(n)); return i < 0 ? priority.length : i; };
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}
