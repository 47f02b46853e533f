// An RL step redone after an interrupted engine appends its episodes again: the later rows
// supersede the earlier ones with the same id in queries, facets and rollouts.get.
import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EpisodeSummary } from '../../core/api/records.js';
import { JsonlWriter } from '../../core/storage/jsonl.js';
import { RunData } from '../../core/storage/run-data.js';

const row = (id: string, success: boolean, offset: number): EpisodeSummary => ({
  id, stage: 'rl', step: 3, seed: 7, group: 0, sample: 0, success, totalReward: success ? 1 : -0.1,
  numTurns: 1, formatErrors: 0, invalidActions: 0, file: 'rollouts/rl-000003.jsonl', offset, length: 10,
});

describe('rollout index: redone episodes supersede interrupted ones', () => {
  it('counts each id once and serves the latest row', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-supersede-'));
    const index = path.join(dir, 'rollouts', 'index.jsonl');
    const w = new JsonlWriter(index);
    w.append([row('rl-3-a', false, 0), row('rl-3-b', false, 11)]);   // written before the engine died
    w.close();
    const data = new RunData('r', dir);
    expect(data.queryRollouts({ outcome: 'all', formatErrors: 'any', sort: 'index', offset: 0, limit: 10 }).total).toBe(2);

    const w2 = new JsonlWriter(index);
    w2.append([row('rl-3-a', true, 22)]);                              // the redone step
    w2.close();
    const q = data.queryRollouts({ outcome: 'all', formatErrors: 'any', sort: 'index', offset: 0, limit: 10 });
    expect(q.total).toBe(2);
    expect(q.episodes.map((e) => [e.id, e.success, e.offset])).toEqual([['rl-3-b', false, 11], ['rl-3-a', true, 22]]);
    expect(data.facets().stages).toEqual([{ stage: 'rl', count: 2, minStep: 3, maxStep: 3, successes: 1 }]);
    expect(data.queryRollouts({ outcome: 'success', formatErrors: 'any', sort: 'index', offset: 0, limit: 10 }).total).toBe(1);
  });
});
