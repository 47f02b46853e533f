// Compare runs: pick runs → the paper-style table (Success, Pass@1, Pass@k with 95% intervals,
// world-model accuracy; per environment and method, best per column in bold), overlaid curves
// of shared metrics, and a differences-only view of the resolved configs and templates.
import { useEffect, useMemo, useState } from 'react';
import type { EvalResult, RunInfo, RunSummary } from '../../../core/api/contract.js';
import type { Client } from '../api/client.js';
import type { Route } from '../routes.js';
import { ErrorBanner, StatusBadge, Tabs } from '../components/widgets.js';
import { compareFlat, flatten, lineDiff } from '../components/diff.js';
import { downloadText, toCsv } from '../components/download.js';
import { type ChartSeries } from '../charts/MetricChart.js';
import { ChartGroups } from '../charts/ChartGroups.js';
import { sortMetricNames, useRunMetrics, xLabelOf, type XMode } from '../charts/use-metrics.js';
import { defaultSmoothing } from '../charts/chart-view.js';
import { seriesColor } from '../theme/theme.js';
import { metricMeaning } from '../components/metric-glossary.js';
import { SMALL_N_PUZZLES, widenForSmallN } from '../../../core/api/verdict.js';
import { nameOf, nText } from '../components/metric-names.js';

export interface CompareViewProps {
  client: Client;
  navigate: (route: Route) => void;
  runIds: string[];
  theme: string;
}

export interface Interval { mean: number; low: number | null; high: number | null }

/** Read an interval from an eval JSON value: `{mean, low, high}` or a bare number. */
export function toInterval(v: unknown): Interval | null {
  if (typeof v === 'number' && Number.isFinite(v)) return { mean: v, low: null, high: null };
  if (v && typeof v === 'object' && typeof (v as { mean?: unknown }).mean === 'number') {
    const o = v as { mean: number; low?: unknown; high?: unknown };
    return { mean: o.mean, low: typeof o.low === 'number' ? o.low : null, high: typeof o.high === 'number' ? o.high : null };
  }
  return null;
}

export interface EvalRow {
  runId: string;
  name: string;
  env: string;
  method: string;
  status: string;
  evalId: string | null;
  success: Interval | null;
  passAt: Record<string, Interval>;
  wmPredExact: number | null;
  wmPredCell: number | null;
  /** well-formed eval turns the two numbers above are over; 0: they are undefined (n/a), null: unknown. */
  wmTurns: number | null;
  /** prediction given the action (the world-model check) and the state-changing turns it is over. */
  givenAction: number | null;
  givenActionTurns: number | null;
  avgActions: number | null;
  size: string;
  /** The k of the eval (its Pass@k columns). */
  ks: number[];
  /** Chance and oracle rows on this run's eval puzzles (eval/final.json reference, else the logged eval/chance|oracle/passAt<k>). */
  reference: Array<{ kind: 'chance' | 'oracle'; label: string; passAt: Record<string, number> }>;
  /** What the intervals rest on: episodes (Success, Wilson) and puzzles × samples (Pass@k, bootstrap over puzzles); null when unknown. */
  episodes: number | null;
  puzzles: number | null;
  samplesPerPuzzle: number | null;
}

/**
 * The Pass@k interval as shown: under SMALL_N_PUZZLES puzzles a percentile bootstrap over them says little
 * (2 puzzles all failed: "[0.0, 0.0]"), so it is widened to the Wilson interval over the puzzles, the rule
 * of the study cells and the Run view's verdict (core/api/verdict.ts widenForSmallN).
 */
export function shownPassInterval(iv: Interval | undefined, puzzles: number | null): { iv: Interval | undefined; widened: boolean } {
  if (!iv || iv.low === null || iv.high === null || puzzles === null) return { iv, widened: false };
  const w = widenForSmallN({ mean: iv.mean, low: iv.low, high: iv.high }, puzzles);
  return { iv: { mean: iv.mean, low: w.low, high: w.high }, widened: w.widened };
}

/** Latest evaluation of a run (by file time) turned into a table row. */
export function evalRow(run: RunSummary, results: EvalResult[]): EvalRow {
  const withPass = results.filter((r) => r.result['passAtK'] || r.result['success'] !== undefined);
  const latest = [...withPass].sort((a, b) => (a.time ?? 0) - (b.time ?? 0)).pop();
  const res = latest?.result ?? {};
  const passAt: Record<string, Interval> = {};
  const pk = res['passAtK'];
  if (pk && typeof pk === 'object') for (const [k, v] of Object.entries(pk as Record<string, unknown>)) { const iv = toInterval(v); if (iv) passAt[k] = iv; }
  // fall back to the run's latest logged values
  for (const [name, v] of Object.entries(run.latest)) {
    const m = /^eval\/passAt(\d+)$/.exec(name);
    if (m && !passAt[m[1]!]) passAt[m[1]!] = { mean: v, low: null, high: null };
  }
  const wm = res['wm'] as { prediction?: { exact?: number; cellAccuracy?: number; turns?: number } } | undefined;
  const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const wmTurns = num(wm?.prediction?.turns) ?? num(run.latest['eval/wmTurns']);
  const undefinedWm = wmTurns === 0;     // no well-formed turn: the accuracies are undefined, not 0
  const versus = res['worldModelVersusBase'] as { model?: { conditioned?: { exactChanged?: number; changedTurns?: number } } } | undefined;
  const reference: EvalRow['reference'] = [];
  if (Array.isArray(res['reference'])) {
    for (const r of res['reference'] as Array<{ kind?: unknown; label?: unknown; passAt?: unknown }>) {
      if ((r.kind === 'chance' || r.kind === 'oracle') && r.passAt && typeof r.passAt === 'object') {
        reference.push({ kind: r.kind, label: typeof r.label === 'string' ? r.label : r.kind, passAt: r.passAt as Record<string, number> });
      }
    }
  }
  for (const kind of ['chance', 'oracle'] as const) {
    if (reference.some((r) => r.kind === kind)) continue;
    const values: Record<string, number> = {};
    for (const [name, v] of Object.entries(run.latest)) { const m = new RegExp(`^eval/${kind}/passAt(\\d+)$`).exec(name); if (m) values[m[1]!] = v; }
    if (Object.keys(values).length) reference.push({ kind, label: kind, passAt: values });
  }
  const ks = Array.isArray(res['k']) ? (res['k'] as unknown[]).filter((k): k is number => typeof k === 'number') : Object.keys(passAt).map(Number);
  return {
    runId: run.id, name: run.name, env: run.env, method: run.method, status: run.status, size: run.size,
    evalId: latest?.id ?? null,
    success: toInterval(res['success']) ?? (run.latest['eval/success'] !== undefined ? { mean: run.latest['eval/success']!, low: null, high: null } : null),
    passAt,
    wmPredExact: undefinedWm ? null : num(wm?.prediction?.exact) ?? num(run.latest['eval/wmPredictionExact']),
    wmPredCell: undefinedWm ? null : num(wm?.prediction?.cellAccuracy) ?? num(run.latest['eval/wmPredictionCellAccuracy']),
    wmTurns,
    givenAction: num(versus?.model?.conditioned?.exactChanged) ?? num(run.latest['eval/wmCheck/conditionedExact']),
    givenActionTurns: num(versus?.model?.conditioned?.changedTurns),
    ks: [...new Set(ks)].sort((a, b) => a - b),
    reference,
    avgActions: typeof res['avgActions'] === 'number' ? res['avgActions'] : run.latest['eval/avgActions'] ?? null,
    episodes: typeof res['episodes'] === 'number' ? res['episodes'] : null,
    puzzles: typeof res['puzzles'] === 'number' ? res['puzzles'] : null,
    samplesPerPuzzle: typeof res['samplesPerPuzzle'] === 'number' ? res['samplesPerPuzzle'] : null,
  };
}

/**
 * Why the compared runs' numbers are not on the same footing: different sizes, different k, or
 * different eval sample sizes (puzzles × samples). Empty when they match.
 */
export function compareMismatches(rows: Array<Pick<EvalRow, 'name' | 'size' | 'ks' | 'episodes' | 'puzzles' | 'samplesPerPuzzle' | 'evalId'>>): string[] {
  const out: string[] = [];
  const list = (get: (r: (typeof rows)[number]) => string) => {
    const by = new Map<string, string[]>();
    for (const r of rows) { const k = get(r); by.set(k, [...(by.get(k) ?? []), r.name]); }
    return by.size > 1 ? [...by.entries()].map(([k, names]) => `${k} (${names.join(', ')})`).join(' vs ') : null;
  };
  const sizes = list((r) => r.size);
  if (sizes) out.push(`sizes differ: ${sizes}`);
  const evaluated = rows.filter((r) => r.evalId !== null || r.ks.length > 0);
  if (new Set(evaluated.map((r) => r.ks.join(','))).size > 1) out.push(`k differs: ${evaluated.map((r) => `k = ${r.ks.join(', ') || '?'} (${r.name})`).join(' vs ')}`);
  const n = new Set(evaluated.map((r) => restsOn(r)));
  if (n.size > 1) out.push(`eval sample sizes differ: ${evaluated.map((r) => `${restsOn(r)} (${r.name})`).join(' vs ')}`);
  return out;
}

const pct = (v: number | null | undefined) => (v === null || v === undefined ? 'n/a' : (v * 100).toFixed(1));
const WM_COLUMNS = [{ metric: 'eval/wmPredictionExact' }, { metric: 'eval/wmCheck/conditionedExact' }, { metric: 'eval/wmPredictionCellAccuracy' }] as const;
const wmTitle = (r: Pick<EvalRow, 'wmTurns'>, turns: number | null) => (r.wmTurns === 0 ? 'n/a: the eval had 0 well-formed turns to score' : nText(turns, 'well-formed turns'));

/**
 * Chance and oracle rows of an environment's runs: one pair per distinct eval puzzle set (runs with
 * the same n share one; runs on different puzzles each get theirs, named after the first such run).
 */
export function referenceRows(rows: EvalRow[], ks: string[]): Array<{ kind: 'chance' | 'oracle'; label: string; of: string; passAt: Record<string, number> }> {
  const out: Array<{ kind: 'chance' | 'oracle'; label: string; of: string; passAt: Record<string, number> }> = [];
  const seen = new Set<string>();
  for (const r of rows) {
    if (r.reference.length === 0) continue;
    const key = restsOn(r) + JSON.stringify(r.reference);
    if (seen.has(key)) continue;
    seen.add(key);
    for (const ref of r.reference) if (ks.some((k) => ref.passAt[k] !== undefined)) out.push({ kind: ref.kind, label: ref.label, of: r.name, passAt: ref.passAt });
  }
  return out;
}
function IntervalCell({ iv, best, title }: { iv: Interval | null | undefined; best: boolean; title?: string }) {
  if (!iv) return <td className="num faint" title="not measured in this run's evaluation">n/a</td>;
  return (
    <td className={`num ${best ? 'best' : ''}`} title={title}>
      {/* the interval under the mean, each unbroken: a column stays as narrow as its widest bracket */}
      <span style={{ whiteSpace: 'nowrap' }}>{pct(iv.mean)}</span>{iv.low !== null && iv.high !== null && <span className="faint" style={{ fontSize: 11.5, whiteSpace: 'nowrap', display: 'inline-block' }}> [{pct(iv.low)}, {pct(iv.high)}]</span>}
    </td>
  );
}

/** The n a row's intervals rest on: "8 puzzles × 4 = 32 episodes". */
export function restsOn(r: Pick<EvalRow, 'episodes' | 'puzzles' | 'samplesPerPuzzle'>): string {
  if (r.puzzles === null) return r.episodes === null ? '–' : `${r.episodes} episodes`;
  return `${r.puzzles} puzzle${r.puzzles === 1 ? '' : 's'}${r.samplesPerPuzzle !== null ? ` × ${r.samplesPerPuzzle}` : ''}${r.episodes !== null ? ` = ${r.episodes} episodes` : ''}`;
}

export default function CompareView({ client, navigate, runIds, theme }: CompareViewProps) {
  const [runs, setRuns] = useState<RunSummary[] | null>(null);
  const [infos, setInfos] = useState<Record<string, RunInfo>>({});
  const [evals, setEvals] = useState<Record<string, EvalResult[]>>({});
  const [error, setError] = useState<unknown>(null);
  const [tab, setTab] = useState<'table' | 'curves' | 'config'>('table');
  const [diffOnly, setDiffOnly] = useState(true);
  const [xMode, setXMode] = useState<XMode>('step');
  const [chosenSmoothing, setSmoothing] = useState<number | null>(null);   // null: off on short series (chart-view.ts defaultSmoothing)
  const [templates, setTemplates] = useState<Record<string, string>>({});

  useEffect(() => { client.runs.list({ limit: 100000 }).then((r) => setRuns(r.runs), setError); }, [client]);
  const key = runIds.join(',');
  useEffect(() => {
    let cancelled = false;
    Promise.all(runIds.map(async (id) => [id, await client.runs.get({ runId: id }), (await client.evals.list({ runId: id })).results] as const))
      .then((all) => {
        if (cancelled) return;
        setInfos(Object.fromEntries(all.map(([id, info]) => [id, info])));
        setEvals(Object.fromEntries(all.map(([id, , results]) => [id, results])));
      }, (e) => { if (!cancelled) setError(e); });
    return () => { cancelled = true; };
  }, [client, key]); // runIds is captured by key

  // Template sources of the compared runs (for the template diff).
  useEffect(() => {
    const wanted = runIds.map((id) => infos[id]).filter((i): i is RunInfo => !!i && !!i.templateHash);
    for (const info of wanted) {
      const k = `${info.config.template.preset}@${info.templateHash}`;
      if (templates[k] !== undefined) continue;
      client.templates.get({ name: info.config.template.preset, hash: info.templateHash! }).then(
        (t) => setTemplates((cur) => ({ ...cur, [k]: t.source })),
        () => setTemplates((cur) => ({ ...cur, [k]: '' })),
      );
    }
  }, [client, infos, key, templates]);

  const setSelection = (ids: string[]) => navigate({ view: 'compare', runIds: ids });
  const selected = useMemo(() => (runs ?? []).filter((r) => runIds.includes(r.id)), [runs, key]);
  const rows = useMemo(() => selected.map((r) => evalRow(r, evals[r.id] ?? [])), [selected, evals]);
  const ks = useMemo(() => [...new Set(rows.flatMap((r) => Object.keys(r.passAt)))].sort((a, b) => Number(a) - Number(b)), [rows]);
  const envs = useMemo(() => [...new Set(rows.map((r) => r.env))].sort(), [rows]);
  const mismatches = useMemo(() => compareMismatches(rows), [rows]);
  const best = (env: string, get: (r: EvalRow) => number | null | undefined) => {
    const vals = rows.filter((r) => r.env === env).map(get).filter((v): v is number => v !== null && v !== undefined);
    return vals.length > 1 && new Set(vals).size > 1 ? Math.max(...vals) : null; // no "best" among equals
  };

  const metrics = useRunMetrics(client, runIds, xMode, undefined, true);
  const sharedNames = useMemo(() => sortMetricNames(metrics.names.filter((n) => {
    const byRun = metrics.store.get(n);
    return byRun && [...byRun.values()].filter((p) => p.x.length > 0).length >= Math.min(2, runIds.length);
  })), [metrics, key]);
  const longest = useMemo(() => Math.max(0, ...[...metrics.store.values()].flatMap((byRun) => [...byRun.values()].map((p) => p.x.length))), [metrics]);
  const smoothing = chosenSmoothing ?? defaultSmoothing(longest);
  const firstSpans = metrics.spans.get(runIds[0] ?? '') ?? [];

  const configRows = useMemo(() => compareFlat(runIds.map((id) => flatten(infos[id]?.config ?? {}))), [infos, key]);

  const exportTable = () => {
    const header = ['run', 'name', 'env', 'method', 'eval', 'success', 'successLow', 'successHigh',
      ...ks.flatMap((k) => [`passAt${k}`, `passAt${k}Low`, `passAt${k}High`]), 'size', 'eval/wmPredictionExact', 'eval/wmTurns', 'eval/wmCheck/conditionedExact', 'eval/wmPredictionCellAccuracy', 'avgActions'];
    const data = rows.map((r) => [r.runId, r.name, r.env, r.method, r.evalId, r.success?.mean, r.success?.low, r.success?.high,
      ...ks.flatMap((k) => [r.passAt[k]?.mean, r.passAt[k]?.low, r.passAt[k]?.high]), r.size, r.wmPredExact, r.wmTurns, r.givenAction, r.wmPredCell, r.avgActions]);
    downloadText('compare.csv', toCsv(header, data), 'text/csv');
  };

  return (
    <div data-testid="compare-view">
      <h1>Compare runs</h1>
      <ErrorBanner error={error} onDismiss={() => setError(null)} />
      <div className="card" style={{ marginBottom: 12 }}>
        <div className="row">
          <strong>Runs:</strong>
          {runIds.map((id, i) => ({ r: selected.find((x) => x.id === id), i })).filter((e): e is { r: RunSummary; i: number } => !!e.r).map(({ r, i }) => (
            <span key={r.id} className="badge" style={{ borderColor: seriesColor(i), color: seriesColor(i) }} data-testid="compare-chip">
              {r.name} <a onClick={() => setSelection(runIds.filter((x) => x !== r.id))} aria-label={`remove ${r.name}`}>✕</a>
            </span>
          ))}
          <select value="" onChange={(e) => { if (e.target.value) setSelection([...runIds, e.target.value]); }} data-testid="compare-add">
            <option value="">add a run…</option>
            {(runs ?? []).filter((r) => !runIds.includes(r.id)).map((r) => <option key={r.id} value={r.id}>{r.name} · {r.method} · {r.env} ({r.status})</option>)}
          </select>
          {runIds.length === 0 && <span className="muted">Pick two or more runs (or select them in the Runs table).</span>}
        </div>
      </div>
      {runIds.length > 0 && (
        <>
          <Tabs tabs={[{ id: 'table', label: 'Results table' }, { id: 'curves', label: 'Curves' }, { id: 'config', label: 'Config & template diff' }]} active={tab} onChange={setTab} />
          {tab === 'table' && (
            <div className="card">
              <div className="row" style={{ marginBottom: 8 }}>
                <span className="muted grow">Latest evaluation of each run; Pass@k is the unbiased estimator averaged over puzzles. Brackets: 95% intervals,
                  for Success a Wilson interval over the episodes, for Pass@k a percentile bootstrap over the puzzles (widened to Wilson's under {SMALL_N_PUZZLES} puzzles, as in the Studies table and the run's verdict);
                  "n" is what they rest on. Best per environment in bold.</span>
                <button className="btn small" onClick={exportTable}>CSV</button>
              </div>
              {mismatches.length > 0 && (
                <div className="banner warn" data-testid="compare-mismatch">
                  <div className="title">These runs are not on the same footing</div>
                  <div className="details">{mismatches.map((m) => `• ${m}`).join('\n')}</div>
                </div>
              )}
              <table className="plain compare-results" data-testid="compare-table">
                <thead>
                  <tr>
                    <th>Environment</th><th>Method</th><th>Run</th><th className="num" title="puzzles × samples per puzzle = episodes">n</th>
                    <th className="num" title="Wilson 95% interval over the episodes">Success %</th>
                    {ks.map((k) => <th key={k} className="num" title="percentile bootstrap 95% interval over the puzzles">Pass@{k} %</th>)}
                    {WM_COLUMNS.map((c) => <th key={c.metric} className="num" title={metricMeaning(c.metric) ?? undefined}>{nameOf(c.metric)} %</th>)}
                    <th className="num">Avg actions</th>
                  </tr>
                </thead>
                <tbody>
                  {envs.flatMap((env) => rows.filter((r) => r.env === env).sort((a, b) => a.method.localeCompare(b.method)).map((r, i) => (
                    <tr key={r.runId} data-testid="compare-row">
                      <td>{i === 0 ? <strong>{env}</strong> : ''}</td>
                      <td>{r.method}</td>
                      <td><a onClick={() => navigate({ view: 'run', runId: r.runId })}>{r.name}</a> <StatusBadge status={r.status} />{!r.evalId && <span className="faint"> (no eval file)</span>}</td>
                      <td className="num faint" data-testid="compare-n">{restsOn(r)}</td>
                      <IntervalCell iv={r.success} best={best(env, (x) => x.success?.mean) === r.success?.mean}
                        title={r.episodes !== null ? `Wilson 95% interval over ${r.episodes} episodes` : undefined} />
                      {ks.map((k) => {
                        const shown = shownPassInterval(r.passAt[k], r.puzzles);
                        return <IntervalCell key={k} iv={shown.iv} best={best(env, (x) => x.passAt[k]?.mean) === r.passAt[k]?.mean}
                          title={r.puzzles === null ? undefined : shown.widened ? `95% interval over ${r.puzzles} puzzles: the bootstrap widened to Wilson's (fewer than ${SMALL_N_PUZZLES} puzzles)`
                            : `percentile bootstrap 95% interval over ${r.puzzles} puzzles`} />;
                      })}
                      <td className="num" data-testid="compare-wm-exact" title={wmTitle(r, r.wmTurns)}>{pct(r.wmPredExact)}</td>
                      <td className="num" data-testid="compare-given-action" title={r.givenAction === null ? 'no world-model check in this run\'s evaluation' : nText(r.givenActionTurns, 'state-changing turns')}>{pct(r.givenAction)}</td>
                      <td className="num" title={wmTitle(r, r.wmTurns)}>{pct(r.wmPredCell)}</td>
                      <td className="num">{r.avgActions === null ? 'n/a' : r.avgActions.toFixed(2)}</td>
                    </tr>
                  )).concat(referenceRows(rows.filter((r) => r.env === env), ks).map((ref) => (
                    <tr key={`${env}-${ref.kind}`} data-testid={`compare-${ref.kind}`} className="faint">
                      <td /><td colSpan={3} title={`${ref.label}: Pass@k of the reference policy on the same puzzles and protocol as ${ref.of}`}><em>{ref.kind}</em> <span className="faint">· puzzles of {ref.of}</span></td>
                      <td className="num">n/a</td>
                      {ks.map((k) => <td key={k} className="num">{pct(ref.passAt[k])}</td>)}
                      <td className="num" /><td className="num" /><td className="num" /><td className="num" />
                    </tr>
                  ))))}
                </tbody>
              </table>
            </div>
          )}
          {tab === 'curves' && (
            <div>
              <div className="row" style={{ marginBottom: 10 }}>
                <label className="row" style={{ gap: 4 }}>x
                  <select value={xMode} onChange={(e) => setXMode(e.target.value as XMode)}>
                    <option value="step">step</option><option value="time">wall time</option><option value="episodes">episodes</option>
                  </select>
                </label>
                <label className="row" style={{ gap: 4 }}>smoothing
                  <input type="range" min={0} max={0.99} step={0.01} value={smoothing} onChange={(e) => setSmoothing(Number(e.target.value))} />
                  <span className="mono">{smoothing.toFixed(2)}</span>
                </label>
              </div>
              {metrics.loading ? <div className="muted">Loading…</div> : sharedNames.length === 0 ? <div className="empty-state">These runs share no logged metric.</div> : (
                <ChartGroups testId="compare-charts" xLabel={xLabelOf(xMode, undefined, firstSpans.length)} smoothing={smoothing} syncKey="compare" theme={theme} stageSpans={firstSpans}
                  charts={sharedNames.map((name) => {
                    const byRun = metrics.store.get(name);
                    const series: ChartSeries[] = runIds.map((id, i) => ({ key: id, label: infos[id]?.name ?? id, color: seriesColor(i), x: byRun?.get(id)?.x ?? [], y: byRun?.get(id)?.y ?? [] })).filter((s) => s.x.length > 0);
                    return { name, series };
                  })} />
              )}
            </div>
          )}
          {tab === 'config' && (
            <div className="col" style={{ gap: 12 }}>
              <div className="card">
                <div className="row" style={{ marginBottom: 8 }}>
                  <h2 className="grow" style={{ margin: 0 }}>Config</h2>
                  <label className="checkbox"><input type="checkbox" checked={diffOnly} onChange={(e) => setDiffOnly(e.target.checked)} data-testid="diff-only" /> differences only</label>
                </div>
                <table className="plain mono config-diff" data-testid="config-diff">
                  <thead><tr><th>field</th>{runIds.map((id) => <th key={id}>{infos[id]?.name ?? id}</th>)}</tr></thead>
                  <tbody>
                    {configRows.filter((r) => !diffOnly || r.differs).map((r) => (
                      <tr key={r.path} className={r.differs ? 'diff' : ''}><td>{r.path}</td>{r.values.map((v, i) => <td key={i}>{v || <span className="faint">—</span>}</td>)}</tr>
                    ))}
                    {diffOnly && configRows.every((r) => !r.differs) && <tr><td colSpan={runIds.length + 1} className="muted">The configs are identical.</td></tr>}
                  </tbody>
                </table>
              </div>
              <TemplateDiff runIds={runIds} infos={infos} templates={templates} diffOnly={diffOnly} />
            </div>
          )}
        </>
      )}
    </div>
  );
}

function TemplateDiff({ runIds, infos, templates, diffOnly }: { runIds: string[]; infos: Record<string, RunInfo>; templates: Record<string, string>; diffOnly: boolean }) {
  const base = infos[runIds[0] ?? ''];
  if (!base) return null;
  const keyOf = (i: RunInfo) => `${i.config.template.preset}@${i.templateHash}`;
  return (
    <div className="card" data-testid="template-diff">
      <h2>Templates</h2>
      <table className="plain">
        <thead><tr><th>run</th><th>template</th><th>version (hash)</th><th>response format</th></tr></thead>
        <tbody>
          {runIds.map((id) => infos[id]).filter((i): i is RunInfo => !!i).map((i) => (
            <tr key={i.id} className={keyOf(i) !== keyOf(base) ? 'diff' : ''}>
              <td>{i.name}</td><td>{i.config.template.preset}</td><td className="mono hash">{i.templateHash ?? '–'}</td><td>{i.config.template.responseFormat}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {runIds.slice(1).map((id) => infos[id]).filter((i): i is RunInfo => !!i && keyOf(i) !== keyOf(base)).map((other) => {
        const a = templates[keyOf(base)];
        const b = templates[keyOf(other)];
        if (a === undefined || b === undefined) return <div key={other.id} className="muted">Loading template sources…</div>;
        const lines = lineDiff(a, b);
        return (
          <div key={other.id} style={{ marginTop: 10 }}>
            <h3>{base.name} → {other.name}</h3>
            <pre className="block diff-block">
              {lines.filter((l, idx) => !diffOnly || l.kind !== 'same' || lines.slice(Math.max(0, idx - 2), idx + 3).some((n) => n.kind !== 'same')).map((l, idx) => (
                <div key={idx} className={`diff-${l.kind}`}>{l.kind === 'add' ? '+ ' : l.kind === 'del' ? '- ' : '  '}{l.text}</div>
              ))}
            </pre>
          </div>
        );
      })}
    </div>
  );
}
