// KeyDoor: a small walled maze split in two by a wall with one locked door. The player starts on one side with the key; the
// goal is on the other. Walking onto the key picks it up (it leaves the board); walking into the door with the key opens it
// (door and key are gone, the door cell becomes floor); without the key the door is a wall. A world model is worth having
// here: the same move into the same cell does different things depending on what happened earlier (the key is picked up or
// not), and the plan must detour for the key first (MiniGrid's DoorKey, as a text grid).
//
// ## Actions
// `Up`, `Down`, `Left`, `Right` (case-insensitive). A move into a wall, or into the locked door without the key, stays put.
// An unknown action name changes nothing (info.actionIsValid = false).
// ## Observation
// The symbol grid as a string, one row per line: `#` wall, `_` floor, `P` player, `K` key, `D` locked door, `G` goal,
// `√` player on the goal. The key held is visible as its absence: once picked up it is no longer on the board.
// ## Rewards
// 1 on reaching the goal, 0 otherwise.
// ## Episode end
// terminated on the goal; truncated after `maxSteps` steps. Stepping an ended episode throws.
// ## Arguments
// size (5..12, default 6: the side of the square board, border walls included), wallDensity (0..0.3, default 0.1: extra inner
// walls, kept only while the level stays solvable), map (explicit rows of # _ P K D G; overrides size), maxSteps (100).
import type { Board, CellKind } from '../api/records.js';
import type { Entity, Env, EnvDefinition, ResetOptions, ResetResult, StepInfo, StepResult } from './types.js';
import { Rng, type RngState } from '../util/rng.js';
import { gridVocabulary } from './grid-vocabulary.js';
import { EnvError, show } from './errors.js';
import { validateOptions, type OptionSpec, type ResolvedOptions } from './options.js';

export const KEY_DOOR_ACTIONS = ['Up', 'Down', 'Left', 'Right'] as const;
const DR = [-1, 1, 0, 0];
const DC = [0, 0, -1, 1];

export const KEY_DOOR_OPTIONS: OptionSpec[] = [
  { name: 'size', type: 'integer', default: 6, min: 5, max: 12, doc: 'side of the square board, border walls included' },
  { name: 'wallDensity', type: 'number', default: 0.1, min: 0, max: 0.3, doc: 'fraction of inner cells tried as extra walls (kept only while solvable)' },
  { name: 'map', type: 'stringList', default: null, nullable: true, 
    doc: 'explicit level, rows of # _ P K D G (one P, one K, one D, at least one G); overrides size' },
  { name: 'maxSteps', type: 'integer', default: 100, min: 1, max: 100_000, nullable: true, doc: 'truncate the episode after this many steps (null: never)' },
];

/** The level and where things are: the map keeps walls, floor and goals; the player, key and door are tracked apart. */
export interface KeyDoorState {
  env: 'keydoor';
  options: ResolvedOptions;
  seed: number | null;
  map: string[];               // rows of # _ G (the static level)
  player: [number, number];
  key: [number, number] | null;     // null: picked up (held) or used
  door: [number, number] | null;    // null: opened
  hasKey: boolean;
  steps: number;
  started: boolean;
  terminated: boolean;
  truncated: boolean;
  rng: RngState;
}

interface Level { map: string[]; player: [number, number]; key: [number, number]; door: [number, number] }

/** Read an explicit level (rows of # _ P K D G); throws EnvError naming the row and column of a bad character. */
export function parseKeyDoorMap(rows: string[], where = 'keydoor option "map"'): Level {
  if (rows.length < 3) throw new EnvError('map too small', { where, expected: 'at least 3 rows of # _ P K D G', received: `${rows.length} rows` });
  const width = rows[0].length;
  const found: Record<string, [number, number][]> = { P: [], K: [], D: [], G: [] };
  const map = rows.map((row, r) => {
    if (row.length !== width) {
      throw new EnvError('ragged map', { where: `${where} row ${r + 1}`, expected: `${width} characters`, received: `${row.length} (${show(row)})` });
    }
    return [...row].map((ch, c) => {
      if (!'#_PKDG'.includes(ch)) {
        throw new EnvError('unexpected map character', { where: `${where} row ${r + 1} column ${c + 1}`, expected: 'one of # _ P K D G', received: show(ch) });
      }
      if (ch in found) found[ch].push([r, c]);
      return ch === '#' || ch === 'G' ? ch : '_';
    }).join('');
  });
  if (found.P.length !== 1 || found.K.length !== 1 || found.D.length !== 1 || found.G.length < 1) {
    throw new EnvError('map needs one player, one key, one door and a goal', {
      where, expected: 'exactly one P, one K, one D, at least one G',
      received: `${found.P.length} P, ${found.K.length} K, ${found.D.length} D, ${found.G.length} G`,
    });
  }
  return { map, player: found.P[0], key: found.K[0], door: found.D[0] };
}

/** Shortest plan (BFS over position × key held × door open) from a state to a goal; null when none. */
export function solveKeyDoor(
  map: string[], player: [number, number], key: [number, number] | null, door: [number, number] | null, hasKey: boolean,
): string[] | null {
  const h = map.length; const w = map[0].length;
  const encode = (r: number, c: number, held: boolean, open: boolean) => ((r * w + c) * 2 + (held ? 1 : 0)) * 2 + (open ? 1 : 0);
  const start = encode(player[0], player[1], hasKey, door === null);
  const prev = new Map<number, [number, number]>([[start, [-1, -1]]]);
  const queue = [start];
  for (let q = 0; q < queue.length; q++) {
    const s = queue[q];
    const open = (s & 1) === 1; const held = ((s >> 1) & 1) === 1; const cell = s >> 2;
    const r = Math.floor(cell / w); const c = cell % w;
    if (map[r][c] === 'G') {
      const plan: string[] = [];
      for (let x = s; x !== start; x = prev.get(x)![0]) plan.push(KEY_DOOR_ACTIONS[prev.get(x)![1]]);
      return plan.reverse();
    }
    for (let d = 0; d < 4; d++) {
      const rr = r + DR[d]; const cc = c + DC[d];
      if (rr < 0 || cc < 0 || rr >= h || cc >= w || map[rr][cc] === '#') continue;
      let nextHeld = held; let nextOpen = open;
      if (door && !open && rr === door[0] && cc === door[1]) {
        if (!held) continue;
        nextOpen = true; nextHeld = false;
      }
      if (key && !held && !nextOpen && rr === key[0] && cc === key[1]) nextHeld = true;
      const next = encode(rr, cc, nextHeld, nextOpen);
      if (!prev.has(next)) { prev.set(next, [s, d]); queue.push(next); }
    }
  }
  return null;
}

/**
 * A seeded level: border walls, a dividing wall (a column or a row, at random) with one door, the player and the key on one
 * side, the goal on the other, and extra inner walls kept only while the level stays solvable and the key still matters.
 */
export function generateKeyDoorLevel(rng: Rng, size: number, wallDensity: number): Level {
  const border = (r: number, c: number) => r === 0 || c === 0 || r === size - 1 || c === size - 1;
  const grid: string[][] = Array.from({ length: size }, (_, r) => Array.from({ length: size }, (_, c) => (border(r, c) ? '#' : '_')));
  const vertical = rng.next() < 0.5;
  const split = 2 + rng.int(size - 4);                  // the dividing line, leaving at least one inner line on each side
  const doorAt = 1 + rng.int(size - 2);
  for (let k = 1; k < size - 1; k++) { if (vertical) grid[k][split] = '#'; else grid[split][k] = '#'; }
  const door: [number, number] = vertical ? [doorAt, split] : [split, doorAt];
  grid[door[0]][door[1]] = '_';
  const side = (r: number, c: number) => (vertical ? c < split : r < split);
  const free = (near: boolean) => {
    const cells: [number, number][] = [];
    for (let r = 1; r < size - 1; r++) for (let c = 1; c < size - 1; c++) {
      if (grid[r][c] === '_' && side(r, c) === near && !(r === door[0] && c === door[1])) cells.push([r, c]);
    }
    return cells;
  };
  const pick = (cells: [number, number][]) => cells.splice(rng.int(cells.length), 1)[0];
  const near = free(true);
  const player = pick(near);
  const key = pick(near);
  const goal = pick(free(false));
  grid[goal[0]][goal[1]] = 'G';
  const solvable = () => solveKeyDoor(grid.map((row) => row.join('')), player, key, door, false) !== null;
  const inner: [number, number][] = [];
  for (let r = 1; r < size - 1; r++) for (let c = 1; c < size - 1; c++) if (grid[r][c] === '_') inner.push([r, c]);
  const tries = Math.round(wallDensity * inner.length);
  for (let t = 0; t < tries && inner.length > 0; t++) {
    const [r, c] = pick(inner);
    if ((r === player[0] && c === player[1]) || (r === key[0] && c === key[1]) || (r === door[0] && c === door[1])) continue;
    const adjacentToDoor = Math.abs(r - door[0]) + Math.abs(c - door[1]) === 1;
    if (adjacentToDoor) continue;
    grid[r][c] = '#';
    if (!solvable()) grid[r][c] = '_';
  }
  return { map: grid.map((row) => row.join('')), player, key, door };
}

export class KeyDoorEnv implements Env<string, KeyDoorState> {
  readonly id = 'keydoor';
  private options: ResolvedOptions;
  private rng = new Rng(0);
  private seed: number | null = null;
  private map: string[] = [];
  private player: [number, number] = [0, 0];
  private key: [number, number] | null = null;
  private door: [number, number] | null = null;
  private hasKey = false;
  private steps = 0;
  private started = false;
  private terminated = false;
  private truncated = false;

  constructor(options: Record<string, unknown> = {}) {
    this.options = validateOptions('keydoor', KEY_DOOR_OPTIONS, options);
    if (this.options.map) parseKeyDoorMap(this.options.map as string[]);
  }

  reset(opts: ResetOptions = {}): ResetResult<string> {
    if (opts.options !== undefined) {
      this.options = validateOptions('keydoor', KEY_DOOR_OPTIONS, { ...this.options, ...opts.options });
      if (this.options.map) parseKeyDoorMap(this.options.map as string[]);
    }
    if (opts.seed !== undefined) {
      if (!Number.isInteger(opts.seed)) throw new EnvError('invalid seed', { where: 'keydoor.reset', expected: 'an integer', received: show(opts.seed) });
      this.seed = opts.seed;
      this.rng.seed(opts.seed);
    }
    const o = this.options;
    const level = o.map ? parseKeyDoorMap(o.map as string[]) : generateKeyDoorLevel(this.rng, o.size as number, o.wallDensity as number);
    this.map = level.map;
    this.player = level.player;
    this.key = level.key;
    this.door = level.door;
    this.hasKey = false;
    this.steps = 0;
    this.started = true;
    this.terminated = false;
    this.truncated = false;
    return { observation: this.gridText(), info: this.info(true, false) };
  }

  step(action: string): StepResult<string> {
    if (!this.started) throw new EnvError('step() called before reset()', { where: 'keydoor.step', hint: 'call reset({ seed }) first' });
    if (this.terminated || this.truncated) {
      throw new EnvError(`the episode has ${this.terminated ? 'terminated (goal reached)' : 'been truncated (maxSteps reached)'}`, {
        where: 'keydoor.step', hint: 'call reset() to start a new episode',
      });
    }
    const key = typeof action === 'string' ? action.trim().toLowerCase() : '';
    const d = KEY_DOOR_ACTIONS.findIndex((a) => a.toLowerCase() === key);
    if (d < 0) return { observation: this.gridText(), reward: 0, terminated: false, truncated: false, info: this.info(false, false) };
    const [r, c] = [this.player[0] + DR[d], this.player[1] + DC[d]];
    let effective = false;
    let event: string | null = null;
    const at = (p: [number, number] | null) => p !== null && p[0] === r && p[1] === c;
    if (r >= 0 && c >= 0 && r < this.map.length && c < this.map[0].length && this.map[r][c] !== '#') {
      if (at(this.door)) {
        if (this.hasKey) { this.door = null; this.hasKey = false; event = 'opened the door'; }
      }
      if (!at(this.door)) {
        this.player = [r, c];
        effective = true;
        if (at(this.key)) { this.key = null; this.hasKey = true; event = 'picked up the key'; }
      }
    }
    this.steps++;
    const reward = this.map[this.player[0]][this.player[1]] === 'G' ? 1 : 0;
    this.terminated = reward === 1;
    const maxSteps = this.options.maxSteps as number | null;
    this.truncated = !this.terminated && maxSteps !== null && this.steps >= maxSteps;
    const info = this.info(true, effective);
    info.event = event;
    info.hasKey = this.hasKey;
    return { observation: this.gridText(), reward, terminated: this.terminated, truncated: this.truncated, info };
  }

  private info(valid: boolean, effective: boolean): StepInfo {
    const success = this.started && this.map[this.player[0]]?.[this.player[1]] === 'G';
    return { success, actionIsValid: valid, actionIsEffective: effective, steps: this.steps };
  }

  getState(): KeyDoorState {
    return {
      env: 'keydoor', options: { ...this.options }, seed: this.seed, map: [...this.map], player: [...this.player],
      key: this.key ? [...this.key] : null, door: this.door ? [...this.door] : null, hasKey: this.hasKey, steps: this.steps,
      started: this.started, terminated: this.terminated, truncated: this.truncated, rng: this.rng.getState(),
    };
  }

  setState(state: KeyDoorState): void {
    if (!state || state.env !== 'keydoor' || !Array.isArray(state.map) || !Array.isArray(state.player)) {
      throw new EnvError('invalid state', { where: 'keydoor.setState', expected: 'a state object from KeyDoorEnv.getState()', received: show(state) });
    }
    const [r, c] = state.player;
    if (!Number.isInteger(r) || !Number.isInteger(c) || state.map[r]?.[c] === undefined || state.map[r][c] === '#') {
      throw new EnvError('invalid player cell', { where: 'keydoor.setState', expected: 'a floor or goal cell inside the map', received: show(state.player) });
    }
    this.options = validateOptions('keydoor', KEY_DOOR_OPTIONS, state.options);
    this.seed = state.seed;
    this.map = [...state.map];
    this.player = [r, c];
    this.key = state.key ? [state.key[0], state.key[1]] : null;
    this.door = state.door ? [state.door[0], state.door[1]] : null;
    this.hasKey = state.hasKey;
    this.steps = state.steps;
    this.started = state.started;
    this.terminated = state.terminated;
    this.truncated = state.truncated;
    this.rng.setState(state.rng);
  }

  legalActions(): string[] {
    return [...KEY_DOOR_ACTIONS];
  }

  private kindAt(r: number, c: number): CellKind {
    const here = this.player[0] === r && this.player[1] === c;
    const goal = this.map[r][c] === 'G';
    if (here) return goal ? 'playerOnGoal' : 'player';
    if (this.map[r][c] === '#') return 'wall';
    if (this.key && this.key[0] === r && this.key[1] === c) return 'key';
    if (this.door && this.door[0] === r && this.door[1] === c) return 'door';
    return goal ? 'goal' : 'floor';
  }

  entities(): Entity[] {
    const out: Entity[] = [{ kind: 'player', row: this.player[0], col: this.player[1] }];
    if (this.key) out.push({ kind: 'key', row: this.key[0], col: this.key[1] });
    if (this.door) out.push({ kind: 'door', row: this.door[0], col: this.door[1] });
    this.map.forEach((row, r) => [...row].forEach((ch, c) => {
      if (ch === 'G') out.push({ kind: 'goal', row: r, col: c });
      if (ch === '#') out.push({ kind: 'wall', row: r, col: c });
    }));
    return out;
  }

  board(): Board {
    const cells = this.map.map((row, r) => [...row].map((_, c) => this.kindAt(r, c)));
    return { env: 'keydoor', rows: this.map.length, cols: this.map[0].length, cells };
  }

  gridText(): string {
    const symbol = new Map(KEY_DOOR_VOCABULARY.cells.map((cell) => [cell.kind, cell.symbol]));
    return this.map.map((row, r) => [...row].map((_, c) => symbol.get(this.kindAt(r, c))!).join('')).join('\n');
  }

  /** Plan from the current state (BFS over position × key × door). */
  plan(): string[] | null {
    return solveKeyDoor(this.map, this.player, this.key, this.door, this.hasKey);
  }
}

/** KeyDoor's state vocabulary: cells with their symbols and glyph layers, entity labels of the SPA line (grid-vocabulary.ts). */
export const KEY_DOOR_VOCABULARY = gridVocabulary({
  envId: 'keydoor',
  cells: [
    { kind: 'floor', symbol: '_', label: 'floor', glyphs: ['floor'], entities: [] },
    { kind: 'wall', symbol: '#', label: 'wall', glyphs: ['wall'], entities: ['wall'] },
    { kind: 'key', symbol: 'K', label: 'key', glyphs: ['floor', 'key'], entities: ['key'] },
    { kind: 'door', symbol: 'D', label: 'locked door', glyphs: ['wall', 'door'], entities: ['door'] },
    { kind: 'goal', symbol: 'G', label: 'goal', glyphs: ['floor', 'flag'], entities: ['goal'] },
    { kind: 'player', symbol: 'P', label: 'player', glyphs: ['floor', 'player'], entities: ['player'] },
    { kind: 'playerOnGoal', symbol: '√', label: 'player on goal', glyphs: ['floor', 'flag', 'playerSmall'], entities: ['player', 'goal'] },
  ],
  entities: [
    { kind: 'player', label: 'Player (P)', title: 'Player', jsonKey: 'player', single: true, scored: true },
    { kind: 'key', label: 'key (K)', title: 'Key', jsonKey: 'key', scored: true },
    { kind: 'door', label: 'door (D)', title: 'Door', jsonKey: 'door', scored: true },
    { kind: 'goal', label: 'goal (G)', title: 'Goal', jsonKey: 'goal', scored: true },
    { kind: 'wall', label: 'wall (#)', title: 'Walls', scored: false },
  ],
  spaOrder: ['player', 'key', 'door', 'goal'],
  listingOrder: ['wall', 'key', 'door', 'goal', 'player'],
  relationKinds: ['key', 'door', 'goal'],
  precedence: ['wall', 'door', 'player', 'key', 'goal'],
  fixed: ['wall', 'goal'],
});

export const keyDoorDefinition: EnvDefinition = {
  id: 'keydoor',
  title: 'KeyDoor',
  docs: {
    summary: 'A walled maze split by a wall with one locked door: pick up the key, open the door, reach the goal (MiniGrid DoorKey as a text grid).',
    actions: 'Up, Down, Left, Right (case-insensitive). Walls, and the locked door without the key, block the move (the player stays put).',
    observation: 'Symbol grid, one row per line: # wall, _ floor, P player, K key, D locked door, G goal, √ player on the goal. ' +
      'A picked-up key leaves the board; an opened door becomes floor.',
    rewards: '1 on reaching the goal, 0 otherwise.',
    episodeEnd: 'terminated on the goal; truncated after maxSteps steps.',
    arguments: KEY_DOOR_OPTIONS.map((o) => `${o.name} (default ${JSON.stringify(o.default)}): ${o.doc}`).join('\n'),
  },
  options: KEY_DOOR_OPTIONS,
  actions: [...KEY_DOOR_ACTIONS],
  instruction: 'You are solving the KeyDoor puzzle. Walk onto the key to pick it up, walk into the locked door with the key to open it, ' +
    'then reach the goal. Without the key the door blocks you like a wall.',
  legend: '#: wall, _: floor, P: player, K: key, D: locked door, G: goal, √: player on the goal',
  budget: { maxTurns: 5, maxActionsPerTurn: 5, maxActionsPerGame: 20 },
  vocabulary: KEY_DOOR_VOCABULARY,
  rules: () => 'Pick up K, open D with it, reach G.',
  create: (options) => new KeyDoorEnv(options),
  solve: (env) => {
    const plan = (env as KeyDoorEnv).plan();
    return { solved: plan !== null, actions: plan ?? [], optimal: plan !== null, note: 'BFS over position × key held × door open' };
  },
  levelOptions: (text) => ({ map: text.split(/\r?\n/).map((s) => s.trim()).filter((s) => s.length > 0 && !s.startsWith(';')) }),
};
