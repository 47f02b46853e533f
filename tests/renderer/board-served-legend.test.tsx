// @vitest-environment jsdom
// Boards drawn from the legend an env serves (envs.list -> legend-store.ts): the built-in envs draw the same pictures from
// their served legend as from the built-in glyphs, and an env the renderer has never heard of is drawn and labelled from its
// legend alone (issue 22: an env is a plug-in).
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render } from '@testing-library/react';
import Board from '../../renderer/src/boards/Board.js';
import { BoardLegend } from '../../renderer/src/boards/board-legend.js';
import { boardFamily, cellShapes } from '../../renderer/src/boards/board-shapes.js';
import { legendFor, registerLegends } from '../../renderer/src/boards/legend-store.js';
import { createEnv, describeEnv, listEnvs } from '../../core/envs/index.js';

afterEach(cleanup);

describe('boards from served legends', () => {
  it('draws the built-in envs the same from their served legend as from the built-in glyphs', () => {
    const builtIn = ['sokoban', 'frozenlake'].flatMap((id) => describeEnv(id).cells.map((c) => ({ id, kind: c.kind, shapes: JSON.stringify(cellShapes(c.kind, id)) })));
    registerLegends(listEnvs().map((id) => ({ id, cells: describeEnv(id).cells })));
    expect(legendFor('sokoban')).toBeDefined();
    for (const b of builtIn) expect(JSON.stringify(cellShapes(b.kind, b.id)), `${b.id} ${b.kind}`).toBe(b.shapes);
  });

  it('draws every registered env\'s board with one drawn cell per board cell and its legend', () => {
    registerLegends(listEnvs().map((id) => ({ id, cells: describeEnv(id).cells })));
    for (const id of listEnvs()) {
      const env = createEnv(id);
      env.reset({ seed: 3 });
      const board = env.board();
      const { container } = render(<Board board={board} />);
      const drawn = container.querySelectorAll('g.board-cell');
      expect(drawn.length, id).toBe(board.rows * board.cols);
      for (const g of drawn) expect(g.querySelectorAll('rect,circle,ellipse,line,polyline,text').length, `${id} ${g.getAttribute('data-cell-kind')}`).toBeGreaterThan(0);
      const legend = render(<BoardLegend family={boardFamily(board)} />);
      const kinds = Array.from(legend.container.querySelectorAll('[data-legend-kind]')).map((e) => e.getAttribute('data-legend-kind'));
      expect([...new Set(kinds)]).toEqual(describeEnv(id).cells.map((c) => c.kind)); // Sudoku's digit shows given and filled
      cleanup();
    }
  });

  it('draws and labels an env the renderer has never heard of from its legend alone', () => {
    registerLegends([{ id: 'planted-vault', cells: [
      { kind: 'ground', symbol: '.', label: 'ground', glyphs: ['floor'], entities: [] },
      { kind: 'lever', symbol: 'L', label: 'lever', glyphs: ['floor', 'lever'], entities: ['lever'] },
    ] }]);
    const board = { env: 'planted-vault', rows: 1, cols: 2, cells: [['ground', 'lever']] };
    expect(boardFamily(board)).toBe('planted-vault');
    const { container } = render(<Board board={board} />);
    const lever = container.querySelector('g.board-cell[data-cell-kind="lever"]')!;
    expect(lever.querySelector('text')?.textContent).toBe('L');                 // an unknown glyph name draws the symbol
    expect(lever.querySelector('rect.board-fill-floor')).not.toBeNull();          // known glyph layers still draw
    expect(lever.querySelector('title')?.textContent).toBe('(0,1) lever');
    const legend = render(<BoardLegend family="planted-vault" />);
    expect(Array.from(legend.container.querySelectorAll('[data-legend-kind]')).map((e) => e.getAttribute('data-legend-kind'))).toEqual(['ground', 'lever']);
  });

  it('draws a kind no legend knows as its first letter, not as nothing', () => {
    const shapes = cellShapes('portal', 'unknown');
    expect(shapes.some((s) => s.type === 'text' && s.text === 'P')).toBe(true);
  });
});
