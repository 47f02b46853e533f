// Per-action replay frames: a turn may execute several actions ("Up || Left || Left"), and the
// episode record keeps the state before and after the turn only. Replaying the episode's
// executed actions in its env (same id, options and seed) gives the board after each action.
// A turn whose replayed end state differs from the recorded one (an env changed since, or a
// per-reset level) gets no intermediate boards rather than wrong ones.
// The env is built with the run's env options (config.env.options, e.g. the presets' FrozenLake
// randomStartGoal and successRate) under the episode's per-reset envConfig: the record keeps only the
// per-reset ones, and a lake replayed with the default corners was never in sync (no frame per action).
import type { Board, EpisodeRecord } from '../api/records.js';
import { createEnv } from '../envs/index.js';

export interface TurnActionFrames { turn: number; actions: string[]; boards: Board[] | null }

const sameBoard = (a: Board, b: Board) => JSON.stringify(a.cells) === JSON.stringify(b.cells);

/** `runEnvOptions`: the run's config.env.options when its env is the episode's (the episode's envConfig wins over them). */
export function actionFrames(episode: EpisodeRecord, runEnvOptions: Record<string, unknown> = {}): { turns: TurnActionFrames[] } {
  let env;
  try { env = createEnv(episode.env, { ...runEnvOptions, ...episode.envConfig }); } catch {
    return { turns: episode.turns.map((t) => ({ turn: t.turn, actions: t.actionsExecuted, boards: null })) };
  }
  env.reset({ seed: episode.seed });
  let inSync = sameBoard(env.board(), episode.turns[0]?.stateBefore.board ?? episode.initialState.board);
  const turns: TurnActionFrames[] = [];
  for (const t of [...episode.turns].sort((a, b) => a.turn - b.turn)) {
    const boards: Board[] = [];
    for (const action of t.actionsExecuted) {
      if (!inSync) break;
      try { env.step(action); boards.push(env.board()); } catch { inSync = false; }
    }
    inSync = inSync && (t.actionsExecuted.length === 0 || sameBoard(boards[boards.length - 1]!, t.stateAfter.board));
    turns.push({ turn: t.turn, actions: t.actionsExecuted, boards: inSync ? boards : null });
  }
  return { turns };
}
