// Replay: step through an episode's states on the board — play / pause / step / scrub, keyboard
// shortcuts (space play/pause, ←/→ step, Home/End), the model's prediction (or observation)
// overlaid on the true board with its wrong cells lit, and a second run side by side on the
// same seed (found through rollouts.query with the seed filter).
import { useCallback, useEffect, useMemo, useRef, useState, type ReactElement } from 'react';
import type { EpisodeRecord } from '../../../core/api/records.js';
import type { ViewProps } from '../routes.js';
import BoardFigure from '../boards/BoardFigure.js';
import { isTextBoard, TextStateDiff } from '../components/TextStateDiff.js';
import { frameTexts } from '../components/text-frames.js';
import { BoardLegend } from '../boards/board-legend.js';
import { boardFamily } from '../boards/board-shapes.js';
import { clampFrame, episodeFrames, frameOverlay, slipScoreText, slipText, type OverlayMode, type ReplayFrame } from '../boards/replay-frames.js';
import { ErrorBanner, formatNumber, RunPicker, useAsync } from '../boards/inspect-common.js';

export interface ReplayViewProps extends ViewProps {
  /** Second run to show side by side (its episode with the same seed); defaults to route.otherRunId. */
  otherRunId?: string;
}

const SPEEDS = [0.5, 1, 2, 4];

/** Episodes per page of the episode picker. */
const LIST_PAGE = 200;

export default function ReplayView({ api, projectPath, runId, episodeId, otherRunId: otherProp, navigate, route }: ReplayViewProps): ReactElement {
  const otherRunId = otherProp ?? (route?.view === 'replay' ? route.otherRunId : undefined);
  const [frame, setFrame] = useState(0);
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(1);
  const [mode, setMode] = useState<OverlayMode>('prediction');
  const [other, setOther] = useState<string | undefined>(otherRunId);
  useEffect(() => { setOther(otherRunId); }, [otherRunId]);

  // the episode list, a page at a time (a run can hold thousands of episodes)
  const [listOffset, setListOffset] = useState(0);
  useEffect(() => setListOffset(0), [runId]);
  const list = useAsync(() => (runId ? api.rollouts.query({ runId, offset: listOffset, limit: LIST_PAGE }) : null), [api, runId, listOffset]);
  const listTotal = list.status === 'ok' ? list.value.total : 0;
  const episode = useAsync(() => (runId && episodeId ? api.rollouts.get({ runId, id: episodeId }) : null), [api, runId, episodeId]);
  const mine = episode.status === 'ok' ? episode.value : null;
  // boards after each action of multi-action turns (older hosts without the method: one frame per turn)
  const perAction = useAsync(async () => (runId && episodeId ? (await api.rollouts.actionFrames({ runId, id: episodeId }).catch(() => null))?.turns ?? null : null), [api, runId, episodeId]);

  // the other run's episode on the same seed: same stage first, then any stage
  const match = useAsync(async () => {
    if (!other || !mine) return null;
    const sameStage = await api.rollouts.query({ runId: other, seed: mine.seed, stage: mine.stage, offset: 0, limit: 1 });
    const found = sameStage.episodes[0] ?? (await api.rollouts.query({ runId: other, seed: mine.seed, offset: 0, limit: 1 })).episodes[0];
    if (!found) return { episode: null as EpisodeRecord | null };
    return { episode: await api.rollouts.get({ runId: other, id: found.id }) };
  }, [api, other, mine]);

  const mineActions = perAction.status === 'ok' ? perAction.value ?? undefined : undefined;
  const frames = useMemo(() => (mine ? episodeFrames(mine, mineActions) : []), [mine, mineActions]);
  const otherEpisode = match.status === 'ok' && match.value ? match.value.episode : null;
  const otherActions = useAsync(async () => (other && otherEpisode ? (await api.rollouts.actionFrames({ runId: other, id: otherEpisode.id }).catch(() => null))?.turns ?? null : null), [api, other, otherEpisode]);
  const otherFrames = useMemo(() => (otherEpisode ? episodeFrames(otherEpisode, otherActions.status === 'ok' ? otherActions.value ?? undefined : undefined) : []), [otherEpisode, otherActions]);
  const count = Math.max(frames.length, otherFrames.length);
  const last = Math.max(0, count - 1);

  useEffect(() => { setFrame(0); setPlaying(false); }, [runId, episodeId]);

  const go = useCallback((index: number) => { setFrame(clampFrame(index, count)); }, [count]);

  // playback: advance one frame per tick, stop at the end
  useEffect(() => {
    if (!playing) return;
    if (frame >= last) { setPlaying(false); return; }
    const timer = setTimeout(() => setFrame((f) => Math.min(f + 1, last)), 1000 / speed);
    return () => clearTimeout(timer);
  }, [playing, frame, last, speed]);

  const togglePlay = useCallback(() => {
    setPlaying((p) => {
      if (!p && frame >= last) setFrame(0); // play again from the start
      return !p;
    });
  }, [frame, last]);

  // keyboard shortcuts while the view is shown; typing in fields is left alone
  // The listener is bound once and reads the latest frame/count through a ref written at render,
  // so a key pressed right after the episode arrives (before effects re-run) is not lost.
  const stageRef = useRef<HTMLDivElement>(null);
  const keyState = useRef({ frame, last, go, togglePlay });
  keyState.current = { frame, last, go, togglePlay };
  useEffect(() => {
    const onKey = (event: KeyboardEvent): void => {
      const target = event.target as HTMLElement | null;
      const tag = target?.tagName;
      if (tag === 'TEXTAREA' || tag === 'SELECT' || target?.isContentEditable) return;
      if (tag === 'INPUT' && (target as HTMLInputElement).type !== 'range') return;
      if (tag === 'INPUT' && event.key !== ' ') return; // the slider handles its own arrows/Home/End
      if (tag === 'BUTTON' && (event.key === ' ' || event.key === 'Enter')) return; // let the button act
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      const { frame, last, go, togglePlay } = keyState.current;
      switch (event.key) {
        case ' ': event.preventDefault(); togglePlay(); break;
        case 'ArrowRight': event.preventDefault(); setPlaying(false); go(frame + 1); break;
        case 'ArrowLeft': event.preventDefault(); setPlaying(false); go(frame - 1); break;
        case 'Home': event.preventDefault(); setPlaying(false); go(0); break;
        case 'End': event.preventDefault(); setPlaying(false); go(last); break;
        default: break;
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  if (!projectPath) {
    return <div className="inspect-view"><h1>Replay</h1><div className="banner info">Open a project first (Projects), then pick a run.</div></div>;
  }

  const pickOther = (id: string | undefined): void => {
    setOther(id);
    if (runId && episodeId) navigate({ view: 'replay', runId, episodeId, ...(id ? { otherRunId: id } : {}) });
  };

  return (
    <div className="inspect-view replay-view" data-testid="replay-view">
      <div className="inspect-header">
        <h1>Replay</h1>
        <RunPicker api={api} value={runId} onChange={(id) => navigate(id ? { view: 'replay', runId: id } : { view: 'replay' })} />
        {runId && (
          <label className="field inspect-field">
            <span className="label">Episode</span>
            <select aria-label="Episode" value={episodeId ?? ''} onChange={(e) => e.target.value && navigate({ view: 'replay', runId, episodeId: e.target.value, ...(other ? { otherRunId: other } : {}) })}>
              <option value="">{list.status === 'loading' ? 'loading…' : 'choose an episode…'}</option>
              {episodeId && list.status === 'ok' && !list.value.episodes.some((e) => e.id === episodeId) && <option value={episodeId}>{episodeId}</option>}
              {list.status === 'ok' && list.value.episodes.map((e) => (
                <option key={e.id} value={e.id}>{e.id} · seed {e.seed} · {e.success ? 'success' : 'failure'}</option>
              ))}
            </select>
            {listTotal > LIST_PAGE && (
              <span className="row" style={{ gap: 4 }} data-testid="episode-pages">
                <button type="button" className="btn small" disabled={listOffset === 0} onClick={() => setListOffset(Math.max(0, listOffset - LIST_PAGE))} aria-label="Previous episodes">‹</button>
                <span className="faint">{listOffset + 1}–{Math.min(listTotal, listOffset + LIST_PAGE)} of {listTotal}</span>
                <button type="button" className="btn small" disabled={listOffset + LIST_PAGE >= listTotal} onClick={() => setListOffset(listOffset + LIST_PAGE)} aria-label="Next episodes">›</button>
              </span>
            )}
          </label>
        )}
        {runId && <RunPicker api={api} value={other} onChange={pickOther} label="Side by side with" allowNone exclude={runId} />}
        {mine && <button type="button" className="btn small" onClick={() => navigate({ view: 'trace', runId: mine.runId, episodeId: mine.id })}>Open in trace inspector</button>}
      </div>
      {list.status === 'error' && <ErrorBanner error={list.error} context="Episodes" />}
      {episode.status === 'error' && <ErrorBanner error={episode.error} context={`Episode ${episodeId ?? ''}`} />}
      {!runId && <div className="banner info">Pick a run, then an episode to replay.</div>}
      {runId && !episodeId && <div className="muted">Choose an episode to replay (or open one from the trace inspector).</div>}
      {episode.status === 'loading' && <div className="muted">loading episode…</div>}
      {mine && (
        <div className="card replay-stage" ref={stageRef} tabIndex={-1}>
          <div className="replay-controls" role="toolbar" aria-label="Replay controls">
            <button type="button" className="btn small" onClick={() => { setPlaying(false); go(0); }} aria-label="First step" title="First (Home)">|◀</button>
            <button type="button" className="btn small" onClick={() => { setPlaying(false); go(frame - 1); }} disabled={frame === 0} aria-label="Step back" title="Step back (←)">◀</button>
            <button type="button" className="btn small primary" onClick={togglePlay} aria-label={playing ? 'Pause' : 'Play'} title="Play / pause (space)">{playing ? '❚❚ Pause' : '▶ Play'}</button>
            <button type="button" className="btn small" onClick={() => { setPlaying(false); go(frame + 1); }} disabled={frame >= last} aria-label="Step forward" title="Step forward (→)">▶</button>
            <button type="button" className="btn small" onClick={() => { setPlaying(false); go(last); }} aria-label="Last step" title="Last (End)">▶|</button>
            <input type="range" min={0} max={last} step={1} value={frame} aria-label="Scrub" aria-valuetext={`step ${frame} of ${last}`}
              onChange={(e) => { setPlaying(false); go(Number(e.target.value)); }} />
            <span data-testid="replay-position" className="mono">step {frame} / {last}</span>
            <label className="row">
              <span className="muted">speed</span>
              <select value={speed} onChange={(e) => setSpeed(Number(e.target.value))} aria-label="Speed">
                {SPEEDS.map((s) => <option key={s} value={s}>{s}×</option>)}
              </select>
            </label>
            <label className="row">
              <span className="muted">overlay</span>
              <select value={mode} onChange={(e) => setMode(e.target.value as OverlayMode)} aria-label="Overlay">
                <option value="prediction">model prediction</option>
                <option value="observation">model observation</option>
                <option value="none">none</option>
              </select>
            </label>
          </div>
          <div className="replay-kbd muted"><kbd>space</kbd> play/pause · <kbd>←</kbd>/<kbd>→</kbd> step · <kbd>Home</kbd>/<kbd>End</kbd> first/last</div>
          <div className="replay-boards">
            <ReplaySide title={`${mine.runId} · ${mine.id}`} episode={mine} frames={frames} frame={frame} mode={mode} testId="replay-main" />
            {other && match.status === 'loading' && <div className="muted">finding seed {mine.seed} in {other}…</div>}
            {other && match.status === 'error' && <ErrorBanner error={match.error} context={`Run ${other}`} />}
            {other && match.status === 'ok' && !otherEpisode && (
              <div className="banner warn">Run {other} has no episode with seed {mine.seed}.</div>
            )}
            {otherEpisode && (
              <ReplaySide title={`${otherEpisode.runId} · ${otherEpisode.id}`} episode={otherEpisode} frames={otherFrames} frame={frame} mode={mode} testId="replay-other" />
            )}
          </div>
          {!isTextBoard(mine.initialState.board) && <BoardLegend family={boardFamily(mine.initialState.board)} showOverlay={mode !== 'none'} />}
        </div>
      )}
    </div>
  );
}

function ReplaySide({ title, episode, frames, frame, mode, testId }: {
  title: string; episode: EpisodeRecord; frames: ReplayFrame[]; frame: number; mode: OverlayMode; testId: string;
}): ReactElement {
  const current = frames[Math.min(frame, frames.length - 1)];
  if (!current) return <div className="muted">no states</div>;
  const ended = frame > frames.length - 1;
  const { overlay, highlight } = frameOverlay(current, mode);
  const score = mode === 'prediction' ? current.predictionScore : mode === 'observation' ? current.observationScore : null;
  const caption = current.turn === null ? 'initial state'
    : current.actionStep && current.actionStep.index < current.actionStep.of ? `turn ${current.turn + 1}, after action ${current.actionStep.index} of ${current.actionStep.of}`
    : `after turn ${current.turn + 1}`;
  return (
    <div className="replay-side" data-testid={testId} data-frame={current.index}>
      <h3 className="mono">{title}</h3>
      {isTextBoard(current.board) ? <ReplayText episode={episode} frame={current} mode={mode} caption={`Step ${current.index}: ${caption}`} /> : (
        <BoardFigure board={current.board} title={`Step ${current.index}: ${caption}`} overlay={overlay} highlight={highlight}
          size={Math.min(360, Math.max(current.board.rows, current.board.cols) * 48)} exportName={`${episode.runId}-${episode.id}-step${current.index}`} />
      )}
      <div className="replay-step-info">
        {ended && <div className="warn">episode ended at step {frames.length - 1}</div>}
        <div>seed {episode.seed} · {episode.success ? <span className="ok">success</span> : <span className="bad">failure</span>} · return {formatNumber(current.cumulativeReward, 2)}</div>
        {current.turn !== null && (
          <div>actions <span className="mono">{current.actions.length > 0 ? current.actions.map((a, i) => (current.actionStep && i === current.actionStep.index - 1 ? `[${a}]` : a)).join(' → ') : '(none)'}</span>
            {current.actionStep ? <span className="faint"> · action {current.actionStep.index} of {current.actionStep.of}</span> : null}
            {current.reward !== null ? <> · reward {formatNumber(current.reward, 2)}</> : null}{current.done ? ' · done' : ''}</div>
        )}
        {mode !== 'none' && !isTextBoard(current.board) && (
          <div>
            {mode === 'prediction' ? 'prediction' : 'observation'}:{' '}
            {score === null ? (overlay ? 'not scored' : current.turn === null && mode === 'prediction' ? '— (initial state)'
              : current.actionStep && current.actionStep.index < current.actionStep.of ? '— (made for the state after the whole turn)' : 'none') :
              !score.parsed ? <span className="bad">unparseable</span> :
                score.exact ? <span className="ok">exact</span> : <span className="bad">{score.wrongCells.length} wrong cell{score.wrongCells.length === 1 ? '' : 's'}</span>}
            {mode === 'prediction' && current.slip && slipScoreText(current.slip) && (
              <> · <span className={current.slip.predictionVsIntended?.exact ? 'ok' : 'bad'} data-testid="replay-slip-score">{slipScoreText(current.slip)}</span></>
            )}
          </div>
        )}
        {current.slip && !current.actionStep && (
          <div className="warn" data-testid="replay-slip" title="A slippery lake moves the player sideways with probability 1 − successRate: the truth is where the player went, not where it meant to go">
            ⚠ {slipText(current.slip, current.actions.length)}
          </div>
        )}
      </div>
    </div>
  );
}

/** A text env's frame (TextWorld, Python envs): the true state text, or with an overlay the model's text against it as a word diff. */
function ReplayText({ episode, frame, mode, caption }: { episode: EpisodeRecord; frame: ReplayFrame; mode: OverlayMode; caption: string }): ReactElement {
  const t = frameTexts(episode, frame, mode);
  if (t.truth === null) return <div className="muted" data-testid="replay-text">{caption}: the text of a state inside a turn is not recorded.</div>;
  if (mode === 'none' || (t.model === null && !(mode === 'prediction' && frame.turn !== null))) {
    return <div data-testid="replay-text"><strong>{caption}</strong><pre className="mono text-diff-plain">{t.truth}</pre></div>;
  }
  return (
    <div data-testid="replay-text">
      <TextStateDiff title={`${caption}: ${t.modelLabel} against the true state`} model={t.model} truth={t.truth} modelLabel={t.modelLabel}
        truthLabel="true state" score={t.score} testId="replay-text-diff" />
    </div>
  );
}
