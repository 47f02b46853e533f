// The texts of a replay frame for text envs (TextStateDiff in the replay): the true state text of the frame and the model's text
// for the overlay mode, taken from the episode's turn records as episodeFrames (boards/replay-frames.ts) lays the frames out:
// frame 0 = the state before the first turn, then one frame per turn = the state after it.
import type { EpisodeRecord, WmScore } from '../../../core/api/records.js';
import type { OverlayMode, ReplayFrame } from '../boards/replay-frames.js';

export interface FrameTexts {
  /** The true state text of the frame; null inside a multi-action turn (only the turn's end state is recorded as text). */
  truth: string | null;
  /** The model's text for the mode (its <prediction> of this state, or its <observation> of it); null when the reply has none. */
  model: string | null;
  modelLabel: 'prediction' | 'observation';
  score: WmScore | null;
}

/** The true and the model's text of `frame` under `mode` (mode none: the truth only). */
export function frameTexts(episode: EpisodeRecord, frame: ReplayFrame, mode: OverlayMode): FrameTexts {
  const turns = [...episode.turns].sort((a, b) => a.turn - b.turn);
  const modelLabel = mode === 'observation' ? 'observation' : 'prediction';
  if (frame.turn === null) {
    const first = turns[0];
    const truth = first ? first.stateBefore.text : episode.initialState.text;
    if (mode !== 'observation' || !first) return { truth, model: null, modelLabel, score: null };
    return { truth, model: first.parsed.observation, modelLabel, score: first.wm.observation };
  }
  const at = turns.findIndex((t) => t.turn === frame.turn);
  const turn = turns[at];
  if (!turn || (frame.actionStep && frame.actionStep.index < frame.actionStep.of)) return { truth: null, model: null, modelLabel, score: null };
  if (mode === 'prediction') return { truth: turn.stateAfter.text, model: turn.parsed.prediction, modelLabel, score: turn.wm.prediction };
  const next = turns[at + 1];
  if (mode === 'observation' && next) return { truth: turn.stateAfter.text, model: next.parsed.observation, modelLabel, score: next.wm.observation };
  return { truth: turn.stateAfter.text, model: null, modelLabel, score: null };
}
