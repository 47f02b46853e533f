import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { findStudyRuns, parseStudySpec, studyTable, tableMarkdown, writeStudyReport } from '../../core/eval/study.js';

function fakeRun(project: string, id: string, name: string, perPuzzle: Array<{ seed: number; n: number; c: number }>, rewards: number[]): void {
  const dir = join(project, 'runs', id);
  mkdirSync(join(dir, 'eval'), { recursive: true });
  writeFileSync(join(dir, 'run.json'), JSON.stringify({ name, status: 'completed', durationMs: 60_000 }));
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
    expect(() => parseStudySpec({ name: 'x', methods: [], envs: ['a'], seeds: [0], size: 'huge' }, 'grid.json')).toThrow(/grid.json: invalid study: methods: .*size: smoke \| quick \| paper/);
  });
});
