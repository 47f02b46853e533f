// World-model probe (issue 12, item 12): pick a run's checkpoint and a puzzle (a seed, or a saved
// episode at one of its turns); the model writes its turn and its observation and prediction are
// drawn as boards beside the truth with the wrong cells lit. Then choose an action yourself: the
// model predicts the next state for it (the action given) against the true next state. Step on
// with the model's own turn or with your action. The model runs in a child process of the host
// (probe.turn); the history of applied turns stays in this page.
import { useEffect, useState, type ReactElement } from 'react';
import type { ProbeResult } from '../../../core/api/contract.js';
import type { WmScore } from '../../../core/api/records.js';
import type { ViewProps } from '../routes.js';
import { slipScoreText, slipText } from '../boards/replay-frames.js';
import BoardFigure from '../boards/BoardFigure.js';
import { ErrorBanner, formatNumber, parseOptionalInt, percent, RunPicker, useAsync } from '../boards/inspect-common.js';

function scoreLine(score: WmScore | null): string {
  if (!score) return 'not scored';
  if (!score.parsed) return `unparseable: all ${score.wrongCells.length} cells count as wrong`;
  return `${score.exact ? 'exact' : `${score.wrongCells.length} wrong`} · cells ${percent(score.cellAccuracy)}`;
}

export default function ProbeView({ api, projectPath, runId, navigate, route }: ViewProps): ReactElement {
  const params = route?.view === 'probe' ? route.params ?? {} : {};
  const [checkpoint, setCheckpoint] = useState(params.checkpoint ?? '');
  const [seedText, setSeedText] = useState(params.seed ?? (params.episode ? '' : '0'));
  const [episodeId, setEpisodeId] = useState(params.episode ?? '');
  const [turnText, setTurnText] = useState(params.turn ?? '0');
  const [history, setHistory] = useState<string[]>([]);
  const [result, setResult] = useState<ProbeResult | null>(null);
  const [action, setAction] = useState('');
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => { setResult(null); setHistory([]); setError(null); }, [runId]);

  const checkpoints = useAsync(() => (runId ? api.templates.checkpoints({ runId }) : null), [api, runId]);
  const seed = parseOptionalInt(seedText, 'seed');
  const turn = parseOptionalInt(turnText, 'turn');
  const fromEpisode = episodeId.trim() !== '';

  const call = async (opts: { history: string[]; actions?: string[] }, label: string): Promise<ProbeResult | null> => {
    if (!runId) return null;
    setBusy(label); setError(null);
    try {
      const r = await api.probe.turn({
        runId, ...(checkpoint ? { checkpoint } : {}),
        ...(fromEpisode ? { episodeId: episodeId.trim(), turn: turn.value ?? 0 } : { seed: seed.value ?? 0 }),
        ...(opts.history.length ? { history: opts.history } : {}), ...(opts.actions ? { actions: opts.actions } : {}),
      });
      setResult(r);
      if (!r.legalActions.includes(action)) setAction(r.legalActions[0] ?? '');
      return r;
    } catch (err) {
      setError(err);
      return null;
    } finally {
      setBusy(null);
    }
  };
  const start = (): void => {
    setHistory([]);
    navigate({ view: 'probe', runId: runId!, params: { ...(checkpoint ? { checkpoint } : {}), ...(fromEpisode ? { episode: episodeId.trim(), turn: turnText } : { seed: seedText }) } });
    void call({ history: [] }, 'The model is writing its turn…');
  };
  const stepOn = (response: string): void => {
    const next = [...history, response];
    setHistory(next);
    void call({ history: next }, 'Stepping on: the model is writing its next turn…');
  };

  if (!projectPath) return <div className="inspect-view"><h1>World-model probe</h1><div className="banner info">Open a project first.</div></div>;
  const ckpts = checkpoints.status === 'ok' ? checkpoints.value.checkpoints.filter((c) => c.role === 'policy') : [];
  const t = result?.turn;
  const size = t ? Math.min(200, Math.max(t.stateBefore.board.rows, t.stateBefore.board.cols, 1) * 34) : 160;
  return (
    <div className="inspect-view probe-view" data-testid="probe-view">
      <div className="inspect-header">
        <h1>World-model probe</h1>
        <RunPicker api={api} value={runId} onChange={(id) => navigate(id ? { view: 'probe', runId: id } : { view: 'probe' })} />
      </div>
      {!runId && <div className="banner info">Pick a run: the probe uses its env, its template and one of its checkpoints.</div>}
      {runId && (
        <div className="card">
          <div className="inspect-filters">
            <label className="field inspect-field">
              <span className="label">Checkpoint</span>
              <select value={checkpoint} onChange={(e) => setCheckpoint(e.target.value)} aria-label="Checkpoint">
                <option value="">latest{checkpoints.status === 'ok' && checkpoints.value.latest ? ` (${checkpoints.value.latest})` : ''}</option>
                {ckpts.map((c) => <option key={c.name} value={c.name}>{c.name}{c.stage ? ` · ${c.stage} step ${c.step}` : ''}</option>)}
              </select>
            </label>
            <label className="field inspect-field narrow">
              <span className="label">Puzzle seed</span>
              <input type="text" inputMode="numeric" value={seedText} disabled={fromEpisode} onChange={(e) => setSeedText(e.target.value)} aria-label="Puzzle seed" />
            </label>
            <label className="field inspect-field">
              <span className="label">or saved episode</span>
              <input type="text" value={episodeId} onChange={(e) => setEpisodeId(e.target.value)} aria-label="Saved episode" placeholder="episode id (Traces → Probe)" />
            </label>
            {fromEpisode && (
              <label className="field inspect-field narrow">
                <span className="label">at turn (from 0)</span>
                <input type="text" inputMode="numeric" value={turnText} onChange={(e) => setTurnText(e.target.value)} aria-label="Turn" />
              </label>
            )}
            <button type="button" className="btn primary" disabled={busy !== null || !!seed.error || !!turn.error} onClick={start}>Let the model write its turn</button>
          </div>
          {checkpoints.status === 'ok' && ckpts.length === 0 && <div className="warn">This run has no checkpoint yet: the probe needs one (wait for a stage that saves one).</div>}
          {checkpoints.status === 'error' && <ErrorBanner error={checkpoints.error} context="Checkpoints" />}
          {seed.error && <div className="field-error">{seed.error}</div>}
          {turn.error && <div className="field-error">{turn.error}</div>}
        </div>
      )}
      {busy && <div className="banner info" data-testid="probe-busy">{busy} (the model runs in a separate process)</div>}
      {error !== null && <ErrorBanner error={error} context="Probe" />}
      {result && t && (
        <div data-testid="probe-result" data-turn={result.turnIndex}>
          <div className="card">
            <div className="row">
              <h2>Turn {result.turnIndex + 1} · {result.env.id} seed {result.seed}</h2>
              <span className="faint">checkpoint {result.checkpoint} · {result.backend} · {formatNumber(result.wallSeconds, 2)} s{history.length ? ` · ${history.length} turn(s) applied before` : ''}</span>
            </div>
            <div className="trace-boards">
              <div className="trace-pair" aria-label="Observation against the true state">
                <BoardFigure board={t.observedBoard} title="Observation (model)" highlight={t.wm.observation?.wrongCells} testId="probe-observed" size={size}
                  missing={t.parsed.observation === null ? 'no <observation> in the response' : 'could not be parsed into a board'} footer={scoreLine(t.wm.observation)} />
                <BoardFigure board={t.stateBefore.board} title="True state" highlight={t.wm.observation?.wrongCells} testId="probe-true-before" size={size} />
              </div>
              <div className="trace-pair" aria-label="Prediction against the true next state">
                <BoardFigure board={t.predictedBoard} title={`Prediction (its action${t.actionsExecuted.length === 1 ? '' : 's'})`} highlight={t.wm.prediction?.wrongCells} testId="probe-predicted" size={size}
                  missing={t.parsed.prediction === null ? 'no <prediction> in the response' : 'could not be parsed into a board'} footer={scoreLine(t.wm.prediction)} />
                <BoardFigure board={t.stateAfter.board} title={`True next state: ${t.slip ? t.slip.moves.map((m) => `${m.intended}, slipped ${m.executed}`).join(' → ') : t.actionsExecuted.join(' → ') || 'no action'}`} highlight={t.wm.prediction?.wrongCells} testId="probe-true-after" size={size} />
              </div>
            </div>
            {t.slip && (
              <div className="warn" data-testid="probe-slip">
                ⚠ {slipText(t.slip, t.actionsExecuted.length)}: the true next state is where the player went, not where it meant to go.
                {slipScoreText(t.slip) && <> The prediction <b className={t.slip.predictionVsIntended?.exact ? 'ok' : 'bad'}>{slipScoreText(t.slip)}</b>.</>}
              </div>
            )}
            <details className="trace-text" open>
              <summary>The model's turn <span className="faint">({t.tokens.response} tokens; reward {formatNumber(t.reward, 2)}{t.flags.formatError ? '; format error' : ''})</span></summary>
              <pre className="mono" data-testid="probe-response">{t.response}</pre>
            </details>
            <details className="trace-text">
              <summary>Conversation the model saw ({result.messages.length} messages)</summary>
              <ol className="trace-chat">{result.messages.map((m, i) => <li key={i} className={`trace-chat-${m.role}`}><div className="faint">{m.role}</div><pre className="mono">{m.content}</pre></li>)}</ol>
            </details>
            <div className="row">
              <button type="button" className="btn" disabled={busy !== null || result.done} onClick={() => stepOn(t.response)}
                title={result.done ? 'the episode is over after this turn' : 'apply the model\'s turn and let it write the next one'}>Step on with the model's turn</button>
              {result.done && <span className="muted">The episode ends with the model's actions.</span>}
            </div>
          </div>
          <div className="card" data-testid="probe-action-card">
            <div className="row">
              <h3>Your action</h3>
              <label className="field inspect-field">
                <span className="label">Action</span>
                <select value={action} onChange={(e) => setAction(e.target.value)} aria-label="Your action">
                  {result.legalActions.map((a) => <option key={a} value={a}>{a}</option>)}
                </select>
              </label>
              <button type="button" className="btn primary" disabled={busy !== null || !action} onClick={() => { void call({ history, actions: [action] }, `The model is predicting the state after ${action}…`); }}>
                Predict the next state for it
              </button>
            </div>
            {result.actionGiven && (
              <>
                <div className="trace-pair" aria-label="Prediction for your action against the true next state">
                  <BoardFigure board={result.actionGiven.predictedBoard} title={`Prediction for ${result.actionGiven.actions.join(', ')} (model)`} highlight={result.actionGiven.score?.wrongCells}
                    testId="probe-given-predicted" size={size} missing={result.actionGiven.prediction === null ? 'no <prediction> written' : 'could not be parsed into a board'}
                    footer={scoreLine(result.actionGiven.score)} />
                  <BoardFigure board={result.actionGiven.trueNext.board} title={`True next state: ${result.actionGiven.actions.join(' → ')}`} highlight={result.actionGiven.score?.wrongCells}
                    testId="probe-given-true" size={size} />
                </div>
                <details className="trace-text">
                  <summary>What the model wrote with the action given</summary>
                  <pre className="mono">{result.actionGiven.text}</pre>
                </details>
                <button type="button" className="btn" disabled={busy !== null} onClick={() => stepOn(result.actionGiven!.stepResponse)}>Step on with my action</button>
              </>
            )}
          </div>
        </div>
      )}
    </div>
  );
}
