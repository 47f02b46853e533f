// State descriptions an env can be rendered with: the raw grid, the SPA coordinate line, a
// coordinate listing by entity kind, relations relative to the player, JSON, and the "random
// coordinates" ablation (well-formed, wrong, seeded by the state). Templates pick and combine
// them through Liquid variables (see template.ts). Pure: no fs, no Math.random.
import type { Entity, Env } from '../envs/types.js';
import { envVocabulary } from '../envs/index.js';
import { Rng, hashString } from '../util/rng.js';

// Every form is the env's own (EnvDefinition.vocabulary.forms): this file only picks the env's vocabulary and exposes the
// forms as template variables. An unknown env id throws EnvError (never another env's labels).

/**
 * The SPA coordinate line, exactly as in the released data:
 * Sokoban `Player (P) is at (1,1); box (X) is at (2,2); target (O) is at (2,3).` (zero-based),
 * FrozenLake `Player (P) is at (0,0); hole (O) is at (1,1); goal (G) is at (3,3).` (zero-based),
 * Sudoku `Empty positions to be filled are at (1,1), (4,1), (4,3).` (one-based).
 */
export function spaCoordinates(envId: string, entities: Entity[]): string {
  return envVocabulary(envId).forms.spaCoordinates(entities);
}

/** Coordinate listing by kind: `Walls: (0, 0), (0, 1)` / `Targets: …` / `Boxes: …` / `Player: …` (zero-based; Sudoku one-based by digit). */
export function coordinateListing(envId: string, entities: Entity[]): string {
  return envVocabulary(envId).forms.coordinateListing(entities);
}

/**
 * Relations relative to the player, one line per entity:
 * `box (X) at (2,2) is 1 below and 1 right of the player.`, `target (O) at (1,3) is in the same row, 2 right of the player.` (zero-based).
 * Sudoku has no player: one line per empty cell with the digits it can still take.
 */
export function relations(envId: string, entities: Entity[]): string {
  return envVocabulary(envId).forms.relations(entities);
}

/** JSON description: the grid rows plus positions by kind (Sudoku: rows of digits, null = empty). */
export function stateJson(env: Env): string {
  return envVocabulary(env.id).forms.json(env);
}

/**
 * The "random coordinates" ablation: the SPA coordinate line with the same number of each of the env's decoy kinds at random
 * positions inside the board. Well-formed, wrong (never equal to the truth), and seeded by the state text, so the same state
 * always gets the same wrong line.
 */
export function randomCoordinates(env: Env): string {
  const vocabulary = envVocabulary(env.id);
  const entities = env.entities();
  const board = env.board();
  const truth = vocabulary.forms.spaCoordinates(entities);
  const rng = new Rng(hashString(`${env.id}\n${env.gridText()}`));
  for (let attempt = 0; attempt < 100; attempt++) {
    const fake: Entity[] = [];
    for (const kind of vocabulary.decoyKinds) {
      const count = entities.filter((e) => e.kind === kind).length;
      const used = new Set<string>();
      for (let k = 0; k < count; k++) {
        let r = 0; let c = 0;
        for (let tries = 0; tries < 50; tries++) {
          r = rng.int(board.rows); c = rng.int(board.cols);
          if (!used.has(`${r},${c}`)) break;
        }
        used.add(`${r},${c}`);
        fake.push({ kind, row: r, col: c });
      }
    }
    const text = vocabulary.forms.spaCoordinates(fake);
    if (text !== truth) return text;
  }
  return truth; // only for degenerate boards where every placement equals the truth
}

/**
 * All state variables a template's `state` part can use. Each is computed lazily (a getter), so
 * a template pays only for the variables it mentions.
 */
export function stateVariables(env: Env): Record<string, unknown> {
  let entities: Entity[] | null = null;
  let board: ReturnType<Env['board']> | null = null;
  const getEntities = () => (entities ??= env.entities());
  const getBoard = () => (board ??= env.board());
  const vars: Record<string, unknown> = {};
  const lazy = (name: string, compute: () => unknown) => {
    let cached: unknown;
    let done = false;
    Object.defineProperty(vars, name, {
      enumerable: true,
      get: () => {
        if (!done) { cached = compute(); done = true; }
        return cached;
      },
    });
  };
  lazy('grid', () => env.gridText());
  lazy('rows', () => getBoard().rows);
  lazy('cols', () => getBoard().cols);
  lazy('entities', () => getEntities().map((e) => ({ ...e })));
  lazy('spa_coordinates', () => spaCoordinates(env.id, getEntities()));
  lazy('coordinate_listing', () => coordinateListing(env.id, getEntities()));
  lazy('relations', () => relations(env.id, getEntities()));
  lazy('json', () => stateJson(env));
  lazy('random_coordinates', () => randomCoordinates(env));
  return vars;
}
