// Small shared widgets: tabs, progress bar, status badge, error banner, key-value list.
import { Fragment, type ReactNode } from 'react';
import { describeError } from '../api/errors.js';

/** A long identifier (metric or entity name) with line-break opportunities (<wbr>) between camelCase words and after / - _ . */
export function breakable(name: string): ReactNode {
  const parts = name.split(/(?<=[a-z0-9])(?=[A-Z])|(?<=[/_.-])/);
  return parts.map((p, i) => <Fragment key={i}>{i > 0 && <wbr />}{p}</Fragment>);
}

export function Tabs<K extends string>(props: { tabs: Array<{ id: K; label: ReactNode }>; active: K; onChange: (id: K) => void }) {
  return (
    <div className="tabs" role="tablist">
      {props.tabs.map((t) => (
        <button key={t.id} role="tab" aria-selected={t.id === props.active} className={t.id === props.active ? 'active' : ''} onClick={() => props.onChange(t.id)}>
          {t.label}
        </button>
      ))}
    </div>
  );
}

export function ProgressBar(props: { done: number; total: number; status?: string; label?: string }) {
  const frac = props.total > 0 ? Math.max(0, Math.min(1, props.done / props.total)) : 0;
  const indeterminate = props.status === 'running' && props.total <= 0;
  return (
    <div className={`progress ${props.status ?? ''} ${indeterminate ? 'indeterminate' : ''}`} role="progressbar"
      aria-valuemin={0} aria-valuemax={props.total || 1} aria-valuenow={props.done} aria-label={props.label}>
      <div style={indeterminate ? undefined : { width: `${(frac * 100).toFixed(1)}%` }} />
    </div>
  );
}

export function StatusBadge(props: { status: string; title?: string }) {
  return <span className={`badge ${props.status}`} title={props.title} data-status={props.status}>{props.status}</span>;
}

export function ErrorBanner(props: { error: unknown; onDismiss?: () => void; title?: string }) {
  if (!props.error) return null;
  const { title, details } = describeError(props.error);
  return (
    <div className="banner error" role="alert">
      <div className="row">
        <span className="title grow">{props.title ? `${props.title}: ` : ''}{title}</span>
        {props.onDismiss && <button className="btn small ghost" onClick={props.onDismiss} aria-label="Dismiss">✕</button>}
      </div>
      {details && <div className="details">{details}</div>}
    </div>
  );
}

export function KeyValues(props: { items: Array<[string, ReactNode]> }) {
  return (
    <dl className="kv">
      {props.items.map(([k, v]) => [<dt key={`k-${k}`}>{k}</dt>, <dd key={`v-${k}`}>{v}</dd>])}
    </dl>
  );
}

export function EmptyState(props: { children: ReactNode }) {
  return <div className="empty-state">{props.children}</div>;
}
