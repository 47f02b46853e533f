// The Env contract (Gymnasium style). Pure and seeded: no TF.js, no fs, no Math.random.
// OWNER: the environments work (core/envs). The pipeline, prompts, API and CLI use it.
import type { Board } from '../api/records.js';

export interface ResetOptions {
  seed?: number;                         // reseeds the env-owned RNG and generates the puzzle
  options?: Record<string, unknown>;     // per-reset overrides (e.g. an explicit level)
}

export interface StepInfo {
  success: boolean;                      // the task is solved
  actionIsValid: boolean;                // the action was a legal action name
  actionIsEffective: boolean;            // the state changed
  [key: string]: unknown;
}

export interface ResetResult<Obs> { observation: Obs; info: StepInfo }
export interface StepResult<Obs> {
  observation: Obs;
  reward: number;
  terminated: boolean;                   // the task ended (solved, fell in a hole)
  truncated: boolean;                    // stopped from outside (time limit wrapper)
  info: StepInfo;
}

/** A positioned entity for templates: kind (player, box, target, hole, goal, wall, empty...) and zero-based coordinates. */
export interface Entity { kind: string; row: number; col: number; value?: number }

/**
 * A grid environment. `Obs` is the env's symbolic observation (plain JSON), `State` the full
 * serialisable state (plain JSON, includes the RNG state) used by getState/setState.
 */
export interface Env<Obs = unknown, State = unknown> {
  readonly id: string;
  reset(opts?: ResetOptions): ResetResult<Obs>;
  step(action: string): StepResult<Obs>;
  getState(): State;
  setState(state: State): void;
  /** Legal action names in canonical spelling (e.g. ["Up","Down","Left","Right"]). */
  legalActions(): string[];
  /** Entities with coordinates, for templates. */
  entities(): Entity[];
  /** The current board for UI and scoring. */
  board(): Board;
  /** The raw symbolic grid (rows of symbols as in the released data, e.g. "#_PX#"). */
  gridText(): string;
}
