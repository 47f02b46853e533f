// @vitest-environment jsdom
// Compare's table: each row says what its intervals rest on (puzzles × samples = episodes), and a
// bootstrap over too few puzzles (2 puzzles all failed: "[0.0, 0.0]") is widened to Wilson's over the puzzles.
import { describe, expect, it, vi } from 'vitest';
import type { RunSummary } from '../../core/api/contract.js';
import { evalRow, restsOn, shownPassInterval } from '../../renderer/src/views/CompareView.js';

// uPlot (charts of the view) reads the pixel ratio through matchMedia when it loads; jsdom has none
vi.hoisted(() => {
  const w = globalThis as unknown as { matchMedia?: unknown };
  w.matchMedia ??= () => ({ matches: false, addEventListener() {}, removeEventListener() {}, addListener() {}, removeListener() {} });
});

const run = { id: 'r1', name: 'r1', env: 'frozenlake', method: 'spa', status: 'completed', latest: {} } as unknown as RunSummary;
const evalFile = (result: Record<string, unknown>) => [{ id: 'eval/final.json', time: 1, result }];

describe('compare rows', () => {
  it('carry the n their intervals rest on', () => {
    const row = evalRow(run, evalFile({
      episodes: 8, puzzles: 2, samplesPerPuzzle: 4,
      success: { mean: 0, low: 0, high: 0.49, level: 0.95, method: 'wilson' },
      passAtK: { 1: { mean: 0, low: 0, high: 0, level: 0.95, method: 'bootstrap' } },
    }) as never);
    expect(row).toMatchObject({ episodes: 8, puzzles: 2, samplesPerPuzzle: 4 });
    expect(row.success).toEqual({ mean: 0, low: 0, high: 0.49 });
    expect(restsOn(row)).toBe('2 puzzles × 4 = 8 episodes');
    const shown = shownPassInterval(row.passAt['1'], row.puzzles);  // 2 puzzles all failed: not "[0.0, 0.0]"
    expect(shown.widened).toBe(true);
    expect(shown.iv!.high).toBeCloseTo(0.658, 3);
    expect(shownPassInterval({ mean: 0.3, low: 0.2, high: 0.4 }, 64)).toEqual({ iv: { mean: 0.3, low: 0.2, high: 0.4 }, widened: false });
    expect(restsOn({ episodes: 5, puzzles: null, samplesPerPuzzle: null })).toBe('5 episodes');
    expect(restsOn({ episodes: null, puzzles: null, samplesPerPuzzle: null })).toBe('–');
    expect(restsOn({ episodes: null, puzzles: 1, samplesPerPuzzle: null })).toBe('1 puzzle');
  });

  it('an eval file without counts (older runs, imported ones) gives no n', () => {
    const row = evalRow(run, evalFile({ success: 0.5, passAtK: { 1: 0.5 } }) as never);
    expect(row).toMatchObject({ episodes: null, puzzles: null, samplesPerPuzzle: null, success: { mean: 0.5, low: null, high: null } });
  });
});
