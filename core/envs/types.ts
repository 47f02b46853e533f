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
  /** The board legend: cell kinds with symbol, label and glyph layers (the renderer draws boards from it). */
  cells: CellLegend[];
}

/** A solver's answer: a plan from the current state, and whether it is optimal. */
export interface EnvSolution {
  solved: boolean;
  actions: string[];
  optimal: boolean;
  note?: string;
}

// ---- The state vocabulary: everything core/prompts, the API and the renderer need to know about an env's states ----

/**
 * One cell kind of the env's boards, with its legend: the grid symbol, a label for people, and the glyph layers the renderer
 * draws (background first). Glyph names the renderer knows: floor, wall, target, box, boxDone, player, playerSmall, ice, hole,
 * flag, cross, cell, digit, unknown; any other name (or 'symbol') draws the cell's symbol as a letter on the tile.
 */
export interface CellLegend {
  kind: string;
  symbol: string;
  label: string;
  glyphs: string[];
  /** Entity kinds present on a cell of this kind (e.g. boxOnTarget: box, target); scoring and coordinate parsing use them. */
  entities: string[];
}

/** One entity kind of the env's state text: SPA label ("box (X)"), listing title ("Boxes"), JSON key. */
export interface EntityKindInfo {
  kind: string;
  label: string;
  title: string;
  /** Key in the JSON form; absent: not in the JSON. */
  jsonKey?: string;
  /** The JSON form writes one position, not a list (the player). */
  single?: boolean;
  /** Scored by entity F1 (world-model accuracy per kind). */
  scored: boolean;
}

/** How a template's state part asks for coordinates, for the parser: check them against the grid, require them, or ignore them. */
export type CoordinatePolicy = 'required' | 'check-if-present' | 'ignore';

/** The state-text forms templates can ask for (core/prompts/state-text.ts exposes them as Liquid variables). */
export interface StateForms {
  spaCoordinates(entities: Entity[]): string;
  coordinateListing(entities: Entity[]): string;
  relations(entities: Entity[]): string;
  json(env: Env): string;
}

/**
 * An env's state vocabulary (Gymnasium keeps spaces and rendering in the env; this is that for text states): cell kinds with
 * their legend, entity kinds, the state-text forms, the kinds a random-coordinates decoy places, and a parser from text to a
 * board. core/prompts' state text and world-model scoring are loops over it; the API serves the legend; the renderer draws it.
 */
export interface StateVocabulary {
  cells: CellLegend[];
  entities: EntityKindInfo[];
  forms: StateForms;
  /** Entity kinds the "random coordinates" ablation places at random. */
  decoyKinds: string[];
  /**
   * A state text (as a template renders it or a model wrote it) back into a board; null when nothing parses. `reference` (the
   * true board) gives the size and the fixed cells a coordinate-only text does not list. With a grid and coordinates in the same
   * text, cells where the two disagree become 'unknown' (policy 'check-if-present' or 'required'); 'required' also marks the
   * cells of listed entities 'unknown' when the coordinates are missing, so exact match covers the whole state text.
   */
  parse(text: string, reference?: Board, coordinates?: CoordinatePolicy): Board | null;
  /** Entity scores of a predicted board (default: F1 of each scored entity kind's cell positions, mean over kinds). */
  entityScores?(predicted: Board | null, truth: Board, cellAccuracy: number): { entityF1: Record<string, number>; meanF1: number };
}

/** A registered env: docs, options, prompt pieces, state vocabulary, a factory and (optionally) a solver. */
export interface EnvDefinition {
  id: string;
  title: string;
  docs: EnvDocs;
  options: readonly EnvOptionDescription[];
  actions: string[];
  actionPattern?: string;
  instruction: string;
  legend: string;
  /**
   * The game's rules in one line, true for this env's options (after reset), for compact prompts (`{{ env.rules }}` in the
   * tiny-compact templates); absent: "Solve the <id> puzzle.".
   */
  rules?(env: Env): string;
  budget: EnvBudget;
  /** The state vocabulary: cell legend, entity kinds, state-text forms, decoy kinds, parser. */
  vocabulary: StateVocabulary;
  /** Build an env; options are validated by the env (unknown or ill-typed keys throw). */
  create(options: Record<string, unknown>): Env;
  /** A plan from the env's current state (BFS / backtracking), when the env has a solver. */
  solve?(env: Env): EnvSolution;
  /** Options that make the env play a level given as file text (e.g. XSB for Sokoban). */
  levelOptions?(text: string): Record<string, unknown>;
}
