// A legend of the cell kinds of one environment, drawn with the same glyphs as the board: the legend the env served
// (envs.list, legend-store.ts) when there is one, else the built-in family's kinds.
import type { ReactElement } from 'react';
import type { CellKind } from '../../../core/api/records.js';
import { cellLabel, cellShapes, type BoardFamily } from './board-shapes.js';
import { ShapeElement } from './Board.js';
import { legendFor, useLegends } from './legend-store.js';

export const FAMILY_KINDS: Record<'sokoban' | 'frozenlake' | 'sudoku' | 'unknown', CellKind[]> = {
  sokoban: ['wall', 'floor', 'target', 'box', 'boxOnTarget', 'player', 'playerOnTarget'],
  frozenlake: ['frozen', 'hole', 'goal', 'start', 'player', 'playerInHole', 'playerOnGoal'],
  sudoku: ['digit', 'empty'],
  unknown: [],
};

export function BoardLegend({ family, showUnknown = false, showOverlay = false }: { family: BoardFamily; showUnknown?: boolean; showOverlay?: boolean }): ReactElement {
  useLegends();
  const served = legendFor(family)?.map((c) => c.kind);
  const builtIn = FAMILY_KINDS[family as keyof typeof FAMILY_KINDS] ?? [];
  const kinds = [...(served ?? builtIn), ...(showUnknown ? (['unknown'] as CellKind[]) : [])];
  const items: Array<{ key: string; kind: CellKind; given?: boolean; label: string }> = [];
  for (const kind of kinds) {
    if (kind === 'digit') {
      items.push({ key: 'given', kind, given: true, label: 'given digit' }, { key: 'filled', kind, given: false, label: 'filled digit' });
    } else {
      items.push({ key: kind, kind, label: cellLabel(kind, null, false, family) });
    }
  }
  return (
    <div className="board-legend" aria-label="Board legend">
      {items.map((item) => (
        <span key={item.key} className="board-legend-item" data-legend-kind={item.kind}>
          <svg viewBox="0 0 1 1" width={18} height={18} aria-hidden="true">
            {cellShapes(item.kind, family, { value: item.kind === 'digit' ? 3 : null, given: item.given }).map((s, i) => <ShapeElement key={i} shape={s} />)}
          </svg>
          {item.label}
        </span>
      ))}
      <span className="board-legend-item">
        <svg viewBox="0 0 1 1" width={18} height={18} aria-hidden="true">
          <rect className="board-stroke-highlight board-fill-none" x={0.08} y={0.08} width={0.84} height={0.84} strokeWidth={0.12} />
        </svg>
        wrong cell
      </span>
      {showOverlay && (
        <span className="board-legend-item" data-legend-kind="overlay">
          <svg viewBox="0 0 1 1" width={18} height={18} aria-hidden="true">
            <rect className="board-overlay-outline" x={0.06} y={0.06} width={0.88} height={0.88} strokeWidth={0.08} />
            <rect className="board-overlay-inset-frame" x={0.54} y={0.04} width={0.42} height={0.42} strokeWidth={0.06} />
          </svg>
          model&apos;s prediction (corner inset, dashed) where it differs from the truth
        </span>
      )}
    </div>
  );
}
