// The Run view's System tab (issue 12 item 11): the engine process's CPU and memory, the
// machine's memory and load, and the GPU where nvidia-smi reported one, over the run's wall
// time, from system.jsonl (inspect.systemMetrics). Stages are marked on the time axis.
import { useEffect, useMemo, useState } from 'react';
import type { SystemSample } from '../../../core/api/contract.js';
import type { Client } from '../api/client.js';
import { MetricChart, formatValue, type ChartSeries } from '../charts/MetricChart.js';
import { timeSpans } from '../charts/chart-view.js';
import { seriesColor } from '../theme/theme.js';
import { ErrorBanner, KeyValues } from './widgets.js';

export interface SystemChart { name: string; unit: string; series: ChartSeries[] }

/** The charts of a run's system samples; GPU charts only when some sample has a GPU reading. */
export function systemCharts(samples: SystemSample[]): SystemChart[] {
  if (samples.length === 0) return [];
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
      { name: 'torch worker CPU (% of one core)', unit: '%', series: present([line('wcpu', 'worker CPU %', 0, (s) => s.workerCpuPercent)]) },
      { name: 'torch worker memory (MB)', unit: 'MB', series: present([line('wrss', 'resident (RSS)', 0, (s) => s.workerRssMb)]) },
    ] : []),
    { name: 'engine CPU (% of one core)', unit: '%', series: present([line('cpu', 'CPU %', 0, (s) => s.cpuPercent)]) },
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

export function SystemPanel(props: { client: Client; runId: string; active: boolean; theme: string; imported?: boolean }) {
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

  const charts = useMemo(() => systemCharts(samples ?? []), [samples, theme]);
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
  return (
    <div data-testid="system-panel">
      <div className="row" style={{ gap: 24, alignItems: 'flex-start', marginBottom: 8 }}>
        <KeyValues items={[
          ['samples', `${total.toLocaleString()}${total > samples.length ? ` (${samples.length} shown, evenly thinned)` : ''}`],
          ...(samples.some((s) => s.workerCpuPercent !== undefined) ? [
            ['torch worker', last.workerCpuPercent !== undefined
              ? `CPU ${formatValue(last.workerCpuPercent)} % now (peak ${formatValue(peak((s) => s.workerCpuPercent ?? 0))} %) · RSS ${formatValue(last.workerRssMb ?? 0)} MB (peak ${formatValue(peak((s) => s.workerRssMb ?? 0))}) · pid ${(last.workerPids ?? []).join(', ')}`
              : 'not running now'] as [string, string],
          ] : []),
          ['engine CPU', `${formatValue(last.cpuPercent)} % now · peak ${formatValue(peak((s) => s.cpuPercent))} %`],
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
