// Metric series of one or more runs for the charts: loaded through metrics.query, then kept
// live from the runs' `metric` events (appended, re-rendered at most every 250 ms).
import { useEffect, useRef, useState } from 'react';
import type { MetricSeries, WorkbenchEvent } from '../../../core/api/contract.js';
import type { MetricPoint } from '../../../core/api/records.js';
import type { Client } from '../api/client.js';

export type XMode = 'step' | 'time' | 'episodes';
export const X_LABELS: Record<XMode, string> = { step: 'step', time: 'wall time (s)', episodes: 'episodes' };

export interface Points { x: number[]; y: number[] }
/** name → runId → points */
export type MetricStore = Map<string, Map<string, Points>>;

export interface RunMetrics {
  names: string[];
  store: MetricStore;
  version: number;
  loading: boolean;
  error: unknown;
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
  const [state, setState] = useState<RunMetrics>({ names: [], store: new Map(), version: 0, loading: true, error: null });
  const key = runIds.join(',');
  const storeRef = useRef<MetricStore>(new Map());

  useEffect(() => {
    let cancelled = false;
    const store: MetricStore = new Map();
    storeRef.current = store;
    const t0 = new Map<string, number>();
    const names = new Set<string>();
    let version = 0;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const publish = () => {
      timer = null;
      if (cancelled) return;
      version++;
      setState({ names: [...names], store, version, loading: false, error: null });
    };
    const schedule = () => { if (!timer) timer = setTimeout(publish, 250); };
    const buffered: Array<{ runId: string; point: MetricPoint }> = [];
    let loaded = false;

    const append = (runId: string, point: MetricPoint) => {
      if (stage && point.stage !== stage) return;
      if (!t0.has(runId)) t0.set(runId, point.time);
      const x = xOf(point, xMode, t0.get(runId));
      if (x === null) return;
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
      for (let i = 0; i < all.length; i += 100) {
        const chunk = all.slice(i, i + 100);
        const { series } = await api.metrics.query({ runIds, names: chunk, x: xMode, maxPoints: SERVER_MAX_POINTS, ...(stage ? { stage } : {}) });
        // time: make it relative to each run's first point
        if (xMode === 'time') {
          for (const s of series) if (s.x.length > 0) t0.set(s.runId, Math.min(t0.get(s.runId) ?? Infinity, s.x[0]!));
        }
        for (const s of series) {
          names.add(s.name);
          const pts = seriesToPoints(s);
          if (xMode === 'time') {
            const base = t0.get(s.runId) ?? 0;
            for (let k = 0; k < pts.x.length; k++) pts.x[k] = (pts.x[k]! - base) / 1000;
          }
          let byRun = store.get(s.name);
          if (!byRun) { byRun = new Map(); store.set(s.name, byRun); }
          const prev = byRun.get(s.runId);
          if (prev) { prev.x.push(...pts.x); prev.y.push(...pts.y); } else byRun.set(s.runId, pts);
        }
      }
      loaded = true;
      // Live points that arrived while loading: keep only those newer than what was loaded.
      for (const { runId, point } of buffered.splice(0)) {
        const x = xOf(point, xMode, t0.get(runId));
        const anyName = Object.keys(point.values)[0];
        const existing = anyName ? store.get(anyName)?.get(runId) : undefined;
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

/** Order metric names: key quantities first (success, pass@k, reward, WM accuracy, KL, entropy, losses). */
export function sortMetricNames(names: string[]): string[] {
  const priority = [/success/i, /pass@|passAt/i, /reward|return/i, /wm|world|accuracy|f1/i, /kl/i, /entropy/i, /loss/i];
  const rank = (n: string) => { const i = priority.findIndex((r) => r.test(n)); return i < 0 ? priority.length : i; };
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}
