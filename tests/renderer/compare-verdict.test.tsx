// @vitest-environment jsdom
// Compare (issue 37 item 1): the given-the-action column and its n, n/a (not 0.0) for a run whose
// eval had no well-formed turn, the chance / oracle rows per eval puzzle set, and the warning when
// the runs' sizes, k or eval sample sizes differ.
import { describe, expect, it, vi } from 'vitest';
import type { RunSummary } from '../../core/api/contract.js';
import { compareMismatches, evalRow, referenceRows } from '../../renderer/src/views/CompareView.js';

vi.hoisted(() => {
  const w = globalThis as unknown as { matchMedia?: unknown };
  w.matchMedia ??= () => ({ matches: false, addEventListener() {}, removeEventListener() {}, addListener() {}, removeListener() {} });
});

const summary = (id: string, size: string, latest: Record<string, number> = {}) =>
  ({ id, name: id, env: 'frozenlake', method: 'spa', status: 'completed', size, latest }) as unknown as RunSummary;
const final = (k: number[], puzzles: number, extra: Record<string, unknown> = {}) => [{ id: 'final', stage: 'eval', step: 0, time: 1, result: {
  k, puzzles, samplesPerPuzzle: Math.max(...k), episodes: puzzles * Math.max(...k),
  passAtK: Object.fromEntries(k.map((x) => [String(x), { mean: 0.2, low: 0.1, high: 0.3 }])),
  reference: [{ kind: 'chance', label: 'chance (random, well-formed)', passAt: { '1': 0.3 } }, { kind: 'oracle', label: 'oracle (optimal)', passAt: { '1': 0.97 } }],
  ...extra,
} }];

describe('compare: world model columns', () => {
  it('reads prediction given the action and its n from final.json, else the logged metric', () => {
    const a = evalRow(summary('a', 'quick'), final([1, 4], 8, { worldModelVersusBase: { model: { conditioned: { exactChanged: 0.6, changedTurns: 45 } } } }));
    expect(a.givenAction).toBe(0.6);
    expect(a.givenActionTurns).toBe(45);
    expect(evalRow(summary('b', 'quick', { 'eval/wmCheck/conditionedExact': 0.4 }), []).givenAction).toBe(0.4);
  });

  it('is n/a (null), not 0, when the eval scored no well-formed turn', () => {
    const row = evalRow(summary('c', 'smoke', { 'eval/wmTurns': 0, 'eval/wmPredictionExact': 0, 'eval/wmPredictionCellAccuracy': 0 }),
      final([1, 2], 2, { wm: { prediction: { turns: 0, exact: 0, cellAccuracy: 0 } } }));
    expect(row.wmTurns).toBe(0);
    expect(row.wmPredExact).toBeNull();
    expect(row.wmPredCell).toBeNull();
  });
});

describe('compare: reference rows and mismatches', () => {
  it('gives one chance / oracle pair per eval puzzle set', () => {
    const a = evalRow(summary('a', 'quick'), final([1, 4], 8));
    const b = evalRow(summary('b', 'quick'), final([1, 4], 8));
    expect(referenceRows([a, b], ['1', '4']).map((r) => `${r.kind}:${r.of}`)).toEqual(['chance:a', 'oracle:a']);
    const c = evalRow(summary('c', 'smoke'), final([1, 2], 2));
    expect(referenceRows([a, c], ['1', '2', '4']).map((r) => `${r.kind}:${r.of}`)).toEqual(['chance:a', 'oracle:a', 'chance:c', 'oracle:c']);
  });

  it('warns when sizes, k or eval sample sizes differ, and not when they match', () => {
    const a = evalRow(summary('a', 'quick'), final([1, 4], 8));
    const b = evalRow(summary('b', 'quick'), final([1, 4], 8));
    expect(compareMismatches([a, b])).toEqual([]);
    const c = evalRow(summary('c', 'smoke'), final([1, 2], 2));
    const m = compareMismatches([a, c]);
    expect(m[0]).toBe('sizes differ: quick (a) vs smoke (c)');
    expect(m[1]).toBe('k differs: k = 1, 4 (a) vs k = 1, 2 (c)');
    expect(m[2]).toBe('eval sample sizes differ: 8 puzzles × 4 = 32 episodes (a) vs 2 puzzles × 2 = 4 episodes (c)');
  });
});
