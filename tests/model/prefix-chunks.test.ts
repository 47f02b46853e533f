// prefixChunks (core/model/trainer.ts): rows that share their start stay in one chunk (the torch worker computes the shared
// tokens once), chunks hold at most the budget counted once per shared start, every row once; rows that share too little
// fall back to chunkRows' length chunks.
import { describe, expect, it } from 'vitest';
import { chunkRows, commonPrefix, lengthChunks, prefixChunks, type TrainRow } from '../../core/model/trainer.js';

let seed = 7;
const rand = (n: number): number[] => Array.from({ length: n }, () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return 4 + (seed % 90); });

/** An RL episode's update rows: a long history and rows that end in a reply of their own after part of it. */
function episode(length: number, cuts: number[]): number[][] {
  const long = rand(length);
  return [long, ...cuts.map((c) => [...long.slice(0, c), 1000 + c, ...rand(5)])];
}

/** The tokens of a chunk counted once per shared start (its prefix tree), rows in lexicographic order. */
function treeSize(rows: number[][]): number {
  const sorted = [...rows].sort((a, b) => { const k = commonPrefix(a, b); return k < a.length && k < b.length ? a[k]! - b[k]! : a.length - b.length; });
  return sorted.reduce((s, r, i) => s + r.length - (i ? commonPrefix(sorted[i - 1]!, r) : 0), 0);
}

describe('prefixChunks', () => {
  const episodes = [episode(120, [20, 50, 80, 100]), episode(90, [15, 40, 70]), episode(60, [30])];
  const rows = [2, 0, 1].flatMap((e) => episodes[e]!).map((ids) => ({ ids }));   // episodes interleaved in the given order

  it('keeps each episode\'s rows in one chunk within the budget counted once per shared start', () => {
    const chunks = prefixChunks(rows, 200);
    expect(chunks.flat().sort((a, b) => a - b)).toEqual(rows.map((_, i) => i));
    for (const c of chunks) expect(treeSize(c.map((i) => rows[i]!.ids))).toBeLessThanOrEqual(200);
    const chunkOf = new Map(chunks.flatMap((c, k) => c.map((i) => [i, k] as const)));
    // rows 0-1 are the 60-token episode, 2-6 the 120-token one, 7-10 the 90-token one
    for (const [from, to] of [[0, 1], [2, 6], [7, 10]] as const) {
      const ks = new Set(Array.from({ length: to - from + 1 }, (_, j) => chunkOf.get(from + j)));
      expect(ks.size, `rows ${from}-${to}`).toBe(1);
    }
    // the prefix tree of the rows is far smaller than their tokens: the saving the worker gets
    const total = rows.reduce((s, r) => s + r.ids.length, 0);
    expect(treeSize(rows.map((r) => r.ids))).toBeLessThan(0.5 * total);
  });

  it('a row longer than the budget is a chunk alone; a budget that splits an episode still gives every row once', () => {
    const chunks = prefixChunks(rows, 100);
    expect(chunks.flat().sort((a, b) => a - b)).toEqual(rows.map((_, i) => i));
    expect(chunks.filter((c) => c.includes(2))[0]).toEqual([2]);   // the 120-token row
    for (const c of chunks) if (c.length > 1) expect(treeSize(c.map((i) => rows[i]!.ids))).toBeLessThanOrEqual(100);
  });

  it('rows that share less than minSaving of their tokens get chunkRows\' length chunks (also with minSaving 0)', () => {
    const distinct = [30, 5, 18, 7, 29, 12].map((n) => ({ ids: rand(n) }));
    const byLength = chunkRows(distinct.map((r) => ({ ...r, arrays: {} })) as TrainRow[], 40).map((c) => c.map((r) => distinct.findIndex((d) => d.ids === r.ids)));
    expect(prefixChunks(distinct, 40)).toEqual(byLength);
    expect(prefixChunks(distinct, 40)).toEqual(lengthChunks(distinct, 40));
    expect(prefixChunks(rows, 200, 0)).toEqual(lengthChunks(rows, 200));
    expect(prefixChunks(rows, 200, 0.99)).toEqual(lengthChunks(rows, 200));
    expect(prefixChunks([], 10)).toEqual([]);
  });

  it('rows that share a common prompt under half their length (SFT rows) are not families: length chunks, whatever the share', () => {
    const prompt = rand(40);
    const sft = [90, 125, 97, 118, 105, 130].map((n) => ({ ids: [...prompt, ...rand(n - 40)] }));   // 31-44% of each row shared
    expect(prefixChunks(sft, 300)).toEqual(lengthChunks(sft, 300));
  });

  it('a chunk\'s padded work as the worker computes it (families\' first rows whole, the others\' own tokens) stays in the budget', () => {
    for (const budget of [150, 200, 400]) {
      for (const c of prefixChunks(rows, budget)) {
        if (c.length === 1) continue;
        const ids = c.map((i) => rows[i]!.ids);
        const own = ids.map((r, j) => (j > 0 && 2 * commonPrefix(ids[j - 1]!, r) >= r.length ? r.length - commonPrefix(ids[j - 1]!, r) : -1));
        const heads = ids.filter((_, j) => own[j]! < 0), tailOwn = own.filter((x) => x >= 0);
        const work = heads.length * Math.max(...heads.map((r) => r.length)) + tailOwn.length * Math.max(0, ...tailOwn);
        expect(work, `budget ${budget}`).toBeLessThanOrEqual(budget);
      }
    }
  });
});
