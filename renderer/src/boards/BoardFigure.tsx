// A board with a caption, an optional placeholder when there is no board (unparseable model
// output), and a PNG export button. Used by the trace inspector and the replay view.
import { useRef, useState, type ReactElement, type ReactNode } from 'react';
import type { Board as BoardData } from '../../../core/api/records.js';
import Board from './Board.js';
import { boardToPng, downloadBlob } from './board-png.js';

export interface BoardFigureProps {
  board: BoardData | null | undefined;
  title: string;
  highlight?: ReadonlyArray<readonly [number, number]>;
  overlay?: BoardData | null;
  /** 'soft' for highlights that mean "nothing parsed" rather than a specific mistake. */
  highlightStyle?: 'strong' | 'soft';
  size?: number;
  /** Shown instead of the board when `board` is null. */
  missing?: ReactNode;
  /** File name (without .png) for the export; no button when omitted. */
  exportName?: string;
  /** Extra line under the board (e.g. a score). */
  footer?: ReactNode;
  testId?: string;
}

export function safeFileName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 120) || 'board';
}

export default function BoardFigure({ board, title, highlight, overlay, highlightStyle, size, missing, exportName, footer, testId }: BoardFigureProps): ReactElement {
  const ref = useRef<HTMLDivElement>(null);
  const [exportError, setExportError] = useState<string | null>(null);
  const onExport = async (): Promise<void> => {
    if (!board || !exportName) return;
    try {
      setExportError(null);
      const blob = await boardToPng(board, { highlight, overlay, paletteFrom: ref.current?.querySelector('.board') ?? null, cellPx: 48 });
      downloadBlob(blob, `${safeFileName(exportName)}.png`);
    } catch (error) {
      setExportError(error instanceof Error ? error.message : String(error));
    }
  };
  return (
    <div className="board-figure" ref={ref} data-testid={testId}>
      {board ? (
        <Board board={board} title={title} highlight={highlight} overlay={overlay} size={size} highlightStyle={highlightStyle} />
      ) : (
        <div className="board-missing">
          <div className="board-title">{title}</div>
          <div className="board-missing-body">{missing ?? 'no board'}</div>
        </div>
      )}
      {footer && <div className="board-footer">{footer}</div>}
      {board && exportName && (
        <button type="button" className="btn small ghost board-export" onClick={() => { void onExport(); }} title={`Save "${title}" as PNG`}>
          Save PNG
        </button>
      )}
      {exportError && <div className="field-error" role="alert">{exportError}</div>}
    </div>
  );
}
