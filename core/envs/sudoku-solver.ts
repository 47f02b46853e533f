// Sudoku helpers: a backtracking solver that counts solutions (up to a limit), generation of a
// random full solution, and clue removal that keeps the solution unique.
import type { Rng } from '../util/rng.js';

/** Box shape for a board side: 4 → 2x2, 9 → 3x3, 6 → 2x3. */
export function boxShape(size: number): [number, number] {
  const r = Math.floor(Math.sqrt(size));
  for (let h = r; h >= 1; h--) if (size % h === 0) return [h, size / h];
  return [1, size];
}

/** Can `value` go at cell i of grid (0 = empty) without a row/column/box conflict? */
export function canPlace(grid: ArrayLike<number>, size: number, i: number, value: number): boolean {
  const r = Math.floor(i / size);
  const c = i % size;
  const [bh, bw] = boxShape(size);
  for (let k = 0; k < size; k++) {
    if (k !== c && grid[r * size + k] === value) return false;
    if (k !== r && grid[k * size + c] === value) return false;
  }
  const br = r - (r % bh);
  const bc = c - (c % bw);
  for (let rr = br; rr < br + bh; rr++) for (let cc = bc; cc < bc + bw; cc++) {
    if ((rr !== r || cc !== c) && grid[rr * size + cc] === value) return false;
  }
  return true;
}

const DEAD_END = -2;

/**
 * The empty cell with the fewest legal values and those values; best = -1 when the grid is
 * full, DEAD_END when some empty cell has no legal value.
 */
function mostConstrainedCell(g: readonly number[], size: number): { best: number; bestOptions: number[] } {
  let best = -1;
  let bestOptions: number[] = [];
  for (let i = 0; i < g.length; i++) {
    if (g[i] !== 0) continue;
    const options: number[] = [];
    for (let v = 1; v <= size; v++) if (canPlace(g, size, i, v)) options.push(v);
    if (options.length === 0) return { best: DEAD_END, bestOptions: [] };
    if (best < 0 || options.length < bestOptions.length) { best = i; bestOptions = options; if (options.length === 1) break; }
  }
  return { best, bestOptions };
}

/** Count solutions up to `limit` by backtracking on the most constrained empty cell. */
export function countSolutions(grid: readonly number[], size: number, limit = 2): number {
  const g = [...grid];
  let count = 0;
  const recurse = (): void => {
    const { best, bestOptions } = mostConstrainedCell(g, size);
    if (best === DEAD_END) return;
    if (best < 0) { count++; return; }
    for (const v of bestOptions) {
      g[best] = v;
      recurse();
      g[best] = 0;
      if (count >= limit) return;
    }
  };
  recurse();
  return count;
}

/** One solution (or null) by backtracking. */
export function solveSudoku(grid: readonly number[], size: number): number[] | null {
  const g = [...grid];
  const recurse = (): boolean => {
    const { best, bestOptions } = mostConstrainedCell(g, size);
    if (best === DEAD_END) return false;
    if (best < 0) return true;
    for (const v of bestOptions) {
      g[best] = v;
      if (recurse()) return true;
    }
    g[best] = 0;
    return false;
  };
  for (let i = 0; i < g.length; i++) if (g[i] !== 0 && !canPlace(g, size, i, g[i])) return null;
  return recurse() ? g : null;
}

/** A uniformly shuffled full solution grid (backtracking with random value order). */
export function randomSolution(rng: Rng, size: number): number[] {
  const g = new Array<number>(size * size).fill(0);
  const fill = (i: number): boolean => {
    if (i === g.length) return true;
    const values = rng.shuffle(Array.from({ length: size }, (_, k) => k + 1));
    for (const v of values) {
      if (canPlace(g, size, i, v)) {
        g[i] = v;
        if (fill(i + 1)) return true;
      }
    }
    g[i] = 0;
    return false;
  };
  fill(0);
  return g;
}

/**
 * Remove cells in random order while the puzzle keeps exactly one solution, until `clues`
 * givens remain. Returns the puzzle (0 = empty) and how many clues it has (may be above the
 * target when no further cell can be removed).
 */
export function carvePuzzle(rng: Rng, solution: readonly number[], size: number, clues: number): { puzzle: number[]; clues: number } {
  const puzzle = [...solution];
  let remaining = puzzle.length;
  const order = rng.shuffle(Array.from({ length: puzzle.length }, (_, i) => i));
  for (const i of order) {
    if (remaining <= clues) break;
    const keep = puzzle[i];
    puzzle[i] = 0;
    if (countSolutions(puzzle, size, 2) === 1) remaining--;
    else puzzle[i] = keep;
  }
  return { puzzle, clues: remaining };
}
