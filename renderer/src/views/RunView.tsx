// One run: its stage pipeline with progress bars and time remaining, live charts of every
// metric (several runs overlaid, smoothing, log scale, x by step / time / episodes, stages
// marked, pinned charts first; the view state in the URL), the log pane, system metrics, token
// histograms, stop / resume, links into the trace inspector, replay and dataset browser,
// exports (CSV, JSONL, a SPA/RAGEN bundle). An imported run is read-only and says so.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { ProjectInfo, RunInfo, RunSummary, StageState, WorkbenchEvent } from '../../../core/api/contract.js';
import type { RunEvent } from '../../../core/api/records.js';
import type { Client } from '../api/client.js';
import { formatRoute, type Route } from '../routes.js';
import { ErrorBanner, KeyValues, ProgressBar, StatusBadge, Tabs } from '../components/widgets.js';
import { fmtDate, fmtDuration, fmtEta, fmtPct } from '../components/format.js';
import { fmtWmAccuracy, keyMetrics, SOURCE_LABEL, type MetricSource } from '../components/key-metrics.js';
import { RunTagsNotes, RunTitle } from '../components/RunLabels.js';
import { StageSamples } from '../components/StageSamples.js';
import { downloadText, toCsv } from '../components/download.js';
import { flatten } from '../components/diff.js';
import { type ChartSeries } from '../charts/MetricChart.js';
import { ChartGroups } from '../charts/ChartGroups.js';
import { sortMetricNames, useRunMetrics, xLabelOf, type XMode } from '../charts/use-metrics.js';
import { DEFAULT_SMOOTHING, defaultSmoothing, loadPinned, paramsToView, savePinned, SMOOTHING_MIN_POINTS, togglePinned, viewToParams, type ChartViewState, type RunTab } from '../charts/chart-view.js';
import { SystemPanel } from '../components/SystemPanel.js';
import { FinalEvalPanel } from '../components/FinalEvalPanel.js';
import { metricMeaning } from '../components/metric-glossary.js';
import { nameOf, nText } from '../components/metric-names.js';
import { TokensPanel } from '../components/TokensPanel.js';
import { ExportBundlePanel, forgetImport, importSummary, recalledImport } from '../components/InteropPanels.js';
import { seriesColor } from '../theme/theme.js';

export interface RunViewProps {
  client: Client;
  navigate: (route: Route) => void;
  runId: string;
  theme: string;
  /** The route's query: tab and chart view state (a link reproduces the view). */
  params?: Record<string, string>;
}

type LogLine = { key: number; time: number; level: string; text: string };
type Progress = { done: number; total: number; etaSeconds: number | null; message?: string | undefined };
type RunEtaState = { seconds: number | null; unestimated: number };

const ACTIVE = new Set(['running', 'queued', 'stopping']);
const MAX_LOG = 2000;

export function eventToLog(e: RunEvent): Omit<LogLine, 'key'> | null {
  switch (e.type) {
    case 'log': return { time: e.time, level: e.level, text: `${e.stage ? `[${e.stage}] ` : ''}${e.message}` };
    case 'stage': return { time: e.time, level: e.status === 'failed' ? 'error' : 'info', text: `stage ${e.stage}: ${e.status}${e.reason ? ` — ${e.reason}` : ''}` };
    case 'status': return { time: e.time, level: e.status === 'failed' ? 'error' : 'info', text: `run ${e.status}${e.reason ? ` — ${e.reason}` : ''}` };
    case 'checkpoint': return { time: e.time, level: 'debug', text: `[${e.stage}] checkpoint at step ${e.step}: ${e.path}` };
    default: return null;
  }
}

export default function RunView({ client, navigate, runId, theme, params }: RunViewProps) {
  const [run, setRun] = useState<RunInfo | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [progress, setProgress] = useState<Record<string, Progress>>({});
  const [log, setLog] = useState<LogLine[]>([]);
  // the tab and the chart settings live in the URL (#/run/<id>?tab=…&x=…&smooth=…&log=1&filter=…&overlay=…)
  const [view, setView] = useState<ChartViewState>(() => paramsToView(params));
  const patch = useCallback((p: Partial<ChartViewState>) => setView((v) => ({ ...v, ...p })), []);
  const firstParams = useRef(true);
  useEffect(() => {                      // a new route (a link, back/forward): take its state
    if (firstParams.current) { firstParams.current = false; return; }
    setView(paramsToView(params));
  }, [params, runId]);
  useEffect(() => {                      // state → URL, replacing the history entry (no entry per slider move)
    const p = viewToParams(view);
    const hash = formatRoute({ view: 'run', runId, ...(Object.keys(p).length ? { params: p } : {}) });
    if (location.hash !== hash) history.replaceState(history.state, '', hash);
  }, [view, runId]);
  const { tab, x: xMode, stage, filter: metricFilter, overlay, log: logScale } = view;
  const setTab = (t: RunTab) => patch({ tab: t });
  const setOverlay = (f: (o: string[]) => string[]) => setView((v) => ({ ...v, overlay: f(v.overlay) }));
  const [pinned, setPinned] = useState<string[]>(() => loadPinned());
  const togglePin = useCallback((name: string) => setPinned((p) => { const next = togglePinned(p, name); savePinned(next); return next; }), []);
  const [exporting, setExporting] = useState(false);
  const [imported, setImported] = useState(() => recalledImport(runId));
  const [allRuns, setAllRuns] = useState<RunSummary[]>([]);
  const [busy, setBusy] = useState(false);
  const [project, setProject] = useState<ProjectInfo | null>(null);
  const [runEta, setRunEta] = useState<RunEtaState | null>(null);
  const [pastWarnings, setPastWarnings] = useState<string[]>([]);
  const [warningsHidden, setWarningsHidden] = useState(false);
  const [finalResult, setFinalResult] = useState<Record<string, unknown> | null>(null);
  const logKey = useRef(0);
  const logRef = useRef<HTMLDivElement>(null);
  const refetchTimer = useRef<ReturnType<typeof setTimeout> | null>(null);

  const load = useCallback(() => {
    client.runs.get({ runId }).then((r) => { setRun(r); setError(null); }, setError);
  }, [client, runId]);
  useEffect(() => { setRun(null); setProgress({}); setLog([]); setExporting(false); setImported(recalledImport(runId)); load(); }, [load, runId]);
  useEffect(() => { client.runs.list({ limit: 100000 }).then((r) => setAllRuns(r.runs), () => {}); }, [client, runId]);
  useEffect(() => { client.projects.info().then((r) => setProject(r.project), () => {}); }, [client, runId]);
  // the project (read-only or not) and the run again after a reconnect: a restarted server may hold the project now
  const wasClosed = useRef(false);
  useEffect(() => client.onConnection((state) => {
    if (state !== 'open') { wasClosed.current = true; return; }
    if (!wasClosed.current) return;
    wasClosed.current = false;
    if (state !== 'open') return;
    client.projects.info().then((r) => setProject(r.project), () => {});
    load();
  }), [client, runId, load]);

  const addLog = useCallback((lines: Array<Omit<LogLine, 'key'>>) => {
    if (lines.length === 0) return;
    setLog((cur) => [...cur, ...lines.map((l) => ({ ...l, key: logKey.current++ }))].slice(-MAX_LOG));
  }, []);

  // Warnings of the whole run (the log pane holds only its last 500 events): the banner above the stages lists them.
  useEffect(() => {
    let cancelled = false;
    setPastWarnings([]);
    setWarningsHidden(false);
    (async () => {
      const found: string[] = [];
      // every log line of the run, 10,000 a page (at most 10 pages: a run's log is a few lines a step)
      for (let offset = 0, page = 0; page < 10; page++) {
        const got = await client.runs.events({ runId, types: ['log'], offset, limit: 10000 });
        for (const e of got.events) if (e.type === 'log' && e.level === 'warn') found.push(eventToLog(e)!.text);
        offset += got.events.length;
        if (got.events.length === 0 || offset >= got.total) break;
      }
      if (!cancelled) setPastWarnings(found);
    })().catch(() => { /* no events yet */ });
    return () => { cancelled = true; };
  }, [client, runId]);
  const warnings = useMemo(() => [...new Set([...pastWarnings, ...log.filter((l) => l.level === 'warn').map((l) => l.text)])], [pastWarnings, log]);

  // History of the log pane (the last 500 events), then live events.
  useEffect(() => {
    let cancelled = false;
    const types = ['log', 'stage', 'status', 'checkpoint'];
    client.runs.events({ runId, types, limit: 1 }).then(async (head) => {
      const offset = Math.max(0, head.total - 500);
      const page = await client.runs.events({ runId, types, offset, limit: 500 });
      if (cancelled) return;
      addLog(page.events.map(eventToLog).filter((l): l is Omit<LogLine, 'key'> => l !== null));
    }).catch(() => { /* no events yet */ });
    const unsub = client.subscribe({ kind: 'run', runId }, (ev: WorkbenchEvent) => {
      if (ev.kind !== 'run') return;
      const e = ev.event;
      if (e.type === 'progress') {
        setProgress((p) => ({ ...p, [e.stage]: { done: e.done, total: e.total, etaSeconds: e.etaSeconds, message: e.message } }));
        if (e.runEtaSeconds !== undefined) setRunEta({ seconds: e.runEtaSeconds ?? null, unestimated: e.unestimatedStages ?? 0 });
        return;
      }
      const line = eventToLog(e);
      if (line) addLog([line]);
      if (e.type === 'status' || e.type === 'stage') {
        if (!refetchTimer.current) refetchTimer.current = setTimeout(() => { refetchTimer.current = null; load(); }, 150);
      }
    });
    return () => { cancelled = true; unsub(); if (refetchTimer.current) { clearTimeout(refetchTimer.current); refetchTimer.current = null; } };
  }, [client, runId, addLog, load]);

  // eval/final.json (intervals and n behind the Final evaluation's verdict), once the run has eval metrics
  const hasEval = run ? Object.keys(run.latest).some((n) => n.startsWith('eval/')) : false;
  const evalMark = run ? run.latest['eval/passAt1'] ?? run.latest['eval/success'] ?? null : null;
  useEffect(() => {
    setFinalResult(null);
    if (!hasEval) return;
    let cancelled = false;
    client.evals.list({ runId }).then((r) => {
      if (!cancelled) setFinalResult(r.results.find((e) => e.id === 'final')?.result ?? null);
    }, () => { /* no eval files: the panel shows the means without a verdict */ });
    return () => { cancelled = true; };
  }, [client, runId, hasEval, evalMark]);

  // Keep the log scrolled to the bottom when the user is at the bottom.
  useEffect(() => {
    const el = logRef.current;
    if (el && el.scrollHeight - el.scrollTop - el.clientHeight < 60) el.scrollTop = el.scrollHeight;
  }, [log, tab]);

  // While running, refresh the summary now and then (duration, latest metrics).
  const active = run ? ACTIVE.has(run.status) : false;
  useEffect(() => {
    if (!active) return;
    const t = setInterval(load, 3000);
    return () => clearInterval(t);
  }, [active, load]);

  const runIds = useMemo(() => [runId, ...overlay.filter((id) => id !== runId)], [runId, overlay]);
  const metrics = useRunMetrics(client, runIds, xMode, stage || undefined);
  const [stages, setStages] = useState<string[]>([]);
  useEffect(() => { client.metrics.names({ runIds: [runId] }).then((r) => setStages(r.stages), () => {}); }, [client, runId, metrics.names.length]);

  const runName = useCallback((id: string) => allRuns.find((r) => r.id === id)?.name ?? (id === runId ? run?.name : undefined) ?? id, [allRuns, runId, run]);
  const charts = useMemo(() => {
    const terms = metricFilter.toLowerCase().split(/\s+/).filter(Boolean);
    return sortMetricNames(metrics.names).filter((n) => terms.every((t) => n.toLowerCase().includes(t))).map((name) => {
      const byRun = metrics.store.get(name);
      const series: ChartSeries[] = runIds.map((id, i) => {
        const pts = byRun?.get(id);
        return { key: id, label: runIds.length > 1 ? runName(id) : name, color: seriesColor(i), x: pts?.x ?? [], y: pts?.y ?? [] };
      }).filter((s) => s.x.length > 0);
      return { name, series };
    });
    // theme: colours are read from CSS variables
  }, [metrics, runIds, metricFilter, runName, theme]);
  // smoothing: what the URL says, else off on short series (an EMA over a few points hides the real values)
  const longest = useMemo(() => Math.max(0, ...charts.flatMap((c) => c.series.map((s) => s.x.length))), [charts]);
  const smoothing = view.smoothing ?? defaultSmoothing(longest);
  const stageSpans = metrics.spans.get(runId) ?? [];

  const act = async (fn: () => Promise<unknown>) => {
    setBusy(true);
    try { await fn(); load(); } catch (e) { setError(e); } finally { setBusy(false); }
  };

  const exportMetricsCsv = async () => {
    try {
      const { names } = await client.metrics.names({ runIds: [runId] });
      const rows: unknown[][] = [];
      for (let i = 0; i < names.length; i += 100) {
        const { series } = await client.metrics.query({ runIds: [runId], names: names.slice(i, i + 100), x: 'step', maxPoints: 100000 });
        for (const s of series) for (let k = 0; k < s.x.length; k++) rows.push([s.runId, s.stage, s.name, s.x[k], s.y[k], s.min[k], s.max[k], s.count[k]]);
      }
      downloadText(`${runId}-metrics.csv`, toCsv(['run', 'stage', 'name', 'step', 'value', 'min', 'max', 'count'], rows), 'text/csv');
    } catch (e) { setError(e); }
  };
  const exportEpisodesJsonl = async () => {
    try {
      const lines: string[] = [];
      let offset = 0;
      for (;;) {
        const page = await client.rollouts.query({ runId, offset, limit: 1000 });
        if (offset === 0 && page.total > 5000 && !confirm(`Export all ${page.total} episodes? This may take a while.`)) return;
        for (const ep of page.episodes) lines.push(JSON.stringify(await client.rollouts.get({ runId, id: ep.id })));
        offset += page.episodes.length;
        if (page.episodes.length === 0 || offset >= page.total) break;
      }
      downloadText(`${runId}-episodes.jsonl`, lines.join('\n') + (lines.length ? '\n' : ''), 'application/x-ndjson');
    } catch (e) { setError(e); }
  };

  if (!run) {
    return <div><ErrorBanner error={error} />{!error && <div className="muted">Loading run…</div>}</div>;
  }
  const km = keyMetrics(run.latest);
  const readOnly = project?.readOnly === true;
  const canStop = !readOnly || project?.holder?.canStop === true;
  const onLabelsChanged = (r: RunSummary) => setRun((cur) => (cur ? { ...cur, name: r.name, tags: r.tags, notes: r.notes } : cur));
  const wholeEta = ACTIVE.has(run.status) ? runEta ?? (run.progress?.runEtaSeconds !== undefined ? { seconds: run.progress.runEtaSeconds ?? null, unestimated: run.progress.unestimatedStages ?? 0 } : null) : null;
  // the attempts' summed time; a finished attempt whose time is not in yet counts from its start and end
  const ranMs = run.status === 'running' && run.startedAt ? run.durationMs + Date.now() - run.startedAt
    : run.durationMs > 0 ? run.durationMs : run.startedAt && run.finishedAt && run.finishedAt > run.startedAt ? run.finishedAt - run.startedAt : 0;
  const src = (s: MetricSource | null) => (s ? SOURCE_LABEL[s] : null);
  const otherRuns = allRuns.filter((r) => r.id !== runId && !overlay.includes(r.id));
  const isImported = run.status === 'imported';

  return (
    <div data-testid="run-view" data-run-status={run.status}>
      <div className="row" style={{ marginBottom: 8 }}>
        <RunTitle client={client} run={run} readOnly={readOnly} onChanged={onLabelsChanged} onError={setError} />
        <StatusBadge status={run.status} />
        {isImported && <span className="badge" data-testid="imported-badge" title="Imported from a SPA/RAGEN run folder: nothing to start, stop or resume">read-only · from SPA/RAGEN</span>}
        {wholeEta && <span className="muted" data-testid="run-eta" title="This stage's ETA plus the median time each stage to come took in earlier runs of the same preset, size, method and env">{fmtRunEta(wholeEta)}</span>}
        <span className="muted">{run.method} · {run.env} · {run.size}{run.preset ? ` · preset ${run.preset}` : ''}</span>
        <span className="grow" />
        {run.status === 'created' && !readOnly && <button className="btn primary" disabled={busy} onClick={() => void act(() => client.runs.start({ runId }))} data-testid="start-run">Start</button>}
        {ACTIVE.has(run.status) && canStop && <button className="btn danger" disabled={busy || run.status === 'stopping'} onClick={() => void act(() => client.runs.stop({ runId }))} data-testid="stop-run">Stop</button>}
        {(run.status === 'stopped' || run.status === 'failed') && !readOnly && <button className="btn primary" disabled={busy} onClick={() => void act(() => client.runs.resume({ runId }))} data-testid="resume-run">Resume</button>}
      </div>
      <div className="row" style={{ marginBottom: 12, fontSize: 13 }}>
        <a onClick={() => navigate({ view: 'trace', runId })} data-testid="link-trace">Trace inspector</a>
        <a onClick={() => navigate({ view: 'replay', runId })} data-testid="link-replay">Replay</a>
        <a onClick={() => navigate({ view: 'datasets', runId })}>Dataset</a>
        <a onClick={() => navigate({ view: 'templates', runId })}>Template</a>
        <a onClick={() => navigate({ view: 'compare', runIds: [runId, ...overlay] })}>Compare</a>
        <span className="grow" />
        <span className="faint">Export:</span>
        <button className="btn small" onClick={() => void exportMetricsCsv()}>Metrics CSV</button>
        <button className="btn small" onClick={() => void exportEpisodesJsonl()}>Episodes JSONL</button>
        <button className="btn small" onClick={() => downloadText(`${runId}-config.json`, JSON.stringify(run.config, null, 2), 'application/json')}>Config JSON</button>
        {!isImported && <button className="btn small" onClick={() => setExporting((v) => !v)} aria-expanded={exporting} data-testid="export-bundle-button"
          title="Write a bundle that runs this experiment with SPA's released recipe (RAGEN on verl) on a GPU cluster">Export for SPA/RAGEN…</button>}
      </div>
      {exporting && <ExportBundlePanel client={client} runId={runId} onClose={() => setExporting(false)} />}
      {imported && (
        <div className="banner info" data-testid="import-notice">
          <div className="row"><div className="title grow">Imported run</div><a onClick={() => { forgetImport(runId); setImported(null); }} aria-label="dismiss import notice">✕</a></div>
          <div className="details">{importSummary(imported)}{[...imported.warnings, ...imported.skipped].map((w) => `\n• ${w}`).join('')}</div>
        </div>
      )}
      <RunTagsNotes client={client} run={run} readOnly={readOnly} onChanged={onLabelsChanged} onError={setError} />
      <ErrorBanner error={error} onDismiss={() => setError(null)} />
      {run.reason && (run.status === 'failed' || run.status === 'stopped') && (
        <div className={`banner ${run.status === 'failed' ? 'error' : 'warn'}`} data-testid="run-reason">
          <div className="title">{run.status === 'failed' ? 'Run failed' : 'Run stopped'}</div>
          <div className="details">{run.reason}{'\n'}Resume continues from the last completed stage.</div>
        </div>
      )}

      {warnings.length > 0 && !warningsHidden && (
        <div className="banner warn" data-testid="run-warnings">
          <div className="row">
            <div className="title grow">{warnings.length === 1 ? 'Warning' : `${warnings.length} warnings`} from this run</div>
            <a onClick={() => setTab('log')}>Open the log</a>
            <a onClick={() => setWarningsHidden(true)} aria-label="dismiss warnings">✕</a>
          </div>
          <div className="details">{warnings.map((w) => `• ${w}`).join('\n')}</div>
        </div>
      )}

      <div className="stages" data-testid="stage-pipeline">
        {run.stages.map((s) => <StageCard key={s.name} stage={s} live={stageLive(progress, run.progress, s.name)} />)}
        {run.stages.length === 0 && <span className="muted">No stages planned.</span>}
      </div>

      <div className="row" style={{ margin: '12px 0', gap: 18, fontSize: 13 }}>
        <span title={src(km.successSource)?.long} data-testid="headline-success">Success{km.successSource ? <span className="faint"> ({src(km.successSource)!.short})</span> : null} <strong>{fmtPct(km.success)}</strong>
          {km.successSource === 'eval' && typeof finalResult?.['episodes'] === 'number' && <span className="faint"> (n = {finalResult['episodes']} episodes)</span>}</span>
        <span title={src(km.passSource)?.long} data-testid="headline-pass1">Pass@1{km.passSource ? <span className="faint"> ({src(km.passSource)!.short})</span> : null} <strong>{fmtPct(km.passAt1)}</strong>
          {km.passSource === 'eval' && typeof finalResult?.['puzzles'] === 'number' && <span className="faint"> (n = {finalResult['puzzles']} puzzles)</span>}</span>
        <span title={src(km.passSource)?.long} data-testid="headline-passk">Pass@{km.k ?? 'k'}{km.passSource ? <span className="faint"> ({src(km.passSource)!.short})</span> : null} <strong>{fmtPct(km.passAtK)}</strong></span>
        {km.wmExact !== null && km.wmTurns !== 0
          ? <span title={metricMeaning('eval/wmPredictionExact') ?? undefined} data-testid="headline-wm">
            {nameOf('eval/wmPredictionExact')} <strong>{fmtPct(km.wmExact)}</strong> <span className="faint">({nText(km.wmTurns, 'well-formed turns')})</span>
          </span>
          : <span title={`${metricMeaning(km.wmSource === 'rollout' ? 'rollout/wmPredictionCellAccuracy' : 'eval/wmPredictionCellAccuracy') ?? ''}${km.wmSource ? `; ${src(km.wmSource)!.long}` : ''}`} data-testid="headline-wm">
            {nameOf(km.wmSource === 'rollout' ? 'rollout/wmPredictionCellAccuracy' : 'eval/wmPredictionCellAccuracy')} <strong>{fmtWmAccuracy(km, fmtPct)}</strong>
            {km.wmSource === 'eval' && km.wmTurns !== null && km.wmTurns !== 0 && <span className="faint"> ({nText(km.wmTurns, 'well-formed turns')})</span>}
          </span>}
        {isImported
          ? <span className="muted" data-testid="run-time">imported {fmtDate(run.createdAt)} from a SPA/RAGEN run folder</span>
          : <span className="muted" data-testid="run-time">created {fmtDate(run.createdAt)} · ran {fmtDuration(ranMs)} · attempts {run.attempts}</span>}
      </div>

      <FinalEvalPanel latest={run.latest} final={finalResult} />

      <Tabs<RunTab> tabs={[{ id: 'charts', label: `Charts (${metrics.names.length})` }, { id: 'log', label: `Log (${log.length})` }, { id: 'samples', label: 'Samples' },
        { id: 'system', label: 'System' }, { id: 'tokens', label: 'Tokens' }, { id: 'config', label: 'Config' }]} active={tab} onChange={setTab} />

      {tab === 'charts' && (
        <div>
          <div className="row" style={{ marginBottom: 10 }}>
            <label className="row" style={{ gap: 4 }}>x
              <select value={xMode} onChange={(e) => patch({ x: e.target.value as XMode })} data-testid="x-mode">
                <option value="step">step</option><option value="time">wall time</option><option value="episodes">episodes</option>
              </select>
            </label>
            <label className="row" style={{ gap: 4 }}>stage
              <select value={stage} onChange={(e) => patch({ stage: e.target.value })} data-testid="stage-filter">
                <option value="">all</option>
                {stages.map((s) => <option key={s} value={s}>{s}</option>)}
              </select>
            </label>
            <label className="row" style={{ gap: 4 }} title={`Exponential moving average (debiased); the raw line stays faint, with markers on the logged values. Default: off below ${SMOOTHING_MIN_POINTS} points`}>smoothing
              <input type="range" min={0} max={0.99} step={0.01} value={smoothing} onChange={(e) => patch({ smoothing: Number(e.target.value) })} data-testid="smoothing" aria-label="smoothing" />
              <span className="mono" style={{ width: 32 }} data-testid="smoothing-value">{smoothing.toFixed(2)}</span>
              {view.smoothing === null
                ? <span className="faint" data-testid="smoothing-auto" title={`off below ${SMOOTHING_MIN_POINTS} points in the longest series, ${DEFAULT_SMOOTHING} above`}>auto</span>
                : <a onClick={() => patch({ smoothing: null })} title="back to the default for the series length">auto</a>}
            </label>
            <label className="row" style={{ gap: 4 }} title="Logarithmic y axis (zero and negative values are left out and counted)">
              <input type="checkbox" checked={logScale} onChange={(e) => patch({ log: e.target.checked })} data-testid="log-scale" /> log y
            </label>
            <input type="search" placeholder="filter metrics" value={metricFilter} onChange={(e) => patch({ filter: e.target.value })} style={{ width: 170 }} data-testid="metric-filter" aria-label="filter metrics" />
            <span className="grow" />
            <label className="row" style={{ gap: 4 }}>overlay
              <select value="" onChange={(e) => { if (e.target.value) setOverlay((o) => [...o, e.target.value]); }} data-testid="overlay-select">
                <option value="">add a run…</option>
                {otherRuns.map((r) => <option key={r.id} value={r.id}>{r.name} ({r.status})</option>)}
              </select>
            </label>
            {overlay.map((id) => (
              <span key={id} className="badge">{runName(id)} <a onClick={() => setOverlay((o) => o.filter((x) => x !== id))} aria-label="remove overlay">✕</a></span>
            ))}
          </div>
          <ErrorBanner error={metrics.error} title="Metrics" />
          {metrics.loading ? <div className="muted">Loading metrics…</div>
            : charts.length === 0 ? <div className="empty-state">{active ? 'Waiting for the first metrics…' : 'No metrics logged.'}</div> : (
              <ChartGroups testId="charts" charts={charts} xLabel={xLabelOf(xMode, stage || undefined, stageSpans.length)} smoothing={smoothing} syncKey={`run-${runId}`} theme={theme}
                log={logScale} stageSpans={stageSpans} pinned={pinned} onTogglePin={togglePin} />
            )}
        </div>
      )}

      {tab === 'samples' && <StageSamples client={client} runId={runId} active={active} />}

      {tab === 'system' && <SystemPanel client={client} runId={runId} active={active} theme={theme} imported={isImported} ranOn={run.provenance ?? null} />}

      {tab === 'tokens' && <TokensPanel client={client} runId={runId} stages={run.stages.map((s) => s.name)} active={active} theme={theme} />}

      {tab === 'log' && (
        <div className="logpane mono" ref={logRef} data-testid="log-pane">
          {log.length === 0 ? <span className="faint">No log lines yet.</span> : log.map((l) => (
            <div key={l.key} className={`log-${l.level}`}><span className="faint">{new Date(l.time).toLocaleTimeString()} </span>{l.text}</div>
          ))}
        </div>
      )}

      {tab === 'config' && (
        <div className="grid-2">
          <div className="card">
            <h2>Resolved config</h2>
            <table className="plain mono config-diff" data-testid="run-config-table">
              <thead><tr><th>field</th><th>value</th></tr></thead>
              <tbody>
                {Object.entries(flatten(run.config)).map(([path, value]) => <tr key={path}><td>{path}</td><td>{value || <span className="faint">—</span>}</td></tr>)}
              </tbody>
            </table>
            <details style={{ marginTop: 8 }}>
              <summary className="muted">As JSON (what Config JSON exports)</summary>
              <pre className="block" data-testid="run-config">{JSON.stringify(run.config, null, 2)}</pre>
            </details>
          </div>
          <div className="card">
            <h2>Provenance</h2>
            <KeyValues items={[
              ['run id', <span className="mono" key="i">{run.id}</span>],
              ['folder', <span className="mono" key="d">{run.dir}</span>],
              ['template', <span className="mono" key="t">{run.templateHash ?? '–'}</span>],
              ['backend', <span key="b" data-testid="provenance-backend">{run.provenance?.backend ?? <span className="faint">not recorded (older run: see the log's "Compute backend" line)</span>}</span>],
              ['device', <span key="dv" data-testid="provenance-device">{run.provenance?.device ?? <span className="faint">not recorded</span>}</span>],
              ['code version', <span className="mono" key="cv">{run.provenance?.codeVersion ?? <span className="faint">not recorded</span>}</span>],
              ...Object.entries(run.versions).map(([k, v]) => [k, v] as [string, string]),
            ]} />
          </div>
        </div>
      )}
    </div>
  );
}

/** "run ETA 4m10s", with the stages to come that have no estimate yet. */
export function fmtRunEta(eta: RunEtaState): string {
  const rest = eta.unestimated > 0 ? `${eta.unestimated} stage${eta.unestimated === 1 ? '' : 's'} not measured yet` : '';
  // an ETA under a second beside unmeasured stages says nothing ("0s + 2 stages"): only the unmeasured stages are named
  if (eta.seconds === null || (rest && eta.seconds < 1)) return rest ? `run ETA: ${rest}` : '';
  return `run ETA ${fmtDuration(eta.seconds * 1000)}${rest ? ` + ${rest}` : ''}`;
}

/**
 * A stage card's progress: the page's latest live event for the stage, or before the first one (a page opened on a running
 * run) the run's last progress as the host stored it, with its message ("RL step 2/16: update 3/4").
 */
export function stageLive(live: Record<string, Progress>, last: Progress & { stage: string } | null | undefined, stage: string): Progress | undefined {
  return live[stage] ?? (last?.stage === stage ? last : undefined);
}

export function StageCard({ stage, live }: { stage: StageState; live: Progress | undefined }) {
  const done = live?.done ?? stage.done;
  const total = live?.total ?? stage.total;
  const running = stage.status === 'running';
  const elapsed = stage.startedAt ? (stage.finishedAt ?? Date.now()) - stage.startedAt : null;
  return (
    <div className={`stage ${stage.status}`} data-testid={`stage-${stage.name}`} data-stage-status={stage.status}>
      <div className="stage-head"><span>{stage.name}</span><StatusBadge status={stage.status} /></div>
      {stage.title && stage.title !== stage.name && <div className="stage-title" title={stage.title}>{stage.title}</div>}
      <ProgressBar done={stage.status === 'completed' ? Math.max(total, 1) : done} total={stage.status === 'completed' ? Math.max(total, 1) : total} status={stage.status} label={`${stage.name} progress`} />
      <div className="stage-meta">
        <span data-testid="stage-count">{total > 0 ? `${done}/${total}` : ''}</span>
        <span>{running ? fmtEta(live?.etaSeconds) : elapsed !== null ? fmtDuration(elapsed) : ''}</span>
      </div>
      {running && live?.message && <div className="stage-meta"><span className="faint">{live.message}</span></div>}
      {stage.reason && <div className="stage-meta"><span className="bad">{stage.reason}</span></div>}
    </div>
  );
}
