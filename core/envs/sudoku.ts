// Sudoku (4x4 and 9x9): fill the empty cells so each row, column and box holds every digit once.
//
// ## Actions
// `row,col,value`, one-based (e.g. `1,3,4`); spaces and surrounding parentheses are tolerated.
// legalActions() lists every such move on a non-given cell. A move on a given cell, out of range,
// or one that conflicts with its row, column or box leaves the board unchanged
// (info.actionIsEffective = false, info.illegal = true). Filled (non-given) cells may be overwritten.
// ## Observation
// One line, each row opened by `| `, empty cells `.`, e.g. `| . 1 2 4 | 4 2 1 3 | 2 3 4 1 | . 4 . 2`.
// ## Rewards
// 1 when the board is complete and correct, else 0.
// ## Episode end
// terminated when the board is complete and correct; truncated after `maxSteps` moves.
// ## Arguments
// size (4 or 9), difficulty (easy | medium | hard → clue count: 4x4 10 / 9 / 6, 9x9 40 / 32 / 28),
// clues (explicit clue count), puzzle (explicit puzzle text), maxSteps.
import type { Board, CellKind } from '../api/records.js';
import type { Entity, Env, EnvDefinition, ResetOptions, ResetResult, StepInfo, StepResult } from './types.js';
import { Rng, type RngState } from '../util/rng.js';
import { SUDOKU_VOCABULARY } from './sudoku-text.js';
import { EnvError, show } from './errors.js';
import { validateOptions, type OptionSpec, type ResolvedOptions } from './options.js';
import { canPlace, carvePuzzle, countSolutions, randomSolution, solveSudoku } from './sudoku-solver.js';

export const SUDOKU_CLUES: Record<number, Record<string, number>> = {
  4: { easy: 10, medium: 9, hard: 6 },
  9: { easy: 40, medium: 32, hard: 28 },
};

export const SUDOKU_OPTIONS: OptionSpec[] = [
  { name: 'size', type: 'enum', values: [4, 9], default: 4, doc: 'side of the board: 4 (2x2 boxes) or 9 (3x3 boxes)' },
  {
    name: 'difficulty', type: 'enum', values: ['easy', 'medium', 'hard'], default: 'easy',
    doc: 'clue count: 4x4 easy 10, medium 9, hard 6; 9x9 easy 40, medium 32, hard 28',
  },
  { name: 'clues', type: 'integer', default: null, min: 0, max: 81, nullable: true, doc: 'explicit number of clues (overrides difficulty)' },
  { name: 'maxGenerationAttempts', type: 'integer', default: 20, min: 1, max: 200, doc: 'solutions tried before a clue count is reported as unreachable' },
  {
    name: 'puzzle', type: 'string', default: null, nullable: true,
    doc: 'explicit puzzle: 16 or 81 cells of digits and . or 0 (spaces, | and newlines ignored)',
  },
  { name: 'maxSteps', type: 'integer', default: 100, min: 1, max: 100_000, nullable: true, doc: 'truncate the episode after this many moves (null: never)' },
];

export interface SudokuState {
  env: 'sudoku';
  options: ResolvedOptions;
  seed: number | null;
  size: number;
  givens: number[];       // puzzle clues, 0 = empty
  values: number[];       // current board, 0 = empty
  steps: number;
  started: boolean;
  terminated: boolean;
  truncated: boolean;
  rng: RngState;
}

/** Parse puzzle text (digits and . or 0; spaces, | and newlines ignored) into cells. */
export function parseSudokuText(text: string, where = 'sudoku puzzle'): { size: number; cells: number[] } {
  const chars = [...text].filter((ch) => !/[\s|]/.test(ch));
  const size = chars.length === 16 ? 4 : chars.length === 81 ? 9 : 0;
  if (size === 0)
    throw new EnvError('wrong number of cells', {
      where,
      expected: '16 (4x4) or 81 (9x9) cells of digits and . or 0',
      received: `${chars.length} cells`,
    });
  const cells = chars.map((ch, i) => {
    if (ch === '.' || ch === '0' || ch === '_') return 0;
    const v = Number(ch);
    if (!Number.isInteger(v) || v < 1 || v > size) {
      throw new EnvError('invalid cell', {
        where: `${where} cell ${i + 1} (row ${Math.floor(i / size) + 1}, column ${(i % size) + 1})`,
        expected: `a digit 1..${size} or .`,
        received: show(ch),
      });
    }
    return v;
  });
  return { size, cells };
}

/** The first pair of givens that share a row, column or box with the same digit, described; null when none. */
export function givenConflict(cells: readonly number[], size: number): string | null {
  const box = Math.sqrt(size);
  const units: [string, (i: number) => number][] = [
    ['row', (i) => Math.floor(i / size)], ['column', (i) => i % size],
    ['box', (i) => Math.floor(Math.floor(i / size) / box) * box + Math.floor((i % size) / box)],
  ];
  for (const [unit, of] of units) {
    const seen = new Map<string, number>();
    for (let i = 0; i < cells.length; i++) {
      if (!cells[i]) continue;
      const key = `${of(i)}:${cells[i]}`;
      const j = seen.get(key);
      if (j !== undefined) return `digit ${cells[i]} twice in ${unit} ${of(i) + 1}: (${Math.floor(j / size) + 1},${(j % size) + 1}) and ` +
        `(${Math.floor(i / size) + 1},${(i % size) + 1})`;
      seen.set(key, i);
    }
  }
  return null;
}

/** The SPA one-line board: `| . 1 2 4 | 4 2 1 3 | ...`. */
export function sudokuLine(values: readonly number[], size: number): string {
  const rows: string[] = [];
  for (let r = 0; r < size; r++) rows.push(`| ${values.slice(r * size, r * size + size).map((v) => (v === 0 ? '.' : String(v))).join(' ')}`);
  return rows.join(' ');
}

const MOVE = /^\(?\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)?$/;

export class SudokuEnv implements Env<string, SudokuState> {
  readonly id = 'sudoku';
  private options: ResolvedOptions;
  private rng = new Rng(0);
  private seed: number | null = null;
  private size = 4;
  private givens: number[] = [];
  private values: number[] = [];
  private steps = 0;
  private started = false;
  private terminated = false;
  private truncated = false;

  constructor(options: Record<string, unknown> = {}) {
    this.options = validateOptions('sudoku', SUDOKU_OPTIONS, options);
    this.checkOptions();
  }

  private checkOptions(): void {
    const o = this.options;
    if (o.puzzle !== null) parseSudokuText(o.puzzle as string, 'sudoku option "puzzle"');
    const size = o.size as number;
    if (o.clues !== null && ((o.clues as number) < 1 || (o.clues as number) > size * size)) {
      throw new EnvError('invalid clue count', {
        where: 'env "sudoku" option "clues"',
        expected: `1..${size * size} for a ${size}x${size} board`,
        received: String(o.clues),
      });
    }
  }

  reset(opts: ResetOptions = {}): ResetResult<string> {
    if (opts.options !== undefined) {
      this.options = validateOptions('sudoku', SUDOKU_OPTIONS, { ...this.options, ...opts.options });
      this.checkOptions();
    }
    if (opts.seed !== undefined) {
      if (!Number.isInteger(opts.seed)) throw new EnvError('invalid seed', { where: 'sudoku.reset', expected: 'an integer', received: show(opts.seed) });
      this.seed = opts.seed;
      this.rng.seed(opts.seed);
    }
    const o = this.options;
    if (o.puzzle !== null) {
      const { size, cells } = parseSudokuText(o.puzzle as string, 'sudoku option "puzzle"');
      const clash = givenConflict(cells, size);
      if (clash)
        throw new EnvError('givens conflict', {
          where: 'sudoku option "puzzle"',
          expected: 'each digit at most once per row, column and box',
          received: clash,
        });
      if (solveSudoku(cells, size) === null) {
        throw new EnvError('puzzle has no solution', { where: 'sudoku option "puzzle"', expected: 'a solvable puzzle', received: sudokuLine(cells, size) });
      }
      this.size = size;
      this.givens = cells;
    } else {
      this.size = o.size as number;
      const target = (o.clues as number | null) ?? SUDOKU_CLUES[this.size][o.difficulty as string];
      let best: number[] | null = null;
      let bestClues = Infinity;
      for (let a = 0; a < (o.maxGenerationAttempts as number) && bestClues > target; a++) {
        const solution = randomSolution(this.rng, this.size);
        const carved = carvePuzzle(this.rng, solution, this.size, target);
        if (carved.clues < bestClues) { best = carved.puzzle; bestClues = carved.clues; }
      }
      if (bestClues > target) {
        throw new EnvError('clue count not reached', {
          where: `sudoku ${this.size}x${this.size}`, expected: `a unique-solution puzzle with ${target} clues`,
          received: `at best ${bestClues} clues in ${o.maxGenerationAttempts} attempts`, hint: 'ask for more clues or raise maxGenerationAttempts',
        });
      }
      this.givens = best!;
    }
    this.values = [...this.givens];
    this.steps = 0;
    this.started = true;
    this.terminated = false;
    this.truncated = false;
    return { observation: this.gridText(), info: this.info(true, false, false) };
  }

  /** Parse a move `row,col,value` (one-based) into zero-based parts, or null when malformed/out of range. */
  parseMove(action: string): { row: number; col: number; value: number } | null {
    const m = typeof action === 'string' ? MOVE.exec(action.trim()) : null;
    if (!m) return null;
    const row = Number(m[1]) - 1;
    const col = Number(m[2]) - 1;
    const value = Number(m[3]);
    if (row < 0 || col < 0 || row >= this.size || col >= this.size || value < 1 || value > this.size) return null;
    return { row, col, value };
  }

  step(action: string): StepResult<string> {
    if (!this.started) throw new EnvError('step() called before reset()', { where: 'sudoku.step', hint: 'call reset({ seed }) first' });
    if (this.terminated || this.truncated) {
      throw new EnvError(`the episode has ${this.terminated ? 'terminated (solved)' : 'been truncated (maxSteps reached)'}`, {
        where: 'sudoku.step',
        hint: 'call reset() to start a new episode',
      });
    }
    const move = this.parseMove(action);
    if (move === null) {
      return { observation: this.gridText(), reward: 0, terminated: false, truncated: false, info: this.info(false, false, true) };
    }
    const i = move.row * this.size + move.col;
    let effective = false;
    let illegal = true;
    let reason = '';
    if (this.givens[i] !== 0) reason = 'the cell is a given clue';
    else if (!canPlace(this.values, this.size, i, move.value)) reason = 'the value conflicts with its row, column or box';
    else {
      illegal = false;
      effective = this.values[i] !== move.value;
      this.values[i] = move.value;
    }
    this.steps++;
    const solved = this.isSolved();
    this.terminated = solved;
    const maxSteps = this.options.maxSteps as number | null;
    this.truncated = !solved && maxSteps !== null && this.steps >= maxSteps;
    const info = this.info(true, effective, illegal);
    if (reason) info.reason = reason;
    return { observation: this.gridText(), reward: solved ? 1 : 0, terminated: this.terminated, truncated: this.truncated, info };
  }

  private isSolved(): boolean {
    for (let i = 0; i < this.values.length; i++) {
      if (this.values[i] === 0 || !canPlace(this.values, this.size, i, this.values[i])) return false;
    }
    return this.values.length > 0;
  }

  private info(valid: boolean, effective: boolean, illegal: boolean): StepInfo {
    return {
      success: this.isSolved(),
      actionIsValid: valid,
      actionIsEffective: effective,
      illegal,
      steps: this.steps,
      emptyCells: this.values.filter((v) => v === 0).length,
    };
  }

  getState(): SudokuState {
    return {
      env: 'sudoku', options: { ...this.options }, seed: this.seed, size: this.size, givens: [...this.givens], values: [...this.values],
      steps: this.steps, started: this.started, terminated: this.terminated, truncated: this.truncated, rng: this.rng.getState(),
    };
  }

  setState(state: SudokuState): void {
    if (!state || state.env !== 'sudoku' || !Array.isArray(state.values) || !Array.isArray(state.givens)
      || state.values.length !== state.size * state.size || state.givens.length !== state.values.length) {
      throw new EnvError('invalid state', { where: 'sudoku.setState', expected: 'a state object from SudokuEnv.getState()', received: show(state) });
    }
    this.options = validateOptions('sudoku', SUDOKU_OPTIONS, state.options);
    this.seed = state.seed;
    this.size = state.size;
    this.givens = [...state.givens];
    this.values = [...state.values];
    this.steps = state.steps;
    this.started = state.started;
    this.terminated = state.terminated;
    this.truncated = state.truncated;
    this.rng.setState(state.rng);
  }

  legalActions(): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.size * this.size; i++) {
      if (this.givens[i] !== 0) continue;
      for (let v = 1; v <= this.size; v++) out.push(`${Math.floor(i / this.size) + 1},${(i % this.size) + 1},${v}`);
    }
    return out;
  }

  entities(): Entity[] {
    const out: Entity[] = [];
    this.values.forEach((v, i) => {
      const row = Math.floor(i / this.size);
      const col = i % this.size;
      out.push(v === 0 ? { kind: 'empty', row, col } : { kind: 'digit', row, col, value: v });
    });
    return out;
  }

  board(): Board {
    const cells: CellKind[][] = [];
    const values: (number | null)[][] = [];
    const givens: boolean[][] = [];
    for (let r = 0; r < this.size; r++) {
      cells.push([]); values.push([]); givens.push([]);
      for (let c = 0; c < this.size; c++) {
        const v = this.values[r * this.size + c];
        cells[r].push(v === 0 ? 'empty' : 'digit');
        values[r].push(v === 0 ? null : v);
        givens[r].push(this.givens[r * this.size + c] !== 0);
      }
    }
    return { env: 'sudoku', rows: this.size, cols: this.size, cells, values, givens };
  }

  gridText(): string {
    return sudokuLine(this.values, this.size);
  }

  /** Board side (4 or 9). */
  boardSize(): number {
    return this.size;
  }

  /** Current cells (0 = empty), row-major. */
  currentValues(): number[] {
    return [...this.values];
  }

  /** Given clues (0 = empty), row-major. */
  currentGivens(): number[] {
    return [...this.givens];
  }
}

export const sudokuDefinition: EnvDefinition = {
  id: 'sudoku',
  title: 'Sudoku',
  docs: {
    summary: 'Fill the board so each row, column and box holds every digit once. Puzzles have exactly one solution.',
    actions: 'row,col,value, one-based (e.g. 1,3,4). Moves on given cells, out of range, or conflicting with a row/column/box leave the board unchanged.',
    observation: 'One line, each row opened by "| ", empty cells ".", e.g. | . 1 2 4 | 4 2 1 3 | 2 3 4 1 | . 4 . 2',
    rewards: '1 when the board is complete and correct, else 0.',
    episodeEnd: 'terminated when the board is complete and correct; truncated after maxSteps moves.',
    arguments: SUDOKU_OPTIONS.map((o) => `${o.name} (default ${JSON.stringify(o.default)}): ${o.doc}`).join('\n'),
  },
  options: SUDOKU_OPTIONS,
  actions: [],
  actionPattern: 'row,col,value (one-based)',
  instruction: 'You are solving a Sudoku puzzle. Fill the empty cells so that every row, every column and every box contains each digit exactly once. ' +
    'A move is row,col,value with one-based row and column, e.g. 1,3,4 writes 4 in row 1, column 3. ' +
    'Moves that break a rule or change a given digit leave the board unchanged.',
  legend: '.: empty cell, a digit: a filled cell, |: start of a row',
  budget: { maxTurns: 5, maxActionsPerTurn: 5, maxActionsPerGame: 50 },
  vocabulary: SUDOKU_VOCABULARY,
  rules: () => 'Fill the grid; no digit twice in a row, column or box.',
  create: (options) => new SudokuEnv(options),
  solve: (env) => {
    const sudoku = env as SudokuEnv;
    const size = sudoku.boardSize();
    const values = sudoku.currentValues();
    const givens = sudoku.currentGivens();
    // Solve from the givens: moves already made may be wrong and are overwritten.
    const solution = solveSudoku(givens, size);
    if (solution === null) return { solved: false, actions: [], optimal: false, note: 'no solution from the givens' };
    const unique = countSolutions(givens, size, 2) === 1;
    const actions: string[] = [];
    // Clear conflicts first by overwriting wrong cells in an order that never conflicts:
    // write all correct values; a wrong filled cell is overwritten when reached.
    const work = [...values];
    let progress = true;
    while (progress) {
      progress = false;
      for (let i = 0; i < work.length; i++) {
        if (work[i] === solution[i]) continue;
        if (canPlace(work, size, i, solution[i])) {
          work[i] = solution[i];
          actions.push(`${Math.floor(i / size) + 1},${(i % size) + 1},${solution[i]}`);
          progress = true;
        }
      }
    }
    const done = work.every((v, i) => v === solution[i]);
    const note = `backtracking solver; ${unique ? 'unique solution' : 'several solutions'}; one move per cell to fill`;
    return { solved: done, actions, optimal: done, note };
  },
  levelOptions: (text) => ({ puzzle: text }),
};
