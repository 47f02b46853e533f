// Trace inspector: the episodes of a run's stage/step, filtered and paged from the rollout index
// (rollouts.query; episode files are read one episode at a time by rollouts.get), and per turn
// the prompt, the response, the parsed observation and prediction drawn as boards beside the
// true state and true next state with the wrong cells lit up, the world-model scores, actions,
// reward and flags. Exports: episode JSON / JSONL, boards as PNG.
import { useEffect, useMemo, useState, type ReactElement } from 'react';
import type { Board, EpisodeRecord, EpisodeSummary, TurnRecord, WmScore } from '../../../core/api/records.js';
import type { Route, ViewProps } from '../routes.js';
import BoardFigure from '../boards/BoardFigure.js';
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

export default function TraceView({ api, projectPath, runId, episodeId, navigate }: TraceViewProps): ReactElement {
  const [stage, setStage] = useState<string>('');
  const [stepText, setStepText] = useState('');
  const [seedText, setSeedText] = useState('');
  const [outcome, setOutcome] = useState<Outcome>('all');
  const [formatErrors, setFormatErrors] = useState<FormatFilter>('any');
  const [offset, setOffset] = useState(0);
  const [selected, setSelected] = useState<string | undefined>(episodeId);
  useEffect(() => { setSelected(episodeId); }, [episodeId]);
  useEffect(() => { setOffset(0); }, [runId]);
  /** A filter change starts again at the first page (in the same render: one query, not two). */
  const refilter = <T,>(set: (value: T) => void) => (value: T): void => { set(value); setOffset(0); };

  const step = parseOptionalInt(stepText, 'step');
  const seed = parseOptionalInt(seedText, 'seed');

  const facets = useAsync(() => (runId ? api.rollouts.facets({ runId }) : null), [api, runId]);
  const page = useAsync(() => {
    if (!runId || step.error || seed.error) return null;
    return api.rollouts.query({
      runId, offset, limit: PAGE, outcome, formatErrors,
      ...(stage ? { stage } : {}), ...(step.value !== undefined ? { step: step.value } : {}), ...(seed.value !== undefined ? { seed: seed.value } : {}),
    });
  }, [api, runId, stage, step.value, step.error, seed.value, seed.error, outcome, formatErrors, offset]);
  const episode = useAsync(() => (runId && selected ? api.rollouts.get({ runId, id: selected }) : null), [api, runId, selected]);

  // export every episode that matches the filters (read page by page, one episode at a time)
  const [exporting, setExporting] = useState<{ done: number; total: number } | null>(null);
  const [exportError, setExportError] = useState<unknown>(null);
  const exportFiltered = async (): Promise<void> => {
    if (!runId) return;
    setExportError(null);
    try {
      const filters = { runId, outcome, formatErrors, ...(stage ? { stage } : {}), ...(step.value !== undefined ? { step: step.value } : {}), ...(seed.value !== undefined ? { seed: seed.value } : {}) };
      const lines: string[] = [];
      let total = Infinity;
      for (let at = 0; at < Math.min(total, EXPORT_MAX); at += 200) {
        const chunk = await api.rollouts.query({ ...filters, offset: at, limit: 200 });
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

  const select = (id: string): void => {
    setSelected(id);
    if (runId) navigate({ view: 'trace', runId, episodeId: id });
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
      </div>
      {!runId && <div className="banner info">Pick a run to see its episodes.</div>}
      {runId && (
        <div className="trace-layout">
          <section className="trace-list card" aria-label="Episodes">
            <div className="inspect-filters">
              <label className="field inspect-field">
                <span className="label">Stage</span>
                <select value={stage} onChange={(e) => refilter(setStage)(e.target.value)} aria-label="Stage">
                  <option value="">all stages</option>
                  {stages.map((s) => <option key={s.stage} value={s.stage}>{s.stage} ({s.count})</option>)}
                </select>
              </label>
              <label className="field inspect-field narrow">
                <span className="label">Step</span>
                <input type="text" inputMode="numeric" value={stepText} onChange={(e) => refilter(setStepText)(e.target.value)} aria-label="Step"
                  aria-invalid={step.error ? 'true' : undefined} placeholder={stageInfo ? `${stageInfo.minStep}–${stageInfo.maxStep}` : 'any'} />
              </label>
              <label className="field inspect-field narrow">
                <span className="label">Seed</span>
                <input type="text" inputMode="numeric" value={seedText} onChange={(e) => refilter(setSeedText)(e.target.value)} aria-label="Seed"
                  aria-invalid={seed.error ? 'true' : undefined} placeholder="any" />
              </label>
              <label className="field inspect-field">
                <span className="label">Outcome</span>
                <select value={outcome} onChange={(e) => refilter(setOutcome)(e.target.value as Outcome)} aria-label="Outcome">
                  <option value="all">all</option><option value="success">success</option><option value="failure">failure</option>
                </select>
              </label>
              <label className="field inspect-field">
                <span className="label">Format errors</span>
                <select value={formatErrors} onChange={(e) => refilter(setFormatErrors)(e.target.value as FormatFilter)} aria-label="Format errors">
                  <option value="any">any</option><option value="none">none</option><option value="some">some</option>
                </select>
              </label>
            </div>
            {step.error && <div className="field-error">{step.error}</div>}
            {seed.error && <div className="field-error">{seed.error}</div>}
            {facets.status === 'error' && <ErrorBanner error={facets.error} context="Rollout index" />}
            {page.status === 'error' && <ErrorBanner error={page.error} context="Episodes" />}
            {page.status === 'loading' && <div className="muted">loading episodes…</div>}
            {page.status === 'ok' && (
              <>
                <EpisodeTable episodes={page.value.episodes} selected={selected} onSelect={select} />
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
            {!selected && <div className="muted">Select an episode on the left.</div>}
            {episode.status === 'loading' && <div className="muted">loading episode…</div>}
            {episode.status === 'error' && <ErrorBanner error={episode.error} context={`Episode ${selected ?? ''}`} />}
            {episode.status === 'ok' && <EpisodeDetail episode={episode.value} navigate={navigate} />}
          </section>
        </div>
      )}
    </div>
  );
}

/** Long episode ids keep their distinctive end: "eval-eval-000000-g0000-s0" → "…000000-g0000-s0". */
export function shortId(id: string, max = 18): string {
  return id.length <= max ? id : `…${id.slice(id.length - (max - 1))}`;
}

function EpisodeTable({ episodes, selected, onSelect }: { episodes: EpisodeSummary[]; selected?: string; onSelect: (id: string) => void }): ReactElement {
  return (
    <div className="trace-table-scroll">
      <table className="dt-table trace-table">
        <thead>
          <tr><th>episode</th><th className="num">step</th><th className="num">seed</th><th title="success or failure">ok</th><th className="num">reward</th><th className="num" title="format errors">fmt</th></tr>
        </thead>
        <tbody>
          {episodes.map((e) => (
            <tr key={e.id} className={e.id === selected ? 'selected' : undefined} data-episode-id={e.id}
              tabIndex={0} onClick={() => onSelect(e.id)} onKeyDown={(ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); onSelect(e.id); } }}
              aria-selected={e.id === selected}>
              <td className="mono trace-id" title={`${e.id} · ${e.stage} · group ${e.group} · sample ${e.sample}`}>{shortId(e.id)}</td>
              <td className="num">{e.step}</td>
              <td className="num">{e.seed}</td>
              <td><span className={e.success ? 'ok' : 'bad'} title={e.success ? 'success' : 'failure'} aria-label={e.success ? 'success' : 'failure'}>{e.success ? '✓' : '✗'}</span></td>
              <td className="num">{formatNumber(e.totalReward, 2)}</td>
              <td className={`num${e.formatErrors > 0 ? ' bad' : ''}`}>{e.formatErrors}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function EpisodeDetail({ episode, navigate }: { episode: EpisodeRecord; navigate: (route: Route) => void }): ReactElement {
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
          <button type="button" className="btn small" onClick={() => navigate({ view: 'replay', runId: episode.runId, episodeId: episode.id })}>Replay ▶</button>
          <button type="button" className="btn small" onClick={() => downloadText(JSON.stringify(episode, null, 2), `${base}.json`)}>Export JSON</button>
          <button type="button" className="btn small" onClick={() => downloadText(`${JSON.stringify(episode)}\n`, `${base}.jsonl`, 'application/x-ndjson')}>Export JSONL</button>
        </div>
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
      {episode.turns.map((turn) => <TurnCard key={turn.turn} turn={turn} base={base} />)}
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

function TurnCard({ turn, base }: { turn: TurnRecord; base: string }): ReactElement {
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
      </div>
      <div className="trace-boards">
        <StatePair what="observation" label="Observation against the true state" modelTitle="Observation (model)" trueTitle="True state"
          modelBoard={turn.observedBoard} trueBoard={turn.stateBefore.board} text={turn.parsed.observation} score={obs} size={size}
          testIds={['board-observed', 'board-true-before']} exportNames={[`${base}-t${turn.turn}-observed`, `${base}-t${turn.turn}-state`]} />
        <StatePair what="prediction" label="Prediction against the true next state" modelTitle="Prediction (model)" trueTitle="True next state"
          modelBoard={turn.predictedBoard} trueBoard={turn.stateAfter.board} text={turn.parsed.prediction} score={pred} size={size}
          testIds={['board-predicted', 'board-true-after']} exportNames={[`${base}-t${turn.turn}-predicted`, `${base}-t${turn.turn}-next`]} />
      </div>
      <ScoreTable observation={obs} prediction={pred} />
      {turn.parsed.formatErrors.length > 0 && (
        <ul className="trace-format-errors bad">{turn.parsed.formatErrors.map((e, i) => <li key={i}>{e}</li>)}</ul>
      )}
      {turn.parsed.unknownActions.length > 0 && (
        <div className="warn">Dropped unknown actions: <span className="mono">{turn.parsed.unknownActions.join(', ')}</span></div>
      )}
      <details className="trace-text">
        <summary>Prompt <span className="faint">({turn.tokens.prompt} tokens)</span></summary>
        <pre className="mono">{turn.prompt}</pre>
      </details>
      <details className="trace-text" open>
        <summary>Response <span className="faint">({turn.tokens.response} tokens)</span></summary>
        <pre className="mono">{turn.response}</pre>
      </details>
      <details className="trace-text">
        <summary>Parsed and true state text</summary>
        <div className="trace-text-grid">
          <TextBlock title="observation (model)" text={turn.parsed.observation} />
          <TextBlock title="state (truth)" text={turn.stateBefore.text} />
          <TextBlock title="prediction (model)" text={turn.parsed.prediction} />
          <TextBlock title="next state (truth)" text={turn.stateAfter.text} />
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
