// World-model scoring: parse a state text the model wrote (<observation> or <prediction>) back
// into a board, and score it against the true board: exact match, cell accuracy, entity F1 by
// kind (Sudoku: per cell), and the list of wrong cells.
import type { Board, CellKind, WmScore } from '../api/records.js';
import type { PromptTemplate } from './template.js';

const SOKOBAN_CELL: Record<string, CellKind> = { '#': 'wall', _: 'floor', O: 'target', X: 'box', '√': 'boxOnTarget', P: 'player', S: 'playerOnTarget' };
const FROZEN_CELL: Record<string, CellKind> = { P: 'player', _: 'frozen', O: 'hole', G: 'goal', X: 'playerInHole', '√': 'playerOnGoal' };

function envKey(envId: string): 'sokoban' | 'frozenlake' | 'sudoku' | null {
  const id = envId.toLowerCase().replace(/[-_]/g, '');
  return id === 'sokoban' || id === 'frozenlake' || id === 'sudoku' ? id : null;
}

/** Find the first run of ≥ 2 consecutive lines made only of the env's grid symbols (spaces ignored). */
function parseGrid(envId: 'sokoban' | 'frozenlake', text: string): Board | null {
  const table = envId === 'sokoban' ? SOKOBAN_CELL : FROZEN_CELL;
  const lines = text.split(/\r?\n/).map((l) => [...l.replace(/\s+/g, '')]);
  const isGridLine = (chars: string[]) => chars.length >= 2 && chars.every((ch) => ch in table);
  for (let i = 0; i < lines.length; i++) {
    if (!isGridLine(lines[i])) continue;
    let j = i;
    while (j < lines.length && isGridLine(lines[j])) j++;
    if (j - i < 2) continue;
    const rowsChars = lines.slice(i, j);
    const cols = Math.max(...rowsChars.map((r) => r.length));
    const cells = rowsChars.map((r) => Array.from({ length: cols }, (_, c) => (c < r.length ? table[r[c]] : 'unknown' as CellKind)));
    return { env: envId, rows: cells.length, cols, cells };
  }
  return null;
}

/** Sudoku one-line board `| . 1 2 4 | 4 2 1 3 | …` (or one row per line); null when not found. */
function parseSudoku(text: string, reference?: Board): Board | null {
  if (!text.includes('|')) return parseSudokuListing(text, reference);
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

/** Sudoku coordinate listing (`Digit 1: (1, 2), …` / `Empty: …`, one-based); needs the board size from the reference. */
function parseSudokuListing(text: string, reference?: Board): Board | null {
  const size = reference?.rows;
  if (!size) return null;
  const values: (number | null)[][] = Array.from({ length: size }, () => new Array<number | null>(size).fill(null));
  const cells: CellKind[][] = Array.from({ length: size }, () => new Array<CellKind>(size).fill('unknown'));
  let found = false;
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:digit\s+(\d)|(empty))\s*:(.*)$/i.exec(line);
    if (!m) continue;
    found = true;
    for (const [r, c] of positions(m[3])) {
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

const POS = /\(\s*(\d+)\s*,\s*(\d+)\s*\)/g;
function positions(text: string): [number, number][] {
  return [...text.matchAll(POS)].map((m) => [Number(m[1]), Number(m[2])]);
}

/** Positions by kind from the SPA coordinate line, the listing by kind, or relations. */
function coordinatesByKind(text: string): Map<string, [number, number][]> {
  const out = new Map<string, [number, number][]>();
  const add = (kind: string, list: [number, number][]) => out.set(kind, [...(out.get(kind) ?? []), ...list]);
  // SPA line / relations: "<kind> (<sym>) is at (r,c)" or "<kind> (<sym>) at (r,c)"
  for (const m of text.matchAll(/\b(player|box|target|hole|goal)\s*\([^)]*\)\s*(?:is\s+)?at\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)/gi)) {
    add(m[1].toLowerCase(), [[Number(m[2]), Number(m[3])]]);
  }
  // Listing: "Walls: (0, 0), (0, 1)" etc.
  const listing: Record<string, string> = { walls: 'wall', targets: 'target', boxes: 'box', player: 'player', holes: 'hole', goal: 'goal', goals: 'goal' };
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(walls|targets|boxes|player|holes|goals?)\s*:(.*)$/i.exec(line);
    if (m) add(listing[m[1].toLowerCase()], positions(m[2]));
  }
  return out;
}

function boardFromCoordinates(env: 'sokoban' | 'frozenlake', text: string, reference: Board): Board | null {
  const found = coordinatesByKind(text);
  if (!found.has('player')) return null;
  const rows = reference.rows;
  const cols = reference.cols;
  const inside = ([r, c]: [number, number]) => r >= 0 && c >= 0 && r < rows && c < cols;
  const key = ([r, c]: [number, number]) => r * cols + c;
  const set = (kind: string, fallback: (cell: CellKind) => boolean) => {
    const list = found.get(kind);
    if (list) return new Set(list.filter(inside).map(key));
    const s = new Set<number>();
    reference.cells.forEach((row, r) => row.forEach((cell, c) => { if (fallback(cell)) s.add(r * cols + c); }));
    return s;
  };
  const player = set('player', () => false);
  const cells: CellKind[][] = [];
  if (env === 'sokoban') {
    const walls = set('wall', (cell) => cell === 'wall');
    const targets = set('target', (cell) => cell === 'target' || cell === 'boxOnTarget' || cell === 'playerOnTarget');
    const boxes = set('box', () => false);
    for (let r = 0; r < rows; r++) {
      cells.push([]);
      for (let c = 0; c < cols; c++) {
        const i = r * cols + c;
        const t = targets.has(i);
        cells[r].push(
          walls.has(i)
            ? 'wall'
            : player.has(i)
              ? t
                ? 'playerOnTarget'
                : 'player'
              : boxes.has(i)
                ? t
                  ? 'boxOnTarget'
                  : 'box'
                : t
                  ? 'target'
                  : 'floor',
        );
      }
    }
  } else {
    const holes = set('hole', (cell) => cell === 'hole' || cell === 'playerInHole');
    const goals = set('goal', (cell) => cell === 'goal' || cell === 'playerOnGoal');
    for (let r = 0; r < rows; r++) {
      cells.push([]);
      for (let c = 0; c < cols; c++) {
        const i = r * cols + c;
        const here = player.has(i);
        cells[r].push(holes.has(i) ? (here ? 'playerInHole' : 'hole') : goals.has(i) ? (here ? 'playerOnGoal' : 'goal') : here ? 'player' : 'frozen');
      }
    }
  }
  return { env, rows, cols, cells };
}

function parseJsonState(env: 'sokoban' | 'frozenlake' | 'sudoku', text: string, reference?: Board): Board | null {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  let data: unknown;
  try { data = JSON.parse(text.slice(start, end + 1)); } catch { return null; }
  if (!data || typeof data !== 'object') return null;
  const obj = data as Record<string, unknown>;
  if (env === 'sudoku' && Array.isArray(obj.rows)) {
    const rows = obj.rows as unknown[];
    const line = rows.map((row) => `| ${(Array.isArray(row) ? row : []).map((v) => (typeof v === 'number' && v > 0 ? String(v) : '.')).join(' ')}`).join(' ');
    return parseSudoku(line, reference);
  }
  if (env !== 'sudoku' && Array.isArray(obj.grid) && obj.grid.every((l) => typeof l === 'string')) return parseGrid(env, (obj.grid as string[]).join('\n'));
  return null;
}

/**
 * Parse a state text (as a template renders it, or as a model wrote it) back into a board.
 * Tries, in order: JSON, the symbol grid (Sudoku: the one-line board), then coordinates (the SPA
 * line, the listing by kind or relations) laid over `referenceBoard` (walls/targets/holes not
 * listed are taken from it). Returns null when nothing parses.
 */
export function parseStateText(envId: string, text: string | null, _template?: PromptTemplate, referenceBoard?: Board): Board | null {
  const env = envKey(envId);
  if (!env || text === null || text.trim() === '') return null;
  const fromJson = text.includes('{') ? parseJsonState(env, text, referenceBoard) : null;
  if (fromJson) return fromJson;
  if (env === 'sudoku') return parseSudoku(text, referenceBoard);
  const grid = parseGrid(env, text);
  if (grid) return grid;
  return referenceBoard ? boardFromCoordinates(env, text, referenceBoard) : null;
}

// ---------------------------------------------------------------- scoring

const ENTITY_KINDS: Record<string, Record<string, CellKind[]>> = {
  sokoban: { player: ['player', 'playerOnTarget'], box: ['box', 'boxOnTarget'], target: ['target', 'boxOnTarget', 'playerOnTarget'], wall: ['wall'] },
  frozenlake: { player: ['player', 'playerInHole', 'playerOnGoal'], hole: ['hole', 'playerInHole'], goal: ['goal', 'playerOnGoal'] },
};

function f1(predicted: Set<string>, truth: Set<string>): number {
  if (predicted.size === 0 && truth.size === 0) return 1;
  let hit = 0;
  for (const p of predicted) if (truth.has(p)) hit++;
  if (hit === 0) return 0;
  const precision = hit / predicted.size;
  const recall = hit / truth.size;
  return (2 * precision * recall) / (precision + recall);
}

function cellAt(board: Board | null, r: number, c: number): { kind: CellKind; value: number | null } {
  const kind = board?.cells[r]?.[c];
  if (kind === undefined) return { kind: 'unknown', value: null };
  return { kind, value: board?.values?.[r]?.[c] ?? null };
}

/**
 * Score a predicted board against the truth. Cells are compared over the true board's extent
 * (a predicted board of another size counts missing cells as wrong). Entity F1 per kind from
 * cell positions; for Sudoku `entityF1` holds `cells` (per-cell accuracy) and `filled` (F1 of
 * (row, col, digit) triples), and meanF1 is the per-cell accuracy.
 */
export function scoreWorldModel(predicted: Board | null, truth: Board): WmScore {
  const wrongCells: [number, number][] = [];
  let equal = 0;
  const total = truth.rows * truth.cols;
  const sudoku = truth.env === 'sudoku';
  for (let r = 0; r < truth.rows; r++) {
    for (let c = 0; c < truth.cols; c++) {
      const t = cellAt(truth, r, c);
      const p = cellAt(predicted, r, c);
      const same = sudoku ? p.kind === t.kind && p.value === t.value : p.kind === t.kind;
      if (same) equal++;
      else wrongCells.push([r, c]);
    }
  }
  const sizeMatches = predicted !== null && predicted.rows === truth.rows && predicted.cols === truth.cols;
  const cellAccuracy = total === 0 ? 1 : equal / total;
  const entityF1: Record<string, number> = {};
  if (sudoku) {
    const triples = (b: Board | null) => {
      const s = new Set<string>();
      b?.cells.forEach((row, r) => row.forEach((kind, c) => { const v = b.values?.[r]?.[c]; if (kind === 'digit' && v != null) s.add(`${r},${c},${v}`); }));
      return s;
    };
    entityF1.cells = cellAccuracy;
    entityF1.filled = predicted ? f1(triples(predicted), triples(truth)) : 0;
  } else {
    for (const [kind, members] of Object.entries(ENTITY_KINDS[truth.env] ?? {})) {
      const collect = (b: Board | null) => {
        const s = new Set<string>();
        b?.cells.forEach((row, r) => row.forEach((cell, c) => { if (members.includes(cell)) s.add(`${r},${c}`); }));
        return s;
      };
      entityF1[kind] = predicted ? f1(collect(predicted), collect(truth)) : 0;
    }
  }
  const values = Object.values(entityF1);
  const meanF1 = sudoku ? cellAccuracy : values.length ? values.reduce((a, b) => a + b, 0) / values.length : cellAccuracy;
  return {
    parsed: predicted !== null,
    exact: predicted !== null && sizeMatches && wrongCells.length === 0,
    cellAccuracy,
    entityF1,
    meanF1,
    wrongCells,
  };
}
