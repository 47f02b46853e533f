// The Env contract (Gymnasium style). Pure and seeded: no TF.js, no fs, no Math.random.
// The pipeline, prompts, API and CLI use it.
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

// ---- Registry-facing additions (additive; owned by core/envs) ----

/** Documentation of an env, in the same sections for every env (as Gymnasium docstrings). */
export interface EnvDocs {
  summary: string;
  actions: string;
  observation: string;
  rewards: string;
  episodeEnd: string;
  arguments: string;
}

/** One option of an env: type, default and a one-line doc (see core/envs/options.ts). */
export interface EnvOptionDescription {
  name: string;
  type: string;
  default: unknown;
  doc: string;
  min?: number;
  max?: number;
  values?: readonly (string | number)[];
  nullable?: boolean;
}

/** Default action budget of an episode (SPA/RAGEN: 5 turns, 5 actions per turn, 10 per game). */
export interface EnvBudget { maxTurns: number; maxActionsPerTurn: number; maxActionsPerGame: number }

/** What `describeEnv(id)` returns: plain JSON, safe to send over the API. */
export interface EnvDescription {
  id: string;
  title: string;
  docs: EnvDocs;
  /** Action names (or, for Sudoku, the action pattern) */
  actions: string[];
  actionPattern?: string;
  options: EnvOptionDescription[];
  /** Prompt pieces used by templates. */
  instruction: string;
  legend: string;
  budget: EnvBudget;
  hasSolver: boolean;
}

/** A solver's answer: a plan from the current state, and whether it is optimal. */
export interface EnvSolution {
  solved: boolean;
  actions: string[];
  optimal: boolean;
  note?: string;
}

/** A registered env: docs, options, prompt pieces, a factory and (optionally) a solver. */
export interface EnvDefinition {
  id: string;
  title: string;
  docs: EnvDocs;
  options: readonly EnvOptionDescription[];
  actions: string[];
  actionPattern?: string;
  instruction: string;
  legend: string;
  budget: EnvBudget;
  /** Build an env; options are validated by the env (unknown or ill-typed keys throw). */
  create(options: Record<string, unknown>): Env;
  /** A plan from the env's current state (BFS / backtracking), when the env has a solver. */
  solve?(env: Env): EnvSolution;
  /** Options that make the env play a level given as file text (e.g. XSB for Sokoban). */
  levelOptions?(text: string): Record<string, unknown>;
}
