// Board drawing as a list of plain shapes in cell units (one cell = 1×1), shared by the SVG
// renderer (Board.tsx) and the canvas painter (board-png.ts) so that the on-screen board and
// the exported PNG are the same picture. Pure: no DOM, no React.
import type { Board, CellKind } from '../../../core/api/records.js';
import { legendEntry, legendFor } from './legend-store.js';

/** Named colours; SVG maps them to CSS classes (board-fill-*, board-stroke-*), canvas to a palette. */
export type Paint =
  | 'floor' | 'wall' | 'wallLine' | 'target' | 'box' | 'boxLine' | 'boxDone' | 'boxDoneLine'
  | 'player' | 'playerLine' | 'frozen' | 'frozenLine' | 'hole' | 'goal' | 'goalLine' | 'start'
  | 'danger' | 'cell' | 'given' | 'givenText' | 'filledText' | 'grid' | 'gridStrong'
  | 'unknown' | 'unknownText' | 'highlight';

export type Shape =
  | { type: 'rect'; x: number; y: number; w: number; h: number; rx?: number; fill?: Paint; stroke?: Paint; strokeWidth?: number }
  | { type: 'circle'; cx: number; cy: number; r: number; fill?: Paint; stroke?: Paint; strokeWidth?: number }
  | { type: 'ellipse'; cx: number; cy: number; rx: number; ry: number; fill?: Paint; stroke?: Paint; strokeWidth?: number }
  | { type: 'line'; x1: number; y1: number; x2: number; y2: number; stroke: Paint; strokeWidth: number }
  | { type: 'poly'; points: Array<[number, number]>; fill?: Paint; stroke?: Paint; strokeWidth?: number }
  | { type: 'text'; x: number; y: number; text: string; size: number; bold?: boolean; fill: Paint };

/** The built-in glyph families, or the id of an env that served its legend (envs.list): then its boards are drawn from that legend. */
export type BoardFamily = 'sokoban' | 'frozenlake' | 'sudoku' | 'unknown' | (string & {});

const SOKOBAN_KINDS = new Set<CellKind>(['wall', 'floor', 'target', 'box', 'boxOnTarget', 'playerOnTarget']);
const FROZEN_KINDS = new Set<CellKind>(['frozen', 'hole', 'goal', 'start', 'playerInHole', 'playerOnGoal']);
const SUDOKU_KINDS = new Set<CellKind>(['digit', 'empty']);

/** Which family of glyphs a board uses: the env's served legend first, then the built-in families by env id, then by cell kinds. */
export function boardFamily(board: Pick<Board, 'env' | 'cells'>): BoardFamily {
  const env = board.env.toLowerCase();
  if (legendFor(env)) return env;
  if (env.includes('sokoban')) return 'sokoban';
  if (env.includes('frozen') || env.includes('lake')) return 'frozenlake';
  if (env.includes('sudoku')) return 'sudoku';
  for (const row of board.cells) {
    for (const kind of row) {
      if (SOKOBAN_KINDS.has(kind)) return 'sokoban';
      if (FROZEN_KINDS.has(kind)) return 'frozenlake';
      if (SUDOKU_KINDS.has(kind)) return 'sudoku';
    }
  }
  return 'unknown';
}

/** Sudoku box size: 2×2 for 4×4, 3×3 for 9×9, 2×3 for 6×6 (rows × cols of one box). */
export function sudokuBox(n: number): { rows: number; cols: number } {
  let rows = 1;
  for (let d = 1; d * d <= n; d++) if (n % d === 0) rows = d;
  return { rows, cols: Math.max(1, Math.round(n / rows)) };
}

/** Problems that make a board undrawable as given (shape mismatches); empty when it is fine. */
export function boardProblems(board: Board): string[] {
  const problems: string[] = [];
  if (!Array.isArray(board.cells)) {
    return [`board.cells: expected an array of ${board.rows} rows, received ${typeof board.cells}`];
  }
  if (board.cells.length !== board.rows) {
    problems.push(`board.cells: expected ${board.rows} rows (board.rows), received ${board.cells.length}`);
  }
  board.cells.forEach((row, r) => {
    if (!Array.isArray(row) || row.length !== board.cols) {
      problems.push(`board.cells[${r}]: expected ${board.cols} cells (board.cols), received ${Array.isArray(row) ? row.length : typeof row}`);
    }
  });
  return problems;
}

/** Human description of a cell, used in aria labels and tooltips (the env's legend label when it served one). */
export function cellLabel(kind: CellKind, value?: number | null, given?: boolean, family?: BoardFamily): string {
  const served = family !== undefined && kind !== 'digit' ? legendEntry(family, kind) : undefined;
  if (served) return served.label;
  switch (kind) {
    case 'boxOnTarget': return 'box on target';
    case 'playerOnTarget': return 'player on target';
    case 'playerInHole': return 'player in hole';
    case 'playerOnGoal': return 'player on goal';
    case 'digit': return value == null ? 'digit' : `${given ? 'given' : 'filled'} ${value}`;
    case 'unknown': return 'unknown (unparseable)';
    default: return kind;
  }
}

// ---- glyphs, in a unit cell ---------------------------------------------------------------

const S = 0.04; // thin stroke width in cell units

function player(): Shape[] {
  return [
    { type: 'circle', cx: 0.5, cy: 0.3, r: 0.14, fill: 'player', stroke: 'playerLine', strokeWidth: S },
    { type: 'poly', points: [[0.28, 0.84], [0.34, 0.5], [0.66, 0.5], [0.72, 0.84]], fill: 'player', stroke: 'playerLine', strokeWidth: S },
  ];
}

function sokobanFloor(): Shape[] {
  return [{ type: 'rect', x: 0, y: 0, w: 1, h: 1, fill: 'floor' }];
}

function targetRing(): Shape[] {
  return [
    { type: 'circle', cx: 0.5, cy: 0.5, r: 0.3, stroke: 'target', strokeWidth: 0.07 },
    { type: 'circle', cx: 0.5, cy: 0.5, r: 0.1, fill: 'target' },
  ];
}

function box(done: boolean): Shape[] {
  const fill: Paint = done ? 'boxDone' : 'box';
  const line: Paint = done ? 'boxDoneLine' : 'boxLine';
  const shapes: Shape[] = [
    { type: 'rect', x: 0.14, y: 0.14, w: 0.72, h: 0.72, rx: 0.06, fill, stroke: line, strokeWidth: 0.06 },
  ];
  if (done) {
    // a check mark: the box sits on its target
    shapes.push({ type: 'poly', points: [[0.3, 0.52], [0.44, 0.66], [0.7, 0.36]], stroke: line, strokeWidth: 0.09 });
  } else {
    shapes.push(
      { type: 'line', x1: 0.24, y1: 0.24, x2: 0.76, y2: 0.76, stroke: line, strokeWidth: 0.06 },
      { type: 'line', x1: 0.76, y1: 0.24, x2: 0.24, y2: 0.76, stroke: line, strokeWidth: 0.06 },
    );
  }
  return shapes;
}

function wall(): Shape[] {
  return [
    { type: 'rect', x: 0, y: 0, w: 1, h: 1, fill: 'wall' },
    { type: 'line', x1: 0, y1: 0.33, x2: 1, y2: 0.33, stroke: 'wallLine', strokeWidth: S },
    { type: 'line', x1: 0, y1: 0.66, x2: 1, y2: 0.66, stroke: 'wallLine', strokeWidth: S },
    { type: 'line', x1: 0.5, y1: 0, x2: 0.5, y2: 0.33, stroke: 'wallLine', strokeWidth: S },
    { type: 'line', x1: 0.25, y1: 0.33, x2: 0.25, y2: 0.66, stroke: 'wallLine', strokeWidth: S },
    { type: 'line', x1: 0.75, y1: 0.33, x2: 0.75, y2: 0.66, stroke: 'wallLine', strokeWidth: S },
    { type: 'line', x1: 0.5, y1: 0.66, x2: 0.5, y2: 1, stroke: 'wallLine', strokeWidth: S },
  ];
}

function ice(): Shape[] {
  return [
    { type: 'rect', x: 0, y: 0, w: 1, h: 1, fill: 'frozen' },
    { type: 'line', x1: 0.15, y1: 0.8, x2: 0.35, y2: 0.65, stroke: 'frozenLine', strokeWidth: S },
    { type: 'line', x1: 0.65, y1: 0.3, x2: 0.85, y2: 0.18, stroke: 'frozenLine', strokeWidth: S },
  ];
}

function hole(): Shape[] {
  return [{ type: 'ellipse', cx: 0.5, cy: 0.55, rx: 0.38, ry: 0.3, fill: 'hole' }];
}

function goalFlag(): Shape[] {
  return [
    { type: 'line', x1: 0.3, y1: 0.15, x2: 0.3, y2: 0.88, stroke: 'goalLine', strokeWidth: 0.06 },
    { type: 'poly', points: [[0.32, 0.15], [0.78, 0.3], [0.32, 0.46]], fill: 'goal', stroke: 'goalLine', strokeWidth: S },
  ];
}

function unknownCell(): Shape[] {
  return [
    { type: 'rect', x: 0, y: 0, w: 1, h: 1, fill: 'unknown' },
    { type: 'line', x1: 0, y1: 0.5, x2: 0.5, y2: 0, stroke: 'grid', strokeWidth: S },
    { type: 'line', x1: 0, y1: 1, x2: 1, y2: 0, stroke: 'grid', strokeWidth: S },
    { type: 'line', x1: 0.5, y1: 1, x2: 1, y2: 0.5, stroke: 'grid', strokeWidth: S },
    { type: 'text', x: 0.5, y: 0.5, text: '?', size: 0.55, bold: true, fill: 'unknownText' },
  ];
}

function digitShapes(opts: { value?: number | null; given?: boolean }, withBackground: boolean): Shape[] {
  const given = opts.given === true;
  const shapes: Shape[] = withBackground ? [{ type: 'rect', x: 0, y: 0, w: 1, h: 1, fill: given ? 'given' : 'cell' }] : [];
  if (opts.value != null) {
    shapes.push({ type: 'text', x: 0.5, y: 0.54, text: String(opts.value), size: given ? 0.62 : 0.56, bold: given, fill: given ? 'givenText' : 'filledText' });
  }
  return shapes;
}

/** Background glyphs: left out when a cell is drawn as an overlay (`background: false`). */
const BACKGROUND_GLYPHS = new Set(['floor', 'ice', 'cell']);

/**
 * The shapes of one glyph layer of a served legend. Known names draw the built-in pictures; any other name draws the cell's
 * symbol as a letter, so an env with a new kind of cell is drawn legibly without a renderer change.
 */
export function glyphShapes(glyph: string, symbol: string, opts: { value?: number | null; given?: boolean; background?: boolean } = {}): Shape[] {
  const withBackground = opts.background !== false;
  if (!withBackground && BACKGROUND_GLYPHS.has(glyph)) return [];
  switch (glyph) {
    case 'floor': return sokobanFloor();
    case 'ice': return ice();
    case 'cell': return [{ type: 'rect', x: 0, y: 0, w: 1, h: 1, fill: 'cell' }];
    case 'wall': return withBackground ? wall() : [{ type: 'rect', x: 0.05, y: 0.05, w: 0.9, h: 0.9, fill: 'wall' }];
    case 'target': return targetRing();
    case 'box': return box(false);
    case 'boxDone': return box(true);
    case 'player': return player();
    case 'playerSmall': return player().map((s) => shrinkRight(s));
    case 'hole': return hole();
    case 'flag': return goalFlag();
    case 'cross': return [
      { type: 'line', x1: 0.2, y1: 0.2, x2: 0.8, y2: 0.8, stroke: 'danger', strokeWidth: 0.09 },
      { type: 'line', x1: 0.8, y1: 0.2, x2: 0.2, y2: 0.8, stroke: 'danger', strokeWidth: 0.09 },
    ];
    case 'digit': return digitShapes(opts, withBackground);
    case 'unknown': return unknownCell();
    default: return [   // a letter on a light plate, legible on any background layer
      { type: 'rect', x: 0.2, y: 0.2, w: 0.6, h: 0.6, rx: 0.12, fill: 'cell', stroke: 'grid', strokeWidth: S },
      { type: 'text', x: 0.5, y: 0.52, text: symbol, size: 0.46, bold: true, fill: 'givenText' },
    ];
  }
}

/**
 * Shapes of one cell in unit coordinates. A family that is an env with a served legend draws the legend's glyph layers; the
 * built-in families decide the background of a plain 'player' (floor for Sokoban, ice for FrozenLake). `background: false`
 * draws only the glyph (overlays). A kind no legend and no family knows draws its first letter, never nothing.
 */
export function cellShapes(kind: CellKind, family: BoardFamily, opts: { value?: number | null; given?: boolean; background?: boolean } = {}): Shape[] {
  const served = legendEntry(family, kind);
  if (served) return served.glyphs.flatMap((glyph) => glyphShapes(glyph, served.symbol, opts));
  const withBackground = opts.background !== false;
  const bg = (shapes: Shape[]): Shape[] => (withBackground ? shapes : []);
  switch (kind) {
    case 'wall': return withBackground ? wall() : [{ type: 'rect', x: 0.05, y: 0.05, w: 0.9, h: 0.9, fill: 'wall' }];
    case 'floor': return bg(sokobanFloor());
    case 'target': return [...bg(sokobanFloor()), ...targetRing()];
    case 'box': return [...bg(sokobanFloor()), ...box(false)];
    case 'boxOnTarget': return [...bg(sokobanFloor()), ...targetRing(), ...box(true)];
    case 'player': return [...bg(family === 'frozenlake' ? ice() : sokobanFloor()), ...player()];
    case 'playerOnTarget': return [...bg(sokobanFloor()), ...targetRing(), ...player()];
    case 'frozen': return bg(ice());
    case 'hole': return [...bg(ice()), ...hole()];
    case 'goal': return [...bg(ice()), ...goalFlag()];
    case 'start': return [...bg(ice()), { type: 'text', x: 0.5, y: 0.52, text: 'S', size: 0.45, bold: true, fill: 'start' }];
    case 'playerInHole': return [
      ...bg(ice()), ...hole(), ...player(),
      { type: 'line', x1: 0.2, y1: 0.2, x2: 0.8, y2: 0.8, stroke: 'danger', strokeWidth: 0.09 },
      { type: 'line', x1: 0.8, y1: 0.2, x2: 0.2, y2: 0.8, stroke: 'danger', strokeWidth: 0.09 },
    ];
    case 'playerOnGoal': return [...bg(ice()), ...goalFlag(), ...player().map((s) => shrinkRight(s))];
    case 'digit': return digitShapes(opts, withBackground);
    case 'empty': return bg([{ type: 'rect', x: 0, y: 0, w: 1, h: 1, fill: 'cell' }]);
    case 'unknown': return unknownCell();
    default: return [...bg([{ type: 'rect', x: 0, y: 0, w: 1, h: 1, fill: 'unknown' }]),
      { type: 'text', x: 0.5, y: 0.52, text: kind.slice(0, 1).toUpperCase(), size: 0.5, bold: true, fill: 'unknownText' }];
  }
}

/** Move the player glyph to the right half of the cell so the goal flag stays visible. */
function shrinkRight(shape: Shape): Shape {
  const k = 0.75;
  const tx = (x: number): number => 0.22 + x * k;
  const ty = (y: number): number => 0.12 + y * k;
  switch (shape.type) {
    case 'circle': return { ...shape, cx: tx(shape.cx), cy: ty(shape.cy), r: shape.r * k };
    case 'poly': return { ...shape, points: shape.points.map(([x, y]) => [tx(x), ty(y)] as [number, number]) };
    default: return shape;
  }
}

/** Grid lines of the whole board, in board cell units (Sudoku boxes drawn thicker). */
export function gridShapes(board: Pick<Board, 'rows' | 'cols'>, family: BoardFamily): Shape[] {
  const shapes: Shape[] = [];
  const { rows, cols } = board;
  const box = family === 'sudoku' && rows === cols ? sudokuBox(rows) : null;
  for (let r = 0; r <= rows; r++) {
    const strong = box !== null && r % box.rows === 0;
    shapes.push({ type: 'line', x1: 0, y1: r, x2: cols, y2: r, stroke: strong ? 'gridStrong' : 'grid', strokeWidth: strong ? 0.08 : 0.02 });
  }
  for (let c = 0; c <= cols; c++) {
    const strong = box !== null && c % box.cols === 0;
    shapes.push({ type: 'line', x1: c, y1: 0, x2: c, y2: rows, stroke: strong ? 'gridStrong' : 'grid', strokeWidth: strong ? 0.08 : 0.02 });
  }
  return shapes;
}

/** Keep only in-range, de-duplicated [row, col] pairs. */
export function normaliseCells(cells: ReadonlyArray<readonly [number, number]> | undefined, rows: number, cols: number): Array<[number, number]> {
  const seen = new Set<string>();
  const out: Array<[number, number]> = [];
  for (const [r, c] of cells ?? []) {
    if (!Number.isInteger(r) || !Number.isInteger(c) || r < 0 || c < 0 || r >= rows || c >= cols) continue;
    const key = `${r},${c}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push([r, c]);
  }
  return out;
}

/** Cells where two boards differ (kind or Sudoku value); boards of different shape differ everywhere they overlap or not. */
export function diffCells(a: Board, b: Board): Array<[number, number]> {
  const rows = Math.max(a.rows, b.rows);
  const cols = Math.max(a.cols, b.cols);
  const out: Array<[number, number]> = [];
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const ka = a.cells[r]?.[c];
      const kb = b.cells[r]?.[c];
      const va = a.values?.[r]?.[c] ?? null;
      const vb = b.values?.[r]?.[c] ?? null;
      if (ka !== kb || va !== vb) out.push([r, c]);
    }
  }
  return out;
}

/** One-line summary of a board for screen readers, e.g. "sokoban 6×6: player at (1,2), 1 box, 1 target". */
export function boardSummary(board: Board): string {
  const family = boardFamily(board);
  const counts = new Map<string, number>();
  const players: string[] = [];
  board.cells.forEach((row, r) => row.forEach((kind, c) => {
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
    if (kind.startsWith('player')) players.push(`${cellLabel(kind, null, false, family)} at (${r},${c})`);
  }));
  const parts: string[] = [...players];
  const add = (kind: CellKind, one: string, many: string): void => {
    const n = counts.get(kind) ?? 0;
    if (n > 0) parts.push(`${n} ${n === 1 ? one : many}`);
  };
  if (family === 'sokoban') { add('box', 'box', 'boxes'); add('boxOnTarget', 'box on target', 'boxes on targets'); add('target', 'free target', 'free targets'); }
  if (family === 'frozenlake') { add('hole', 'hole', 'holes'); add('goal', 'goal', 'goals'); }
  if (family === 'sudoku') { add('digit', 'digit', 'digits'); add('empty', 'empty cell', 'empty cells'); }
  const served = legendFor(family);
  if (served && !['sokoban', 'frozenlake', 'sudoku'].includes(family)) {
    for (const cell of served) if (cell.entities.length > 0 && !cell.kind.startsWith('player')) add(cell.kind, cell.label, `${cell.label}s`);
  }
  add('unknown', 'unknown cell', 'unknown cells');
  return `${board.env} ${board.rows}×${board.cols}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`;
}
