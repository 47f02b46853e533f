// Sample generations of a run during its long stages (runs.samples): what the model writes for
// a held-out prompt every few steps, beside the reply it is trained towards. Refreshes while the
// run is active.
import { useEffect, useState, type ReactElement } from 'react';
import type { ApiResponse } from '../../../core/api/contract.js';
import type { Client } from '../api/client.js';
import { ErrorBanner } from './widgets.js';

type Sample = ApiResponse<'runs.samples'>['samples'][number];

/** Replies wrap (a run of repeated tags is one long word) and scroll past 18 lines. */
const PRE = { whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', maxHeight: '24em', overflow: 'auto' } as const;

export function StageSamples({ client, runId, active }: { client: Client; runId: string; active: boolean }): ReactElement {
  const [samples, setSamples] = useState<Sample[] | null>(null);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let cancelled = false;
    const load = () => client.runs.samples({ runId, limit: 20 }).then((r) => { if (!cancelled) { setSamples(r.samples); setTotal(r.total); setError(null); } }, (e) => { if (!cancelled) setError(e); });
    load();
    const t = active ? setInterval(load, 5000) : null;
    return () => { cancelled = true; if (t) clearInterval(t); };
  }, [client, runId, active]);
  if (error) return <ErrorBanner error={error} title="Samples" />;
  if (!samples) return <div className="muted">Loading samples…</div>;
  if (samples.length === 0) {
    return <div className="empty-state" data-testid="samples-empty">No samples yet. Stages that train on text (SFT) write one every quarter of their steps: the model's reply to a held-out prompt, beside the reply it learns.</div>;
  }
  return (
    <div data-testid="stage-samples">
      <div className="muted" style={{ marginBottom: 8 }}>{total} sample{total === 1 ? '' : 's'}, newest first (greedy replies to the same held-out prompt).</div>
      {samples.map((s) => (
        <div className="card" key={`${s.stage}-${s.step}-${s.time}`} data-testid="stage-sample" style={{ marginBottom: 10 }}>
          <div className="row" style={{ gap: 10 }}>
            <strong>{s.stage} · step {s.step}</strong>
            {s.wellFormed ? <span className="badge ok">well-formed</span> : <span className="badge bad">not well-formed</span>}
            <span className="faint">{new Date(s.time).toLocaleTimeString()}</span>
          </div>
          <details><summary className="muted">prompt</summary><pre className="block">{s.prompt}</pre></details>
          <div className="grid-2">
            <div style={{ minWidth: 0 }}><div className="faint">model wrote ({s.generated.length} characters)</div><pre className="block" style={PRE} data-testid="sample-generated">{s.generated || '(nothing)'}</pre></div>
            <div style={{ minWidth: 0 }}><div className="faint">target ({s.target.length} characters)</div><pre className="block" style={PRE}>{s.target}</pre></div>
          </div>
        </div>
      ))}
    </div>
  );
}
