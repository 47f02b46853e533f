// PNG export of boards: the same shapes as the SVG renderer, painted on a canvas with the 2D
// API (no SVG-to-image round trip, so it works under a strict CSP without blob:/data: images).
import type { Board } from '../../../core/api/records.js';
import {
  boardFamily, boardProblems, cellShapes, diffCells, gridShapes, normaliseCells, type Paint, type Shape,
} from './board-shapes.js';

export type Palette = Record<Paint, string>;

/** Light palette; keep in step with boards.css. */
export const LIGHT_PALETTE: Palette = {
  floor: '#efe6d2', wall: '#6b4f3a', wallLine: '#8a6b52', target: '#d1495b', box: '#d9a441', boxLine: '#7a5410',
  boxDone: '#4caf72', boxDoneLine: '#1e6b3c', player: '#3a6fd8', playerLine: '#1b3b80', frozen: '#dcefff',
  frozenLine: '#9cc7ec', hole: '#1f2f44', goal: '#f2c230', goalLine: '#8a6a00', start: '#5b7fa6', danger: '#d62828',
  cell: '#ffffff', given: '#e6e9ef', givenText: '#111827', filledText: '#2563eb', grid: '#9aa3af', gridStrong: '#1f2937',
  unknown: '#f3e8ff', unknownText: '#7e22ce', highlight: '#e11d48',
};

const PAINTS = Object.keys(LIGHT_PALETTE) as Paint[];

/** The palette in effect on an element (reads the --board-* variables of boards.css), falling back to the light one. */
export function readPalette(element?: Element | null): Palette {
  const palette: Palette = { ...LIGHT_PALETTE };
  if (!element || typeof getComputedStyle !== 'function') return palette;
  const style = getComputedStyle(element);
  for (const paint of PAINTS) {
    const value = style.getPropertyValue(`--board-${paint}`).trim();
    if (value) palette[paint] = value;
  }
  return palette;
}

/** The subset of CanvasRenderingContext2D the painter uses (so tests can pass a recorder). */
export type Canvas2D = Pick<CanvasRenderingContext2D,
  'save' | 'restore' | 'translate' | 'scale' | 'beginPath' | 'rect' | 'arc' | 'ellipse' | 'moveTo' | 'lineTo' |
  'closePath' | 'fill' | 'stroke' | 'fillText' | 'setLineDash' | 'roundRect'> & {
  fillStyle: CanvasRenderingContext2D['fillStyle'];
  strokeStyle: CanvasRenderingContext2D['strokeStyle'];
  lineWidth: number;
  lineCap: CanvasLineCap;
  lineJoin: CanvasLineJoin;
  font: string;
  textAlign: CanvasTextAlign;
  textBaseline: CanvasTextBaseline;
  globalAlpha: number;
};

function paintShape(ctx: Canvas2D, shape: Shape, palette: Palette, cellPx: number): void {
  ctx.beginPath();
  switch (shape.type) {
    case 'rect':
      if (shape.rx && typeof ctx.roundRect === 'function') ctx.roundRect(shape.x, shape.y, shape.w, shape.h, shape.rx);
      else ctx.rect(shape.x, shape.y, shape.w, shape.h);
      break;
    case 'circle': ctx.arc(shape.cx, shape.cy, shape.r, 0, Math.PI * 2); break;
    case 'ellipse': ctx.ellipse(shape.cx, shape.cy, shape.rx, shape.ry, 0, 0, Math.PI * 2); break;
    case 'line': ctx.moveTo(shape.x1, shape.y1); ctx.lineTo(shape.x2, shape.y2); break;
    case 'poly':
      shape.points.forEach(([x, y], i) => (i === 0 ? ctx.moveTo(x, y) : ctx.lineTo(x, y)));
      if (shape.fill) ctx.closePath();
      break;
    case 'text':
      // fonts are sized in real pixels: tiny fractional font sizes under a scale render badly
      ctx.save();
      ctx.scale(1 / cellPx, 1 / cellPx);
      ctx.fillStyle = palette[shape.fill];
      ctx.font = `${shape.bold ? 'bold ' : ''}${Math.round(shape.size * cellPx)}px monospace`;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.fillText(shape.text, shape.x * cellPx, shape.y * cellPx);
      ctx.restore();
      return;
  }
  if (shape.type !== 'line' && shape.fill) {
    ctx.fillStyle = palette[shape.fill];
    ctx.fill();
  }
  if (shape.stroke) {
    ctx.strokeStyle = palette[shape.stroke];
    ctx.lineWidth = shape.strokeWidth ?? 0.04;
    ctx.lineCap = 'round';
    ctx.lineJoin = 'round';
    ctx.stroke();
  }
}

export interface DrawOptions {
  highlight?: ReadonlyArray<readonly [number, number]>;
  overlay?: Board | null;
  palette?: Palette;
  /** Pixels per cell (default 40). */
  cellPx?: number;
  /** Background behind the board (default: transparent). */
  background?: string;
}

/** Paint a board onto a 2D context whose origin is the top-left of the board. */
export function drawBoard(ctx: Canvas2D, board: Board, options: DrawOptions = {}): void {
  const problems = boardProblems(board);
  if (problems.length > 0) {
    throw new Error(`drawBoard: cannot draw the ${board.env} board: ${problems.join('; ')}`);
  }
  const palette = options.palette ?? LIGHT_PALETTE;
  const cellPx = options.cellPx ?? 40;
  const family = boardFamily(board);
  ctx.save();
  ctx.scale(cellPx, cellPx);
  board.cells.forEach((row, r) => row.forEach((kind, c) => {
    ctx.save();
    ctx.translate(c, r);
    for (const shape of cellShapes(kind, family, { value: board.values?.[r]?.[c] ?? null, given: board.givens?.[r]?.[c] === true })) {
      paintShape(ctx, shape, palette, cellPx);
    }
    ctx.restore();
  }));
  for (const shape of gridShapes(board, family)) paintShape(ctx, shape, palette, cellPx);
  const overlay = options.overlay;
  if (overlay && boardProblems(overlay).length === 0) {
    ctx.save();
    ctx.globalAlpha = 0.62;
    for (const [r, c] of diffCells(board, overlay)) {
      const kind = overlay.cells[r]?.[c];
      if (kind === undefined || r >= board.rows || c >= board.cols) continue;
      ctx.save();
      ctx.translate(c, r);
      for (const shape of cellShapes(kind, boardFamily(overlay), { value: overlay.values?.[r]?.[c] ?? null, given: overlay.givens?.[r]?.[c] === true })) {
        paintShape(ctx, shape, palette, cellPx);
      }
      ctx.setLineDash([0.12, 0.08]);
      paintShape(ctx, { type: 'rect', x: 0.06, y: 0.06, w: 0.88, h: 0.88, stroke: 'player', strokeWidth: 0.05 }, palette, cellPx);
      ctx.setLineDash([]);
      ctx.restore();
    }
    ctx.restore();
  }
  for (const [r, c] of normaliseCells(options.highlight, board.rows, board.cols)) {
    paintShape(ctx, { type: 'rect', x: c + 0.05, y: r + 0.05, w: 0.9, h: 0.9, rx: 0.08, stroke: 'highlight', strokeWidth: 0.1 }, palette, cellPx);
  }
  ctx.restore();
}

/** Render a board to a PNG blob (browser only: needs a canvas). */
export async function boardToPng(board: Board, options: DrawOptions & { paletteFrom?: Element | null } = {}): Promise<Blob> {
  const cellPx = options.cellPx ?? 40;
  const margin = Math.ceil(cellPx * 0.1);
  const canvas = document.createElement('canvas');
  canvas.width = board.cols * cellPx + margin * 2;
  canvas.height = board.rows * cellPx + margin * 2;
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('boardToPng: this browser gave no 2D canvas context; PNG export needs a canvas (use the SVG instead).');
  if (options.background) {
    ctx.fillStyle = options.background;
    ctx.fillRect(0, 0, canvas.width, canvas.height);
  }
  ctx.translate(margin, margin);
  drawBoard(ctx, board, { ...options, palette: options.palette ?? readPalette(options.paletteFrom) });
  return await new Promise<Blob>((resolve, reject) => {
    canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('boardToPng: canvas.toBlob returned nothing (canvas too large or tainted).'))), 'image/png');
  });
}

/** Offer a blob as a file download. */
export function downloadBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Offer text (JSON, JSONL) as a file download. */
export function downloadText(text: string, filename: string, type = 'application/json'): void {
  downloadBlob(new Blob([text], { type }), filename);
}
