// Sudoku's state vocabulary: the one-line board `| . 1 2 4 | 4 2 1 3 | …`, the SPA line of empty positions (one-based), the
// listing by digit, the candidates of each empty cell ("relations"), JSON rows, and the parser back to a board. Sudoku has
// no player, so it does not use the grid-game table (grid-vocabulary.ts); it declares the same StateVocabulary by hand.
// Pure: no fs, no Math.random.
import type { Board, CellKind } from '../api/records.js';
import type { Entity, Env, StateVocabulary } from './types.js';

function byKind(entities: Entity[], kind: string): Entity[] {
  return entities.filter((e) => e.kind === kind).sort((a, b) => a.row - b.row || a.col - b.col);
}

/** Board side from its entities. */
function sudokuSize(entities: Entity[]): number {
  return Math.round(Math.sqrt(entities.length));
}

/** `Empty positions to be filled are at (1,1), (4,1), (4,3).` (one-based), as in the released data. */
function spaCoordinates(entities: Entity[]): string {
  const empty = byKind(entities, 'empty').map((e) => `(${e.row + 1},${e.col + 1})`);
  if (empty.length === 0) return 'No empty positions are left.';
  if (empty.length === 1) return `Empty position to be filled is at ${empty[0]}.`;
  return `Empty positions to be filled are at ${empty.join(', ')}.`;
}

/** `Digit 1: (1, 2), …` one line per digit, then `Empty: …` (one-based). */
function coordinateListing(entities: Entity[]): string {
  const size = sudokuSize(entities);
  const lines: string[] = [];
  for (let v = 1; v <= size; v++) {
    const cells = entities.filter((e) => e.kind === 'digit' && e.value === v).sort((a, b) => a.row - b.row || a.col - b.col);
    lines.push(`Digit ${v}: ${cells.length ? cells.map((e) => `(${e.row + 1}, ${e.col + 1})`).join(', ') : 'none'}`);
  }
  const empty = byKind(entities, 'empty');
  lines.push(`Empty: ${empty.length ? empty.map((e) => `(${e.row + 1}, ${e.col + 1})`).join(', ') : 'none'}`);
  return lines.join('\n');
}

/** One line per empty cell with the digits it can still take (Sudoku has no player to relate to). */
function relations(entities: Entity[]): string {
  const size = sudokuSize(entities);
  const [bh, bw] = size === 9 ? [3, 3] : size === 4 ? [2, 2] : [1, size];
  const value = new Map(entities.filter((e) => e.kind === 'digit').map((e) => [`${e.row},${e.col}`, e.value!]));
  const lines = byKind(entities, 'empty').map((e) => {
    const used = new Set<number>();
    for (let k = 0; k < size; k++) {
      used.add(value.get(`${e.row},${k}`) ?? 0);
      used.add(value.get(`${k},${e.col}`) ?? 0);
    }
    const br = e.row - (e.row % bh);
    const bc = e.col - (e.col % bw);
    for (let r = br; r < br + bh; r++) for (let c = bc; c < bc + bw; c++) used.add(value.get(`${r},${c}`) ?? 0);
    const free = Array.from({ length: size }, (_, i) => i + 1).filter((v) => !used.has(v));
    return `(${e.row + 1},${e.col + 1}) can be ${free.length ? free.join(' or ') : 'nothing'}.`;
  });
  return lines.length ? lines.join('\n') : 'No empty positions are left.';
}

function json(env: Env): string {
  return JSON.stringify({ rows: env.board().values });
}

/** The one-line board (or one row per line); null when not found. */
function parseLine(text: string, reference?: Board): Board | null {
  if (!text.includes('|')) return parseListing(text, reference);
  const line = text.split(/\r?\n/).filter((l) => l.includes('|')).join(' ');
  if (!line.trim()) return null;
  const groups = line.split('|').map((g) => g.trim()).filter((g) => g.length > 0)
    .map((g) => g.split(/\s+/).filter((t) => /^[0-9.]$/.test(t)))
    .filter((g) => g.length > 0);
  if (groups.length < 2) return null;
  const size = reference?.rows ?? groups.length;
  const cells: CellKind[][] = [];
  const values: (number | null)[][] = [];
  for (let r = 0; r < size; r++) {
    cells.push([]); values.push([]);
    for (let c = 0; c < size; c++) {
      const token = groups[r]?.[c];
      if (token === undefined) { cells[r].push('unknown'); values[r].push(null); continue; }
      const v = token === '.' || token === '0' ? null : Number(token);
      cells[r].push(v === null ? 'empty' : 'digit');
      values[r].push(v);
    }
  }
  const board: Board = { env: 'sudoku', rows: size, cols: size, cells, values };
  if (reference?.givens) board.givens = reference.givens.map((row) => [...row]);
  return board;
}

const POS = /\(\s*(\d+)\s*,\s*(\d+)\s*\)/g;

/** The listing by digit (one-based); needs the board size from the reference. */
function parseListing(text: string, reference?: Board): Board | null {
  const size = reference?.rows;
  if (!size) return null;
  const values: (number | null)[][] = Array.from({ length: size }, () => new Array<number | null>(size).fill(null));
  const cells: CellKind[][] = Array.from({ length: size }, () => new Array<CellKind>(size).fill('unknown'));
  let found = false;
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:digit\s+(\d)|(empty))\s*:(.*)$/i.exec(line);
    if (!m) continue;
    found = true;
    for (const p of m[3].matchAll(POS)) {
      const r = Number(p[1]); const c = Number(p[2]);
      if (r < 1 || c < 1 || r > size || c > size) continue;
      cells[r - 1][c - 1] = m[2] ? 'empty' : 'digit';
      values[r - 1][c - 1] = m[2] ? null : Number(m[1]);
    }
  }
  if (!found) return null;
  const board: Board = { env: 'sudoku', rows: size, cols: size, cells, values };
  if (reference?.givens) board.givens = reference.givens.map((row) => [...row]);
  return board;
}

function parse(text: string, reference?: Board): Board | null {
  if (text.includes('{')) {
    const start = text.indexOf('{');
    const end = text.lastIndexOf('}');
    if (end > start) {
      try {
        const data = JSON.parse(text.slice(start, end + 1)) as Record<string, unknown> | null;
        if (data && Array.isArray(data.rows)) {
          const line = (data.rows as unknown[]).map((row) => `| ${(Array.isArray(row) ? row : [])
            .map((v) => (typeof v === 'number' && v > 0 ? String(v) : '.')).join(' ')}`).join(' ');
          return parseLine(line, reference);
        }
      } catch { /* not JSON: the line or the listing */ }
    }
  }
  return parseLine(text, reference);
}

/** Per-cell accuracy (`cells`) and F1 of (row, col, digit) triples (`filled`); meanF1 is the per-cell accuracy. */
function entityScores(predicted: Board | null, truth: Board, cellAccuracy: number): { entityF1: Record<string, number>; meanF1: number } {
  const triples = (b: Board | null) => {
    const s = new Set<string>();
    b?.cells.forEach((row, r) => row.forEach((kind, c) => { const v = b.values?.[r]?.[c]; if (kind === 'digit' && v != null) s.add(`${r},${c},${v}`); }));
    return s;
  };
  let filled = 0;
  if (predicted) {
    const p = triples(predicted); const t = triples(truth);
    if (p.size === 0 && t.size === 0) filled = 1;
    else {
      let hit = 0;
      for (const x of p) if (t.has(x)) hit++;
      filled = hit === 0 ? 0 : (2 * (hit / p.size) * (hit / t.size)) / (hit / p.size + hit / t.size);
    }
  }
  return { entityF1: { cells: cellAccuracy, filled }, meanF1: cellAccuracy };
}

export const SUDOKU_VOCABULARY: StateVocabulary = {
  cells: [
    { kind: 'empty', symbol: '.', label: 'empty cell', glyphs: ['cell'], entities: ['empty'] },
    { kind: 'digit', symbol: '1', label: 'digit (bold: given)', glyphs: ['digit'], entities: ['digit'] },
  ],
  entities: [
    { kind: 'empty', label: 'Empty position', title: 'Empty', scored: false },
    { kind: 'digit', label: 'Digit', title: 'Digit', scored: false },
  ],
  forms: { spaCoordinates, coordinateListing, relations, json },
  decoyKinds: ['empty'],
  parse,
  entityScores,
};
