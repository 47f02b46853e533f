// The state vocabulary of a grid game with a player and positioned entities (Sokoban, FrozenLake, KeyDoor), built from a
// declarative table: cell kinds with their symbols and entities, entity kinds with their labels. From that table come every
// state-text form (the SPA coordinate line, the listing by kind, relations to the player, JSON) and the parser back from text
// to a board (the symbol grid, JSON, or coordinates laid over a reference board). A new grid game declares its table and gets
// all of them; core/prompts only loops over what the env declares. Pure: no fs, no Math.random.
import type { Board, CellKind } from '../api/records.js';
import type { CellLegend, CoordinatePolicy, Entity, EntityKindInfo, Env, StateVocabulary } from './types.js';
import { EnvError } from './errors.js';

export interface GridVocabularySpec {
  envId: string;
  /** Cell kinds; the first one without entities is the plain ground (floor, frozen). */
  cells: CellLegend[];
  entities: EntityKindInfo[];
  /** Entity kinds of the SPA coordinate line, in order (also the kinds a random-coordinates decoy places). */
  spaOrder: string[];
  /** Entity kinds of the coordinate listing, in order. */
  listingOrder: string[];
  /** Entity kinds with one relation line each (relative to the player). */
  relationKinds: string[];
  /** When a coordinate text puts several entities on one cell that no cell kind holds, the earlier kinds here win. */
  precedence: string[];
  /** Entity kinds fixed by the level (walls, holes, targets): taken from the reference board when a coordinate text omits them. */
  fixed: string[];
}

type Pos = [number, number];

function byKind(entities: Entity[], kind: string): Entity[] {
  return entities.filter((e) => e.kind === kind).sort((a, b) => a.row - b.row || a.col - b.col);
}

const POS = /\(\s*(\d+)\s*,\s*(\d+)\s*\)/g;
function positions(text: string): Pos[] {
  return [...text.matchAll(POS)].map((m) => [Number(m[1]), Number(m[2])]);
}

function relation(dr: number, dc: number): string {
  if (dr === 0 && dc === 0) return 'at the same position as the player';
  const vertical = `${Math.abs(dr)} ${dr < 0 ? 'above' : 'below'}`;
  const horizontal = `${Math.abs(dc)} ${dc < 0 ? 'left' : 'right'} of`;
  if (dr === 0) return `in the same row, ${horizontal} the player`;
  if (dc === 0) return `in the same column, ${vertical} the player`;
  return `${vertical} and ${horizontal} the player`;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Check a spec once, at definition time: a broken table fails loudly when the env registers, not at study time. */
function checkSpec(spec: GridVocabularySpec): void {
  const where = `${spec.envId} state vocabulary`;
  const entityKinds = new Set(spec.entities.map((e) => e.kind));
  const symbols = new Set<string>();
  for (const cell of spec.cells) {
    if ([...cell.symbol].length !== 1) {
      throw new EnvError('a cell symbol must be one character', { where, received: `${cell.kind}: ${JSON.stringify(cell.symbol)}` });
    }
    if (symbols.has(cell.symbol)) throw new EnvError('two cell kinds share a symbol', { where, received: cell.symbol });
    symbols.add(cell.symbol);
    for (const e of cell.entities) {
      if (!entityKinds.has(e)) throw new EnvError('a cell names an undeclared entity kind', { where, received: `${cell.kind}: ${e}` });
    }
  }
  for (const list of [spec.spaOrder, spec.listingOrder, spec.relationKinds, spec.precedence, spec.fixed]) {
    for (const k of list) if (!entityKinds.has(k)) throw new EnvError('an order names an undeclared entity kind', { where, received: k });
  }
  if (!spec.cells.some((c) => c.entities.length === 0)) throw new EnvError('no ground cell (a cell kind without entities)', { where });
}

/** The lookups every form and the parser share, built once from the spec. */
interface GridTable {
  spec: GridVocabularySpec;
  info: Map<string, EntityKindInfo>;
  symbolToKind: Map<string, CellKind>;
  entitiesOf: Map<string, Set<string>>;
  /** A cell kind for a set of entities: the exact set when a cell kind holds it, else the best subset by precedence. */
  compose(present: Set<string>): CellKind;
}

function gridTable(spec: GridVocabularySpec): GridTable {
  const entitiesOf = new Map(spec.cells.map((c) => [c.kind, new Set(c.entities)]));
  const weight = new Map(spec.precedence.map((k, i) => [k, 2 ** (spec.precedence.length - i)]));
  const composeCache = new Map<string, CellKind>();
  const compose = (present: Set<string>): CellKind => {
    const key = [...present].sort().join(',');
    const cached = composeCache.get(key);
    if (cached) return cached;
    let best: CellKind = 'unknown';
    let bestScore = -1;
    for (const cell of spec.cells) {
      const holds = entitiesOf.get(cell.kind)!;
      if (![...holds].every((e) => present.has(e))) continue;
      const score = [...holds].reduce((sum, e) => sum + (weight.get(e) ?? 1), 0);
      if (score > bestScore) { best = cell.kind; bestScore = score; }
    }
    composeCache.set(key, best);
    return best;
  };
  return {
    spec, entitiesOf, compose,
    info: new Map(spec.entities.map((e) => [e.kind, e])),
    symbolToKind: new Map(spec.cells.map((c) => [c.symbol, c.kind])),
  };
}

/** The state-text forms: the SPA line, the listing by kind, relations to the player, JSON. */
function gridForms({ spec, info }: GridTable): StateVocabulary['forms'] {
  const spaCoordinates = (entities: Entity[]): string => {
    const parts: string[] = [];
    for (const kind of spec.spaOrder) for (const e of byKind(entities, kind)) parts.push(`${info.get(kind)!.label} is at (${e.row},${e.col})`);
    return `${parts.join('; ')}.`;
  };
  const coordinateListing = (entities: Entity[]): string => spec.listingOrder.map((kind) => {
    const cells = byKind(entities, kind);
    return `${info.get(kind)!.title}: ${cells.length ? cells.map((e) => `(${e.row}, ${e.col})`).join(', ') : 'none'}`;
  }).join('\n');
  const relations = (entities: Entity[]): string => {
    const player = byKind(entities, 'player')[0];
    if (!player) return '';
    const lines = [`${info.get('player')?.label ?? 'Player (P)'} is at (${player.row},${player.col}).`];
    for (const kind of spec.relationKinds) for (const e of byKind(entities, kind)) {
      lines.push(`${info.get(kind)!.label} at (${e.row},${e.col}) is ${relation(e.row - player.row, e.col - player.col)}.`);
    }
    return lines.join('\n');
  };
  const json = (env: Env): string => {
    const entities = env.entities();
    const out: Record<string, unknown> = { grid: env.gridText().split('\n') };
    for (const e of spec.entities) {
      if (!e.jsonKey) continue;
      const list: Pos[] = byKind(entities, e.kind).map((x) => [x.row, x.col]);
      out[e.jsonKey] = e.single ? (list[0] ?? null) : list;
    }
    return JSON.stringify(out);
  };
  return { spaCoordinates, coordinateListing, relations, json };
}

/** The first run of ≥ 2 consecutive lines made only of the env's grid symbols (spaces ignored). */
function parseGrid({ spec, symbolToKind }: GridTable, text: string): Board | null {
  const lines = text.split(/\r?\n/).map((l) => [...l.replace(/\s+/g, '')]);
  const isGridLine = (chars: string[]) => chars.length >= 2 && chars.every((ch) => symbolToKind.has(ch));
  for (let i = 0; i < lines.length; i++) {
    if (!isGridLine(lines[i])) continue;
    let j = i;
    while (j < lines.length && isGridLine(lines[j])) j++;
    if (j - i < 2) continue;
    const rowsChars = lines.slice(i, j);
    const cols = Math.max(...rowsChars.map((r) => r.length));
    const cells = rowsChars.map((r) => Array.from({ length: cols }, (_, c): CellKind => (c < r.length ? symbolToKind.get(r[c])! : 'unknown')));
    return { env: spec.envId, rows: cells.length, cols, cells };
  }
  return null;
}

/**
 * Positions by entity kind written in a text: "<label word> (<sym>) is at (r,c)" (SPA line), "<label word> (<sym>) at (r,c)"
 * (relations) and "Title: (r, c), …" (listing).
 */
function coordinateReader({ spec }: GridTable): (text: string) => Map<string, Pos[]> {
  const labelWord = new Map(spec.entities.map((e) => [e.label.split(/\s*\(/)[0].trim().toLowerCase(), e.kind]));
  const words = [...labelWord.keys()].map(escape).join('|');
  const spaPattern = new RegExp(`\\b(${words})\\s*\\([^)]*\\)\\s*(?:is\\s+)?at\\s*\\(\\s*(\\d+)\\s*,\\s*(\\d+)\\s*\\)`, 'gi');
  const titleWord = new Map<string, string>();
  for (const e of spec.entities) for (const w of [e.title, e.kind, `${e.kind}s`, `${e.kind}es`]) titleWord.set(w.toLowerCase(), e.kind);
  const listingPattern = new RegExp(`^\\s*(${[...titleWord.keys()].map(escape).join('|')})\\s*:(.*)$`, 'i');
  return (text) => {
    const out = new Map<string, Pos[]>();
    const add = (kind: string, list: Pos[]) => out.set(kind, [...(out.get(kind) ?? []), ...list]);
    for (const m of text.matchAll(spaPattern)) add(labelWord.get(m[1].toLowerCase())!, [[Number(m[2]), Number(m[3])]]);
    for (const line of text.split(/\r?\n/)) {
      const m = listingPattern.exec(line);
      if (m) add(titleWord.get(m[1].toLowerCase())!, positions(m[2]));
    }
    return out;
  };
}

/** Coordinates laid over `reference`: listed kinds where the text puts them, unlisted fixed kinds from the reference. */
function boardFromCoordinates({ spec, info, entitiesOf, compose }: GridTable, found: Map<string, Pos[]>, reference: Board): Board | null {
  if (info.has('player') ? !found.has('player') : found.size === 0) return null;
  const { rows, cols } = reference;
  const present: Set<string>[] = Array.from({ length: rows * cols }, () => new Set<string>());
  for (const e of spec.entities) {
    const list = found.get(e.kind);
    if (list) {
      for (const [r, c] of list) if (r >= 0 && c >= 0 && r < rows && c < cols) present[r * cols + c].add(e.kind);
    } else if (spec.fixed.includes(e.kind)) {
      reference.cells.forEach((row, r) => row.forEach((cell, c) => { if (entitiesOf.get(cell)?.has(e.kind)) present[r * cols + c].add(e.kind); }));
    }
  }
  const cells = Array.from({ length: rows }, (_, r) => Array.from({ length: cols }, (_, c) => compose(present[r * cols + c])));
  return { env: spec.envId, rows, cols, cells };
}

/** The parser: JSON, the symbol grid (checked against coordinates in the same text, by policy), or coordinates alone. */
function gridParser(table: GridTable): StateVocabulary['parse'] {
  const readCoordinates = coordinateReader(table);
  /** Cells where the grid and the coordinates of the same text disagree become 'unknown'. */
  const checkAgainstCoordinates = (grid: Board, text: string, policy: CoordinatePolicy): Board => {
    if (policy === 'ignore') return grid;
    const fromCoordinates = boardFromCoordinates(table, readCoordinates(text), grid);
    if (fromCoordinates) return { ...grid, cells: grid.cells.map((row, r) => row.map((kind, c) => (kind === fromCoordinates.cells[r][c] ? kind : 'unknown'))) };
    if (policy !== 'required') return grid;
    // The template asks for coordinates and the text has none: the cells they would have stated are not stated.
    const stated = new Set(table.spec.spaOrder);
    const states = (kind: string) => [...(table.entitiesOf.get(kind) ?? [])].some((e) => stated.has(e));
    return { ...grid, cells: grid.cells.map((row) => row.map((kind) => (states(kind) ? 'unknown' : kind))) };
  };
  return (text, reference, policy = 'check-if-present') => {
    const start = text.indexOf('{');
    const end = text.lastIndexOf('}');
    if (start >= 0 && end > start) {
      try {
        const data = JSON.parse(text.slice(start, end + 1)) as Record<string, unknown> | null;
        if (data && Array.isArray(data.grid) && data.grid.every((l) => typeof l === 'string')) {
          const board = parseGrid(table, (data.grid as string[]).join('\n'));
          if (board) return board;
        }
      } catch { /* not JSON: try the other forms */ }
    }
    const grid = parseGrid(table, text);
    if (grid) return checkAgainstCoordinates(grid, text, policy);
    return reference ? boardFromCoordinates(table, readCoordinates(text), reference) : null;
  };
}

/** Build the vocabulary of a grid game from its table. */
export function gridVocabulary(spec: GridVocabularySpec): StateVocabulary {
  checkSpec(spec);
  const table = gridTable(spec);
  return { cells: spec.cells, entities: spec.entities, forms: gridForms(table), decoyKinds: [...spec.spaOrder], parse: gridParser(table) };
}
