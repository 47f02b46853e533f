// An episode as replay frames: frame 0 is the initial state, frame k (k ≥ 1) the true state
// after turn k. Each frame carries the model's prediction of it (from turn k, with its wrong
// cells) and the model's observation of it (from turn k+1, when the episode continued).
import type { Board, EpisodeRecord, WmScore } from '../../../core/api/records.js';

export interface ReplayFrame {
  index: number;
  board: Board;
  /** The turn that produced this frame (null for the initial state). */
  turn: number | null;
  actions: string[];
  reward: number | null;
  cumulativeReward: number;
  prediction: Board | null;
  predictionScore: WmScore | null;
  observation: Board | null;
  observationScore: WmScore | null;
  done: boolean;
}

export function episodeFrames(episode: EpisodeRecord): ReplayFrame[] {
  const turns = [...episode.turns].sort((a, b) => a.turn - b.turn);
  const first = turns[0];
  const frames: ReplayFrame[] = [{
    index: 0,
    board: first ? first.stateBefore.board : episode.initialState.board,
    turn: null, actions: [], reward: null, cumulativeReward: 0,
    prediction: null, predictionScore: null,
    observation: first?.observedBoard ?? null, observationScore: first?.wm.observation ?? null,
    done: false,
  }];
  let total = 0;
  turns.forEach((t, i) => {
    total += t.reward;
    const next = turns[i + 1];
    frames.push({
      index: i + 1,
      board: t.stateAfter.board,
      turn: t.turn,
      actions: t.actionsExecuted,
      reward: t.reward,
      cumulativeReward: total,
      prediction: t.predictedBoard,
      predictionScore: t.wm.prediction,
      observation: next?.observedBoard ?? null,
      observationScore: next?.wm.observation ?? null,
      done: t.done,
    });
  });
  return frames;
}

export type OverlayMode = 'prediction' | 'observation' | 'none';

/** The overlay board and highlighted cells of a frame under an overlay mode. */
export function frameOverlay(frame: ReplayFrame, mode: OverlayMode): { overlay: Board | null; highlight: Array<[number, number]> } {
  if (mode === 'prediction') return { overlay: frame.prediction, highlight: frame.predictionScore?.wrongCells ?? [] };
  if (mode === 'observation') return { overlay: frame.observation, highlight: frame.observationScore?.wrongCells ?? [] };
  return { overlay: null, highlight: [] };
}

/** Clamp a frame index to [0, count-1]. */
export function clampFrame(index: number, count: number): number {
  if (count <= 0) return 0;
  return Math.min(Math.max(0, Math.round(index)), count - 1);
}
