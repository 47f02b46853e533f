// FrozenLake with Gymnasium semantics (frozen_lake.py), plus RAGEN's random start and goal.
//
// ## Actions
// `Left`, `Down`, `Right`, `Up` (Gymnasium's order 0..3; case-insensitive). With isSlippery the
// move goes the intended way with probability successRate (default 1/3) and to each
// perpendicular side with (1 − successRate)/2. Moving off the edge stays put.
// An unknown action name changes nothing (info.actionIsValid = false). A slippery move reports
// info.slipped, info.movedDirection (the executed move) and, when it slipped, info.intendedBoard
// (the board the intended move would have given).
// ## Observation
// The symbol grid as a string, one row per line: `P` player, `_` frozen (also the start tile),
// `O` hole, `G` goal, `X` player in a hole, `√` player on the goal (the RAGEN/SPA rendering).
// ## Rewards
// 1 on reaching the goal, 0 otherwise; with progressReward c > 0 each effective move adds c·(d(s) − d(s')), d the shortest
// path (moves over non-hole tiles) to the goal, and a fall into a hole adds −c (potential-based shaping, Ng, Harada &
// Russell 1999, with Φ = −c·d; the fall is scored as a step away). Success (info.success) is unchanged.
// ## Episode end
// terminated on a hole or the goal; truncated after `maxSteps` steps (Gymnasium's TimeLimit:
// 100 for 4x4). Stepping an ended episode throws.
// ## Arguments
// size (2..16, default 4), p (probability a tile is frozen, 0.8), isSlippery (true), successRate
// (1/3), randomStartGoal (RAGEN: random start and goal, false), map (explicit rows of S F H G), maxSteps.
import type { Board, CellKind } from '../api/records.js';
import type { Entity, Env, EnvDefinition, ResetOptions, ResetResult, StepInfo, StepResult } from './types.js';
import { Rng, type RngState } from '../util/rng.js';
import { gridVocabulary } from './grid-vocabulary.js';
import { EnvError, show } from './errors.js';
import { validateOptions, type OptionSpec, type ResolvedOptions } from './options.js';

export const FROZEN_LAKE_ACTIONS = ['Left', 'Down', 'Right', 'Up'] as const;
const DR = [0, 1, 0, -1];
const DC = [-1, 0, 1, 0];

export const FROZEN_LAKE_OPTIONS: OptionSpec[] = [
  { name: 'size', type: 'integer', default: 4, min: 2, max: 16, doc: 'side of the square map' },
  {
    name: 'p', type: 'number', default: 0.8, min: 0.05, max: 1,
    doc: 'probability that a tile is frozen (else a hole); maps are resampled until a path exists',
  },
  { name: 'isSlippery', type: 'boolean', default: true, doc: 'moves may slip to a perpendicular direction' },
  { name: 'successRate', type: 'number', default: 1 / 3, min: 0, max: 1, doc: 'probability that a slippery move goes the intended way (Gymnasium: 1/3)' },
  { name: 'randomStartGoal', type: 'boolean', default: false, doc: 'RAGEN variant: start and goal at random distinct frozen cells instead of the corners' },
  { name: 'map', type: 'stringList', default: null, nullable: true, doc: 'explicit map, rows of S (start) F (frozen) H (hole) G (goal); overrides size and p' },
  {
    name: 'goalDistance', type: 'integer', default: null, min: 1, max: 30, nullable: true,
    doc: 'with randomStartGoal: the goal at this many moves (Manhattan distance) from the start; ' +
      '1 with p 1 and maxSteps 1 is a 4-armed contextual bandit (null: anywhere)',
  },
  {
    name: 'progressReward', type: 'number', default: 0, min: 0, max: 1,
    doc: 'per-move shaping c: + c for a move that shortens the shortest path to the goal, − c for one that lengthens it or ' +
      'falls in a hole, 0 against an edge (potential-based, Ng et al. 1999; Φ = −c × path length); 0 = the sparse reward; ' +
      'success is unchanged',
  },
  { name: 'maxSteps', type: 'integer', default: 100, min: 1, max: 100_000, nullable: true, doc: 'truncate the episode after this many steps (null: never)' },
];

export interface FrozenLakeState {
  env: 'frozenlake';
  options: ResolvedOptions;
  seed: number | null;
  map: string[];          // rows of S F H G
  player: number;         // cell index
  steps: number;
  started: boolean;
  terminated: boolean;
  truncated: boolean;
  lastSlip: string | null;
  rng: RngState;
}

/** Is there a path of non-hole tiles from start to goal (4-neighbourhood)? */
export function hasPath(map: string[]): boolean {
  const size = map.length;
  const width = map[0].length;
  let start = -1;
  for (let r = 0; r < size; r++) for (let c = 0; c < width; c++) if (map[r][c] === 'S') start = r * width + c;
  if (start < 0) return false;
  const seen = new Set<number>([start]);
  const stack = [start];
  while (stack.length > 0) {
    const i = stack.pop()!;
    const r = Math.floor(i / width);
    const c = i % width;
    if (map[r][c] === 'G') return true;
    for (let d = 0; d < 4; d++) {
      const rr = r + DR[d]; const cc = c + DC[d];
      if (rr < 0 || cc < 0 || rr >= size || cc >= width) continue;
      const j = rr * width + cc;
      if (!seen.has(j) && map[rr][cc] !== 'H') { seen.add(j); stack.push(j); }
    }
  }
  return false;
}

/** Gymnasium's generate_random_map, optionally with RAGEN's random start and goal. */
export function generateFrozenLakeMap(rng: Rng, size: number, p: number, randomStartGoal: boolean, goalDistance: number | null = null): string[] {
  for (let attempt = 0; attempt < 100000; attempt++) {
    const cells: string[][] = [];
    for (let r = 0; r < size; r++) {
      const row: string[] = [];
      for (let c = 0; c < size; c++) row.push(rng.next() < p ? 'F' : 'H');
      cells.push(row);
    }
    if (randomStartGoal) {
      const start = rng.int(size * size);
      let goal: number;
      if (goalDistance !== null) {
        // the cells at goalDistance moves from the start (none: draw the map again)
        const at = Array.from({ length: size * size }, (_, i) => i)
          .filter((i) => Math.abs(Math.floor(i / size) - Math.floor(start / size)) + Math.abs((i % size) - (start % size)) === goalDistance);
        if (at.length === 0) continue;
        goal = at[rng.int(at.length)]!;
      } else {
        goal = rng.int(size * size - 1);
        if (goal >= start) goal++;
      }
      cells[Math.floor(start / size)][start % size] = 'S';
      cells[Math.floor(goal / size)][goal % size] = 'G';
    } else {
      cells[0][0] = 'S';
      cells[size - 1][size - 1] = 'G';
    }
    const map = cells.map((row) => row.join(''));
    if (hasPath(map)) return map;
  }
  throw new EnvError('could not generate a FrozenLake map with a path', {
    where: `frozenlake size ${size}`,
    expected: 'a map with a path from S to G',
    received: `none with p = ${p}`,
    hint: 'raise p',
  });
}

export function checkMap(map: string[], where = 'frozenlake option "map"'): void {
  if (map.length < 1) throw new EnvError('empty map', { where, expected: 'rows of S F H G', received: '[]' });
  const width = map[0].length;
  let starts = 0;
  let goals = 0;
  map.forEach((row, r) => {
    if (row.length !== width)
      throw new EnvError('ragged map', { where: `${where} row ${r + 1}`, expected: `${width} characters`, received: `${row.length} (${show(row)})` });
    [...row].forEach((ch, c) => {
      if (!'SFHG'.includes(ch))
        throw new EnvError('unexpected map character', {
          where: `${where} row ${r + 1} column ${c + 1}`,
          expected: 'one of S F H G',
          received: show(ch),
        });
      if (ch === 'S') starts++;
      if (ch === 'G') goals++;
    });
  });
  if (starts !== 1 || goals < 1)
    throw new EnvError('map needs one start and a goal', {
      where,
      expected: 'exactly one S and at least one G',
      received: `${starts} S and ${goals} G`,
    });
}

export class FrozenLakeEnv implements Env<string, FrozenLakeState> {
  readonly id = 'frozenlake';
  private options: ResolvedOptions;
  private rng = new Rng(0);
  private seed: number | null = null;
  private map: string[] = [];
  private player = 0;
  private steps = 0;
  private started = false;
  private terminated = false;
  private truncated = false;
  private lastSlip: string | null = null;

  constructor(options: Record<string, unknown> = {}) {
    this.options = validateOptions('frozenlake', FROZEN_LAKE_OPTIONS, options);
    if (this.options.map) checkMap(this.options.map as string[]);
  }

  reset(opts: ResetOptions = {}): ResetResult<string> {
    if (opts.options !== undefined) {
      this.options = validateOptions('frozenlake', FROZEN_LAKE_OPTIONS, { ...this.options, ...opts.options });
      if (this.options.map) checkMap(this.options.map as string[]);
    }
    if (opts.seed !== undefined) {
      if (!Number.isInteger(opts.seed)) throw new EnvError('invalid seed', { where: 'frozenlake.reset', expected: 'an integer', received: show(opts.seed) });
      this.seed = opts.seed;
      this.rng.seed(opts.seed);
    }
    const o = this.options;
    this.map = o.map ? [...(o.map as string[])]
      : generateFrozenLakeMap(this.rng, o.size as number, o.p as number, o.randomStartGoal as boolean, (o.goalDistance as number | null) ?? null);
    this.player = this.find('S');
    this.steps = 0;
    this.started = true;
    this.terminated = false;
    this.truncated = false;
    this.lastSlip = null;
    return { observation: this.gridText(), info: this.info(true, false) };
  }

  private get width(): number { return this.map[0]?.length ?? 0; }

  private find(ch: string): number {
    for (let r = 0; r < this.map.length; r++) { const c = this.map[r].indexOf(ch); if (c >= 0) return r * this.width + c; }
    return -1;
  }

  private tile(i: number): string {
    return this.map[Math.floor(i / this.width)][i % this.width];
  }

  step(action: string): StepResult<string> {
    if (!this.started) throw new EnvError('step() called before reset()', { where: 'frozenlake.step', hint: 'call reset({ seed }) first' });
    if (this.terminated || this.truncated) {
      throw new EnvError(`the episode has ${this.terminated ? 'terminated (hole or goal reached)' : 'been truncated (maxSteps reached)'}`, {
        where: 'frozenlake.step',
        hint: 'call reset() to start a new episode',
      });
    }
    const key = typeof action === 'string' ? action.trim().toLowerCase() : '';
    const intended = FROZEN_LAKE_ACTIONS.findIndex((a) => a.toLowerCase() === key);
    if (intended < 0) {
      return { observation: this.gridText(), reward: 0, terminated: false, truncated: false, info: this.info(false, false) };
    }
    let direction = intended;
    if (this.options.isSlippery) {
      // Gymnasium: outcomes [(a-1)%4, a, (a+1)%4]; intended with successRate, each side with (1-successRate)/2.
      const success = this.options.successRate as number;
      const u = this.rng.next();
      if (u < success) direction = intended;
      else if (u < success + (1 - success) / 2) direction = (intended + 3) % 4;
      else direction = (intended + 1) % 4;
    }
    this.lastSlip = direction === intended ? null : FROZEN_LAKE_ACTIONS[direction];
    const r = Math.floor(this.player / this.width);
    const c = this.player % this.width;
    const rr = Math.min(Math.max(r + DR[direction], 0), this.map.length - 1);
    const cc = Math.min(Math.max(c + DC[direction], 0), this.width - 1);
    const next = rr * this.width + cc;
    const effective = next !== this.player;
    const shaping = this.progressShaping(this.player, next);
    this.player = next;
    const tile = this.tile(next);
    const reward = (tile === 'G' ? 1 : 0) + shaping;
    this.steps++;
    this.terminated = tile === 'G' || tile === 'H';
    const maxSteps = this.options.maxSteps as number | null;
    this.truncated = !this.terminated && maxSteps !== null && this.steps >= maxSteps;
    const info = this.info(true, effective);
    info.movedDirection = FROZEN_LAKE_ACTIONS[direction];
    info.slipped = direction !== intended;
    if (direction !== intended) {
      // the lake slipped: the board the intended move would have given (what a model that knows the rules predicts;
      // the UI scores a prediction against it as well as against the truth)
      const ir = Math.min(Math.max(r + DR[intended], 0), this.map.length - 1);
      const ic = Math.min(Math.max(c + DC[intended], 0), this.width - 1);
      const executedCell = this.player;
      this.player = ir * this.width + ic;
      info.intendedBoard = this.board();
      this.player = executedCell;
    }
    return { observation: this.gridText(), reward, terminated: this.terminated, truncated: this.truncated, info };
  }

  /** progressReward's term for a move from cell `from` to cell `to` (0 when the option is 0 or the move changed nothing). */
  private progressShaping(from: number, to: number): number {
    const c = this.options.progressReward as number;
    if (!(c > 0) || from === to) return 0;
    if (this.tile(to) === 'H') return -c;
    const pathLength = (cell: number) => solveFrozenLake(this.map, [Math.floor(cell / this.width), cell % this.width])?.length;
    const before = pathLength(from), after = pathLength(to);
    return before === undefined || after === undefined ? 0 : c * (before - after);
  }

  private info(valid: boolean, effective: boolean): StepInfo {
    return { success: this.started && this.tile(this.player) === 'G', actionIsValid: valid, actionIsEffective: effective, steps: this.steps };
  }

  getState(): FrozenLakeState {
    return {
      env: 'frozenlake', options: { ...this.options }, seed: this.seed, map: [...this.map], player: this.player, steps: this.steps,
      started: this.started, terminated: this.terminated, truncated: this.truncated, lastSlip: this.lastSlip, rng: this.rng.getState(),
    };
  }

  setState(state: FrozenLakeState): void {
    if (!state || state.env !== 'frozenlake' || !Array.isArray(state.map)) {
      throw new EnvError('invalid state', { where: 'frozenlake.setState', expected: 'a state object from FrozenLakeEnv.getState()', received: show(state) });
    }
    checkMap(state.map, 'frozenlake.setState map');
    const n = state.map.length * state.map[0].length;
    if (!Number.isInteger(state.player) || state.player < 0 || state.player >= n) {
      throw new EnvError('invalid player cell', { where: 'frozenlake.setState', expected: `0..${n - 1}`, received: show(state.player) });
    }
    this.options = validateOptions('frozenlake', FROZEN_LAKE_OPTIONS, state.options);
    this.seed = state.seed;
    this.map = [...state.map];
    this.player = state.player;
    this.steps = state.steps;
    this.started = state.started;
    this.terminated = state.terminated;
    this.truncated = state.truncated;
    this.lastSlip = state.lastSlip;
    this.rng.setState(state.rng);
  }

  legalActions(): string[] {
    return [...FROZEN_LAKE_ACTIONS];
  }

  entities(): Entity[] {
    const out: Entity[] = [];
    const w = this.width;
    out.push({ kind: 'player', row: Math.floor(this.player / w), col: this.player % w });
    const goals: Entity[] = [];
    for (let r = 0; r < this.map.length; r++) for (let c = 0; c < w; c++) {
      if (this.map[r][c] === 'H') out.push({ kind: 'hole', row: r, col: c });
      if (this.map[r][c] === 'G') goals.push({ kind: 'goal', row: r, col: c });
    }
    return [...out, ...goals];
  }

  board(): Board {
    const cells: CellKind[][] = this.map.map((row, r) => [...row].map((ch, c): CellKind => {
      const here = r * this.width + c === this.player;
      if (ch === 'H') return here ? 'playerInHole' : 'hole';
      if (ch === 'G') return here ? 'playerOnGoal' : 'goal';
      return here ? 'player' : 'frozen';
    }));
    return { env: 'frozenlake', rows: this.map.length, cols: this.width, cells };
  }

  gridText(): string {
    return this.map.map((row, r) => [...row].map((ch, c) => {
      const here = r * this.width + c === this.player;
      if (ch === 'H') return here ? 'X' : 'O';
      if (ch === 'G') return here ? '√' : 'G';
      return here ? 'P' : '_';
    }).join('')).join('\n');
  }

  /** The map as rows of S F H G. */
  currentMap(): string[] {
    return [...this.map];
  }

  /** Player cell as [row, col]. */
  playerPosition(): [number, number] {
    return [Math.floor(this.player / this.width), this.player % this.width];
  }
}

/** Shortest path on the non-slippery map from the player's cell to a goal (BFS); null if none. */
export function solveFrozenLake(map: string[], from: [number, number]): string[] | null {
  const h = map.length;
  const w = map[0].length;
  const start = from[0] * w + from[1];
  const prev = new Map<number, [number, number]>([[start, [-1, -1]]]);
  const queue = [start];
  for (let q = 0; q < queue.length; q++) {
    const i = queue[q];
    const r = Math.floor(i / w);
    const c = i % w;
    if (map[r][c] === 'G') {
      const plan: string[] = [];
      for (let s = i; s !== start; s = prev.get(s)![0]) plan.push(FROZEN_LAKE_ACTIONS[prev.get(s)![1]]);
      return plan.reverse();
    }
    if (map[r][c] === 'H') continue;
    for (let d = 0; d < 4; d++) {
      const rr = r + DR[d]; const cc = c + DC[d];
      if (rr < 0 || cc < 0 || rr >= h || cc >= w) continue;
      const j = rr * w + cc;
      if (!prev.has(j) && map[rr][cc] !== 'H') { prev.set(j, [i, d]); queue.push(j); }
    }
  }
  return null;
}

/** FrozenLake's state vocabulary: cells with their RAGEN/SPA symbols, entity labels of the SPA line (core/envs/grid-vocabulary.ts). */
export const FROZEN_LAKE_VOCABULARY = gridVocabulary({
  envId: 'frozenlake',
  cells: [
    { kind: 'frozen', symbol: '_', label: 'frozen', glyphs: ['ice'], entities: [] },
    { kind: 'hole', symbol: 'O', label: 'hole', glyphs: ['ice', 'hole'], entities: ['hole'] },
    { kind: 'goal', symbol: 'G', label: 'goal', glyphs: ['ice', 'flag'], entities: ['goal'] },
    { kind: 'player', symbol: 'P', label: 'player', glyphs: ['ice', 'player'], entities: ['player'] },
    { kind: 'playerInHole', symbol: 'X', label: 'player in hole', glyphs: ['ice', 'hole', 'player', 'cross'], entities: ['player', 'hole'] },
    { kind: 'playerOnGoal', symbol: '√', label: 'player on goal', glyphs: ['ice', 'flag', 'playerSmall'], entities: ['player', 'goal'] },
  ],
  entities: [
    { kind: 'player', label: 'Player (P)', title: 'Player', jsonKey: 'player', single: true, scored: true },
    { kind: 'hole', label: 'hole (O)', title: 'Holes', jsonKey: 'holes', scored: true },
    { kind: 'goal', label: 'goal (G)', title: 'Goal', jsonKey: 'goal', scored: true },
  ],
  spaOrder: ['player', 'hole', 'goal'],
  listingOrder: ['hole', 'goal', 'player'],
  relationKinds: ['hole', 'goal'],
  precedence: ['player', 'hole', 'goal'],
  fixed: ['hole', 'goal'],
});

export const frozenLakeDefinition: EnvDefinition = {
  id: 'frozenlake',
  title: 'FrozenLake',
  docs: {
    summary: 'Walk from the start to the goal over frozen tiles without falling into a hole (Gymnasium FrozenLake; RAGEN random start/goal as an option).',
    actions: 'Left, Down, Right, Up (case-insensitive). Slippery: the intended move with probability successRate (1/3), else one of the two ' +
      'perpendicular moves. Off-edge moves stay put.',
    observation: 'Symbol grid, one row per line: P player, _ frozen, O hole, G goal, X player in a hole, √ player on the goal.',
    rewards: '1 on reaching the goal, 0 otherwise.',
    episodeEnd: 'terminated on a hole or the goal; truncated after maxSteps steps.',
    arguments: FROZEN_LAKE_OPTIONS.map((o) => `${o.name} (default ${JSON.stringify(o.default)}): ${o.doc}`).join('\n'),
  },
  options: FROZEN_LAKE_OPTIONS,
  actions: [...FROZEN_LAKE_ACTIONS],
  instruction: 'You are solving the FrozenLake puzzle. Avoid the holes and walk to the goal. You may move in an unintended direction because the ' +
    'ice is slippery.',
  legend: 'P: player, _: frozen, O: hole, G: goal, X: player in a hole, √: player on the goal',
  // "moves may slip" only where they can: not on the deterministic lake (isSlippery false, or successRate 1)
  rules: (env) => {
    const o = (env.getState() as FrozenLakeState).options;
    return `Reach G, avoid O${o.isSlippery && (o.successRate as number) < 1 ? '; moves may slip' : ''}.`;
  },
  budget: { maxTurns: 5, maxActionsPerTurn: 5, maxActionsPerGame: 10 },
  vocabulary: FROZEN_LAKE_VOCABULARY,
  create: (options) => new FrozenLakeEnv(options),
  solve: (env) => {
    const lake = env as FrozenLakeEnv;
    const plan = solveFrozenLake(lake.currentMap(), lake.playerPosition());
    return { solved: plan !== null, actions: plan ?? [], optimal: plan !== null, note: 'BFS on the non-slippery map (a slippery lake may still deviate)' };
  },
  levelOptions: (text) => ({ map: text.split(/\r?\n/).map((s) => s.trim()).filter((s) => s.length > 0 && !s.startsWith(';')) }),
};

/** What the intended move of one action lands on: `G` the goal, `O` a hole, `_` ice, `#` the edge (the player stays). */
export type LookaheadCell = 'G' | 'O' | '_' | '#';

/** The one env whose boards the one-step lookahead reads (selfplay.lookahead, drillLookahead; the run config refuses others). */
export const LOOKAHEAD_ENV_ID = 'frozenlake';

/** One action's one-step lookahead: the cell its intended move lands on, and whether it brings the player nearer the goal. */
export interface LookaheadOutcome { action: string; cell: LookaheadCell; closer: boolean }

/**
 * The one-step lookahead of a FrozenLake board (ours, issue 34; not in the paper): for each action in Gymnasium's order, the
 * cell the intended (non-slipping) move lands on and whether it lowers the Manhattan distance to the goal. Reads only the
 * board: `player` and `goal` cells must be present (an ended episode, X or √, has no next move). Throws on another env's board.
 */
export function frozenLakeLookahead(board: Board): LookaheadOutcome[] {
  if (board.env !== 'frozenlake')
    throw new EnvError('the lookahead reply is defined for FrozenLake only',
      { where: 'frozenLakeLookahead', expected: 'a frozenlake board', received: show(board.env) });
  const find = (kind: CellKind): [number, number] | null => {
    for (let r = 0; r < board.rows; r++) for (let c = 0; c < board.cols; c++) if (board.cells[r]![c] === kind) return [r, c];
    return null;
  };
  const player = find('player');
  const goal = find('goal');
  if (!player || !goal) {
    throw new EnvError('no next move to look ahead from (an ended episode: the player is in a hole or on the goal)',
      { where: 'frozenLakeLookahead', expected: 'a board with a player on ice and a goal', received: player ? 'no goal cell' : 'no player on ice' });
  }
  const distance = (r: number, c: number) => Math.abs(r - goal[0]) + Math.abs(c - goal[1]);
  return FROZEN_LAKE_ACTIONS.map((action, d) => {
    const r = player[0] + DR[d]!, c = player[1] + DC[d]!;
    if (r < 0 || c < 0 || r >= board.rows || c >= board.cols) return { action, cell: '#', closer: false };
    const kind = board.cells[r]![c];
    const cell: LookaheadCell = kind === 'goal' ? 'G' : kind === 'hole' ? 'O' : '_';
    return { action, cell, closer: cell !== 'O' && distance(r, c) < distance(player[0], player[1]) };
  });
}

/**
 * The lookahead reply's decision rule (ours, issue 34; the paper's policy is learned, not scripted): reach the goal, else an ice
 * move that brings the player nearer the goal, else any ice move, else stay (the edge), else a hole; ties uniformly at random
 * (`next` returns uniform [0, 1) numbers). A one-step rule on the true next states, used only to label SFT rows.
 */
export function lookaheadChoice(outcomes: readonly LookaheadOutcome[], next: () => number): string {
  const rank = (o: LookaheadOutcome) => (o.cell === 'G' ? 0 : o.cell === '_' ? (o.closer ? 1 : 2) : o.cell === '#' ? 3 : 4);
  if (outcomes.length === 0) throw new Error('lookaheadChoice: expected at least one outcome');
  const best = Math.min(...outcomes.map(rank));
  const tied = outcomes.filter((o) => rank(o) === best);
  return tied[Math.min(tied.length - 1, Math.floor(next() * tied.length))]!.action;
}
