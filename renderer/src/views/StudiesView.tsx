// Studies: grids of runs (methods × envs × seeds) run one after another by the host
// (studies.start), followed live (status, progress, the current run), stopped and resumed, and
// compared in the paper's layout (studies.table: Pass@1 / Pass@k per env and method with 95%
// intervals, pooled over seeds). The same studies as `spa-workbench study run` (same files).
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { EnvInfo, PresetInfo, RunSummary, StudySummary, StudyTable, WorkbenchEvent } from '../../../core/api/contract.js';
import type { WorkbenchApi } from '../../../core/api/contract.js';
import type { Route } from '../routes.js';
import { EmptyState, ErrorBanner, ProgressBar, StatusBadge } from '../components/widgets.js';
import { fmtDate, fmtDateShort, fmtDuration } from '../components/format.js';
import { downloadText } from '../components/download.js';

type StudiesClient = Pick<WorkbenchApi, 'studies' | 'runs' | 'envs'> & {
  subscribe?: (topic: { kind: 'project' }, listener: (e: WorkbenchEvent) => void) => () => void;
};

export interface StudiesViewProps {
  client: StudiesClient;
  navigate: (route: Route) => void;
  /** The selected study (from the route #/studies/<name>). */
  name?: string | undefined;
}

export const STUDY_NAME_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;
type Size = 'smoke' | 'quick' | 'standard' | 'paper';

export interface StudyForm { name: string; methods: string[]; envs: string[]; seeds: string; size: Size; overrides: string }

/** Parse "0, 1 2" → [0, 1, 2]; errors for non-integers and repeats. */
export function parseSeeds(text: string): { seeds: number[]; error: string | null } {
  const parts = text.split(/[\s,]+/).filter(Boolean);
  if (parts.length === 0) return { seeds: [], error: 'give at least one seed, e.g. 0, 1' };
  const seeds: number[] = [];
  for (const p of parts) {
    const n = Number(p);
    if (!/^-?\d+$/.test(p) || !Number.isSafeInteger(n)) return { seeds, error: `${JSON.stringify(p)} is not an integer` };
    if (seeds.includes(n)) return { seeds, error: `seed ${n} appears twice` };
    seeds.push(n);
  }
  return { seeds, error: null };
}

/** "key=value" lines (like the CLI's --set): values parsed as JSON when they parse, else strings. */
export function parseOverrides(text: string): { set: Record<string, unknown>; error: string | null } {
  const set: Record<string, unknown> = {};
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) return { set, error: `line ${i + 1}: expected key=value, e.g. stages.rl.steps=10` };
    const value = line.slice(eq + 1).trim();
    let parsed: unknown = value;
    try { parsed = JSON.parse(value); } catch { /* a plain string */ }
    set[line.slice(0, eq).trim()] = parsed;
  }
  return { set, error: null };
}

/** Field errors of the start form (empty object: valid). */
export function validateStudyForm(f: StudyForm): Record<string, string> {
  const errors: Record<string, string> = {};
  if (!f.name.trim()) errors.name = 'give the study a name';
  else if (!STUDY_NAME_RE.test(f.name.trim())) errors.name = 'letters, digits, ".", "_" or "-" only (not starting with ".")';
  if (f.methods.length === 0) errors.methods = 'pick at least one method';
  if (f.envs.length === 0) errors.envs = 'pick at least one environment';
  const seeds = parseSeeds(f.seeds);
  if (seeds.error) errors.seeds = seeds.error;
  const o = parseOverrides(f.overrides);
  if (o.error) errors.overrides = o.error;
  return errors;
}

const ACTIVE_RUN = new Set(['running', 'queued', 'stopping']);
const LEGEND = { fontWeight: 600, color: 'var(--fg)', fontSize: 12.5 } as const;
const pct = (v: number | undefined) => (v === undefined ? '–' : (100 * v).toFixed(1));

export default function StudiesView({ client, navigate, name }: StudiesViewProps) {
  const [studies, setStudies] = useState<StudySummary[] | null>(null);
  const [presets, setPresets] = useState<PresetInfo[]>([]);
  const [envs, setEnvs] = useState<EnvInfo[]>([]);
  const [runs, setRuns] = useState<Map<string, RunSummary>>(new Map());
  const [table, setTable] = useState<StudyTable | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [touched, setTouched] = useState(false);
  const [form, setForm] = useState<StudyForm>({ name: '', methods: [], envs: [], seeds: '0', size: 'smoke', overrides: '' });
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);

  const load = useCallback(() => {
    client.studies.list().then((r) => { setStudies(r.studies); }, setError);
    client.runs.list({ limit: 100000 }).then((r) => setRuns(new Map(r.runs.map((x) => [x.id, x]))), () => {});
  }, [client]);
  const loadTable = useCallback(() => {
    if (!name) { setTable(null); return; }
    client.studies.table({ name }).then(setTable, (e) => { setTable(null); setError(e); });
  }, [client, name]);

  useEffect(load, [load]);
  useEffect(loadTable, [loadTable]);
  useEffect(() => {
    client.runs.presets().then((r) => setPresets(r.presets), setError);
    client.envs.list().then((r) => setEnvs(r.envs), setError);
  }, [client]);
  // Live: study-changed and run events refresh the list (debounced); the table when a run of the selected study ends.
  useEffect(() => {
    if (!client.subscribe) return;
    return client.subscribe({ kind: 'project' }, (ev) => {
      if (ev.kind !== 'project') return;
      const t = ev.event.type;
      if (t !== 'study-changed' && t !== 'runs-changed' && t !== 'run-status' && t !== 'engine-exit') return;
      if (t === 'study-changed' && ev.event.name === name) loadTable();
      if (!pending.current) pending.current = setTimeout(() => { pending.current = null; load(); }, 300);
    });
  }, [client, load, loadTable, name]);
  useEffect(() => () => { if (pending.current) clearTimeout(pending.current); }, []);
  // Progress of the current run is not a project event: poll while a study runs.
  const anyRunning = (studies ?? []).some((s) => s.status === 'running');
  useEffect(() => {
    if (!anyRunning) return;
    const t = setInterval(load, 2000);
    return () => clearInterval(t);
  }, [anyRunning, load]);

  const errors = useMemo(() => validateStudyForm(form), [form]);
  const existing = (studies ?? []).find((s) => s.name === form.name.trim());
  const selected = (studies ?? []).find((s) => s.name === name);
  const methodPresets = presets.filter((p) => !p.id.startsWith('diagnostic'));
  const diagnostics = presets.filter((p) => p.id.startsWith('diagnostic'));
  const gridSize = form.methods.length * form.envs.length * parseSeeds(form.seeds).seeds.length;

  // The study's cost: runs.estimate for each method × env (same size and overrides), times the seeds.
  const [cost, setCost] = useState<{ seconds: number; unestimated: number; trainBases: number; cells: number } | null>(null);
  const costKey = JSON.stringify([form.methods, form.envs, form.size, form.overrides, parseSeeds(form.seeds).seeds.length]);
  useEffect(() => {
    const seedCount = parseSeeds(form.seeds).seeds.length;
    const { set, error: overridesError } = parseOverrides(form.overrides);
    if (form.methods.length === 0 || form.envs.length === 0 || seedCount === 0 || overridesError) { setCost(null); return; }
    let cancelled = false;
    const t = setTimeout(() => {
      const cells = form.methods.flatMap((m) => form.envs.map((e) => [m, e] as const));
      void Promise.all(cells.map(async ([preset, env]) => {
        try { return await client.runs.estimate({ preset, size: form.size, set: { ...set, 'env.id': env } }); } catch { return null; }
      })).then((estimates) => {
        if (cancelled) return;
        const known = estimates.filter((e): e is NonNullable<typeof e> => e !== null);
        if (known.length === 0) { setCost(null); return; }
        setCost({
          seconds: known.reduce((a, e) => a + (e.seconds ?? 0), 0) * seedCount,
          unestimated: (known.reduce((a, e) => a + e.unestimated.length, 0) + (cells.length - known.length)) * seedCount,
          trainBases: known.filter((e) => e.bootstrap === 'train').length * seedCount,
          cells: cells.length * seedCount,
        });
      });
    }, 400);
    return () => { cancelled = true; clearTimeout(t); };
    // costKey holds the form fields the estimate depends on
  }, [client, costKey]);

  const act = async (fn: () => Promise<StudySummary>, select?: string) => {
    setBusy(true);
    try {
      await fn();
      setError(null);
      if (select) {
        navigate({ view: 'studies', name: select });
        setForm((f) => ({ ...f, name: '' }));   // keep the grid for the next study, not the name
        setTouched(false);
      }
    } catch (e) { setError(e); }
    setBusy(false);
    load();
    loadTable();
  };
  const submit = () => {
    setTouched(true);
    if (Object.keys(errors).length > 0) return;
    const seeds = parseSeeds(form.seeds).seeds;
    const { set } = parseOverrides(form.overrides);
    const studyName = form.name.trim();
    void act(() => client.studies.start({
      name: studyName, methods: form.methods, envs: form.envs, seeds, size: form.size, ...(Object.keys(set).length ? { set } : {}),
    }), studyName);
  };
  const toggle = (key: 'methods' | 'envs', id: string, on: boolean) =>
    setForm((f) => ({ ...f, [key]: on ? [...f[key], id] : f[key].filter((x) => x !== id) }));
  const fieldError = (k: string) => (touched && errors[k] ? <span className="field-error" role="alert" data-testid={`study-error-${k}`}>{errors[k]}</span> : null);

  return (
    <div data-testid="studies-view">
      <div className="row" style={{ marginBottom: 12 }}>
        <h1 style={{ margin: 0 }} className="grow">Studies</h1>
        <span className="muted">A grid of runs (methods × envs × seeds), run one after another; the same as <span className="mono">spa-workbench study run</span>.</span>
      </div>
      <ErrorBanner error={error} onDismiss={() => setError(null)} />
      <div className="newrun" style={{ gridTemplateColumns: 'minmax(0, 1fr) 400px' }}>
        <div className="col" style={{ gap: 12, minWidth: 0 }}>
          <div className="card">
            <h2>Studies of this project</h2>
            {studies === null ? <div className="muted">Loading studies…</div> : studies.length === 0 ? (
              <EmptyState>No studies yet. Start one with the form on the right.</EmptyState>
            ) : (
              <table className="plain" data-testid="studies-table">
                <thead>
                  <tr><th>Study</th><th>Status</th><th style={{ width: 190 }}>Progress</th><th>Grid</th><th>Started</th></tr>
                </thead>
                <tbody>
                  {studies.map((s) => {
                    const current = s.progress.currentRunId ? runs.get(s.progress.currentRunId) : undefined;
                    return (
                      <tr key={s.name} data-testid="study-row" data-study={s.name} data-status={s.status}
                        style={s.name === name ? { background: 'var(--bg-selected)' } : undefined}>
                        <td style={{ whiteSpace: 'nowrap' }}><a onClick={() => navigate({ view: 'studies', name: s.name })} data-testid="study-link"><strong>{s.name}</strong></a></td>
                        <td>
                          <StatusBadge status={s.status} title={s.reason ?? undefined} />
                          {s.status === 'running'
                            ? <div style={{ marginTop: 4 }}><button className="btn small" disabled={busy} onClick={() => void act(() => client.studies.stop({ name: s.name }))} data-testid="study-stop">Stop</button></div>
                            : s.status !== 'completed' && <div style={{ marginTop: 4 }}><button className="btn small" disabled={busy} onClick={() => void act(() => client.studies.start({ name: s.name }))} data-testid="study-resume" title="Completed runs are skipped, stopped or failed ones resumed">{s.status === 'pending' ? 'Start' : 'Resume'}</button></div>}
                        </td>
                        <td>
                          <div className="row" style={{ gap: 6, flexWrap: 'nowrap' }}>
                            <div className="grow"><ProgressBar done={s.progress.done} total={s.progress.total} status={s.status === 'running' ? 'running' : s.status === 'completed' ? 'completed' : s.progress.failed > 0 && s.status === 'failed' ? 'failed' : ''} label={`${s.name} progress`} /></div>
                            <span className="mono" data-testid="study-progress">{s.progress.done}/{s.progress.total}</span>
                          </div>
                          {s.progress.failed > 0 && <div className="faint" style={{ fontSize: 12 }}>{s.progress.failed} stopped or failed</div>}
                          {current && s.status === 'running' && (
                            <div style={{ fontSize: 12 }} className="ellipsis" title={current.name}>
                              <a onClick={() => navigate({ view: 'run', runId: current.id })} data-testid="study-current-run">{current.method} · {current.env}</a>
                              <span className="faint">{current.progress && ACTIVE_RUN.has(current.status) ? ` ${current.progress.stage} ${current.progress.done}/${current.progress.total}` : ` ${current.status}`}</span>
                            </div>
                          )}
                        </td>
                        <td className="muted" style={{ fontSize: 12.5, whiteSpace: 'nowrap' }} title={`methods: ${s.methods.join(', ')}\nenvs: ${s.envs.join(', ')}\nseeds: ${s.seeds.join(', ')}`}>
                          {s.methods.length} method{s.methods.length === 1 ? '' : 's'} × {s.envs.length} env{s.envs.length === 1 ? '' : 's'}
                          <div>× {s.seeds.length} seed{s.seeds.length === 1 ? '' : 's'} · {s.size}</div>
                        </td>
                        <td className="muted" style={{ fontSize: 12.5, whiteSpace: 'nowrap' }} title={`started ${fmtDate(s.startedAt)}${s.finishedAt ? `, finished ${fmtDate(s.finishedAt)}` : ''}`}>
                          {fmtDateShort(s.startedAt)}
                          {s.startedAt && s.finishedAt ? <div className="faint">{fmtDuration(s.finishedAt - s.startedAt)}</div> : null}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            )}
          </div>
          {name && <StudyDetail study={selected} table={table} navigate={navigate} />}
        </div>

        <div className="card form-card newrun-side" data-testid="study-form">
          <h2>Start a study</h2>
          <div className="col" style={{ gap: 10 }}>
            <label className="field">
              <span className="label">Name</span>
              <input type="text" value={form.name} placeholder="e.g. sokoban-baselines" aria-invalid={touched && !!errors.name}
                onChange={(e) => setForm({ ...form, name: e.target.value })} data-testid="study-name" />
              {fieldError('name')}
              {existing && <span className="field-help" data-testid="study-exists">Study {existing.name} exists ({existing.status}): starting it resumes it; completed runs are skipped.</span>}
            </label>
            <fieldset className="field" style={{ border: 0, padding: 0, margin: 0 }} data-testid="study-methods">
              <span className="label" style={LEGEND}>Methods</span>
              <div style={{ display: 'grid', gridTemplateColumns: 'repeat(2, minmax(0, 1fr))', gap: '2px 10px' }}>
                {[...methodPresets, ...diagnostics].map((p) => (
                  <label key={p.id} className="checkbox" title={`${p.id}: ${p.description}`} style={{ fontSize: 12.5, color: 'var(--fg)', minWidth: 0 }}>
                    <input type="checkbox" checked={form.methods.includes(p.id)} onChange={(e) => toggle('methods', p.id, e.target.checked)} data-testid={`study-method-${p.id}`} />
                    <span style={{ overflowWrap: 'anywhere' }}>{p.id}</span>
                  </label>
                ))}
              </div>
              {fieldError('methods')}
            </fieldset>
            <fieldset className="field" style={{ border: 0, padding: 0, margin: 0 }} data-testid="study-envs">
              <span className="label" style={LEGEND}>Environments</span>
              <div className="row" style={{ gap: '2px 14px' }}>
                {envs.map((e) => (
                  <label key={e.id} className="checkbox" title={e.description} style={{ fontSize: 12.5, color: 'var(--fg)' }}>
                    <input type="checkbox" checked={form.envs.includes(e.id)} onChange={(ev) => toggle('envs', e.id, ev.target.checked)} data-testid={`study-env-${e.id}`} />
                    {e.id}
                  </label>
                ))}
              </div>
              {fieldError('envs')}
            </fieldset>
            <div className="row" style={{ alignItems: 'flex-start', gap: 10, flexWrap: 'nowrap' }}>
              <label className="field grow">
                <span className="label">Seeds</span>
                <input type="text" value={form.seeds} aria-invalid={touched && !!errors.seeds} onChange={(e) => setForm({ ...form, seeds: e.target.value })} data-testid="study-seeds" />
                {fieldError('seeds')}
              </label>
              <label className="field">
                <span className="label">Size</span>
                <select value={form.size} onChange={(e) => setForm({ ...form, size: e.target.value as Size })} data-testid="study-size">
                  <option value="smoke">smoke</option><option value="quick">quick</option><option value="standard">standard</option>
                  <option value="paper">paper</option>
                </select>
              </label>
            </div>
            <label className="field">
              <span className="label">Overrides <span className="faint" style={{ fontWeight: 400 }}>(optional, one key=value per line, for every run)</span></span>
              <textarea rows={2} value={form.overrides} placeholder="stages.rl.steps=20" aria-invalid={touched && !!errors.overrides}
                onChange={(e) => setForm({ ...form, overrides: e.target.value })} data-testid="study-overrides" className="mono" />
              {fieldError('overrides')}
            </label>
            <div className="row">
              <button className="btn primary" disabled={busy || (touched && Object.keys(errors).length > 0)} onClick={submit} data-testid="study-start">
                {existing ? 'Resume study' : 'Start study'}
              </button>
              <span className="muted" data-testid="study-grid-size">{gridSize > 0 ? `${gridSize} run${gridSize === 1 ? '' : 's'}` : ''}</span>
            </div>
            {cost && gridSize > 0 && (
              <div className="muted" data-testid="study-cost" title="the New Run form's estimate (earlier runs here, else the bench) of each method × env, times the seeds; runs go one after another">
                Estimated: <strong>{cost.seconds >= 1 ? `about ${fmtDuration(cost.seconds * 1000)}` : 'not measured yet'}</strong>
                {cost.unestimated > 0 && cost.seconds >= 1 && <> + {cost.unestimated} stage(s) not measured yet (the total leaves them out)</>}
                {cost.unestimated > 0 && cost.seconds < 1 && <> ({cost.unestimated} stage(s))</>}
                {cost.trainBases > 0 && <div className="field-error" data-testid="study-cost-bootstrap">{cost.trainBases} of {cost.cells} runs train a bootstrap base first (no shipped base fits them)</div>}
              </div>
            )}
          </div>
        </div>
      </div>
    </div>
  );
}

function StudyDetail({ study, table, navigate }: { study: StudySummary | undefined; table: StudyTable | null; navigate: (r: Route) => void }) {
  if (!study) return <div className="card muted">Loading the study…</div>;
  const kMax = table && table.ks.length ? Math.max(...table.ks) : null;
  return (
    <div className="card" data-testid="study-detail">
      <div className="row" style={{ marginBottom: 8 }}>
        <h2 className="grow" style={{ margin: 0 }}>{study.name} <StatusBadge status={study.status} /></h2>
        <button className="btn small" disabled={study.runIds.length === 0} onClick={() => navigate({ view: 'compare', runIds: study.runIds })} data-testid="study-compare">Compare its runs ({study.runIds.length})</button>
        <button className="btn small" disabled={!table} onClick={() => table && downloadText(`${study.name}-table.csv`, table.csv, 'text/csv')}>CSV</button>
        <button className="btn small" disabled={!table} onClick={() => table && downloadText(`${study.name}-table.md`, `${table.markdown}\n`, 'text/markdown')}>Markdown</button>
      </div>
      {study.reason && <div className={`banner ${study.status === 'failed' ? 'error' : 'warn'}`} data-testid="study-reason"><div className="details" style={{ marginTop: 0 }}>{study.reason}</div></div>}
      <div className="muted" style={{ marginBottom: 8, fontSize: 12.5 }}>
        Methods <span className="mono">{study.methods.join(', ')}</span> · envs <span className="mono">{study.envs.join(', ')}</span> · seeds <span className="mono">{study.seeds.join(', ')}</span> · size {study.size}
        {study.set && Object.keys(study.set).length > 0 && <> · overrides <span className="mono">{Object.entries(study.set).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ')}</span></>}
      </div>
      {!table ? <div className="muted">Loading the table…</div> : (
        <>
          <table className="plain" data-testid="study-table">
            <thead>
              <tr>
                <th>Method</th>
                {table.envs.map((env) => <th key={env} className="num">{env}<div className="faint" style={{ fontWeight: 400 }}>Pass@1{kMax && kMax !== 1 ? ` / Pass@${kMax}` : ''} %</div></th>)}
              </tr>
            </thead>
            <tbody>
              {table.methods.map((method) => (
                <tr key={method} data-testid="study-table-row" data-method={method}>
                  <td><strong>{method}</strong></td>
                  {table.envs.map((env) => {
                    const c = table.cells.find((x) => x.method === method && x.env === env);
                    if (!c || c.completed === 0) return <td key={env} className="num faint" data-testid="study-cell" data-env={env}>{c && c.runs > 0 ? 'not finished' : '–'}</td>;
                    const p1 = c.passAt['1'];
                    const pk = kMax && kMax !== 1 ? c.passAt[String(kMax)] : undefined;
                    return (
                      <td key={env} className="num" data-testid="study-cell" data-env={env}>
                        <span title="Pass@1 with its 95% interval">{pct(p1?.mean)}{p1 && <span className="faint" style={{ fontSize: 11.5 }}> [{pct(p1.low)}, {pct(p1.high)}]</span>}</span>
                        {pk && <span title={`Pass@${kMax} with its 95% interval`}> / {pct(pk.mean)}<span className="faint" style={{ fontSize: 11.5 }}> [{pct(pk.low)}, {pct(pk.high)}]</span></span>}
                        <div className="faint" style={{ fontSize: 11.5 }}>{c.completed}/{c.runs} run{c.runs === 1 ? '' : 's'} · {fmtDuration(c.wallSeconds * 1000)}</div>
                        {c.versusChance
                          ? <div className={c.versusChance === 'above chance' ? 'faint' : 'bad'} style={{ fontSize: 11.5 }} data-testid="study-versus-chance"
                            title="Pass@1's 95% interval against the chance row on the same puzzles (the Run view states it by the same rule)">{c.versusChance}</div>
                          : c.atOrBelowChance && <div className="faint" style={{ fontSize: 11.5 }} data-testid="study-below-chance">at or below chance</div>}
                      </td>
                    );
                  })}
                </tr>
              ))}
              {(['chance', 'oracle'] as const).map((kind) => {
                const refs = table.envs.map((env) => table.references?.find((r) => r.env === env && r.kind === kind));
                if (refs.every((r) => !r)) return null;
                return (
                  <tr key={kind} data-testid="study-reference-row" data-kind={kind}>
                    <td><em>{refs.find((r) => r)!.label}</em></td>
                    {refs.map((r, i) => (
                      <td key={table.envs[i]} className="num faint" title={r?.how}>
                        {r ? <>{pct(r.passAt['1'])}{kMax && kMax !== 1 ? <> / {pct(r.passAt[String(kMax)])}</> : null}</> : '–'}
                      </td>
                    ))}
                  </tr>
                );
              })}
            </tbody>
          </table>
          <div className="faint" style={{ fontSize: 12, marginTop: 6 }}>
            Pass@k: unbiased estimator over held-out puzzles; brackets: 95% interval, a two-way bootstrap over run seeds and puzzles (widened to Wilson&apos;s below 20 puzzles).
            Chance: a well-formed uniform random policy; oracle: the optimal policy; both on the same puzzles and turn protocol.
          </div>
          <StudyDifferences table={table} />
          <StudyWorldModel table={table} />
        </>
      )}
    </div>
  );
}

/** Paired differences between methods, per (run seed, puzzle), with their 95% interval. */
function StudyDifferences({ table }: { table: StudyTable }) {
  const rows = table.differences ?? [];
  if (rows.length === 0) return null;
  return (
    <>
      <h3 style={{ margin: '14px 0 6px' }}>Paired differences</h3>
      <table className="plain" data-testid="study-differences">
        <thead><tr><th>a − b</th><th>env</th><th className="num">k</th><th className="num">mean [95% interval], points</th><th className="num">(seed, puzzle) cells</th></tr></thead>
        <tbody>
          {rows.map((d) => (
            <tr key={`${d.a}|${d.b}|${d.env}|${d.k}`} data-testid="study-difference" data-a={d.a} data-b={d.b} data-k={d.k}>
              <td>{d.a} − {d.b}</td>
              <td>{d.env}</td>
              <td className="num">{d.k}</td>
              <td className="num">
                {pct(d.diff.mean)}
                {d.smallN ? <span className="faint"> (n too small for an interval)</span> : <span className="faint"> [{pct(d.diff.low)}, {pct(d.diff.high)}]</span>}
                {!d.smallN && (d.diff.low > 0 || d.diff.high < 0) && <span className="faint" title="the interval excludes 0"> *</span>}
              </td>
              <td className="num">{d.cells}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="faint" style={{ fontSize: 12, marginTop: 6 }}>Pass@k of a minus Pass@k of b on the (run seed, puzzle) cells both played; * : the interval excludes 0.</div>
    </>
  );
}

const WM_COLUMNS: Array<{ keys: [string, string]; base?: boolean; label: string; title: string }> = [
  { keys: ['afterSftObservation', 'afterSftPrediction'], label: 'after SFT', title: 'RL step 0: the policy\'s own turns on held-out puzzles (the starting model for a method without SFT)' },
  { keys: ['endObservation', 'endPrediction'], label: 'end of run', title: 'the final eval\'s rollouts' },
  { keys: ['firstObservation', 'firstObservationBase'], base: true, label: 'first turns: observation', title: 'first turns of the eval puzzles, beside the base' },
  { keys: ['givenAction', 'givenActionBase'], base: true, label: 'prediction given the action', title: 'true observation and one action forced, state-changing turns, beside the base' },
];

/** The world model of each method with a world-model format: exact match, mean over seeds (each seed in the tooltip). */
function StudyWorldModel({ table }: { table: StudyTable }) {
  const rows = table.worldModel ?? [];
  if (rows.length === 0) return null;
  const manyEnvs = new Set(rows.map((r) => r.env)).size > 1;
  const perSeed = (r: (typeof rows)[number], key: string) => r.bySeed.map((v) => `seed ${v.seed}: ${pct(v[key])}`).join(' · ');
  return (
    <>
      <h3 style={{ margin: '14px 0 6px' }}>World model (exact match %)</h3>
      <div style={{ overflowX: 'auto' }}>
        <table className="plain" data-testid="study-world-model">
          <thead>
            <tr>
              <th>method</th><th>seeds</th>
              {WM_COLUMNS.map((c) => (
                <th key={c.label} className="num" title={c.title}>
                  {c.label}<div className="faint" style={{ fontWeight: 400 }}>{c.base ? 'model (base)' : 'observation / prediction'}</div>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={`${r.method}|${r.env}`} data-testid="study-world-model-row" data-method={r.method} data-env={r.env}>
                <td><strong>{r.method}</strong>{manyEnvs && <div className="faint">{r.env}</div>}</td>
                <td>{r.seeds.join(', ')}</td>
                {WM_COLUMNS.map((c) => (
                  <td key={c.label} className="num" data-testid={`study-wm-${c.keys[0]}`} title={`${perSeed(r, c.keys[0])}${c.base ? '' : ` | prediction ${perSeed(r, c.keys[1])}`}`}>
                    {c.base
                      ? <>{pct(r.mean[c.keys[0]])}{r.mean[c.keys[1]] !== undefined && <span className="faint" style={{ fontSize: 11.5 }}> ({pct(r.mean[c.keys[1]])})</span>}</>
                      : <>{pct(r.mean[c.keys[0]])} / {pct(r.mean[c.keys[1]])}</>}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="faint" style={{ fontSize: 12, marginTop: 6 }}>
        Observation: the state the model writes before acting; prediction: the state it predicts after its actions; both against the true state.
        Each seed&apos;s value in the tooltip.
      </div>
    </>
  );
}
