// Studies through the API: the list of a project's studies and the paper-style table computed
// from the runs' eval/final.json (unbiased Pass@k pooled over puzzles).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { WorkbenchClient } from '../../core/api/contract.js';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { isolateHome, tempDir } from './helpers.js';

function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value));
}

describe('studies through the API', () => {
  let d: Dispatcher;
  let api: WorkbenchClient;
  let dir: string;
  beforeAll(async () => {
    isolateHome();
    d = createDispatcher({ host: 'in-process' });
    api = createInProcessClient(d);
    dir = path.join(tempDir(), 'p');
    await api.projects.create({ path: dir });
    writeJson(path.join(dir, 'studies', 'grid', 'spec.json'), { name: 'grid', methods: ['spa', 'vanilla-rl'], envs: ['sokoban'], seeds: [0], size: 'smoke' });
    // One completed SPA run with two puzzles × 4 samples (2 and 0 successes); the vanilla run has no eval yet.
    writeJson(path.join(dir, 'runs', 'r-spa', 'run.json'), { name: 'study:grid:spa:sokoban:s0', status: 'completed', durationMs: 5000 });
    writeJson(path.join(dir, 'runs', 'r-spa', 'eval', 'final.json'), { k: [1, 2], perPuzzle: [{ seed: 1, n: 4, c: 2 }, { seed: 2, n: 4, c: 0 }] });
    writeJson(path.join(dir, 'runs', 'r-van', 'run.json'), { name: 'study:grid:vanilla-rl:sokoban:s0', status: 'failed', durationMs: 100 });
  });
  afterAll(() => d.dispose());

  it('lists the studies of the project with their run counts', async () => {
    const { studies } = await api.studies.list();
    expect(studies).toEqual([{
      name: 'grid', methods: ['spa', 'vanilla-rl'], envs: ['sokoban'], seeds: [0], size: 'smoke', set: null, runs: 2, completed: 1,
      runIds: ['r-spa', 'r-van'],
      // No state.json (a study run before state files existed): some runs, not all completed → stopped.
      status: 'stopped', reason: null, progress: { done: 1, failed: 1, total: 2, currentRunId: null }, startedAt: null, finishedAt: null,
    }]);
  });

  it('computes the table: unbiased Pass@k pooled over puzzles, empty cells for runs without eval', async () => {
    const t = await api.studies.table({ name: 'grid' });
    expect(t.ks).toEqual([1, 2]);
    const spa = t.cells.find((c) => c.method === 'spa')!;
    expect(spa.passAt['1']!.mean).toBeCloseTo((0.5 + 0) / 2, 10);
    expect(spa.passAt['2']!.mean).toBeCloseTo((1 - 1 / 6 + 0) / 2, 10);   // 1 − C(2,2)/C(4,2) for the first puzzle
    expect(spa.success).toBeCloseTo(2 / 8, 10);
    const vanilla = t.cells.find((c) => c.method === 'vanilla-rl')!;
    expect(vanilla.completed).toBe(0);
    expect(vanilla.passAt).toEqual({});
    expect(t.markdown).toContain('| spa |');
    expect(t.csv.split('\n')[0]).toContain('method');
  });

  it('refuses unknown studies and names that leave the studies folder', async () => {
    await expect(api.studies.table({ name: 'nope' })).rejects.toThrow(/nope/);
    await expect(api.studies.table({ name: '../runs' })).rejects.toMatchObject({ name: 'ValidationError' });
  });
});
