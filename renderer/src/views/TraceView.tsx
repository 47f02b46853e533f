// Trace inspector: the episodes of a run's stage/step, filtered and paged from the rollout index
// (rollouts.query; episode files are read one episode at a time by rollouts.get), and per turn
// the prompt, the response, the parsed observation and prediction drawn as boards beside the
// true state and true next state with the wrong cells lit up, the world-model scores, actions,
// reward and flags. Exports: episode JSON / JSONL, boards as PNG.
//
// Issue 12 (item 5): every filter lives in the URL (#/trace/<run>/<episode>?stage=rl&sort=wm&…),
// the list sorts by any column (click a header), filters by step range, group, text in the
// responses and the episode's world-model accuracy; j/k (or ↓/↑) move between episodes; "Group"
// shows the samples of one PPO group side by side (successes first); each turn shows the whole
// conversation the model saw, a character diff of parsed against true state text, and, for RL
// episodes, the per-token log-probabilities, entropies, values and advantages over the response.
import { useCallback, useEffect, useMemo, useState, type ReactElement } from 'react';
import type { Board, EpisodeRecord, EpisodeSummary, TokenStats, TurnRecord, WmScore } from '../../../core/api/records.js';
import type { RolloutSortKey } from '../../../core/api/contract.js';
import { diffChars } from '../boards/char-diff.js';
import { slipScoreText, slipText } from '../boards/replay-frames.js';
import type { Route, ViewProps } from '../routes.js';
import BoardFigure from '../boards/BoardFigure.js';
import { isTextBoard, TextStateDiff } from '../components/TextStateDiff.js';
import { breakable } from '../components/widgets.js';
import { BoardLegend } from '../boards/board-legend.js';
import { boardFamily } from '../boards/board-shapes.js';
import { downloadText } from '../boards/board-png.js';
import { ErrorBanner, formatNumber, Pager, parseOptionalInt, percent, RunPicker, useAsync } from '../boards/inspect-common.js';

export type TraceViewProps = ViewProps;

type Outcome = 'all' | 'success' | 'failure';
type FormatFilter = 'any' | 'none' | 'some';
const PAGE = 50;
const EXPORT_MAX = 5000; // episodes per JSONL export from the list

export default function TraceView({ api, projectPath, runId, episodeId, navigate, route }: TraceViewProps): ReactElement {
  const filters = useMemo(() => (route?.view === 'trace' ? route.filters ?? {} : {}), [route]);
  const [selected, setSelected] = useState<string | undefined>(episodeId);
  useEffect(() => { setSelected(episodeId); }, [episodeId]);
  /** Change filters in the URL; a filter change starts again at the first page. */
  const setFilters = useCallback((patch: Record<string, string>, keepOffset = false): void => {
    if (!runId) return;
    const next = { ...filters, ...patch };
    if (!keepOffset) delete next.offset;
    for (const [k, v] of Object.entries(next)) if (v === '') delete next[k];
    navigate({ view: 'trace', runId, ...(selected ? { episodeId: selected } : {}), filters: next });
  }, [filters, navigate, runId, selected]);
  const stage = filters.stage ?? '';
  const stepText = filters.step ?? '';
  const stepMinText = filters.stepMin ?? '';
  const stepMaxText = filters.stepMax ?? '';
  const seedText = filters.seed ?? '';
  const groupText = filters.group ?? '';
  const search = filters.q ?? '';
  const wmMinText = filters.wmMin ?? '';
  const wmMaxText = filters.wmMax ?? '';
  const outcome = (['success', 'failure'].includes(filters.outcome ?? '') ? filters.outcome : 'all') as Outcome;
  const formatErrors = (['none', 'some'].includes(filters.fmt ?? '') ? filters.fmt : 'any') as FormatFilter;
  const sortBy = (SORT_KEYS as readonly string[]).includes(filters.sort ?? '') ? filters.sort as RolloutSortKey : 'index';
  const order: 'asc' | 'desc' = filters.order === 'desc' ? 'desc' : 'asc';
  const offset = Math.max(0, Number.parseInt(filters.offset ?? '0', 10) || 0);
  const groupMode = filters.show === 'group';
  const setOffset = (n: number): void => setFilters({ offset: n > 0 ? String(n) : '' }, true);

  const step = parseOptionalInt(stepText, 'step');
  const stepMin = parseOptionalInt(stepMinText, 'first step');
  const stepMax = parseOptionalInt(stepMaxText, 'last step');
  const seed = parseOptionalInt(seedText, 'seed');
  const group = parseOptionalInt(groupText, 'group');
  const wmMin = parsePercent(wmMinText, 'minimum world-model accuracy');
  const wmMax = parsePercent(wmMaxText, 'maximum world-model accuracy');
  const errors = [step.error, stepMin.error, stepMax.error, seed.error, group.error, wmMin.error, wmMax.error].filter((e): e is string => !!e);

  const query = useMemo(() => (runId ? {
    runId, outcome, formatErrors,
    ...(stage ? { stage } : {}), ...(step.value !== undefined ? { step: step.value } : {}),
    ...(stepMin.value !== undefined ? { stepMin: stepMin.value } : {}), ...(stepMax.value !== undefined ? { stepMax: stepMax.value } : {}),
    ...(seed.value !== undefined ? { seed: seed.value } : {}), ...(group.value !== undefined ? { group: group.value } : {}),
    ...(search.trim() ? { search: search.trim() } : {}),
    ...(wmMin.value !== undefined ? { wmMin: wmMin.value } : {}), ...(wmMax.value !== undefined ? { wmMax: wmMax.value } : {}),
    ...(sortBy !== 'index' || order === 'desc' ? { sortBy, order } : {}),
  } : null), [runId, outcome, formatErrors, stage, step.value, stepMin.value, stepMax.value, seed.value, group.value, search, wmMin.value, wmMax.value, sortBy, order]);

  const facets = useAsync(() => (runId ? api.rollouts.facets({ runId }) : null), [api, runId]);
  const page = useAsync(() => {
    if (!query || errors.length > 0) return null;
    return api.rollouts.query({ ...query, offset, limit: PAGE });
  }, [api, query, errors.length, offset]);
  const episode = useAsync(() => (runId && selected && !groupMode ? api.rollouts.get({ runId, id: selected }) : null), [api, runId, selected, groupMode]);

  // export every episode that matches the filters (read page by page, one episode at a time)
  const [exporting, setExporting] = useState<{ done: number; total: number } | null>(null);
  const [exportError, setExportError] = useState<unknown>(null);
  const exportFiltered = async (): Promise<void> => {
    if (!runId || !query) return;
    setExportError(null);
    try {
      const lines: string[] = [];
      let total = Infinity;
      for (let at = 0; at < Math.min(total, EXPORT_MAX); at += 200) {
        const chunk = await api.rollouts.query({ ...query, offset: at, limit: 200 });
        total = chunk.total;
        for (const summary of chunk.episodes) {
          if (lines.length >= EXPORT_MAX) break;
          lines.push(JSON.stringify(await api.rollouts.get({ runId, id: summary.id })));
          setExporting({ done: lines.length, total: Math.min(total, EXPORT_MAX) });
        }
        if (chunk.episodes.length === 0) break;
      }
      downloadText(lines.length > 0 ? `${lines.join('\n')}\n` : '', `${runId}-episodes${stage ? `-${stage}` : ''}.jsonl`, 'application/x-ndjson');
    } catch (error) {
      setExportError(error);
    } finally {
      setExporting(null);
    }
  };

  // j / k (and ↓ / ↑) move between the episodes of the list, across pages
  const rows = page.status === 'ok' ? page.value.episodes : null;
  const total = page.status === 'ok' ? page.value.total : 0;
  const [pendingEdge, setPendingEdge] = useState<'first' | 'last' | null>(null);
  useEffect(() => {
    if (!pendingEdge || !rows || rows.length === 0 || !runId) return;
    const target = pendingEdge === 'first' ? rows[0]! : rows[rows.length - 1]!;
    setPendingEdge(null);
    setSelected(target.id);
    navigate({ view: 'trace', runId, episodeId: target.id, filters });
  }, [pendingEdge, rows, runId, navigate, filters]);
  useEffect(() => {
    const onKey = (ev: KeyboardEvent): void => {
      if (ev.ctrlKey || ev.metaKey || ev.altKey || !rows || rows.length === 0 || !runId) return;
      const t = ev.target as HTMLElement | null;
      if (t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA' || t.isContentEditable)) return;
      const delta = ev.key === 'j' || ev.key === 'ArrowDown' ? 1 : ev.key === 'k' || ev.key === 'ArrowUp' ? -1 : 0;
      if (delta === 0) return;
      ev.preventDefault();
      const at = rows.findIndex((e) => e.id === selected);
      const next = at < 0 ? (delta > 0 ? 0 : rows.length - 1) : at + delta;
      if (next >= rows.length) { if (offset + PAGE < total) { setPendingEdge('first'); setOffset(offset + PAGE); } return; }
      if (next < 0) { if (offset > 0) { setPendingEdge('last'); setOffset(Math.max(0, offset - PAGE)); } return; }
      const id = rows[next]!.id;
      setSelected(id);
      navigate({ view: 'trace', runId, episodeId: id, filters });
      const row = [...document.querySelectorAll<HTMLElement>('tr[data-episode-id]')].find((el) => el.dataset.episodeId === id);
      row?.scrollIntoView?.({ block: 'nearest' });
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  const select = (id: string): void => {
    setSelected(id);
    if (runId) navigate({ view: 'trace', runId, episodeId: id, filters: groupMode ? { ...filters, show: '' } : filters });
  };
  const showGroup = (e: { stage: string; step: number; group: number }): void => {
    setFilters({ stage: e.stage, step: String(e.step), group: String(e.group), show: 'group', stepMin: '', stepMax: '' });
  };

  if (!projectPath) {
    return <div className="inspect-view"><h1>Trace inspector</h1><div className="banner info">Open a project first (Projects), then pick a run.</div></div>;
  }

  const stages = facets.status === 'ok' ? facets.value.stages : [];
  const stageInfo = stages.find((s) => s.stage === stage);

  return (
    <div className="inspect-view trace-view" data-testid="trace-view">
      <div className="inspect-header">
        <h1>Trace inspector</h1>
        <RunPicker api={api} value={runId} onChange={(id) => navigate(id ? { view: 'trace', runId: id } : { view: 'trace' })} />
        <span className="faint trace-keys" title="Keyboard">j / k or ↓ / ↑: next / previous episode</span>
      </div>
      {!runId && <div className="banner info">Pick a run to see its episodes.</div>}
      {runId && (
        <div className="trace-layout">
          <section className="trace-list card" aria-label="Episodes">
            <div className="inspect-filters">
              <label className="field inspect-field">
                <span className="label">Stage</span>
                <select value={stage} onChange={(e) => setFilters({ stage: e.target.value })} aria-label="Stage">
                  <option value="">all stages</option>
                  {stages.map((s) => <option key={s.stage} value={s.stage}>{s.stage} ({s.count})</option>)}
                </select>
              </label>
              <label className="field inspect-field narrow">
                <span className="label">Step</span>
                <input type="text" inputMode="numeric" value={stepText} onChange={(e) => setFilters({ step: e.target.value })} aria-label="Step"
                  aria-invalid={step.error ? 'true' : undefined} placeholder={stageInfo ? `${stageInfo.minStep}–${stageInfo.maxStep}` : 'any'} />
              </label>
              <label className="field inspect-field narrow">
                <span className="label">Steps from</span>
                <input type="text" inputMode="numeric" value={stepMinText} onChange={(e) => setFilters({ stepMin: e.target.value })} aria-label="First step"
                  aria-invalid={stepMin.error ? 'true' : undefined} placeholder={stageInfo ? String(stageInfo.minStep) : 'first'} />
              </label>
              <label className="field inspect-field narrow">
                <span className="label">to</span>
                <input type="text" inputMode="numeric" value={stepMaxText} onChange={(e) => setFilters({ stepMax: e.target.value })} aria-label="Last step"
                  aria-invalid={stepMax.error ? 'true' : undefined} placeholder={stageInfo ? String(stageInfo.maxStep) : 'last'} />
              </label>
              <label className="field inspect-field narrow">
                <span className="label">Seed</span>
                <input type="text" inputMode="numeric" value={seedText} onChange={(e) => setFilters({ seed: e.target.value })} aria-label="Seed"
                  aria-invalid={seed.error ? 'true' : undefined} placeholder="any" />
              </label>
              <label className="field inspect-field narrow">
                <span className="label">Group</span>
                <input type="text" inputMode="numeric" value={groupText} onChange={(e) => setFilters({ group: e.target.value })} aria-label="Group"
                  aria-invalid={group.error ? 'true' : undefined} placeholder="any" />
              </label>
              <label className="field inspect-field">
                <span className="label">Outcome</span>
                <select value={outcome} onChange={(e) => setFilters({ outcome: e.target.value === 'all' ? '' : e.target.value })} aria-label="Outcome">
                  <option value="all">all</option><option value="success">success</option><option value="failure">failure</option>
                </select>
              </label>
              <label className="field inspect-field">
                <span className="label">Format errors</span>
                <select value={formatErrors} onChange={(e) => setFilters({ fmt: e.target.value === 'any' ? '' : e.target.value })} aria-label="Format errors">
                  <option value="any">any</option><option value="none">none</option><option value="some">some</option>
                </select>
              </label>
              <label className="field inspect-field narrow" title="Mean world-model cell accuracy of the episode (observations and predictions), in %">
                <span className="label">WM acc. ≥ %</span>
                <input type="text" inputMode="decimal" value={wmMinText} onChange={(e) => setFilters({ wmMin: e.target.value })} aria-label="Minimum world-model accuracy"
                  aria-invalid={wmMin.error ? 'true' : undefined} placeholder="0" />
              </label>
              <label className="field inspect-field narrow">
                <span className="label">≤ %</span>
                <input type="text" inputMode="decimal" value={wmMaxText} onChange={(e) => setFilters({ wmMax: e.target.value })} aria-label="Maximum world-model accuracy"
                  aria-invalid={wmMax.error ? 'true' : undefined} placeholder="100" />
              </label>
              <label className="field inspect-field trace-search">
                <span className="label">Search responses</span>
                <input type="search" value={search} onChange={(e) => setFilters({ q: e.target.value })} aria-label="Search responses" placeholder="text in any turn's response" />
              </label>
            </div>
            {errors.map((e) => <div key={e} className="field-error">{e}</div>)}
            {facets.status === 'error' && <ErrorBanner error={facets.error} context="Rollout index" />}
            {page.status === 'error' && <ErrorBanner error={page.error} context="Episodes" />}
            {page.status === 'loading' && <div className="muted">loading episodes…</div>}
            {page.status === 'ok' && (
              <>
                <EpisodeTable episodes={page.value.episodes} selected={selected} onSelect={select} sortBy={sortBy} order={order}
                  onSort={(key) => setFilters({ sort: key === 'index' ? '' : key, order: sortBy === key && order === 'asc' ? 'desc' : '' })} />
                <Pager offset={offset} limit={PAGE} total={page.value.total} onOffset={setOffset} />
                {page.value.total > 0 && (
                  <div className="row">
                    <button type="button" className="btn small" disabled={exporting !== null} onClick={() => { void exportFiltered(); }}
                      title={`Every episode matching the filters (at most ${EXPORT_MAX}) as one JSON object per line`}>
                      {exporting ? `Exporting ${exporting.done}/${exporting.total}…` : `Export ${Math.min(page.value.total, EXPORT_MAX)} as JSONL`}
                    </button>
                  </div>
                )}
                {exportError !== null && <ErrorBanner error={exportError} context="Export" />}
                {page.value.total === 0 && <div className="muted">No episodes match these filters{stages.length === 0 ? ' (this run has no rollouts yet)' : ''}.</div>}
              </>
            )}
          </section>
          <section className="trace-detail" aria-label="Episode">
            {groupMode && group.value !== undefined && runId && (
              <GroupView api={api} runId={runId} stage={stage} step={step.value} group={group.value} onOpen={select} onClose={() => setFilters({ show: '' })} />
            )}
            {groupMode && group.value === undefined && <div className="muted">Give a group number to see its samples side by side.</div>}
            {!groupMode && !selected && <div className="muted">Select an episode on the left (j / k move between episodes).</div>}
            {!groupMode && episode.status === 'loading' && <div className="muted">loading episode…</div>}
            {!groupMode && episode.status === 'error' && <ErrorBanner error={episode.error} context={`Episode ${selected ?? ''}`} />}
            {!groupMode && episode.status === 'ok' && <EpisodeDetail episode={episode.value} navigate={navigate} onGroup={() => showGroup(episode.value)} />}
          </section>
        </div>
      )}
    </div>
  );
}

const SORT_KEYS = ['index', 'id', 'step', 'seed', 'group', 'sample', 'success', 'reward', 'turns', 'formatErrors', 'invalidActions', 'wm'] as const;

/** A percentage field ("" = no bound) as a fraction 0..1. */
function parsePercent(text: string, what: string): { value: number | undefined; error: string | null } {
  if (text.trim() === '') return { value: undefined, error: null };
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0 || n > 100) return { value: undefined, error: `${what}: expected a percentage from 0 to 100, received ${JSON.stringify(text)}` };
  return { value: n / 100, error: null };
}

/** The parts of an episode id a person reads: "rl · step 12 · group 3 · sample 1". */
export function readableEpisode(e: { stage: string; step: number; group: number; sample: number }): string {
  return `${e.stage} · step ${e.step} · group ${e.group} · sample ${e.sample}`;
}

const COLUMNS: Array<{ key: RolloutSortKey; label: string; title: string; num?: boolean }> = [
  { key: 'id', label: 'episode', title: 'episode id' },
  { key: 'step', label: 'step', title: 'training step', num: true },
  { key: 'group', label: 'grp', title: 'group (samples of a group share the puzzle)', num: true },
  { key: 'seed', label: 'seed', title: 'puzzle seed', num: true },
  { key: 'success', label: 'ok', title: 'success or failure' },
  { key: 'reward', label: 'reward', title: 'total reward', num: true },
  { key: 'wm', label: 'WM', title: 'mean world-model cell accuracy (observations and predictions)', num: true },
  { key: 'turns', label: 'turns', title: 'turns', num: true },
  { key: 'formatErrors', label: 'fmt', title: 'format errors', num: true },
];

function EpisodeTable({ episodes, selected, onSelect, sortBy, order, onSort }: {
  episodes: EpisodeSummary[]; selected?: string; onSelect: (id: string) => void; sortBy: RolloutSortKey; order: 'asc' | 'desc'; onSort: (key: RolloutSortKey) => void;
}): ReactElement {
  return (
    <div className="trace-table-scroll">
      <table className="dt-table trace-table">
        <thead>
          <tr>{COLUMNS.map((c) => (
            <th key={c.key} className={c.num ? 'num' : undefined} title={`${c.title}: click to sort`}
              aria-sort={sortBy === c.key ? (order === 'asc' ? 'ascending' : 'descending') : 'none'}>
              <button type="button" className="trace-sort" onClick={() => onSort(c.key)} data-sort-key={c.key}>
                {c.label}{sortBy === c.key ? (order === 'asc' ? ' ▲' : ' ▼') : ''}
              </button>
            </th>
          ))}</tr>
        </thead>
        <tbody>
          {episodes.map((e) => (
            <tr key={e.id} className={e.id === selected ? 'selected' : undefined} data-episode-id={e.id}
              tabIndex={0} onClick={() => onSelect(e.id)} onKeyDown={(ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); onSelect(e.id); } }}
              aria-selected={e.id === selected}>
              <td className="mono trace-id" title={`${e.id} · ${readableEpisode(e)}`}>{e.id}</td>
              <td className="num">{e.step}</td>
              <td className="num">{e.group}</td>
              <td className="num">{e.seed}</td>
              <td><span className={e.success ? 'ok' : 'bad'} title={e.success ? 'success' : 'failure'} aria-label={e.success ? 'success' : 'failure'}>{e.success ? '✓' : '✗'}</span></td>
              <td className="num">{formatNumber(e.totalReward, 2)}</td>
              <td className="num">{e.wmAccuracy === null || e.wmAccuracy === undefined ? '—' : percent(e.wmAccuracy)}</td>
              <td className="num">{e.numTurns}</td>
              <td className={`num${e.formatErrors > 0 ? ' bad' : ''}`}>{e.formatErrors}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The samples of one PPO group side by side: successes first, then failures, each with its turns' boards. */
function GroupView({ api, runId, stage, step, group, onOpen, onClose }: {
  api: TraceViewProps['api']; runId: string; stage: string; step: number | undefined; group: number; onOpen: (id: string) => void; onClose: () => void;
}): ReactElement {
  const members = useAsync(async () => {
    const page = await api.rollouts.query({ runId, group, ...(stage ? { stage } : {}), ...(step !== undefined ? { step } : {}), limit: 64 });
    const episodes = await Promise.all(page.episodes.map((e) => api.rollouts.get({ runId, id: e.id })));
    return { episodes: episodes.sort((a, b) => Number(b.success) - Number(a.success) || b.totalReward - a.totalReward || a.sample - b.sample), summaries: page.episodes };
  }, [api, runId, stage, step, group]);
  if (members.status === 'loading' || members.status === 'idle') return <div className="muted">loading group…</div>;
  if (members.status === 'error') return <ErrorBanner error={members.error} context={`Group ${group}`} />;
  const { episodes, summaries } = members.value;
  const wm = new Map(summaries.map((e) => [e.id, e.wmAccuracy]));
  const successes = episodes.filter((e) => e.success).length;
  const first = episodes[0];
  return (
    <div className="trace-group" data-testid="trace-group" data-group={group}>
      <div className="card row trace-group-head">
        <h2>Group {group}{first ? ` · ${first.stage} step ${first.step} · seed ${first.seed}` : ''}</h2>
        <span className="muted">{episodes.length} samples · {successes} success{successes === 1 ? '' : 'es'} · {episodes.length - successes} failure{episodes.length - successes === 1 ? '' : 's'}</span>
        <span className="grow" />
        <button type="button" className="btn small" onClick={onClose}>Close group</button>
      </div>
      {episodes.length === 0 && <div className="muted">No episodes in this group with these filters.</div>}
      <div className="trace-group-grid">
        {episodes.map((e) => (
          <article key={e.id} className={`card trace-group-sample ${e.success ? 'is-success' : 'is-failure'}`} data-testid="group-sample" data-episode-id={e.id} data-success={e.success}>
            <div className="row">
              <b>sample {e.sample}</b>
              <span className={`badge ${e.success ? 'completed' : 'failed'}`}>{e.success ? 'success' : 'failure'}</span>
              <span className="grow" />
              <button type="button" className="btn small" onClick={() => onOpen(e.id)} title={e.id}>Open</button>
            </div>
            <div className="faint">reward {formatNumber(e.totalReward, 2)} · {e.numTurns} turns · WM {wm.get(e.id) === null || wm.get(e.id) === undefined ? '—' : percent(wm.get(e.id)!)}</div>
            {e.turns.map((t) => (
              <div key={t.turn} className="trace-group-turn">
                <div className="mono small">t{t.turn + 1}: {t.actionsExecuted.join(' → ') || '(no action)'} · r {formatNumber(t.reward, 2)}{t.flags.formatError ? ' · format error' : ''}</div>
                <div className="trace-group-boards">
                  <BoardFigure board={t.predictedBoard} title="Prediction" highlight={t.wm.prediction?.wrongCells} size={96}
                    missing={t.parsed.prediction === null ? 'no <prediction>' : 'unparseable'} footer={scoreLine(t.wm.prediction)} />
                  <BoardFigure board={t.stateAfter.board} title="True next" highlight={t.wm.prediction?.wrongCells} size={96} />
                </div>
              </div>
            ))}
          </article>
        ))}
      </div>
    </div>
  );
}

function EpisodeDetail({ episode, navigate, onGroup }: { episode: EpisodeRecord; navigate: (route: Route) => void; onGroup: () => void }): ReactElement {
  const family = boardFamily(episode.initialState.board);
  const base = `${episode.runId}-${episode.id}`;
  const hasUnknown = useMemo(() => episode.turns.some((t) => [t.observedBoard, t.predictedBoard].some((b) => b?.cells.some((row) => row.includes('unknown')))), [episode]);
  return (
    <div className="trace-episode" data-testid="trace-episode" data-episode-id={episode.id}>
      <div className="card trace-episode-head">
        <div className="row">
          <h2 className="mono">{episode.id}</h2>
          <span className={`badge ${episode.success ? 'completed' : 'failed'}`}>{episode.success ? 'success' : 'failure'}</span>
          {episode.terminated && <span className="badge">terminated</span>}
          {episode.truncated && <span className="badge stopped">truncated</span>}
          <span className="grow" />
          <button type="button" className="btn small" onClick={onGroup} title="The samples of this episode's group side by side">Group {episode.group}</button>
          <button type="button" className="btn small" title="Put the model on this episode's puzzle at its first turn"
            onClick={() => navigate({ view: 'probe', runId: episode.runId, params: { episode: episode.id, turn: '0' } })}>Probe</button>
          <button type="button" className="btn small" onClick={() => navigate({ view: 'replay', runId: episode.runId, episodeId: episode.id })}>Replay ▶</button>
          <button type="button" className="btn small" onClick={() => downloadText(JSON.stringify(episode, null, 2), `${base}.json`)}>Export JSON</button>
          <button type="button" className="btn small" onClick={() => downloadText(`${JSON.stringify(episode)}\n`, `${base}.jsonl`, 'application/x-ndjson')}>Export JSONL</button>
        </div>
        <div className="muted trace-readable" data-testid="episode-readable">{readableEpisode(episode)}</div>
        <dl className="trace-facts">
          <div><dt>env</dt><dd>{episode.env}</dd></div>
          <div><dt>stage · step</dt><dd>{episode.stage} · {episode.step}</dd></div>
          <div><dt>seed</dt><dd>{episode.seed}</dd></div>
          <div><dt>group · sample</dt><dd>{episode.group} · {episode.sample}</dd></div>
          <div><dt>total reward</dt><dd>{formatNumber(episode.totalReward, 2)}</dd></div>
          <div><dt>turns · actions</dt><dd>{episode.numTurns} · {episode.numActions}</dd></div>
          <div><dt>format errors</dt><dd className={episode.formatErrors > 0 ? 'bad' : undefined}>{episode.formatErrors}</dd></div>
          <div><dt>invalid actions</dt><dd className={episode.invalidActions > 0 ? 'bad' : undefined}>{episode.invalidActions}</dd></div>
          <div><dt>template</dt><dd className="mono">{episode.templateHash.slice(0, 12)}</dd></div>
        </dl>
        <BoardLegend family={family} showUnknown={hasUnknown} />
      </div>
      {episode.turns.length === 0 && <div className="muted">This episode has no turns.</div>}
      {episode.turns.map((turn) => <TurnCard key={turn.turn} turn={turn} base={base} episode={episode} />)}
    </div>
  );
}

function scoreLine(score: WmScore | null): string {
  if (!score) return 'not scored';
  if (!score.parsed) return `unparseable: all ${score.wrongCells.length} cells count as wrong`;
  return `${score.exact ? 'exact' : `${score.wrongCells.length} wrong`} · cells ${percent(score.cellAccuracy)}`;
}

interface StatePairProps {
  what: 'observation' | 'prediction';
  label: string;
  modelTitle: string;
  trueTitle: string;
  modelBoard: Board | null;
  trueBoard: Board;
  text: string | null;                  // the model's <observation> / <prediction> text (null when absent)
  score: WmScore | null;
  size: number;
  testIds: [string, string];            // model board, true board
  exportNames: [string, string];
}

/** The model's board beside the true one, with the wrong cells marked on both. */
function StatePair({ what, label, modelTitle, trueTitle, modelBoard, trueBoard, text, score, size, testIds, exportNames }: StatePairProps): ReactElement {
  let missing: string;
  if (text === null) missing = `no <${what}> in the response`;
  else if (score && !score.parsed) missing = `<${what}> could not be parsed into a board`;
  else missing = `no ${what} board`;
  return (
    <div className="trace-pair" aria-label={label}>
      <BoardFigure board={modelBoard} title={modelTitle} highlight={score?.wrongCells} testId={testIds[0]} size={size}
        missing={missing} exportName={exportNames[0]} footer={scoreLine(score)} />
      <BoardFigure board={trueBoard} title={trueTitle} highlight={score?.wrongCells} testId={testIds[1]} size={size}
        highlightStyle={score && !score.parsed ? 'soft' : 'strong'}
        exportName={exportNames[1]} />
    </div>
  );
}

function TurnCard({ turn, base, episode }: { turn: TurnRecord; base: string; episode: EpisodeRecord }): ReactElement {
  const obs = turn.wm.observation;
  const pred = turn.wm.prediction;
  const longest = Math.max(turn.stateBefore.board.rows, turn.stateBefore.board.cols, 1);
  const size = Math.min(190, longest * 34);
  return (
    <article className="card trace-turn" data-testid={`turn-${turn.turn}`} aria-label={`Turn ${turn.turn + 1}`}>
      <div className="row trace-turn-head">
        <h3>Turn {turn.turn + 1}</h3>
        <span className="mono">{turn.actionsExecuted.length > 0 ? turn.actionsExecuted.join(' → ') : '(no action executed)'}</span>
        <span className="grow" />
        <span>reward <b className={turn.reward > 0 ? 'ok' : turn.reward < 0 ? 'bad' : undefined}>{formatNumber(turn.reward, 2)}</b></span>
        {turn.flags.formatError && <span className="badge failed">format error</span>}
        {turn.flags.invalidAction && <span className="badge stopped">invalid action</span>}
        {!turn.flags.actionIsEffective && <span className="badge">no effect</span>}
        {turn.done && <span className="badge">done</span>}
        {turn.slip && <span className="badge stopped" data-testid="turn-slipped" title={slipText(turn.slip, turn.actionsExecuted.length)}>slipped</span>}
      </div>
      {turn.slip && (
        <div className="warn" data-testid="turn-slip" style={{ marginBottom: 6 }}>
          ⚠ {slipText(turn.slip, turn.actionsExecuted.length)}: the true next state is where the player went, not where it meant to go.
          {slipScoreText(turn.slip) && <> The prediction <b className={turn.slip.predictionVsIntended?.exact ? 'ok' : 'bad'} data-testid="turn-slip-score">{slipScoreText(turn.slip)}</b>.</>}
        </div>
      )}
      {isTextBoard(turn.stateBefore.board) ? (
        <div className="trace-text-states" data-testid="text-states">
          <TextStateDiff title="Observation against the true state" model={turn.parsed.observation} truth={turn.stateBefore.text}
            modelLabel="observation" truthLabel="true state" score={obs} testId="text-diff-observation" />
          <TextStateDiff title="Prediction against the true next state" model={turn.parsed.prediction} truth={turn.stateAfter.text}
            modelLabel="prediction" truthLabel="true next state" score={pred} testId="text-diff-prediction" />
        </div>
      ) : (
        <div className="trace-boards">
          <StatePair what="observation" label="Observation against the true state" modelTitle="Observation (model)" trueTitle="True state"
            modelBoard={turn.observedBoard} trueBoard={turn.stateBefore.board} text={turn.parsed.observation} score={obs} size={size}
            testIds={['board-observed', 'board-true-before']} exportNames={[`${base}-t${turn.turn}-observed`, `${base}-t${turn.turn}-state`]} />
          <StatePair what="prediction" label="Prediction against the true next state" modelTitle="Prediction (model)" trueTitle="True next state"
            modelBoard={turn.predictedBoard} trueBoard={turn.stateAfter.board} text={turn.parsed.prediction} score={pred} size={size}
            testIds={['board-predicted', 'board-true-after']} exportNames={[`${base}-t${turn.turn}-predicted`, `${base}-t${turn.turn}-next`]} />
        </div>
      )}
      <ScoreTable observation={obs} prediction={pred} />
      {turn.parsed.formatErrors.length > 0 && (
        <ul className="trace-format-errors bad">{turn.parsed.formatErrors.map((e, i) => <li key={i}>{e}</li>)}</ul>
      )}
      {turn.parsed.unknownActions.length > 0 && (
        <div className="warn">Dropped unknown actions: <span className="mono">{turn.parsed.unknownActions.join(', ')}</span></div>
      )}
      <details className="trace-text" data-testid="conversation">
        <summary>Conversation the model saw <span className="faint">({turn.tokens.prompt} prompt tokens; the oldest turns are dropped first when the context is full)</span></summary>
        <Conversation episode={episode} turn={turn.turn} />
      </details>
      <details className="trace-text" open>
        <summary>Response <span className="faint">({turn.tokens.response} tokens)</span></summary>
        {turn.tokenStats ? <TokenOverlay text={turn.response} stats={turn.tokenStats} /> : <pre className="mono">{turn.response}</pre>}
      </details>
      <details className="trace-text" open={turn.wm.observation !== null && !turn.wm.observation.exact}>
        <summary>Parsed against true state text <span className="faint">(character diff: <del className="diff-del">model only</del> <ins className="diff-ins">truth only</ins>)</span></summary>
        <div className="trace-text-grid">
          <DiffBlock title="observation (model) against the state (truth)" model={turn.parsed.observation} truth={turn.stateBefore.text} testId="diff-observation" />
          <DiffBlock title="prediction (model) against the next state (truth)" model={turn.parsed.prediction} truth={turn.stateAfter.text} testId="diff-prediction" />
          <TextBlock title="reasoning" text={turn.parsed.reasoning} />
          <TextBlock title="answer" text={turn.parsed.answer} />
        </div>
      </details>
    </article>
  );
}

function TextBlock({ title, text }: { title: string; text: string | null }): ReactElement {
  return (
    <div>
      <div className="faint">{title}</div>
      {text === null ? <div className="muted">(missing)</div> : <pre className="mono">{text}</pre>}
    </div>
  );
}

function ScoreTable({ observation, prediction }: { observation: WmScore | null; prediction: WmScore | null }): ReactElement {
  const kinds = Array.from(new Set([...Object.keys(observation?.entityF1 ?? {}), ...Object.keys(prediction?.entityF1 ?? {})])).sort();
  const row = (name: string, score: WmScore | null): ReactElement => (
    <tr data-score-row={name}>
      <th scope="row">{name}</th>
      <td>{score ? (score.parsed ? 'yes' : <span className="bad">no</span>) : '—'}</td>
      <td>{score ? (score.exact ? <span className="ok">yes</span> : <span className="bad">no</span>) : '—'}</td>
      <td className="num">{score ? percent(score.cellAccuracy) : '—'}</td>
      <td className="num">{score ? formatNumber(score.meanF1) : '—'}</td>
      {kinds.map((k) => <td key={k} className="num">{score && k in score.entityF1 ? formatNumber(score.entityF1[k]) : '—'}</td>)}
      <td className="num">{score ? score.wrongCells.length : '—'}</td>
    </tr>
  );
  return (
    <div className="trace-scores-wrap">
    <table className="dt-table trace-scores" aria-label="World-model scores">
      <thead>
        <tr><th>world model</th><th>parsed</th><th>exact</th><th className="num">cell acc.</th><th className="num">mean F1</th>
          {kinds.map((k) => <th key={k} className="num" title={`entity F1 of ${k}`}>F1 {breakable(k)}</th>)}<th className="num">wrong cells</th></tr>
      </thead>
      <tbody>
        {row('observation', observation)}
        {row('prediction', prediction)}
      </tbody>
    </table>
    </div>
  );
}

/** The whole chat of a turn: system, then every earlier user message and reply, then this turn's user message. */
function Conversation({ episode, turn }: { episode: EpisodeRecord; turn: number }): ReactElement {
  const messages: Array<{ role: string; content: string | null }> = [{ role: 'system', content: episode.system ?? null }];
  for (const t of episode.turns.slice(0, turn + 1)) {
    messages.push({ role: 'user', content: t.prompt });
    if (t.turn < turn) messages.push({ role: 'assistant', content: t.response });
  }
  return (
    <ol className="trace-chat">
      {messages.map((m, i) => (
        <li key={i} className={`trace-chat-${m.role}`} data-role={m.role}>
          <div className="faint">{m.role}</div>
          {m.content === null
            ? <div className="muted">(not recorded: this episode was written before system messages were stored)</div>
            : <pre className="mono">{m.content}</pre>}
        </li>
      ))}
    </ol>
  );
}

function DiffBlock({ title, model, truth, testId }: { title: string; model: string | null; truth: string; testId: string }): ReactElement {
  const parts = useMemo(() => (model === null ? null : diffChars(model, truth)), [model, truth]);
  return (
    <div data-testid={testId}>
      <div className="faint">{title}</div>
      {parts === null ? <div className="muted">(missing in the response)</div> : (
        <pre className="mono trace-diff">
          {parts.map((p, i) => (p.kind === 'same' ? <span key={i}>{p.text}</span>
            : p.kind === 'del' ? <del key={i} className="diff-del">{p.text}</del> : <ins key={i} className="diff-ins">{p.text}</ins>))}
        </pre>
      )}
    </div>
  );
}

type OverlayField = 'none' | 'logprobs' | 'entropies' | 'values' | 'advantages';
const OVERLAY_LABEL: Record<OverlayField, string> = { none: 'none', logprobs: 'log-probability', entropies: 'entropy', values: 'value', advantages: 'advantage' };

/** Colour of a token for a statistic: diverging around 0 for advantages/values, sequential for the others. */
function overlayColor(field: OverlayField, x: number, lo: number, hi: number): string {
  if (field === 'advantages' || field === 'values') {
    const m = Math.max(Math.abs(lo), Math.abs(hi), 1e-9);
    const a = Math.min(1, Math.abs(x) / m) * 0.55;
    return x >= 0 ? `rgba(22, 163, 74, ${a})` : `rgba(220, 38, 38, ${a})`;
  }
  const t = hi > lo ? (x - lo) / (hi - lo) : 0;
  const strength = field === 'logprobs' ? 1 - t : t;      // surprising tokens (low log-prob, high entropy) are darker
  return `rgba(234, 88, 12, ${(strength * 0.6).toFixed(3)})`;
}

/** The response with its tokens coloured by a per-token statistic; every token's numbers on hover. */
function TokenOverlay({ text, stats }: { text: string; stats: TokenStats }): ReactElement {
  const [field, setField] = useState<OverlayField>('logprobs');
  const available = (['logprobs', 'entropies', 'values', 'advantages'] as const).filter((f) => stats[f] !== null && stats[f]!.length > 0);
  const values = field === 'none' ? null : stats[field];
  const [lo, hi] = values && values.length ? [Math.min(...values), Math.max(...values)] : [0, 0];
  const covered = stats.tokens.join('');
  const prefix = text.endsWith(covered) ? text.slice(0, text.length - covered.length) : '';
  const fmt = (xs: number[] | null, i: number) => (xs && xs[i] !== undefined ? formatNumber(xs[i], 3) : '—');
  return (
    <div className="trace-overlay" data-testid="token-overlay">
      <div className="row">
        <label className="field inspect-field">
          <span className="label">Token overlay</span>
          <select value={field} onChange={(e) => setField(e.target.value as OverlayField)} aria-label="Token overlay">
            <option value="none">none</option>
            {available.map((f) => <option key={f} value={f}>{OVERLAY_LABEL[f]}</option>)}
          </select>
        </label>
        {values && <span className="faint">{OVERLAY_LABEL[field]} from {formatNumber(lo, 3)} to {formatNumber(hi, 3)}{stats.dropped > 0 ? ` · ${stats.dropped} tokens past the stored ${stats.tokens.length} not shown` : ''}</span>}
      </div>
      <pre className="mono">
        {prefix && <span className="faint" title="forced prefix (not generated)">{prefix}</span>}
        {stats.tokens.map((tok, i) => (
          <span key={i} className="trace-token" data-token-index={i}
            style={values && values[i] !== undefined ? { background: overlayColor(field, values[i]!, lo, hi) } : undefined}
            title={`token ${i}: ${JSON.stringify(tok)}\nlog-prob ${fmt(stats.logprobs, i)} · entropy ${fmt(stats.entropies, i)} · value ${fmt(stats.values, i)} · advantage ${fmt(stats.advantages, i)}`}>{tok}</span>
        ))}
        {!text.endsWith(covered) && <span className="muted">{'\n'}(the stored tokens do not reproduce the text exactly; shown as decoded)</span>}
      </pre>
    </div>
  );
}
