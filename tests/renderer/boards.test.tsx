// @vitest-environment jsdom
// Board renderers: every env and every cell kind draws the right glyph, highlights land on
// exactly the given cells, Sudoku givens are distinct from filled digits, overlays and PNG painting.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render } from '@testing-library/react';
import type { Board as BoardData, CellKind } from '../../core/api/records.js';
import Board from '../../renderer/src/boards/Board.js';
import { BoardLegend } from '../../renderer/src/boards/board-legend.js';
import { boardFamily, cellShapes, diffCells, sudokuBox } from '../../renderer/src/boards/board-shapes.js';
import { drawBoard, LIGHT_PALETTE, type Canvas2D } from '../../renderer/src/boards/board-png.js';
import { boardFromSymbols, sudokuFromRows, SAMPLE_BOARDS } from '../../renderer/src/boards/sample-boards.js';

afterEach(cleanup);

function cell(container: HTMLElement, row: number, col: number): SVGGElement {
  const el = container.querySelector<SVGGElement>(`g.board-cell[data-row="${row}"][data-col="${col}"]`);
  if (!el) throw new Error(`no cell (${row},${col})`);
  return el;
}

/** Classes of all drawn shapes inside an element, e.g. ["rect:board-fill-floor", "circle:board-stroke-target"]. */
function shapeClasses(el: Element): string[] {
  return Array.from(el.querySelectorAll('rect,circle,ellipse,line,polyline,text'))
    .flatMap((s) => (s.getAttribute('class') ?? '').split(/\s+/).filter((c) => c.startsWith('board-fill-') || c.startsWith('board-stroke-')).filter((c) => c !== 'board-fill-none').map((c) => `${s.tagName.toLowerCase()}:${c}`));
}

// Expected signature glyphs per kind: each listed shape class must be present in the cell,
// and each `absent` one must not be (so e.g. a plain box is not drawn as a box on target).
const EXPECT: Record<CellKind, { env: 'sokoban' | 'frozenlake' | 'sudoku'; present: string[]; absent: string[] }> = {
  wall: { env: 'sokoban', present: ['rect:board-fill-wall', 'line:board-stroke-wallLine'], absent: ['rect:board-fill-floor', 'circle:board-fill-player'] },
  floor: { env: 'sokoban', present: ['rect:board-fill-floor'], absent: ['rect:board-fill-box', 'circle:board-stroke-target', 'circle:board-fill-player'] },
  target: { env: 'sokoban', present: ['rect:board-fill-floor', 'circle:board-stroke-target'], absent: ['rect:board-fill-box', 'circle:board-fill-player'] },
  box: { env: 'sokoban', present: ['rect:board-fill-box', 'line:board-stroke-boxLine'], absent: ['circle:board-stroke-target', 'rect:board-fill-boxDone'] },
  boxOnTarget: { env: 'sokoban', present: ['rect:board-fill-boxDone', 'circle:board-stroke-target'], absent: ['rect:board-fill-box'] },
  player: { env: 'sokoban', present: ['rect:board-fill-floor', 'circle:board-fill-player'], absent: ['circle:board-stroke-target', 'rect:board-fill-frozen'] },
  playerOnTarget: { env: 'sokoban', present: ['circle:board-stroke-target', 'circle:board-fill-player'], absent: ['rect:board-fill-box'] },
  frozen: { env: 'frozenlake', present: ['rect:board-fill-frozen'], absent: ['ellipse:board-fill-hole', 'circle:board-fill-player', 'polyline:board-fill-goal'] },
  hole: { env: 'frozenlake', present: ['rect:board-fill-frozen', 'ellipse:board-fill-hole'], absent: ['circle:board-fill-player'] },
  goal: { env: 'frozenlake', present: ['polyline:board-fill-goal'], absent: ['circle:board-fill-player', 'ellipse:board-fill-hole'] },
  start: { env: 'frozenlake', present: ['rect:board-fill-frozen', 'text:board-fill-start'], absent: ['circle:board-fill-player'] },
  playerInHole: { env: 'frozenlake', present: ['ellipse:board-fill-hole', 'circle:board-fill-player', 'line:board-stroke-danger'], absent: ['polyline:board-fill-goal'] },
  playerOnGoal: { env: 'frozenlake', present: ['polyline:board-fill-goal', 'circle:board-fill-player'], absent: ['ellipse:board-fill-hole', 'line:board-stroke-danger'] },
  digit: { env: 'sudoku', present: ['text:board-fill-filledText'], absent: ['text:board-fill-givenText'] },
  empty: { env: 'sudoku', present: ['rect:board-fill-cell'], absent: ['text:board-fill-filledText', 'text:board-fill-givenText'] },
  unknown: { env: 'sokoban', present: ['rect:board-fill-unknown', 'text:board-fill-unknownText'], absent: ['circle:board-fill-player'] },
};

describe('Board: every cell kind', () => {
  for (const [kind, spec] of Object.entries(EXPECT) as Array<[CellKind, (typeof EXPECT)[CellKind]]>) {
    it(`draws ${kind} (${spec.env}) with its own glyph and data-cell-kind`, () => {
      const board: BoardData = {
        env: spec.env, rows: 1, cols: 1, cells: [[kind]],
        ...(kind === 'digit' ? { values: [[3]], givens: [[false]] } : {}),
      };
      const { container } = render(<Board board={board} />);
      const g = cell(container, 0, 0);
      expect(g.getAttribute('data-cell-kind')).toBe(kind);
      const classes = shapeClasses(g);
      for (const c of spec.present) expect(classes, `${kind} should contain ${c}`).toContain(c);
      for (const c of spec.absent) expect(classes, `${kind} should not contain ${c}`).not.toContain(c);
    });
  }

  it('draws a plain player on ice in FrozenLake and on floor in Sokoban', () => {
    const lake = render(<Board board={{ env: 'frozenlake', rows: 1, cols: 1, cells: [['player']] }} />);
    expect(shapeClasses(cell(lake.container, 0, 0))).toContain('rect:board-fill-frozen');
    cleanup();
    const soko = render(<Board board={{ env: 'sokoban', rows: 1, cols: 1, cells: [['player']] }} />);
    expect(shapeClasses(cell(soko.container, 0, 0))).not.toContain('rect:board-fill-frozen');
  });

  it('gives every cell kind a distinct glyph (no two kinds of a family draw the same shapes)', () => {
    const families = { sokoban: ['wall', 'floor', 'target', 'box', 'boxOnTarget', 'player', 'playerOnTarget', 'unknown'], frozenlake: ['frozen', 'hole', 'goal', 'start', 'player', 'playerInHole', 'playerOnGoal', 'unknown'] } as const;
    for (const [family, kinds] of Object.entries(families)) {
      const signatures = kinds.map((k) => JSON.stringify(cellShapes(k, family as 'sokoban' | 'frozenlake')));
      expect(new Set(signatures).size, family).toBe(kinds.length);
    }
  });
});

describe('Board: whole boards of each environment', () => {
  it('renders a Sokoban level cell by cell, with an accessible summary', () => {
    const board = boardFromSymbols('sokoban', ['#####', '#PX_#', '#_O√#', '#####']);
    const { container, getByRole } = render(<Board board={board} title="Truth" />);
    expect(container.querySelectorAll('g.board-cell')).toHaveLength(20);
    expect(cell(container, 1, 1).getAttribute('data-cell-kind')).toBe('player');
    expect(cell(container, 1, 2).getAttribute('data-cell-kind')).toBe('box');
    expect(cell(container, 2, 2).getAttribute('data-cell-kind')).toBe('target');
    expect(cell(container, 2, 3).getAttribute('data-cell-kind')).toBe('boxOnTarget');
    const img = getByRole('img');
    expect(img.getAttribute('aria-label')).toContain('Truth');
    expect(img.getAttribute('aria-label')).toContain('player at (1,1)');
    expect(img.getAttribute('aria-label')).toContain('1 box');
  });

  it('renders FrozenLake with holes, goal, start and player', () => {
    const { container } = render(<Board board={SAMPLE_BOARDS.frozenlake} />);
    const kinds = Array.from(container.querySelectorAll('g.board-cell')).map((g) => g.getAttribute('data-cell-kind'));
    expect(kinds.filter((k) => k === 'hole')).toHaveLength(3);
    expect(kinds.filter((k) => k === 'goal')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'start')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'player')).toHaveLength(1);
  });

  it('draws Sudoku givens distinct from filled digits, and empty cells without text', () => {
    const board = sudokuFromRows(['1.34', '34.2', '2143', '4321'], ['1011', '1100', '0000', '1111']);
    const { container } = render(<Board board={board} />);
    const given = cell(container, 0, 0);
    const filled = cell(container, 2, 0);
    const empty = cell(container, 0, 1);
    expect(given.getAttribute('data-given')).toBe('true');
    expect(filled.getAttribute('data-given')).toBe('false');
    expect(given.querySelector('text')?.textContent).toBe('1');
    expect(filled.querySelector('text')?.textContent).toBe('2');
    expect(given.querySelector('text')?.getAttribute('class')).toContain('board-text-bold');
    expect(filled.querySelector('text')?.getAttribute('class')).not.toContain('board-text-bold');
    expect(shapeClasses(given)).toEqual(expect.arrayContaining(['rect:board-fill-given', 'text:board-fill-givenText']));
    expect(shapeClasses(filled)).toEqual(expect.arrayContaining(['rect:board-fill-cell', 'text:board-fill-filledText']));
    expect(empty.getAttribute('data-cell-kind')).toBe('empty');
    expect(empty.querySelector('text')).toBeNull();
  });

  it('draws thicker box lines: 2x2 boxes for 4x4, 3x3 for 9x9', () => {
    expect(sudokuBox(4)).toEqual({ rows: 2, cols: 2 });
    expect(sudokuBox(9)).toEqual({ rows: 3, cols: 3 });
    expect(sudokuBox(6)).toEqual({ rows: 2, cols: 3 });
    const strongLines = (board: BoardData): Array<[number, number, number, number]> => {
      const { container } = render(<Board board={board} />);
      const lines = Array.from(container.querySelectorAll('g.board-grid line.board-stroke-gridStrong'))
        .map((l) => ['x1', 'y1', 'x2', 'y2'].map((a) => Number(l.getAttribute(a))) as [number, number, number, number]);
      cleanup();
      return lines;
    };
    const four = strongLines(SAMPLE_BOARDS.sudoku);
    // horizontal strong lines at y = 0, 2, 4 and vertical at x = 0, 2, 4
    expect(four.filter(([, y1, , y2]) => y1 === y2).map(([, y]) => y).sort()).toEqual([0, 2, 4]);
    expect(four.filter(([x1, , x2]) => x1 === x2).map(([x]) => x).sort()).toEqual([0, 2, 4]);
    const nine = strongLines(sudokuFromRows(Array.from({ length: 9 }, () => '.........')));
    expect(nine.filter(([, y1, , y2]) => y1 === y2).map(([, y]) => y).sort((a, b) => a - b)).toEqual([0, 3, 6, 9]);
    // Sokoban draws no strong lines
    expect(strongLines(SAMPLE_BOARDS.sokoban)).toHaveLength(0);
  });
});

describe('Board: highlights and overlays', () => {
  it('highlights exactly the given cells (duplicates and out-of-range pairs ignored)', () => {
    const board = SAMPLE_BOARDS.sokoban;
    const { container, getByRole } = render(<Board board={board} highlight={[[1, 3], [2, 3], [1, 3], [9, 9], [-1, 0]]} />);
    const lit = Array.from(container.querySelectorAll('g.board-cell[data-highlighted="true"]'))
      .map((g) => `${g.getAttribute('data-row')},${g.getAttribute('data-col')}`).sort();
    expect(lit).toEqual(['1,3', '2,3']);
    const rects = Array.from(container.querySelectorAll('rect.board-highlight'))
      .map((r) => `${r.getAttribute('data-highlight-row')},${r.getAttribute('data-highlight-col')}`).sort();
    expect(rects).toEqual(['1,3', '2,3']);
    expect(getByRole('img').getAttribute('aria-label')).toContain('2 highlighted cells');
  });

  it('draws no highlight without the prop', () => {
    const { container } = render(<Board board={SAMPLE_BOARDS.frozenlake} />);
    expect(container.querySelectorAll('[data-highlighted]')).toHaveLength(0);
    expect(container.querySelectorAll('rect.board-highlight')).toHaveLength(0);
  });

  it('overlays a predicted board only where it differs from the truth', () => {
    const truth = boardFromSymbols('sokoban', ['#####', '#PX_#', '#####']);
    const predicted = boardFromSymbols('sokoban', ['#####', '#_PX#', '#####']);
    expect(diffCells(truth, predicted)).toEqual([[1, 1], [1, 2], [1, 3]]);
    const { container } = render(<Board board={truth} overlay={predicted} />);
    const overlayCells = Array.from(container.querySelectorAll('g.board-overlay-cell'))
      .map((g) => `${g.getAttribute('data-row')},${g.getAttribute('data-col')}:${g.getAttribute('data-overlay-kind')}`);
    expect(overlayCells).toEqual(['1,1:floor', '1,2:player', '1,3:box']);
    // the truth underneath is unchanged
    expect(cell(container, 1, 1).getAttribute('data-cell-kind')).toBe('player');
  });

  it('reports a malformed board instead of drawing garbage', () => {
    const bad: BoardData = { env: 'sokoban', rows: 3, cols: 2, cells: [['wall', 'wall'], ['floor']] };
    const { getByRole, container } = render(<Board board={bad} />);
    const alert = getByRole('alert');
    expect(alert.textContent).toContain('expected 3 rows');
    expect(alert.textContent).toContain('board.cells[1]: expected 2 cells');
    expect(container.querySelector('svg')).toBeNull();
  });

  it('infers the family from cell kinds when the env id is unfamiliar', () => {
    expect(boardFamily({ env: 'my-lake', cells: [['hole']] })).toBe('frozenlake');
    expect(boardFamily({ env: 'x', cells: [['box']] })).toBe('sokoban');
    expect(boardFamily({ env: 'x', cells: [['digit']] })).toBe('sudoku');
  });

  it('legend lists each kind of the family', () => {
    const { container } = render(<BoardLegend family="sokoban" showUnknown />);
    const kinds = Array.from(container.querySelectorAll('[data-legend-kind]')).map((e) => e.getAttribute('data-legend-kind'));
    expect(kinds).toEqual(['wall', 'floor', 'target', 'box', 'boxOnTarget', 'player', 'playerOnTarget', 'unknown']);
  });
});

describe('drawBoard (PNG painter)', () => {
  function recorder(): { ctx: Canvas2D; calls: Array<{ op: string; args: unknown[]; fill: unknown; stroke: unknown }> } {
    const calls: Array<{ op: string; args: unknown[]; fill: unknown; stroke: unknown }> = [];
    const state = { fillStyle: '' as unknown, strokeStyle: '' as unknown };
    const ctx = new Proxy(state as Record<string, unknown>, {
      get(target, prop: string) {
        if (prop in target) return target[prop];
        return (...args: unknown[]) => { calls.push({ op: prop, args, fill: target.fillStyle, stroke: target.strokeStyle }); };
      },
      set(target, prop: string, value) { target[prop] = value; return true; },
    }) as unknown as Canvas2D;
    return { ctx, calls };
  }

  it('paints every Sudoku digit as text and strokes the highlighted cells in the highlight colour', () => {
    const { ctx, calls } = recorder();
    drawBoard(ctx, SAMPLE_BOARDS.sudoku, { highlight: [[0, 0], [3, 2]] });
    const digits = SAMPLE_BOARDS.sudoku.values!.flat().filter((v) => v !== null).map(String);
    expect(calls.filter((c) => c.op === 'fillText').map((c) => c.args[0])).toEqual(digits);
    const highlightStrokes = calls.filter((c) => c.op === 'stroke' && c.stroke === LIGHT_PALETTE.highlight);
    expect(highlightStrokes).toHaveLength(2);
  });

  it('throws a clear error for a malformed board', () => {
    const { ctx } = recorder();
    expect(() => drawBoard(ctx, { env: 'sokoban', rows: 2, cols: 2, cells: [['wall', 'wall']] })).toThrow(/expected 2 rows/);
  });
});

describe('Board: soft highlights', () => {
  it('draws soft (dashed, thin) outlines when asked, on the same cells', () => {
    const { container } = render(<Board board={SAMPLE_BOARDS.frozenlake} highlight={[[0, 0], [3, 3]]} highlightStyle="soft" />);
    const rects = Array.from(container.querySelectorAll('rect.board-highlight'));
    expect(rects).toHaveLength(2);
    for (const r of rects) {
      expect(r.getAttribute('class')).toContain('board-highlight-soft');
      expect(Number(r.getAttribute('stroke-width'))).toBeLessThan(0.1);
    }
  });
});
