// Word-level diff of a predicted state text against the true one (text envs: TextWorld, Python envs), for the trace inspector
// and the replay. No diff library is installed, so this is a longest-common-subsequence over words (diff.ts's lcsAlign): words are compared exactly,
// whitespace is not a word (a different line break or double space is no difference), but each line break is kept as a token
// so the diff keeps the text's lines.

import { lcsAlign } from './diff.js';

export type WordDiffKind = 'same' | 'del' | 'add';
/** One run of words: `del` = only in the model's text (the prediction), `add` = only in the truth, `same` = in both. */
export interface WordDiffPart { kind: WordDiffKind; text: string; words: number }
export interface WordDiff {
  parts: WordDiffPart[];
  /** Words in both texts (the LCS length), words only in the model's text, words only in the truth. */
  counts: { same: number; del: number; add: number };
  /** true when the texts were too long for the LCS table (> maxCells): the whole model text is `del` and the whole truth `add`. */
  tooLong: boolean;
}

/** Words and line breaks of a text, in order (`\n` is one token per line break; other whitespace separates words). */
export function wordTokens(text: string): string[] {
  const out: string[] = [];
  for (const line of text.replace(/\r\n?/g, '\n').split('\n').entries()) {
    if (line[0] > 0) out.push('\n');
    for (const w of line[1].split(/[ \t\f\v\u00a0]+/)) if (w.length > 0) out.push(w);
  }
  return out;
}

function joinTokens(tokens: readonly string[], leadingSpace: boolean): string {
  let s = '';
  tokens.forEach((t, i) => {
    if (t === '\n') s += '\n';
    else s += (i === 0 ? (leadingSpace ? ' ' : '') : tokens[i - 1] === '\n' ? '' : ' ') + t;
  });
  return s;
}

/**
 * The word diff of `model` (e.g. the predicted next state) against `truth` (the true next state): LCS over wordTokens, parts in
 * reading order with runs of one kind merged (a deletion run before the insertion run that replaces it). Texts whose token
 * counts multiply past `maxCells` (default 4,000,000, ~16 MB of table) are not aligned (tooLong).
 */
export function wordDiff(model: string, truth: string, maxCells = 4_000_000): WordDiff {
  const x = wordTokens(model);
  const y = wordTokens(truth);
  const n = x.length;
  const m = y.length;
  const ops: Array<{ kind: WordDiffKind; token: string }> = [];
  let tooLong = false;
  if ((n + 1) * (m + 1) > maxCells) {
    tooLong = true;
    for (const t of x) ops.push({ kind: 'del', token: t });
    for (const t of y) ops.push({ kind: 'add', token: t });
  } else {
    for (const { kind, item } of lcsAlign(x, y)) ops.push({ kind, token: item });
  }
  // merge runs; within a changed stretch put deletions before insertions so "old → new" reads in order
  const merged: Array<{ kind: WordDiffKind; tokens: string[] }> = [];
  let k = 0;
  while (k < ops.length) {
    if (ops[k]!.kind === 'same') {
      const run: string[] = [];
      while (k < ops.length && ops[k]!.kind === 'same') run.push(ops[k++]!.token);
      merged.push({ kind: 'same', tokens: run });
    } else {
      const del: string[] = [];
      const add: string[] = [];
      while (k < ops.length && ops[k]!.kind !== 'same') (ops[k]!.kind === 'del' ? del : add).push(ops[k++]!.token);
      if (del.length) merged.push({ kind: 'del', tokens: del });
      if (add.length) merged.push({ kind: 'add', tokens: add });
    }
  }
  const counts = { same: 0, del: 0, add: 0 };
  const parts = merged.map((r, idx) => {
    const words = r.tokens.filter((t) => t !== '\n').length;
    counts[r.kind] += words;
    const prev = merged[idx - 1];
    // a space before the run unless it opens a line: after a shared line break (both texts have it) or with its own break.
    // After a one-sided run ending in a break the space stays, so each side's text (same + its own runs) keeps its words apart.
    const afterSharedBreak = prev !== undefined && prev.kind === 'same' && prev.tokens[prev.tokens.length - 1] === '\n';
    const leadingSpace = prev !== undefined && !afterSharedBreak && r.tokens[0] !== '\n';
    return { kind: r.kind, text: joinTokens(r.tokens, leadingSpace), words };
  });
  return { parts, counts, tooLong };
}

/**
 * A state text as text envs score it (core/envs/python-env.ts normalizeStateText, mirrored here because the renderer does not
 * import core/envs): lines trimmed, inner whitespace collapsed, lower case, blank lines and a lone ">" prompt line dropped.
 */
export function normalizeStateText(text: string): string {
  return text.split('\n').map((l) => l.replace(/\s+/g, ' ').trim().toLowerCase()).filter((l) => l.length > 0 && l !== '>').join('\n');
}

/** The text envs' `exact`: equal after normalizeStateText. */
export function normalisedEqual(a: string, b: string): boolean {
  return normalizeStateText(a) === normalizeStateText(b);
}
