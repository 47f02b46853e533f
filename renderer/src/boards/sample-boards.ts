// Small boards built from the symbol grids of the released data (spa-reference.md), for
// legends, empty states, docs and tests. Not a parser of model output: the engine does that.
import type { Board, CellKind } from '../../../core/api/records.js';

const SOKOBAN: Record<string, CellKind> = { '#': 'wall', '_': 'floor', 'O': 'target', 'X': 'box', '√': 'boxOnTarget', 'P': 'player', 'S': 'playerOnTarget' };
const FROZEN: Record<string, CellKind> = { '_': 'frozen', 'O': 'hole', 'G': 'goal', 'S': 'start', 'P': 'player', 'X': 'playerInHole', '√': 'playerOnGoal' };

/** Board from symbol rows (e.g. ["#####", "#P_X#"]); unknown symbols become 'unknown' cells. */
export function boardFromSymbols(env: 'sokoban' | 'frozenlake', rows: string[]): Board {
  const table = env === 'sokoban' ? SOKOBAN : FROZEN;
  const cells = rows.map((line) => Array.from(line).map((ch) => table[ch] ?? 'unknown'));
  return { env, rows: cells.length, cols: cells[0]?.length ?? 0, cells };
}

/** Sudoku board from digit rows: 0 or '.' = empty; `givenMask` rows of '1'/'0' mark clues (default: every digit is a clue). */
export function sudokuFromRows(rows: string[], givenMask?: string[]): Board {
  const values = rows.map((line) => Array.from(line.replace(/\s+/g, '')).map((ch) => (ch === '.' || ch === '0' ? null : Number(ch))));
  const n = values.length;
  return {
    env: 'sudoku',
    rows: n,
    cols: values[0]?.length ?? 0,
    cells: values.map((row) => row.map((v): CellKind => (v === null ? 'empty' : 'digit'))),
    values,
    givens: values.map((row, r) => row.map((v, c) => v !== null && (givenMask ? givenMask[r]?.[c] === '1' : true))),
  };
}

export const SAMPLE_BOARDS: Record<'sokoban' | 'frozenlake' | 'sudoku', Board> = {
  sokoban: boardFromSymbols('sokoban', ['######', '#P_X_#', '#_#O_#', '#_√__#', '#__S_#', '######']),
  frozenlake: boardFromSymbols('frozenlake', ['S_O_', '_P__', '__O_', 'O__G']),
  sudoku: sudokuFromRows(['.124', '4213', '2341', '.4.2'], ['0111', '1100', '0011', '0101']),
};
