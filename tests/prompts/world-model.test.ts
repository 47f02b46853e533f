import { describe, expect, it } from 'vitest';
import type { Board } from '../../core/api/records.js';
import { createEnv } from '../../core/envs/index.js';
import { getTemplatePreset, listTemplatePresets, parseStateText, renderState, scoreWorldModel } from '../../core/prompts/index.js';

const truth: Board = {
  env: 'sokoban', rows: 3, cols: 5,
  cells: [
    ['wall', 'wall', 'wall', 'wall', 'wall'],
    ['wall', 'player', 'box', 'target', 'wall'],
    ['wall', 'wall', 'wall', 'wall', 'wall'],
  ],
};

describe('scoreWorldModel on hand-made boards', () => {
  it('exact board scores 1 everywhere', () => {
    const s = scoreWorldModel(structuredClone(truth), truth);
    expect(s).toEqual({ parsed: true, exact: true, cellAccuracy: 1, entityF1: { player: 1, box: 1, target: 1, wall: 1 }, meanF1: 1, wrongCells: [] });
  });

  it('box one cell off: two wrong cells, box F1 0, player/target/wall F1 1', () => {
    const predicted = structuredClone(truth);
    predicted.cells[1] = ['wall', 'player', 'floor', 'boxOnTarget', 'wall'];
    const s = scoreWorldModel(predicted, truth);
    expect(s.exact).toBe(false);
    expect(s.cellAccuracy).toBeCloseTo(13 / 15);
    expect(s.wrongCells).toEqual([[1, 2], [1, 3]]);
    expect(s.entityF1).toEqual({ player: 1, box: 0, target: 1, wall: 1 });
    expect(s.meanF1).toBeCloseTo(0.75);
  });

  it('F1 with an extra predicted box: precision 1/2, recall 1 → 2/3', () => {
    const predicted = structuredClone(truth);
    predicted.cells[1][3] = 'boxOnTarget';
    expect(scoreWorldModel(predicted, truth).entityF1.box).toBeCloseTo(2 / 3);
  });

  it('unparsed prediction scores 0; wrong size counts missing cells as wrong', () => {
    const none = scoreWorldModel(null, truth);
    expect(none).toMatchObject({ parsed: false, exact: false, cellAccuracy: 0, meanF1: 0 });
    expect(none.wrongCells).toHaveLength(15);
    const small: Board = { env: 'sokoban', rows: 1, cols: 5, cells: [truth.cells[0]] };
    const s = scoreWorldModel(small, truth);
    expect(s.exact).toBe(false);
    expect(s.cellAccuracy).toBeCloseTo(5 / 15);
  });

  it('Sudoku is scored per cell by value', () => {
    const t: Board = { env: 'sudoku', rows: 2, cols: 2, cells: [['digit', 'empty'], ['digit', 'digit']], values: [[1, null], [2, 3]] };
    const p: Board = { env: 'sudoku', rows: 2, cols: 2, cells: [['digit', 'digit'], ['digit', 'digit']], values: [[1, 4], [2, 4]] };
    const s = scoreWorldModel(p, t);
    expect(s.cellAccuracy).toBe(0.5);
    expect(s.wrongCells).toEqual([[0, 1], [1, 1]]);
    expect(s.entityF1.cells).toBe(0.5);
    expect(s.entityF1.filled).toBeCloseTo(2 * (2 / 4) * (2 / 3) / (2 / 4 + 2 / 3));
    expect(s.meanF1).toBe(0.5);
  });
});

describe('parseStateText', () => {
  it('every preset parses back to the exact true board (all envs, several seeds)', () => {
    for (const { name } of listTemplatePresets()) {
      if (name === 'random-coordinates') continue;
      for (const [id, options] of [['sokoban', { width: 7, height: 7, numBoxes: 2 }], ['frozenlake', { size: 5 }], ['sudoku', {}]] as const) {
        for (let seed = 0; seed < 4; seed++) {
          const env = createEnv(id, options);
          env.reset({ seed });
          const text = renderState(getTemplatePreset(name), env);
          const board = parseStateText(id, text, getTemplatePreset(name), env.board());
          const score = scoreWorldModel(board, env.board());
          expect(score.exact, `${name} ${id} seed ${seed}:\n${text}`).toBe(true);
        }
      }
    }
  });

  it('the random-coordinates ablation keeps the grid, so it still parses from the grid', () => {
    const env = createEnv('sokoban');
    env.reset({ seed: 2 });
    const template = getTemplatePreset('random-coordinates');
    const text = renderState(template, env);
    expect(scoreWorldModel(parseStateText('sokoban', text, template, env.board()), env.board()).exact).toBe(true);
    // Without the template the wrong coordinates beside the grid are a contradiction: not exact.
    expect(scoreWorldModel(parseStateText('sokoban', text, undefined, env.board()), env.board()).exact).toBe(false);
    // Coordinates alone (grid removed) parse over the reference layout, and are wrong.
    const coordsOnly = text.split('\n').pop()!;
    const fromCoords = parseStateText('sokoban', coordsOnly, undefined, env.board());
    expect(fromCoords).not.toBeNull();
    expect(scoreWorldModel(fromCoords, env.board()).exact).toBe(false);
  });

  it('exact covers the whole state text the template asks for: grid and coordinate line (issue 24 item 7)', () => {
    for (const id of ['sokoban', 'frozenlake']) {
      const env = createEnv(id, id === 'frozenlake' ? { isSlippery: false } : {});
      env.reset({ seed: 5 });
      const spa = getTemplatePreset('spa');
      const truth = renderState(spa, env);
      const [grid, line] = [truth.split('\n').slice(0, -1).join('\n'), truth.split('\n').pop()!];
      expect(scoreWorldModel(parseStateText(id, truth, spa, env.board()), env.board()).exact).toBe(true);
      // A right grid with a wrong coordinate line: not exact, and the cells the line gets wrong are the wrong cells.
      const player = env.entities().find((e) => e.kind === 'player')!;
      const moved = line.replace(`Player (P) is at (${player.row},${player.col})`, `Player (P) is at (${player.row},${player.col + 1})`);
      expect(moved).not.toBe(line);
      const wrong = scoreWorldModel(parseStateText(id, `${grid}\n${moved}`, spa, env.board()), env.board());
      expect(wrong.exact).toBe(false);
      expect(wrong.wrongCells).toContainEqual([player.row, player.col]);
      // The coordinate line left out although the template asks for it: not exact.
      expect(scoreWorldModel(parseStateText(id, grid, spa, env.board()), env.board()).exact).toBe(false);
      // A grid-only template does not ask for coordinates: the grid alone is exact.
      expect(scoreWorldModel(parseStateText(id, grid, getTemplatePreset('raw-grid'), env.board()), env.board()).exact).toBe(true);
    }
  });

  it('tolerates text around the grid and spaces between symbols; garbage gives null', () => {
    const board = parseStateText('sokoban', 'The state is:\n# # # # #\n# P X O #\n# # # # #\nthat is all', undefined);
    expect(scoreWorldModel(board, truth).exact).toBe(true);
    expect(parseStateText('sokoban', 'I do not know', undefined, truth)).toBeNull();
    expect(parseStateText('sokoban', '', undefined, truth)).toBeNull();
    expect(parseStateText('sokoban', null, undefined, truth)).toBeNull();
  });

  it('SPA coordinate line alone is laid over the reference walls', () => {
    const board = parseStateText('sokoban', 'Player (P) is at (1,1); box (X) is at (1,2); target (O) is at (1,3).', undefined, truth);
    expect(scoreWorldModel(board, truth).exact).toBe(true);
    const moved = parseStateText('sokoban', 'Player (P) is at (1,2); box (X) is at (1,3); target (O) is at (1,3).', undefined, truth);
    expect(moved!.cells[1]).toEqual(['wall', 'floor', 'player', 'boxOnTarget', 'wall']);
  });

  it('a Sudoku board with a wrong digit is found cell by cell', () => {
    const env = createEnv('sudoku', { puzzle: '.124 4213 2341 .4.2' });
    env.reset();
    const wrong = parseStateText('sudoku', '| 3 1 2 4 | 4 2 1 3 | 2 3 4 1 | . 4 . 2', undefined, env.board());
    const s = scoreWorldModel(wrong, env.board());
    expect(s.wrongCells).toEqual([[0, 0]]);
    expect(s.cellAccuracy).toBeCloseTo(15 / 16);
  });
});
