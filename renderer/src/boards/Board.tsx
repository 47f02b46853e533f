// SVG board renderer for every environment: drawn from the legend each env serves (legend-store.ts), or the built-in glyphs.
// Colours come from CSS classes (boards.css) so that light/dark themes and a strict CSP work:
// no inline <style>, no style strings. Each cell carries data-cell-kind / data-row / data-col
// for tests and tooling; highlighted cells carry data-highlighted="true".
import type { ReactElement } from 'react';
import type { Board as BoardData, CellKind } from '../../../core/api/records.js';
import {
  boardFamily, boardProblems, boardSummary, cellLabel, cellShapes, diffCells, gridShapes, normaliseCells,
  type BoardFamily, type Shape,
} from './board-shapes.js';
import { useLegends } from './legend-store.js';
import './boards.css';

export interface BoardProps {
  board: BoardData;
  /** Cells to light up (e.g. WmScore.wrongCells), [row, col] zero-based; out-of-range pairs are ignored. */
  highlight?: ReadonlyArray<readonly [number, number]>;
  /** A second board (e.g. the model's prediction) drawn semi-transparent over the truth where it differs. */
  overlay?: BoardData | null;
  /** 'strong' (default): red outlines; 'soft': thin dashed ones (e.g. every cell wrong because nothing parsed). */
  highlightStyle?: 'strong' | 'soft';
  /** Longest side in CSS pixels (default: 40 px per cell, at most 360). */
  size?: number;
  title?: string;
  /** Extra class on the figure. */
  className?: string;
  /** Test id / DOM id hook for the figure (also used by export buttons to find the svg). */
  id?: string;
}

export function defaultBoardSize(board: Pick<BoardData, 'rows' | 'cols'>): number {
  return Math.min(360, Math.max(board.rows, board.cols, 1) * 40);
}

/** One shape as an SVG element. Paint names become CSS classes; geometry stays in cell units. */
export function ShapeElement({ shape }: { shape: Shape }): ReactElement {
  const cls = [shape.type !== 'line' && 'fill' in shape && shape.fill ? `board-fill-${shape.fill}` : 'board-fill-none',
    'stroke' in shape && shape.stroke ? `board-stroke-${shape.stroke}` : ''].filter(Boolean).join(' ');
  switch (shape.type) {
    case 'rect':
      return <rect className={cls} x={shape.x} y={shape.y} width={shape.w} height={shape.h} rx={shape.rx} strokeWidth={shape.strokeWidth} />;
    case 'circle':
      return <circle className={cls} cx={shape.cx} cy={shape.cy} r={shape.r} strokeWidth={shape.strokeWidth} />;
    case 'ellipse':
      return <ellipse className={cls} cx={shape.cx} cy={shape.cy} rx={shape.rx} ry={shape.ry} strokeWidth={shape.strokeWidth} />;
    case 'line':
      return <line className={`board-stroke-${shape.stroke}`} x1={shape.x1} y1={shape.y1} x2={shape.x2} y2={shape.y2} strokeWidth={shape.strokeWidth} strokeLinecap="round" />;
    case 'poly':
      return <polyline className={cls} points={shape.points.map(([x, y]) => `${x},${y}`).join(' ')} strokeWidth={shape.strokeWidth} strokeLinejoin="round" strokeLinecap="round" />;
    case 'text':
      return (
        <text className={`board-fill-${shape.fill} board-text${shape.bold ? ' board-text-bold' : ''}`} x={shape.x} y={shape.y}
          fontSize={shape.size} textAnchor="middle" dominantBaseline="central">{shape.text}</text>
      );
  }
}

function Cell({ kind, family, row, col, value, given, highlighted }: {
  kind: CellKind; family: BoardFamily; row: number; col: number; value: number | null; given: boolean; highlighted: boolean;
}): ReactElement {
  const shapes = cellShapes(kind, family, { value, given });
  return (
    <g className={`board-cell board-cell-${kind}`} transform={`translate(${col} ${row})`}
      data-cell-kind={kind} data-row={row} data-col={col}
      data-given={kind === 'digit' ? String(given) : undefined}
      data-value={value ?? undefined}
      data-highlighted={highlighted ? 'true' : undefined}>
      <title>{`(${row},${col}) ${cellLabel(kind, value, given, family)}`}</title>
      {shapes.map((shape, i) => <ShapeElement key={i} shape={shape} />)}
    </g>
  );
}

/** The board as an accessible SVG figure. */
export default function Board({ board, highlight, overlay, highlightStyle = 'strong', size, title, className, id }: BoardProps): ReactElement {
  useLegends(); // redraw when the envs' legends arrive
  const problems = boardProblems(board);
  if (problems.length > 0) {
    return (
      <figure className={`board board-invalid ${className ?? ''}`} id={id} data-env={board.env}>
        {title && <figcaption className="board-title">{title}</figcaption>}
        <div role="alert" className="board-error">
          Cannot draw this {board.env || 'board'}: {problems.slice(0, 3).join('; ')}
          {problems.length > 3 ? ` (and ${problems.length - 3} more)` : ''}. The board record is malformed; check the engine that wrote it.
        </div>
      </figure>
    );
  }
  const family = boardFamily(board);
  const longest = size ?? defaultBoardSize(board);
  const unit = longest / Math.max(board.rows, board.cols, 1);
  const width = Math.round(board.cols * unit);
  const height = Math.round(board.rows * unit);
  const lit = normaliseCells(highlight, board.rows, board.cols);
  const litSet = new Set(lit.map(([r, c]) => `${r},${c}`));
  const overlayOk = overlay != null && boardProblems(overlay).length === 0;
  const overlayDiff = overlayOk ? diffCells(board, overlay) : [];
  const label = `${title ? `${title}: ` : ''}${boardSummary(board)}${lit.length > 0 ? `; ${lit.length} highlighted cell${lit.length === 1 ? '' : 's'}` : ''}${overlayOk ? `; prediction overlay differs in ${overlayDiff.length} cell${overlayDiff.length === 1 ? '' : 's'}` : ''}`;

  return (
    <figure className={`board board-${family} ${className ?? ''}`} id={id} data-env={board.env}>
      {title && <figcaption className="board-title">{title}</figcaption>}
      <svg role="img" aria-label={label} className="board-svg" xmlns="http://www.w3.org/2000/svg"
        viewBox={`-0.05 -0.05 ${board.cols + 0.1} ${board.rows + 0.1}`} width={width} height={height}>
        <title>{label}</title>
        <g className="board-cells">
          {board.cells.map((row, r) => row.map((kind, c) => (
            <Cell key={`${r}-${c}`} kind={kind} family={family} row={r} col={c}
              value={board.values?.[r]?.[c] ?? null} given={board.givens?.[r]?.[c] === true}
              highlighted={litSet.has(`${r},${c}`)} />
          )))}
        </g>
        <g className="board-grid">
          {gridShapes(board, family).map((shape, i) => <ShapeElement key={i} shape={shape} />)}
        </g>
        {overlayOk && (
          <g className="board-overlay" data-overlay="true">
            {overlayDiff.filter(([r, c]) => r < overlay.rows && c < overlay.cols).map(([r, c]) => {
              const kind = overlay.cells[r]![c]!;
              const value = overlay.values?.[r]?.[c] ?? null;
              const given = overlay.givens?.[r]?.[c] === true;
              // the truth stays solid underneath; the prediction is a small inset in the cell's corner inside a dashed outline
              const truth = cellLabel(board.cells[r]![c]!, board.values?.[r]?.[c] ?? null, board.givens?.[r]?.[c] === true, family);
              return (
                <g key={`o-${r}-${c}`} className="board-overlay-cell" transform={`translate(${c} ${r})`}
                  data-overlay-kind={kind} data-row={r} data-col={c}>
                  <title>{`(${r},${c}) predicted ${cellLabel(kind, value, given, boardFamily(overlay))}; truth ${truth}`}</title>
                  <rect className="board-overlay-outline" x={0.06} y={0.06} width={0.88} height={0.88} strokeWidth={0.05} />
                  <g className="board-overlay-inset" transform="translate(0.54 0.04) scale(0.42)">
                    {cellShapes(kind, boardFamily(overlay), { value, given }).map((shape, i) => <ShapeElement key={i} shape={shape} />)}
                    <rect className="board-overlay-inset-frame" x={0} y={0} width={1} height={1} strokeWidth={0.08} />
                  </g>
                </g>
              );
            })}
          </g>
        )}
        <g className="board-highlights">
          {lit.map(([r, c]) => (
            <rect key={`h-${r}-${c}`} className={`board-highlight board-stroke-highlight board-fill-none${highlightStyle === 'soft' ? ' board-highlight-soft' : ''}`}
              data-highlight-row={r} data-highlight-col={c}
              x={c + 0.05} y={r + 0.05} width={0.9} height={0.9} rx={0.08} strokeWidth={highlightStyle === 'soft' ? 0.05 : 0.1} />
          ))}
        </g>
      </svg>
    </figure>
  );
}
