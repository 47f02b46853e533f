// The Run view's System tab (issue 12 item 11): the engine process's CPU and memory, the
// machine's memory and load, and the GPU where nvidia-smi reported one, over the run's wall
// time, from system.jsonl (inspect.systemMetrics). Stages are marked on the time axis. The backend
// and device that ran come from the run record (run.json provenance); CPU is a share of the
// machine's cores where the samples carry the core count.
import { useEffect, useMemo, useState, type ReactNode } from 'react';
import type { SystemSample } from '../../../core/api/contract.js';
import type { Client } from '../api/client.js';
import { MetricChart, formatValue, type ChartSeries } from '../charts/MetricChart.js';
import { timeSpans } from '../charts/chart-view.js';
import { seriesColor } from '../theme/theme.js';
import { ErrorBanner, KeyValues } from './widgets.js';

export interface SystemChart { name: string; unit: string; series: ChartSeries[] }

/** What ran the run (run.json provenance, core/api/records.ts); null for runs recorded before it existed. */
export interface RanOn { backend: string; device: string; codeVersion: string }

/**
 * CPU as a share of the machine: a sample's "% of one core" divided by its core count; samples
 * from before the core count was recorded stay in % of one core (then `unit` says so). The first
 * sample of such an older run is left out of the child-process CPU: its window was a few ms and
 * read as thousands of % (fixed in the sampler).
 */
export function cpuScale(samples: SystemSample[]): { unit: string; of: (s: SystemSample, v: number) => number; cores: number | null } {
  const cores = samples.every((s) => s.cores !== undefined) && samples.length > 0 ? samples[0]!.cores! : null;
  if (cores !== null) return { unit: `% of the machine's ${cores} cores`, of: (s, v) => v / s.cores!, cores };
  return { unit: '% of one core', of: (_s, v) => v, cores: null };
}

/** The name of the engine's child processes: the torch worker only when the run ran on torch. */
export function childLabel(ranOn: RanOn | null | undefined): string {
  if (ranOn?.backend === 'torch') return 'torch worker';
  return 'engine child processes';
}

/** The charts of a run's system samples; GPU charts only when some sample has a GPU reading. */
export function systemCharts(samples: SystemSample[], ranOn: RanOn | null = null): SystemChart[] {
  if (samples.length === 0) return [];
  const scale = cpuScale(samples);
  const legacyFirst = scale.cores === null ? samples[0] : undefined;   // older runs: the first child-CPU reading is not a measurement
  const child = childLabel(ranOn);
  const t0 = samples[0]!.time;
  const x = samples.map((s) => (s.time - t0) / 1000);
  const line = (key: string, label: string, i: number, pick: (s: SystemSample) => number | undefined): ChartSeries | null => {
    const xs: number[] = [];
    const ys: number[] = [];
    samples.forEach((s, k) => { const v = pick(s); if (v !== undefined && Number.isFinite(v)) { xs.push(x[k]!); ys.push(v); } });
    return xs.length ? { key, label, color: seriesColor(i), x: xs, y: ys } : null;
  };
  const present = (xs: Array<ChartSeries | null>) => xs.filter((s): s is ChartSeries => s !== null);
  const workers = samples.some((s) => s.workerCpuPercent !== undefined);
  const charts: SystemChart[] = [
    // the torch workers do the computing on the torch backend: their figures first, where present
    ...(workers ? [
      { name: `${child} CPU (${scale.unit})`, unit: '%', series: present([line('wcpu', 'CPU %', 0, (s) => (s === legacyFirst || s.workerCpuPercent === undefined ? undefined : scale.of(s, s.workerCpuPercent)))]) },
      { name: `${child} memory (MB)`, unit: 'MB', series: present([line('wrss', 'resident (RSS)', 0, (s) => s.workerRssMb)]) },
    ] : []),
    { name: `engine CPU (${scale.unit})`, unit: '%', series: present([line('cpu', 'CPU %', 0, (s) => scale.of(s, s.cpuPercent))]) },
    { name: 'engine memory (MB)', unit: 'MB', series: present([line('rss', 'resident (RSS)', 0, (s) => s.rssMb), line('heap', 'V8 heap', 1, (s) => s.heapMb)]) },
    { name: 'machine memory (MB)', unit: 'MB', series: present([line('used', 'in use', 0, (s) => s.memUsedMb), line('total', 'total', 2, (s) => s.memTotalMb)]) },
    { name: 'machine load (1-minute average)', unit: '', series: present([line('load', 'load average', 0, (s) => s.loadAvg)]) },
  ];
  if (samples.some((s) => s.gpuPercent !== undefined)) {
    charts.push({ name: 'GPU utilisation (%)', unit: '%', series: present([line('gpu', 'GPU %', 0, (s) => s.gpuPercent)]) });
  }
  if (samples.some((s) => s.gpuMemMb !== undefined)) {
    charts.push({ name: 'GPU memory (MB)', unit: 'MB', series: present([line('gpumem', 'in use', 0, (s) => s.gpuMemMb), line('gputotal', 'total', 2, (s) => s.gpuMemTotalMb)]) });
  }
  return charts;
}

export function SystemPanel(props: { client: Client; runId: string; active: boolean; theme: string; imported?: boolean; ranOn?: RanOn | null }) {
  const { client, runId, active, theme } = props;
  const [samples, setSamples] = useState<SystemSample[] | null>(null);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    let cancelled = false;
    const load = () => client.inspect.systemMetrics({ runId, maxPoints: 2000 }).then((r) => {
      if (!cancelled) { setSamples(r.samples); setTotal(r.total); setError(null); }
    }, (e: unknown) => { if (!cancelled) setError(e); });
    void load();
    const t = active ? setInterval(() => void load(), 5000) : null;
    return () => { cancelled = true; if (t) clearInterval(t); };
  }, [client, runId, active]);

  const ranOn = props.ranOn ?? null;
  const charts = useMemo(() => systemCharts(samples ?? [], ranOn), [samples, theme, ranOn]);
  const spans = useMemo(() => {
    if (!samples || samples.length === 0) return [];
    const t0 = samples[0]!.time;
    return timeSpans(samples.filter((s) => s.stage !== null).map((s) => ({ stage: s.stage!, x: (s.time - t0) / 1000 })));
  }, [samples]);

  if (error) return <ErrorBanner error={error} title="System metrics" />;
  if (samples === null) return <div className="muted">Loading system samples…</div>;
  if (samples.length === 0) {
    return (
      <div className="empty-state" data-testid="system-empty">
        {props.imported
          ? 'No system samples: an imported SPA/RAGEN run brings none (the workbench records them only for the runs its engine runs).'
          : 'No system samples: runs before this version did not record them (the engine writes system.jsonl every few seconds while a run runs).'}
      </div>
    );
  }
  const last = samples[samples.length - 1]!;
  const peak = (f: (s: SystemSample) => number) => Math.max(...samples.map(f));
  const hasGpu = samples.some((s) => s.gpuPercent !== undefined || s.gpuMemMb !== undefined);
  const scale = cpuScale(samples);
  const legacyFirst = scale.cores === null ? samples[0] : undefined;
  const childCpu = (s: SystemSample) => (s === legacyFirst || s.workerCpuPercent === undefined ? 0 : scale.of(s, s.workerCpuPercent));
  const now = active ? 'now' : 'at the end';
  const child = childLabel(ranOn);
  const unit = scale.cores !== null ? `% of ${scale.cores} cores` : '% of one core';
  return (
    <div data-testid="system-panel">
      <div className="row" style={{ gap: 24, alignItems: 'flex-start', marginBottom: 8 }}>
        <KeyValues items={[
          ['ran on', <span key="ran" data-testid="system-ran-on">{ranOn
            ? `${ranOn.backend} · ${ranOn.device} · code ${ranOn.codeVersion}`
            : 'not recorded (runs before the run record held it: the backend is in the log\'s "Compute backend" line)'}</span>],
          ['samples', `${total.toLocaleString()}${total > samples.length ? ` (${samples.length} shown, evenly thinned)` : ''}`],
          ...(samples.some((s) => s.workerCpuPercent !== undefined || s.workerPids !== undefined) ? [
            [child, <span key="child" data-testid="system-children">{last.workerPids !== undefined
              ? `CPU ${last.workerCpuPercent !== undefined ? `${formatValue(scale.of(last, last.workerCpuPercent))} ${unit}` : '–'} ${now} (peak ${formatValue(peak(childCpu))} ${unit}) · RSS ${formatValue(last.workerRssMb ?? 0)} MB (peak ${formatValue(peak((s) => s.workerRssMb ?? 0))}) · pid ${(last.workerPids ?? []).join(', ')}`
              : `not running ${now}`}</span>] as [string, ReactNode],
          ] : []),
          ['engine CPU', <span key="engine" data-testid="system-engine-cpu">{`${formatValue(scale.of(last, last.cpuPercent))} ${unit} ${now} · peak ${formatValue(peak((s) => scale.of(s, s.cpuPercent)))} ${unit}`}</span>],
          ['engine memory', `RSS ${formatValue(last.rssMb)} MB (peak ${formatValue(peak((s) => s.rssMb))}) · heap ${formatValue(last.heapMb)} MB`],
          ['machine memory', `${formatValue(last.memUsedMb)} of ${formatValue(last.memTotalMb)} MB in use`],
          ['GPU', hasGpu ? `${last.gpuPercent !== undefined ? `${formatValue(last.gpuPercent)} %` : '–'}${last.gpuMemMb !== undefined ? ` · ${formatValue(last.gpuMemMb)} of ${formatValue(last.gpuMemTotalMb)} MB` : ''}` : 'none reported (no nvidia-smi)'],
        ]} />
      </div>
      <div className="charts-grid">
        {charts.map((c) => (
          <MetricChart key={c.name} title={c.name} series={c.series} xLabel="wall time (s)" smoothing={0} syncKey={`system-${runId}`} theme={theme} stageSpans={spans} />
        ))}
      </div>
    </div>
  );
}
