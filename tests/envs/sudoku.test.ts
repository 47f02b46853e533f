import { describe, expect, it } from 'vitest';
import { SudokuEnv, sudokuLine } from '../../core/envs/sudoku.js';
import { sudokuDefinition } from '../../core/envs/sudoku.js';

/** Independent counting solver (plain recursion over cells in order, bitmask checks), for uniqueness. */
function countAll(cells: number[], size: number, limit = 2): number {
  const box = size === 4 ? 2 : 3;
  const rows = new Array(size).fill(0); const cols = new Array(size).fill(0); const boxes = new Array(size).fill(0);
  const g = [...cells];
  for (let i = 0; i < g.length; i++) {
    if (!g[i]) continue;
    const r = Math.floor(i / size); const c = i % size; const b = Math.floor(r / box) * box + Math.floor(c / box); const bit = 1 << g[i];
    if (rows[r] & bit || cols[c] & bit || boxes[b] & bit) return 0;
    rows[r] |= bit; cols[c] |= bit; boxes[b] |= bit;
  }
  let count = 0;
  const go = (i: number): void => {
    if (count >= limit) return;
    if (i === g.length) { count++; return; }
    if (g[i]) { go(i + 1); return; }
    const r = Math.floor(i / size); const c = i % size; const b = Math.floor(r / box) * box + Math.floor(c / box);
    for (let v = 1; v <= size; v++) {
      const bit = 1 << v;
      if (rows[r] & bit || cols[c] & bit || boxes[b] & bit) continue;
      rows[r] |= bit; cols[c] |= bit; boxes[b] |= bit; g[i] = v;
      go(i + 1);
      rows[r] &= ~bit; cols[c] &= ~bit; boxes[b] &= ~bit; g[i] = 0;
    }
  };
  go(0);
  return count;
}

describe('Sudoku generation', () => {
  for (const [difficulty, clues] of [['easy', 10], ['medium', 9], ['hard', 6]] as const) {
    it(`4x4 ${difficulty}: ${clues} clues, exactly one solution (independent counter), seed-reproducible`, () => {
      for (let seed = 0; seed < 25; seed++) {
        const env = new SudokuEnv({ size: 4, difficulty });
        env.reset({ seed });
        const givens = env.currentGivens();
        expect(givens.filter((v) => v !== 0)).toHaveLength(clues);
        expect(countAll(givens, 4)).toBe(1);
        const again = new SudokuEnv({ size: 4, difficulty });
        again.reset({ seed });
        expect(again.gridText()).toBe(env.gridText());
      }
    });
  }

  it('9x9: unique solution at the requested clue count', () => {
    for (const [difficulty, clues] of [['easy', 40], ['hard', 28]] as const) {
      for (let seed = 0; seed < 2; seed++) {
        const env = new SudokuEnv({ size: 9, difficulty });
        env.reset({ seed });
        const givens = env.currentGivens();
        expect(givens.filter((v) => v !== 0)).toHaveLength(clues);
        expect(countAll(givens, 9)).toBe(1);
      }
    }
  });

  it('the solver plan completes the board with reward 1', () => {
    const env = new SudokuEnv({ size: 4, difficulty: 'hard' });
    env.reset({ seed: 5 });
    const plan = sudokuDefinition.solve!(env);
    expect(plan.solved).toBe(true);
    expect(plan.actions).toHaveLength(10);
    let last;
    for (const a of plan.actions) last = env.step(a);
    expect(last).toMatchObject({ reward: 1, terminated: true });
    expect(last!.info.success).toBe(true);
  });
});

describe('Sudoku moves (hand-worked)', () => {
  const puzzle = '.124 4213 2341 .4.2'; // solution: 3124 4213 2341 1432
  it('renders the SPA one-line board', () => {
    const env = new SudokuEnv({ puzzle });
    env.reset();
    expect(env.gridText()).toBe('| . 1 2 4 | 4 2 1 3 | 2 3 4 1 | . 4 . 2');
    expect(sudokuLine([1, 0, 0, 0], 2)).toBe('| 1 . | . .');
  });

  it('illegal and invalid moves leave the board unchanged', () => {
    const env = new SudokuEnv({ puzzle });
    env.reset();
    const before = env.gridText();
    const given = env.step('1,2,3');         // (1,2) is a given clue
    expect(given.info).toMatchObject({ actionIsValid: true, actionIsEffective: false, illegal: true });
    const conflict = env.step('1,1,1');      // 1 already in row 1
    expect(conflict.info.actionIsEffective).toBe(false);
    expect(conflict.info.reason).toMatch(/conflicts/);
    const range = env.step('5,1,1');
    expect(range.info.actionIsValid).toBe(false);
    const junk = env.step('one,two,three');
    expect(junk.info.actionIsValid).toBe(false);
    expect(env.gridText()).toBe(before);
    expect([given, conflict, range, junk].every((r) => r.reward === 0 && !r.terminated)).toBe(true);
  });

  it('legal moves fill cells; completing the board gives 1 and terminates', () => {
    const env = new SudokuEnv({ puzzle });
    env.reset();
    expect(env.step('1,1,3').info.actionIsEffective).toBe(true);
    expect(env.gridText()).toBe('| 3 1 2 4 | 4 2 1 3 | 2 3 4 1 | . 4 . 2');
    expect(env.step(' (4, 1, 1) ').info.actionIsEffective).toBe(true); // spaces and parentheses tolerated
    const last = env.step('4,3,3');
    expect(last).toMatchObject({ reward: 1, terminated: true });
    expect(env.board().values).toEqual([[3, 1, 2, 4], [4, 2, 1, 3], [2, 3, 4, 1], [1, 4, 3, 2]]);
  });

  it('legal actions cover only non-given cells', () => {
    const env = new SudokuEnv({ puzzle });
    env.reset();
    expect(env.legalActions()).toHaveLength(3 * 4);
    expect(env.legalActions()).toContain('4,3,3');
    expect(env.legalActions()).not.toContain('1,2,1');
  });

  it('bad puzzles fail clearly', () => {
    expect(() => new SudokuEnv({ puzzle: '123' })).toThrow(/16 \(4x4\) or 81 \(9x9\).*received 3 cells/);
    expect(() => new SudokuEnv({ puzzle: '11.. .... .... ....' }).reset()).toThrow(/givens conflict.*digit 1 twice in row 1: \(1,1\) and \(1,2\)/);
    expect(() => new SudokuEnv({ puzzle: '1... .1.. .... ....' }).reset()).toThrow(/digit 1 twice in box 1: \(1,1\) and \(2,2\)/);
    expect(() => new SudokuEnv({ puzzle: '123. .... ...4 ....' }).reset()).toThrow(/no solution/);   // no clash, still unsolvable
    expect(() => new SudokuEnv({ puzzle: '.12x 4213 2341 .4.2' })).toThrow(/row 1, column 4/);
  });
});
