// World-model scoring: parse a state text the model wrote (<observation> or <prediction>) back
// into a board, and score it against the true board: exact match, cell accuracy, entity F1 by
// kind (Sudoku: per cell), and the list of wrong cells. The parser and the entity kinds are the
// env's own (EnvDefinition.vocabulary); this file is the loop over them. An unknown env throws.
import type { Board, WmScore } from '../api/records.js';
import type { CoordinatePolicy } from '../envs/types.js';
import { envVocabulary } from '../envs/index.js';
import type { PromptTemplate } from './template.js';

/** State-part variables that state true coordinates (the random-coordinates ablation does not: it is wrong by design). */
const TRUE_COORDINATE_FORMS = /\b(spa_coordinates|coordinate_listing|relations)\b/;

/**
 * How the parser treats coordinates written beside a grid, from the template's state part: a template that asks for true
 * coordinates (spa_coordinates, coordinate_listing, relations) requires them, so exact match covers the whole state text;
 * one that asks for the grid only (or for random coordinates) ignores them; without a template they are checked when present.
 */
export function coordinatePolicy(template?: PromptTemplate): CoordinatePolicy {
  if (!template) return 'check-if-present';
  return TRUE_COORDINATE_FORMS.test(template.parts.state) ? 'required' : 'ignore';
}

/**
 * Parse a state text (as a template renders it, or as a model wrote it) back into a board with the env's own parser. Tries,
 * in order: JSON, the symbol grid (Sudoku: the one-line board), then coordinates (the SPA line, the listing by kind or
 * relations) laid over `referenceBoard` (walls/targets/holes not listed are taken from it). With a grid and coordinates in one
 * text, cells where they disagree are 'unknown' (see coordinatePolicy). Returns null when nothing parses; throws EnvError for
 * an unknown env id.
 */
export function parseStateText(envId: string, text: string | null, template?: PromptTemplate, referenceBoard?: Board): Board | null {
  const vocabulary = envVocabulary(envId);
  if (text === null || text.trim() === '') return null;
  return vocabulary.parse(text, referenceBoard, coordinatePolicy(template));
}

// ---------------------------------------------------------------- scoring

function f1(predicted: Set<string>, truth: Set<string>): number {
  if (predicted.size === 0 && truth.size === 0) return 1;
  let hit = 0;
  for (const p of predicted) if (truth.has(p)) hit++;
  if (hit === 0) return 0;
  const precision = hit / predicted.size;
  const recall = hit / truth.size;
  return (2 * precision * recall) / (precision + recall);
}

/**
 * Score a predicted board against the truth. Cells (kind and, where the env has them, values) are compared over the true
 * board's extent (a predicted board of another size counts missing cells as wrong). Entity F1 per scored entity kind of the
 * env, from the cell positions that hold it; an env may score entities its own way (Sudoku: `cells` per-cell accuracy and
 * `filled` F1 of (row, col, digit) triples, meanF1 the per-cell accuracy).
 */
export function scoreWorldModel(predicted: Board | null, truth: Board): WmScore {
  const vocabulary = envVocabulary(truth.env);
  const wrongCells: [number, number][] = [];
  let equal = 0;
  const total = truth.rows * truth.cols;
  for (let r = 0; r < truth.rows; r++) {
    for (let c = 0; c < truth.cols; c++) {
      const p = predicted?.cells[r]?.[c];
      const same = p !== undefined && p === truth.cells[r][c] && (predicted?.values?.[r]?.[c] ?? null) === (truth.values?.[r]?.[c] ?? null);
      if (same) equal++;
      else wrongCells.push([r, c]);
    }
  }
  const sizeMatches = predicted !== null && predicted.rows === truth.rows && predicted.cols === truth.cols;
  const cellAccuracy = total === 0 ? 1 : equal / total;
  let entityF1: Record<string, number> = {};
  let meanF1: number;
  if (vocabulary.entityScores) {
    ({ entityF1, meanF1 } = vocabulary.entityScores(predicted, truth, cellAccuracy));
  } else {
    const holds = new Map(vocabulary.cells.map((c) => [c.kind, new Set(c.entities)]));
    for (const kind of vocabulary.entities.filter((e) => e.scored).map((e) => e.kind)) {
      const collect = (b: Board | null) => {
        const s = new Set<string>();
        b?.cells.forEach((row, r) => row.forEach((cell, c) => { if (holds.get(cell)?.has(kind)) s.add(`${r},${c}`); }));
        return s;
      };
      entityF1[kind] = predicted ? f1(collect(predicted), collect(truth)) : 0;
    }
    const values = Object.values(entityF1);
    meanF1 = values.length ? values.reduce((a, b) => a + b, 0) / values.length : cellAccuracy;
  }
  return {
    parsed: predicted !== null,
    exact: predicted !== null && sizeMatches && wrongCells.length === 0,
    cellAccuracy,
    entityF1,
    meanF1,
    wrongCells,
  };
}
