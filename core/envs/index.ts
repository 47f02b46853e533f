// Env registry: every environment the workbench can play. Start here when adding an env:
// copy frozen-lake.ts (the smallest), export an EnvDefinition, and add it to DEFINITIONS.
// The checker (checker.ts) runs over every registered env in tests/envs/checker.test.ts.
import type { Env, EnvDefinition, EnvDescription, EnvSolution, StateVocabulary } from './types.js';
import { EnvError, show } from './errors.js';
import { sokobanDefinition } from './sokoban.js';
import { frozenLakeDefinition } from './frozen-lake.js';
import { sudokuDefinition } from './sudoku.js';
import { keyDoorDefinition } from './key-door.js';
import { findPythonEnv, listPythonEnvs } from './python-env.js';

const DEFINITIONS: EnvDefinition[] = [sokobanDefinition, frozenLakeDefinition, sudokuDefinition, keyDoorDefinition];
const ALIASES: Record<string, string> = {
  frozen_lake: 'frozenlake',
  'frozen-lake': 'frozenlake',
  FrozenLake: 'frozenlake',
  Sokoban: 'sokoban',
  Sudoku: 'sudoku',
  KeyDoor: 'keydoor',
  'key-door': 'keydoor',
  key_door: 'keydoor',
};

/** Ids of the registered envs: the TypeScript ones, then the Python ones (python-env.ts: built-in and SPA_ENV_PATH). */
export function listEnvs(): string[] {
  const ids = DEFINITIONS.map((d) => d.id);
  return [...ids, ...listPythonEnvs().map((e) => e.id).filter((id) => !ids.includes(id))];
}

/** The registered definition of an env id (aliases such as "frozen_lake" accepted). Throws EnvError for unknown ids. */
export function getEnvDefinition(id: string): EnvDefinition {
  const key = typeof id === 'string' ? (ALIASES[id] ?? id.toLowerCase()) : '';
  const def = DEFINITIONS.find((d) => d.id === key) ?? (typeof id === 'string' ? findPythonEnv(ALIASES[id] ?? id) : null);
  if (!def) {
    throw new EnvError('unknown env', {
      where: 'env registry',
      expected: `one of ${listEnvs().join(', ')}`,
      received: show(id),
      hint: 'run `spa-workbench env list`',
    });
  }
  return def;
}

/** Plain-JSON description of an env: doc sections, actions, options with defaults, prompt pieces. */
export function describeEnv(id: string): EnvDescription {
  const d = getEnvDefinition(id);
  return {
    id: d.id,
    title: d.title,
    docs: { ...d.docs },
    actions: [...d.actions],
    ...(d.actionPattern ? { actionPattern: d.actionPattern } : {}),
    options: d.options.map((o) => ({ ...o })),
    instruction: d.instruction,
    legend: d.legend,
    budget: { ...d.budget },
    hasSolver: d.solve !== undefined,
    cells: d.vocabulary.cells.map((c) => ({ ...c, glyphs: [...c.glyphs], entities: [...c.entities] })),
  };
}

/** Build an env; options are validated (unknown or ill-typed keys throw EnvError naming the option). */
export function createEnv(id: string, options: Record<string, unknown> = {}): Env {
  return getEnvDefinition(id).create(options);
}

/** Solve from the env's current state when the env has a solver; null otherwise. */
export function solveEnv(env: Env): EnvSolution | null {
  const def = getEnvDefinition(env.id);
  return def.solve ? def.solve(env) : null;
}

/** The state vocabulary of an env id (cell legend, entity kinds, state-text forms, parser). Throws EnvError for unknown ids. */
export function envVocabulary(id: string): StateVocabulary {
  return getEnvDefinition(id).vocabulary;
}

export type {
  Env, EnvDefinition, EnvDescription, EnvSolution, Entity, StepResult, ResetResult, StepInfo, ResetOptions, EnvBudget, EnvDocs,
  StateVocabulary, CellLegend, EntityKindInfo, StateForms, CoordinatePolicy,
} from './types.js';
export { gridVocabulary, type GridVocabularySpec } from './grid-vocabulary.js';
export { EnvError } from './errors.js';
export { Rng, hashString, type RngState } from '../util/rng.js';
export { SokobanEnv } from './sokoban.js';
export { FrozenLakeEnv } from './frozen-lake.js';
export { SudokuEnv } from './sudoku.js';
export { KeyDoorEnv } from './key-door.js';
export { parseXsb, levelToXsb, splitXsbCollection, parseSokobanGrid, type SokobanLevel } from './sokoban-level.js';
export { solveSokoban } from './sokoban-solver.js';
export { checkEnv, type CheckReport } from './checker.js';
export { PythonEnv, PythonEnvError, listPythonEnvs, normalizeStateText, textBoard, resetPythonEnvs, type PythonEnvEntry } from './python-env.js';
