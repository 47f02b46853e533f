import { describe, expect, it } from 'vitest';
import { PRESET_SIZES } from '../../core/api/run-config.js';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { clusteredPassAtK, findStudyRuns, parseStudySpec, studyTable, tableMarkdown, twoWayBootstrap, writeStudyReport } from '../../core/eval/study.js';
import { referenceRows } from '../../core/eval/reference.js';

function fakeRun(project: string, id: string, name: string, perPuzzle: Array<{ seed: number; n: number; c: number }>, rewards: number[], config?: Record<string, unknown>): void {
  const dir = join(project, 'runs', id);
  mkdirSync(join(dir, 'eval'), { recursive: true });
  writeFileSync(join(dir, 'run.json'), JSON.stringify({ name, status: 'completed', durationMs: 60_000, ...(config ? { config } : {}) }));
  writeFileSync(join(dir, 'eval', 'final.json'), JSON.stringify({ perPuzzle, k: [1, 4] }));
  writeFileSync(join(dir, 'metrics.jsonl'), rewards.map((r, step) => JSON.stringify({ stage: 'rl', step, time: 0, values: { 'rollout/success': r, 'rollout/reward': r } })).join('\n') + '\n');
}

describe('study table', () => {
  it('pools seeds per (method, env) and formats the paper layout', () => {
    const project = mkdtempSync(join(tmpdir(), 'study-'));
    fakeRun(project, 'a', 'study:q:spa:frozenlake:s0', [{ seed: 1, n: 4, c: 4 }, { seed: 2, n: 4, c: 0 }], [0, 0.5]);
    fakeRun(project, 'b', 'study:q:spa:frozenlake:s1', [{ seed: 1, n: 4, c: 2 }, { seed: 2, n: 4, c: 2 }], [0.2, 0.4]);
    fakeRun(project, 'c', 'study:q:vanilla-rl:frozenlake:s0', [{ seed: 1, n: 4, c: 0 }, { seed: 2, n: 4, c: 0 }], [0, 0]);
    fakeRun(project, 'd', 'study:other:spa:frozenlake:s0', [{ seed: 1, n: 4, c: 4 }], [1]);
    const runs = findStudyRuns([project], 'q');
    expect(runs.length).toBe(3);
    const table = studyTable(runs, ['vanilla-rl', 'spa'], ['frozenlake']);
    const spa = table.cells.find((c) => c.method === 'spa')!;
    expect(spa.completed).toBe(2);
    expect(spa.passAt['1']!.mean).toBeCloseTo((1 + 0 + 0.5 + 0.5) / 4, 12);
    expect(table.cells.find((c) => c.method === 'vanilla-rl')!.passAt['4']!.mean).toBe(0);
    const md = tableMarkdown(table, ['vanilla-rl', 'spa'], ['frozenlake']);
    expect(md.split('\n')[0]).toBe('| method | frozenlake Pass@1 / Pass@4 |');
    expect(md).toContain('| spa | 50.0 [');
    const out = join(project, 'studies', 'q');
    const { files } = writeStudyReport([project], { name: 'q', methods: ['vanilla-rl', 'spa'], envs: ['frozenlake'] }, out);
    expect(files.some((f) => f.endsWith('rl-success-frozenlake.png'))).toBe(true);
    expect(readFileSync(join(out, 'table.csv'), 'utf8').split('\n')[0]).toBe('method,env,runs,completed,k,mean,low,high,success,wallSeconds');
    expect(existsSync(join(out, 'study.json'))).toBe(true);
  });
  it('rejects a malformed study spec, naming the fields', () => {
    expect(() => parseStudySpec({ name: 'x', methods: [], envs: ['a'], seeds: [0], size: 'huge' }, 'grid.json')).toThrow(new RegExp(`grid.json: invalid study: methods: .*size: ${PRESET_SIZES.join(' \\| ')}`));
  });

  it('prints chance and oracle rows on the same puzzles and labels a method at or below chance', () => {
    const project = mkdtempSync(join(tmpdir(), 'study-ref-'));
    const config = { env: { id: 'frozenlake', options: { randomStartGoal: true, isSlippery: false } }, stages: { rollout: { maxTurns: 3 } } };
    const puzzles = [3_000_000, 3_000_001, 3_000_002];
    fakeRun(project, 'a', 'study:r:spa:frozenlake:s0', puzzles.map((seed) => ({ seed, n: 4, c: 4 })), [1], config);
    fakeRun(project, 'b', 'study:r:vanilla-rl:frozenlake:s0', puzzles.map((seed) => ({ seed, n: 4, c: 0 })), [0], config);
    const table = studyTable(findStudyRuns([project], 'r'), ['vanilla-rl', 'spa'], ['frozenlake']);
    const expected = referenceRows({ envId: 'frozenlake', envOptions: config.env.options, protocol: { maxTurns: 3, maxActionsPerTurn: 5, maxActionsPerGame: 10 }, seeds: puzzles, ks: [1, 4] });
    expect(table.references.map((r) => r.kind)).toEqual(['chance', 'oracle']);
    expect(table.references[1]!.passAt['1']).toBe(1); // deterministic lake: the optimal policy always arrives
    expect(table.references[0]!.passAt['1']).toBeCloseTo(expected[0]!.passAt['1']!, 12);
    expect(table.references[0]!.passAt['1']).toBeGreaterThan(0);
    expect(table.cells.find((c) => c.method === 'vanilla-rl')!.atOrBelowChance).toBe(true);
    expect(table.cells.find((c) => c.method === 'spa')!.atOrBelowChance).toBe(false);
    const md = tableMarkdown(table, ['vanilla-rl', 'spa'], ['frozenlake']);
    expect(table.cells.find((c) => c.method === 'vanilla-rl')!.versusChance).toBe('indistinguishable from chance'); // 3 puzzles: Wilson-widened [0, 56%] holds chance
    expect(table.cells.find((c) => c.method === 'spa')!.versusChance).toBe('above chance');
    expect(md).toContain('(indistinguishable from chance)');
    expect(md).toMatch(/\| \*chance \(random, well-formed\)\* \| \d/);
    expect(md).toContain('| *oracle (optimal)* | 100.0 / 100.0 |');
    expect(md).toContain('spa'); // paired difference section
    expect(table.differences.find((d) => d.a === 'vanilla-rl' && d.b === 'spa' && d.k === 1)!.diff.mean).toBe(-1);
  });

  it('no zero-width interval from a few puzzles that all failed; the two-way bootstrap counts seed and puzzle variation', () => {
    const allFailed = clusteredPassAtK([{ runSeed: 0, puzzle: 1, n: 2, c: 0 }, { runSeed: 0, puzzle: 2, n: 2, c: 0 }], 1);
    expect(allFailed.low).toBe(0);
    expect(allFailed.high).toBeGreaterThan(0.5); // Wilson(0 of 2)
    // two seeds that disagree completely: pooling puzzles hides it, the seed resampling does not
    const values = [0, 1].flatMap((runSeed) => Array.from({ length: 30 }, (_, p) => ({ runSeed, puzzle: p, value: runSeed })));
    const boot = twoWayBootstrap(values, { seed: 1 });
    expect(boot.mean).toBeCloseTo(0.5);
    expect(boot.low).toBeLessThan(0.1);
    expect(boot.high).toBeGreaterThan(0.9);
  });

  it('notes shared eval puzzles across run seeds', () => {
    const project = mkdtempSync(join(tmpdir(), 'study-shared-'));
    fakeRun(project, 'a', 'study:s:spa:sokoban:s0', [{ seed: 5, n: 2, c: 1 }], [0]);
    fakeRun(project, 'b', 'study:s:spa:sokoban:s1', [{ seed: 5, n: 2, c: 0 }], [0]);
    const table = studyTable(findStudyRuns([project], 's'), ['spa'], ['sokoban']);
    expect(table.cells[0]!.sharedPuzzles).toBe(true);
    expect(table.notes.join(' ')).toMatch(/same held-out puzzles/);
  });
});
