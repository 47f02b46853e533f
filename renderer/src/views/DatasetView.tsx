// Dataset browser: the SFT rows of a run (datasets.query, paged), each with the model's original
// response and the ground-truth-corrected one side by side, replaced spans diff-highlighted;
// and the self-play filter's row counts and drop reasons (datasets.stats).
import { useEffect, useMemo, useState, type ReactElement } from 'react';
import type { DatasetStats, SftRow } from '../../../core/api/contract.js';
import type { ViewProps } from '../routes.js';
import { diffText, type DiffPart } from '../boards/text-diff.js';
import { ErrorBanner, Pager, RunPicker, useAsync } from '../boards/inspect-common.js';

export type DatasetViewProps = ViewProps;

const PAGE = 20;

export default function DatasetView({ api, projectPath, runId, navigate }: DatasetViewProps): ReactElement {
  const [split, setSplit] = useState<'train' | 'val'>('train');
  const [offset, setOffset] = useState(0);
  useEffect(() => { setOffset(0); }, [runId, split]);
  const stats = useAsync(() => (runId ? api.datasets.stats({ runId }) : null), [api, runId]);
  const page = useAsync(() => (runId ? api.datasets.query({ runId, split, offset, limit: PAGE }) : null), [api, runId, split, offset]);

  if (!projectPath) {
    return <div className="inspect-view"><h1>Dataset browser</h1><div className="banner info">Open a project first (Projects), then pick a run.</div></div>;
  }
  return (
    <div className="inspect-view dataset-view" data-testid="dataset-view">
      <div className="inspect-header">
        <h1>Dataset browser</h1>
        <RunPicker api={api} value={runId} onChange={(id) => navigate(id ? { view: 'datasets', runId: id } : { view: 'datasets' })} />
        {runId && (
          <label className="field inspect-field">
            <span className="label">Split</span>
            <select aria-label="Split" value={split} onChange={(e) => setSplit(e.target.value as 'train' | 'val')}>
              <option value="train">train</option><option value="val">val</option>
            </select>
          </label>
        )}
      </div>
      {!runId && <div className="banner info">Pick a run that has a self-play stage to see its SFT dataset.</div>}
      {stats.status === 'error' && <ErrorBanner error={stats.error} context="Dataset stats" />}
      {stats.status === 'ok' && <StatsCard stats={stats.value.stats} />}
      {page.status === 'error' && <ErrorBanner error={page.error} context="SFT rows" />}
      {page.status === 'loading' && <div className="muted">loading rows…</div>}
      {page.status === 'ok' && (
        <>
          <Pager offset={offset} limit={PAGE} total={page.value.total} onOffset={setOffset} label="rows" />
          {page.value.skipped > 0 && <div className="banner warn">{page.value.skipped} unreadable line{page.value.skipped === 1 ? '' : 's'} skipped in sft-{split}.jsonl (torn write or corrupt data).</div>}
          {page.value.total === 0 && <div className="muted">No {split} rows{stats.status === 'ok' && stats.value.stats === null ? ': this run has no dataset yet' : ''}.</div>}
          {page.value.rows.map((row) => (
            <RowCard key={row.id} row={row} onOpenEpisode={() => runId && navigate({ view: 'trace', runId, episodeId: row.episodeId })} />
          ))}
          {page.value.rows.length > 3 && <Pager offset={offset} limit={PAGE} total={page.value.total} onOffset={setOffset} label="rows" />}
        </>
      )}
    </div>
  );
}

function StatsCard({ stats }: { stats: DatasetStats | null }): ReactElement {
  if (!stats) return <div className="muted">No dataset statistics: the self-play stage has not written datasets/sft-stats.json yet.</div>;
  const drops = Object.entries(stats.dropped).sort((a, b) => b[1] - a[1]);
  const dropped = drops.reduce((sum, [, n]) => sum + n, 0);
  const kept = stats.train + stats.val;
  return (
    <section className="card" aria-label="Dataset statistics" data-testid="dataset-stats">
      <div className="row">
        <span><b>{stats.train}</b> train rows</span>
        <span><b>{stats.val}</b> val rows</span>
        {stats.games && <span className="muted">from {stats.games.train} + {stats.games.val} games</span>}
        {stats.drills ? <span className="muted" data-testid="dataset-drills">{stats.drills} of the train rows are one-action drills</span> : null}
        <span><b>{dropped}</b> dropped{kept + dropped > 0 ? ` (${((100 * dropped) / (kept + dropped)).toFixed(1)}% of turns)` : ''}</span>
      </div>
      {drops.length > 0 ? (
        <table className="dataset-drops" aria-label="Drop reasons">
          <thead><tr><th>drop reason</th><th>turns</th></tr></thead>
          <tbody>{drops.map(([reason, n]) => <tr key={reason} data-reason={reason}><td>{reason}</td><td className="num">{n}</td></tr>)}</tbody>
        </table>
      ) : <div className="muted">The filter dropped nothing.</div>}
    </section>
  );
}

/** Whitespace-only changes made visible: ↵ for a newline, · for a space. */
function visible(text: string): string {
  return text.trim() === '' ? text.replace(/ /g, '·').replace(/\t/g, '→').replace(/\n/g, '↵\n') : text;
}

function DiffSide({ parts, side }: { parts: DiffPart[]; side: 'original' | 'corrected' }): ReactElement {
  return (
    <pre className="mono">
      {parts.map((p, i) => {
        if (p.kind === 'same') return <span key={i}>{p.text}</span>;
        const ws = p.text.trim() === '' ? ' diff-ws' : '';
        if (side === 'original' && p.kind === 'del') return <del key={i} className={`diff-del${ws}`}>{visible(p.text)}</del>;
        if (side === 'corrected' && p.kind === 'ins') return <ins key={i} className={`diff-ins${ws}`}>{visible(p.text)}</ins>;
        return null;
      })}
    </pre>
  );
}

function RowCard({ row, onOpenEpisode }: { row: SftRow; onOpenEpisode: () => void }): ReactElement {
  const parts = useMemo(() => diffText(row.original, row.corrected), [row.original, row.corrected]);
  const changed = parts.some((p) => p.kind !== 'same' && p.text.trim() !== '');
  const whitespaceOnly = !changed && parts.some((p) => p.kind !== 'same');
  return (
    <article className="card dataset-row" data-row-id={row.id}>
      <div className="row">
        <b className="mono">{row.id}</b>
        <span className="muted">seed {row.seed} · turn {row.turn + 1}</span>
        <button type="button" className="btn small ghost" onClick={onOpenEpisode}>episode {row.episodeId} ›</button>
        <span className="grow" />
        {changed ? <span className="badge stopped">corrected</span> : whitespaceOnly ? <span className="badge">whitespace only</span> : <span className="badge completed">unchanged</span>}
      </div>
      <details className="trace-text">
        <summary>Prompt</summary>
        <pre className="mono">{row.prompt}</pre>
      </details>
      <div className="dataset-pair">
        <div className="dataset-text"><h4>original response (model)</h4><DiffSide parts={parts} side="original" /></div>
        <div className="dataset-text"><h4>corrected response (true states)</h4><DiffSide parts={parts} side="corrected" /></div>
      </div>
    </article>
  );
}
