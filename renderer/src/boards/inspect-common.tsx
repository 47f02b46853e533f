// Small pieces shared by the inspection views (trace, replay, templates, datasets): async
// loading with cancellation, an error banner that shows expected / received / where, a pager,
// and a run picker. Views stay readable; these stay dumb.
import { useEffect, useState, type DependencyList, type ReactElement } from 'react';
import type { RunSummary, WorkbenchApi } from '../../../core/api/contract.js';
import { describeError } from '../api/errors.js';
import './inspect.css';

export type Async<T> = { status: 'idle' } | { status: 'loading' } | { status: 'ok'; value: T } | { status: 'error'; error: unknown };

/** Run `load` when deps change; stale results are dropped. `null` from `load` means "nothing to load". */
export function useAsync<T>(load: () => Promise<T> | null, deps: DependencyList): Async<T> {
  const [state, setState] = useState<Async<T>>({ status: 'idle' });
  useEffect(() => {
    let live = true;
    const promise = load();
    if (promise === null) { setState({ status: 'idle' }); return; }
    setState({ status: 'loading' });
    promise.then(
      (value) => { if (live) setState({ status: 'ok', value }); },
      (error: unknown) => { if (live) setState({ status: 'error', error }); },
    );
    return () => { live = false; };
  }, deps);
  return state;
}

export function ErrorBanner({ error, context }: { error: unknown; context?: string }): ReactElement {
  const { title, details } = describeError(error);
  return (
    <div className="banner error" role="alert">
      <div className="title">{context ? `${context}: ` : ''}{title}</div>
      {details && <div className="details">{details}</div>}
    </div>
  );
}

export function Pager({ offset, limit, total, onOffset, label = 'episodes' }: {
  offset: number; limit: number; total: number; onOffset: (offset: number) => void; label?: string;
}): ReactElement {
  const from = total === 0 ? 0 : offset + 1;
  const to = Math.min(total, offset + limit);
  return (
    <div className="inspect-pager" aria-label="Pages">
      <button type="button" className="btn small" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))} aria-label="Previous page">‹ Prev</button>
      <span className="muted" data-testid="pager-range">{from}–{to} of {total} {label}</span>
      <button type="button" className="btn small" disabled={to >= total} onClick={() => onOffset(offset + limit)} aria-label="Next page">Next ›</button>
    </div>
  );
}

/** A select of the project's runs (newest first). */
export function RunPicker({ api, value, onChange, label = 'Run', allowNone = false, exclude }: {
  api: WorkbenchApi; value: string | undefined; onChange: (runId: string | undefined) => void; label?: string; allowNone?: boolean; exclude?: string;
}): ReactElement {
  const runs = useAsync(() => api.runs.list({ offset: 0, limit: 1000 }), [api]);
  const list: RunSummary[] = runs.status === 'ok' ? runs.value.runs.filter((r) => r.id !== exclude) : [];
  return (
    <label className="field inspect-field">
      <span className="label">{label}</span>
      <select value={value ?? ''} onChange={(e) => onChange(e.target.value || undefined)} aria-label={label}>
        {(allowNone || value === undefined) && <option value="">{runs.status === 'loading' ? 'loading…' : allowNone ? '(none)' : 'choose a run…'}</option>}
        {value !== undefined && !list.some((r) => r.id === value) && value !== exclude && <option value={value}>{value}</option>}
        {list.map((r) => <option key={r.id} value={r.id}>{r.name && r.name !== r.id ? `${r.name} (${r.id})` : r.id} · {r.env} · {r.status}</option>)}
      </select>
      {runs.status === 'error' && <span className="field-error">{describeError(runs.error).title}</span>}
    </label>
  );
}

/** Parse an optional integer from a text field: undefined when blank, an error text when not an integer. */
export function parseOptionalInt(text: string, what: string): { value: number | undefined; error: string | null } {
  const t = text.trim();
  if (t === '') return { value: undefined, error: null };
  if (!/^-?\d+$/.test(t)) return { value: undefined, error: `${what}: expected a whole number, got "${t}"` };
  return { value: Number(t), error: null };
}

export function formatNumber(value: number | null | undefined, digits = 3): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  if (Number.isInteger(value)) return String(value);
  return value.toFixed(digits);
}

export function percent(value: number | null | undefined): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  return `${(value * 100).toFixed(1)}%`;
}
