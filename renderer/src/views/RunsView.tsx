// The project's runs: a virtualised table (status, method, env, template, key metrics, created,
// duration, progress), sortable / filterable / column picker / multi-select; open, compare,
// start, stop, resume, delete, export CSV, import a SPA/RAGEN run. Live: refreshes on project events.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { createColumnHelper } from '@tanstack/react-table';
import type { ProjectInfo, RunSummary, WorkbenchEvent } from '../../../core/api/contract.js';
import type { Client } from '../api/client.js';
import type { Route } from '../routes.js';
import { DataTable } from '../components/DataTable.js';
import { ErrorBanner, ProgressBar, StatusBadge } from '../components/widgets.js';
import { fmtDate, fmtDateShort, fmtDuration, fmtPct } from '../components/format.js';
import { keyMetrics } from '../components/key-metrics.js';
import { metricMeaning } from '../components/metric-glossary.js';
import { nameOf, nText } from '../components/metric-names.js';
import { groupRuns, passAtKs, RunGroupsTable, type GroupBy } from '../components/run-groups.js';
import { downloadText, toCsv } from '../components/download.js';
import { ImportRunPanel, rememberImport } from '../components/InteropPanels.js';

export interface RunsViewProps {
  client: Client;
  project: ProjectInfo;
  navigate: (route: Route) => void;
}

export type RunRow = RunSummary & {
  success: number | null; passAt1: number | null; passAtK: number | null; k: number | null; wmAccuracy: number | null; wmTurns: number | null;
  wmExact: number | null; evalWmTurns: number | null;   // eval/wmPredictionExact and the eval's well-formed turns (0: n/a)
  liveDurationMs: number;
  passAt: Record<number, number>;                 // Pass@k by k (eval, else tracked during RL)
};

const ACTIVE = new Set(['running', 'queued', 'stopping']);
const STATUSES = ['all', 'running', 'completed', 'failed', 'stopped', 'created', 'imported'] as const;

export function toRow(r: RunSummary, now: number): RunRow {
  const km = keyMetrics(r.latest);
  const live = r.status === 'running' && r.startedAt ? r.durationMs + Math.max(0, now - r.startedAt) : r.durationMs;
  return { ...r, ...km, evalWmTurns: r.latest['eval/wmTurns'] ?? null, liveDurationMs: live, passAt: passAtKs(r.latest) };
}

const col = createColumnHelper<RunRow>();

export default function RunsView({ client, project, navigate }: RunsViewProps) {
  const [runs, setRuns] = useState<RunSummary[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [importing, setImporting] = useState(false);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [status, setStatus] = useState<(typeof STATUSES)[number]>('all');
  const [now, setNow] = useState(() => Date.now());
  const pendingRef = useRef<ReturnType<typeof setTimeout> | null>(null);
  const [groupBy, setGroupBy] = useState<GroupBy>('none');

  const load = useCallback(() => {
    client.runs.list({ limit: 100000 }).then((r) => { setRuns(r.runs); setError(null); }, setError);
  }, [client]);
  useEffect(load, [load, project.path]);
  useEffect(() => client.subscribe({ kind: 'project' }, (ev: WorkbenchEvent) => {
    if (ev.kind !== 'project') return;
    if (ev.event.type === 'runs-changed' || ev.event.type === 'run-status' || ev.event.type === 'engine-exit') {
      if (!pendingRef.current) pendingRef.current = setTimeout(() => { pendingRef.current = null; load(); }, 300);
    }
  }), [client, load]);
  useEffect(() => () => { if (pendingRef.current) clearTimeout(pendingRef.current); }, []);
  // Tick durations of running runs, and poll while any is active (progress is not a project event).
  const anyActive = (runs ?? []).some((r) => ACTIVE.has(r.status));
  useEffect(() => {
    if (!anyActive) return;
    const t = setInterval(() => { setNow(Date.now()); load(); }, 2000);
    return () => clearInterval(t);
  }, [anyActive, load]);

  const rows = useMemo(() => (runs ?? []).filter((r) => status === 'all' || r.status === status).map((r) => toRow(r, now)), [runs, status, now]);

  // Pass@k columns, one per k present; config columns, one per config value set in some run
  const ks = useMemo(() => [...new Set(rows.flatMap((r) => Object.keys(r.passAt).map(Number)))].sort((a, b) => a - b), [rows]);
  const paramPaths = useMemo(() => [...new Set((runs ?? []).flatMap((r) => Object.keys(r.params ?? {})))].sort(), [runs]);
  // config columns are in the column picker (hidden until chosen: a sweep's own columns do not crowd the table); so are tags until a run has one
  const anyTags = useMemo(() => (runs ?? []).some((r) => (r.tags?.length ?? 0) > 0), [runs]);
  const groups = useMemo(() => (groupBy === 'none' ? [] : groupRuns(rows, groupBy)), [rows, groupBy]);
  const hiddenParam = useCallback((id: string) => id.startsWith('param:') || (id === 'tags' && !anyTags), [anyTags]);

  const columns = useMemo(() => [
    col.accessor('name', {
      header: 'Name', size: 110,
      cell: (c) => <a onClick={() => navigate({ view: 'run', runId: c.row.original.id })} data-testid="run-link" title={c.row.original.id}>{c.getValue()}</a>,
    }),
    col.accessor('status', {
      header: 'Status', size: 106,
      cell: (c) => {
        const r = c.row.original;
        const pct = r.progress && r.progress.total > 0 && ACTIVE.has(r.status) ? ` ${Math.round((100 * r.progress.done) / r.progress.total)}%` : '';
        return <span title={r.reason ?? (r.progress ? `${r.progress.stage}: ${r.progress.done}/${r.progress.total}` : undefined)}><StatusBadge status={r.status} />{pct && <span className="faint" style={{ fontSize: 12 }}>{pct}</span>}</span>;
      },
    }),
    col.accessor((r) => (r.progress && r.progress.total > 0 ? r.progress.done / r.progress.total : r.status === 'completed' ? 1 : 0), {
      id: 'progress', header: 'Progress', size: 124,
      cell: (c) => {
        const r = c.row.original;
        if (!r.progress || !ACTIVE.has(r.status)) return <span className="faint">{r.stages.filter((s) => s.status === 'completed').length}/{r.stages.length} stages</span>;
        return <div title={`${r.progress.stage}: ${r.progress.done}/${r.progress.total}`}><span className="faint" style={{ fontSize: 11 }}>{r.progress.stage}</span><ProgressBar done={r.progress.done} total={r.progress.total} status="running" /></div>;
      },
    }),
    col.accessor('method', { header: 'Method', size: 96 }),
    col.accessor('env', { header: 'Env', size: 84 }),
    col.accessor('size', { header: 'Size', size: 70 }),
    col.accessor((r) => r.templateHash?.slice(0, 10) ?? '', { id: 'template', header: 'Template', size: 110, cell: (c) => <span className="mono">{c.getValue() || '–'}</span> }),
    col.accessor('success', { header: 'Success', size: 72, meta: { numeric: true }, cell: (c) => fmtPct(c.getValue()), sortUndefined: 'last' }),
    col.accessor('passAt1', { header: 'Pass@1', size: 70, meta: { numeric: true }, cell: (c) => fmtPct(c.getValue()) }),
    ...ks.map((k) => col.accessor((r) => r.passAt[k] ?? null, { id: `passAt${k}`, header: `Pass@${k}`, size: 70, meta: { numeric: true }, cell: (c) => fmtPct(c.getValue()), sortUndefined: 'last' })),
    col.accessor('wmExact', {
      header: nameOf('eval/wmPredictionExact'), size: 84, meta: { numeric: true, wrapHeader: true, headerTitle: metricMeaning('eval/wmPredictionExact') ?? undefined }, sortUndefined: 'last',
      cell: (c) => {
        const r = c.row.original;
        if (r.evalWmTurns === 0) return <span title="the eval had no well-formed turns to score">n/a</span>;
        return <span title={r.wmExact !== null ? nText(r.evalWmTurns, 'well-formed turns') : undefined}>{fmtPct(r.wmExact)}</span>;
      },
    }),
    col.accessor((r) => (r.tags ?? []).join(', '), { id: 'tags', header: 'Tags', size: 80, cell: (c) => <span data-testid="run-tags">{c.getValue()}</span> }),
    col.accessor((r) => r.notes ?? '', { id: 'notes', header: 'Notes', size: 160, cell: (c) => <span title={c.getValue()}>{c.getValue().split('\n')[0]}</span> }),
    ...paramPaths.map((p) => col.accessor((r) => r.params?.[p] ?? null, { id: `param:${p}`, header: p.replace(/^stages\./, ''), size: 96, cell: (c) => <span className="mono" title={p}>{c.getValue() === null ? '·' : String(c.getValue())}</span> })),
    col.accessor('createdAt', { header: 'Created', size: 100, meta: { filterText: (v: unknown) => fmtDate(v as number) }, cell: (c) => <span title={fmtDate(c.getValue())}>{fmtDateShort(c.getValue())}</span> }),
    col.accessor('liveDurationMs', { header: 'Duration', size: 76, meta: { numeric: true }, cell: (c) => fmtDuration(c.getValue()) }),
    col.accessor('attempts', { header: 'Attempts', size: 80, meta: { numeric: true } }),
    col.accessor('id', { header: 'Run id', size: 200, cell: (c) => <span className="mono">{c.getValue()}</span> }),
  ], [navigate, ks, paramPaths]);

  const selectedRuns = (runs ?? []).filter((r) => selected.has(r.id));
  const act = async (fn: (id: string) => Promise<unknown>, ids: string[]) => {
    try { for (const id of ids) await fn(id); } catch (e) { setError(e); }
    load();
  };
  const exportCsv = () => {
    const header = ['id', 'name', 'status', 'method', 'env', 'size', 'templateHash', 'success', 'passAt1', ...ks.map((k) => `passAt${k}`), 'eval/wmPredictionExact', 'eval/wmTurns', 'tags', 'notes', 'createdAt', 'durationMs', 'reason', ...paramPaths];
    const data = rows.map((r) => [r.id, r.name, r.status, r.method, r.env, r.size, r.templateHash, r.success, r.passAt1, ...ks.map((k) => r.passAt[k] ?? null), r.evalWmTurns === 0 ? null : r.wmExact, r.evalWmTurns,
      (r.tags ?? []).join(';'), r.notes ?? '', new Date(r.createdAt).toISOString(), r.durationMs, r.reason, ...paramPaths.map((p) => r.params?.[p] ?? null)]);
    downloadText(`${project.name}-runs.csv`, toCsv(header, data), 'text/csv');
  };

  return (
    <div data-testid="runs-view">
      <div className="row" style={{ marginBottom: 12 }}>
        <h1 style={{ margin: 0 }} className="grow">Runs</h1>
        {!project.readOnly && <button className="btn" onClick={() => setImporting((v) => !v)} aria-expanded={importing} data-testid="import-run-button"
          title="Import a finished SPA/RAGEN run (recorder JSONL, stage-1 files, verl metrics, W&B table) as a read-only run">Import run…</button>}
        <button className="btn primary" onClick={() => navigate({ view: 'new-run' })} data-testid="new-run-button">+ New run</button>
      </div>
      {importing && (
        <ImportRunPanel client={client} onClose={() => setImporting(false)}
          onImported={(r) => { rememberImport(r); setImporting(false); navigate({ view: 'run', runId: r.run.id }); }} />
      )}
      <ErrorBanner error={error} onDismiss={() => setError(null)} />
      {groups.length > 0 && <div className="card" style={{ marginBottom: 12 }}><h2>Grouped by {groupBy.replace(/^param:/, '')} <span className="faint">(mean ± sd over the runs that have the metric)</span></h2><RunGroupsTable groups={groups} onOpen={(ids) => navigate({ view: 'compare', runIds: ids })} /></div>}
      {runs === null ? <div className="muted">Loading runs…</div> : (
        <DataTable
          testId="runs-table"
          data={rows}
          columns={columns}
          getRowId={(r) => r.id}
          selected={selected}
          onSelectedChange={setSelected}
          onRowOpen={(r) => navigate({ view: 'run', runId: r.id })}
          storageKey="spa-workbench.runs-table"
          initialSorting={[{ id: 'createdAt', desc: true }]}
          initialHidden={['id', 'attempts', 'size', 'template', 'progress', 'notes']}
          hiddenUnlessChosen={hiddenParam}
          height="calc(100vh - 230px)"
          filterPlaceholder="Filter runs (name, method, env…)"
          emptyText={<>No runs yet. <a onClick={() => navigate({ view: 'new-run' })}>Create the first one.</a></>}
          toolbar={<>
            <select value={status} onChange={(e) => setStatus(e.target.value as (typeof STATUSES)[number])} aria-label="Status filter" data-testid="status-filter">
              {STATUSES.map((s) => <option key={s} value={s}>{s === 'all' ? 'all statuses' : s}</option>)}
            </select>
            <button className="btn small" disabled={selected.size < 1} onClick={() => navigate({ view: 'compare', runIds: [...selected] })} data-testid="compare-selected">Compare ({selected.size})</button>
            <button className="btn small" disabled={!selectedRuns.some((r) => r.status === 'created')} onClick={() => void act((id) => client.runs.start({ runId: id }), selectedRuns.filter((r) => r.status === 'created').map((r) => r.id))}>Start</button>
            <button className="btn small" disabled={!selectedRuns.some((r) => r.status === 'running')} onClick={() => void act((id) => client.runs.stop({ runId: id }), selectedRuns.filter((r) => r.status === 'running').map((r) => r.id))}>Stop</button>
            <button className="btn small" disabled={!selectedRuns.some((r) => r.status === 'stopped' || r.status === 'failed')} onClick={() => void act((id) => client.runs.resume({ runId: id }), selectedRuns.filter((r) => r.status === 'stopped' || r.status === 'failed').map((r) => r.id))}>Resume</button>
            <button className="btn small danger" disabled={selectedRuns.length === 0 || selectedRuns.some((r) => ACTIVE.has(r.status))}
              onClick={() => {
                if (!confirm(`Delete ${selectedRuns.length} run(s) and their folders? This cannot be undone.`)) return;
                void act((id) => client.runs.delete({ runId: id }), selectedRuns.map((r) => r.id)).then(() => setSelected(new Set()));
              }}>Delete</button>
            <button className="btn small" onClick={exportCsv} disabled={rows.length === 0} title="Export the table as CSV">CSV</button>
            <select value={groupBy} onChange={(e) => setGroupBy(e.target.value as GroupBy)} aria-label="Group runs by" data-testid="group-by">
              <option value="none">no grouping</option>
              <option value="study">group by study</option><option value="method">group by method</option><option value="env">group by env</option>
              <option value="preset">group by preset</option><option value="tag">group by tag</option>
              {paramPaths.map((p) => <option key={p} value={`param:${p}`}>group by {p}</option>)}
            </select>
          </>}
        />
      )}
    </div>
  );
}
