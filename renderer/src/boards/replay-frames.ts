// An episode as replay frames: frame 0 is the initial state, frame k (k ≥ 1) the true state
// after turn k. Each frame carries the model's prediction of it (from turn k, with its wrong
// cells) and the model's observation of it (from turn k+1, when the episode continued).
import type { Board, EpisodeRecord, TurnRecord, WmScore } from '../../../core/api/records.js';

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
  /** Inside a multi-action turn: this frame is the state after action `index` (1-based) of `of`. */
  actionStep?: { index: number; of: number };
  /** The env slipped on the turn that produced this frame (intended vs executed move; the prediction against the intended outcome). */
  slip?: NonNullable<TurnRecord['slip']>;
}

/** Boards after each executed action per turn (rollouts.actionFrames); null boards: the turn does not replay. */
export type TurnActionBoards = ReadonlyArray<{ turn: number; boards: Board[] | null }>;

/**
 * With `perAction` (rollouts.actionFrames), a turn that executed k > 1 actions becomes k frames:
 * the states after actions 1 … k-1 (no model overlay: the prediction is of the turn's end
 * state), then the turn's end state as before.
 */
export function episodeFrames(episode: EpisodeRecord, perAction?: TurnActionBoards): ReplayFrame[] {
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
    const boards = perAction?.find((p) => p.turn === t.turn)?.boards ?? null;
    const k = t.actionsExecuted.length;
    if (boards && k > 1 && boards.length === k) {
      for (let j = 0; j < k - 1; j++) {
        frames.push({
          index: frames.length, board: boards[j]!, turn: t.turn, actions: t.actionsExecuted, reward: null, cumulativeReward: total,
          prediction: null, predictionScore: null, observation: null, observationScore: null, done: false, actionStep: { index: j + 1, of: k },
        });
      }
    }
    total += t.reward;
    const next = turns[i + 1];
    frames.push({
      ...(boards && k > 1 && boards.length === k ? { actionStep: { index: k, of: k } } : {}),
      ...(t.slip ? { slip: t.slip } : {}),
      index: frames.length,
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

/** "the lake slipped: Up → moved Left" for a turn's slips (moves numbered when the turn had several). */
export function slipText(slip: NonNullable<TurnRecord['slip']>, actions: number): string {
  const moves = slip.moves.map((m) => `${actions > 1 ? `move ${m.action + 1}: ` : ''}intended ${m.intended}, moved ${m.executed}`);
  return `the env slipped: ${moves.join('; ')}`;
}

/**
 * What the prediction's score means on a slipped turn: scored against the truth it may be wrong
 * while it matched the intended outcome (what a model that knows the rules predicts).
 */
export function slipScoreText(slip: NonNullable<TurnRecord['slip']>): string | null {
  const v = slip.predictionVsIntended;
  if (!v) return null;
  if (!v.parsed) return 'against the intended outcome: unparseable';
  return v.exact ? 'matched the intended outcome' : `against the intended outcome: ${v.wrongCells.length} wrong cell${v.wrongCells.length === 1 ? '' : 's'}`;
}
