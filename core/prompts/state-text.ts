// State descriptions an env can be rendered with: the raw grid, the SPA coordinate line, a
// coordinate listing by entity kind, relations relative to the player, JSON, and the "random
// coordinates" ablation (well-formed, wrong, seeded by the state). Templates pick and combine
// them through Liquid variables (see template.ts). Pure: no fs, no Math.random.
import type { Entity, Env } from '../envs/types.js';
import { Rng, hashString } from '../util/rng.js';

type Pos = [number, number];

const SOKOBAN_LABEL: Record<string, string> = { player: 'Player (P)', box: 'box (X)', target: 'target (O)' };
const FROZEN_LABEL: Record<string, string> = { player: 'Player (P)', hole: 'hole (O)', goal: 'goal (G)' };

function byKind(entities: Entity[], kind: string): Entity[] {
  return entities.filter((e) => e.kind === kind).sort((a, b) => a.row - b.row || a.col - b.col);
}

/** Sudoku board side from its entities. */
function sudokuSize(entities: Entity[]): number {
  return Math.round(Math.sqrt(entities.length));
}

/**
 * The SPA coordinate line, exactly as in the released data:
 * Sokoban `Player (P) is at (1,1); box (X) is at (2,2); target (O) is at (2,3).` (zero-based),
 * FrozenLake `Player (P) is at (0,0); hole (O) is at (1,1); goal (G) is at (3,3).` (zero-based),
 * Sudoku `Empty positions to be filled are at (1,1), (4,1), (4,3).` (one-based).
 */
export function spaCoordinates(envId: string, entities: Entity[]): string {
  if (envId === 'sudoku') {
    const empty = byKind(entities, 'empty').map((e) => `(${e.row + 1},${e.col + 1})`);
    if (empty.length === 0) return 'No empty positions are left.';
    if (empty.length === 1) return `Empty position to be filled is at ${empty[0]}.`;
    return `Empty positions to be filled are at ${empty.join(', ')}.`;
  }
  const labels = envId === 'sokoban' ? SOKOBAN_LABEL : FROZEN_LABEL;
  const order = envId === 'sokoban' ? ['player', 'box', 'target'] : ['player', 'hole', 'goal'];
  const parts: string[] = [];
  for (const kind of order) for (const e of byKind(entities, kind)) parts.push(`${labels[kind]} is at (${e.row},${e.col})`);
  return `${parts.join('; ')}.`;
}

const LISTING: Record<string, [string, string][]> = {
  sokoban: [['wall', 'Walls'], ['target', 'Targets'], ['box', 'Boxes'], ['player', 'Player']],
  frozenlake: [['hole', 'Holes'], ['goal', 'Goal'], ['player', 'Player']],
};

/** Coordinate listing by kind: `Walls: (0, 0), (0, 1)` / `Targets: …` / `Boxes: …` / `Player: …` (zero-based; Sudoku one-based by digit). */
export function coordinateListing(envId: string, entities: Entity[]): string {
  if (envId === 'sudoku') {
    const size = sudokuSize(entities);
    const lines: string[] = [];
    for (let v = 1; v <= size; v++) {
      const cells = entities.filter((e) => e.kind === 'digit' && e.value === v).sort((a, b) => a.row - b.row || a.col - b.col);
      lines.push(`Digit ${v}: ${cells.length ? cells.map((e) => `(${e.row + 1}, ${e.col + 1})`).join(', ') : 'none'}`);
    }
    const empty = byKind(entities, 'empty');
    lines.push(`Empty: ${empty.length ? empty.map((e) => `(${e.row + 1}, ${e.col + 1})`).join(', ') : 'none'}`);
    return lines.join('\n');
  }
  return (LISTING[envId] ?? []).map(([kind, title]) => {
    const cells = byKind(entities, kind);
    return `${title}: ${cells.length ? cells.map((e) => `(${e.row}, ${e.col})`).join(', ') : 'none'}`;
  }).join('\n');
}

function relation(dr: number, dc: number): string {
  if (dr === 0 && dc === 0) return 'at the same position as the player';
  const vertical = `${Math.abs(dr)} ${dr < 0 ? 'above' : 'below'}`;
  const horizontal = `${Math.abs(dc)} ${dc < 0 ? 'left' : 'right'} of`;
  if (dr === 0) return `in the same row, ${horizontal} the player`;
  if (dc === 0) return `in the same column, ${vertical} the player`;
  return `${vertical} and ${horizontal} the player`;
}

/**
 * Relations relative to the player, one line per entity:
 * `box (X) at (2,2) is 1 below and 1 right of the player.`, `target (O) at (1,3) is in the same row, 2 right of the player.` (zero-based).
 * Sudoku has no player: one line per empty cell with the digits it can still take.
 */
export function relations(envId: string, entities: Entity[]): string {
  if (envId === 'sudoku') {
    const size = sudokuSize(entities);
    const [bh, bw] = size === 9 ? [3, 3] : size === 4 ? [2, 2] : [1, size];
    const value = new Map(entities.filter((e) => e.kind === 'digit').map((e) => [`${e.row},${e.col}`, e.value!]));
    const lines = byKind(entities, 'empty').map((e) => {
      const used = new Set<number>();
      for (let k = 0; k < size; k++) {
        used.add(value.get(`${e.row},${k}`) ?? 0);
        used.add(value.get(`${k},${e.col}`) ?? 0);
      }
      const br = e.row - (e.row % bh);
      const bc = e.col - (e.col % bw);
      for (let r = br; r < br + bh; r++) for (let c = bc; c < bc + bw; c++) used.add(value.get(`${r},${c}`) ?? 0);
      const free = Array.from({ length: size }, (_, i) => i + 1).filter((v) => !used.has(v));
      return `(${e.row + 1},${e.col + 1}) can be ${free.length ? free.join(' or ') : 'nothing'}.`;
    });
    return lines.length ? lines.join('\n') : 'No empty positions are left.';
  }
  const labels = envId === 'sokoban' ? SOKOBAN_LABEL : FROZEN_LABEL;
  const kinds = envId === 'sokoban' ? ['box', 'target'] : ['hole', 'goal'];
  const player = byKind(entities, 'player')[0];
  if (!player) return '';
  const lines = [`Player (P) is at (${player.row},${player.col}).`];
  for (const kind of kinds) for (const e of byKind(entities, kind)) {
    lines.push(`${labels[kind]} at (${e.row},${e.col}) is ${relation(e.row - player.row, e.col - player.col)}.`);
  }
  return lines.join('\n');
}

/** JSON description: the grid rows plus positions by kind (Sudoku: rows of digits, null = empty). */
export function stateJson(env: Env): string {
  const entities = env.entities();
  if (env.id === 'sudoku') {
    const board = env.board();
    return JSON.stringify({ rows: board.values });
  }
  const positions = (kind: string): Pos[] => byKind(entities, kind).map((e) => [e.row, e.col]);
  const grid = env.gridText().split('\n');
  if (env.id === 'sokoban') {
    return JSON.stringify({ grid, player: positions('player')[0] ?? null, boxes: positions('box'), targets: positions('target') });
  }
  return JSON.stringify({ grid, player: positions('player')[0] ?? null, holes: positions('hole'), goal: positions('goal') });
}

/** The entity kinds a random-coordinates decoy places, by env (an env not listed: empty cells). */
const DECOY_KINDS = new Map<string, string[]>([['sokoban', ['player', 'box', 'target']], ['frozenlake', ['player', 'hole', 'goal']]]);

/**
 * The "random coordinates" ablation: the SPA coordinate line with the same number of each
 * entity at random positions inside the board. Well-formed, wrong (never equal to the truth),
 * and seeded by the state text, so the same state always gets the same wrong line.
 */
export function randomCoordinates(env: Env): string {
  const entities = env.entities();
  const board = env.board();
  const truth = spaCoordinates(env.id, entities);
  const rng = new Rng(hashString(`${env.id}\n${env.gridText()}`));
  const kinds = DECOY_KINDS.get(env.id) ?? ['empty'];
  for (let attempt = 0; attempt < 100; attempt++) {
    const fake: Entity[] = [];
    for (const kind of kinds) {
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
    const text = spaCoordinates(env.id, fake);
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
