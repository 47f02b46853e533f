// The New Run form's estimate (runs.estimate, core/engine/run-estimate.ts): per stage the median
// of the project's earlier comparable runs, else the bench's measured stage times, else "not
// estimated"; the bootstrap from the shipped base, or a warning that a base must be trained.
import { afterEach, describe, expect, it } from 'vitest';
import * as path from 'node:path';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { estimateNewRun, type BenchStageTimes } from '../../core/engine/run-estimate.js';
import { estimateRunEta } from '../../core/engine/run-eta.js';
import { bootstrapWork } from '../../core/train/bootstrap-source.js';
import { resolveRunConfig } from '../../core/engine/config.js';
import type { RunSummary, StageState } from '../../core/api/contract.js';
import { isolateHome, tempDir } from '../api/helpers.js';

const open: Dispatcher[] = [];
afterEach(async () => { for (const d of open.splice(0)) await d.dispose({ kill: true }); });

function stage(name: string, seconds: number | null): StageState {
  return { name, title: name, status: seconds === null ? 'pending' : 'completed', startedAt: seconds === null ? null : 1_000,
    finishedAt: seconds === null ? null : 1_000 + seconds * 1000, reason: null, done: 0, total: 0 };
}

function past(id: string, env: string, times: Record<string, number | null>): Pick<RunSummary, 'id' | 'preset' | 'size' | 'method' | 'env' | 'status' | 'stages'> {
  return { id, preset: 'spa', size: 'quick', method: 'spa', env, status: 'completed', stages: Object.entries(times).map(([n, s]) => stage(n, s)) };
}

function target(env: string) {
  const r = resolveRunConfig({ preset: 'spa', size: 'quick', set: { 'env.id': env } });
  if (!r.config) throw new Error(r.issues.map((i) => `${i.path}: ${i.message}`).join('; '));
  return { preset: 'spa', config: r.config, stages: r.stages };
}

describe('estimateNewRun', () => {
  it('takes the median of comparable runs, then the bench, and counts what neither measured', () => {
    const t = target('frozenlake');
    expect(t.stages).toEqual(['bootstrap', 'selfplay', 'sft', 'rl', 'eval']);
    const history = [
      past('a', 'frozenlake', { bootstrap: 0, selfplay: 10, sft: 100 }),
      past('b', 'frozenlake', { bootstrap: 0, selfplay: 20, sft: 300 }),
      past('c', 'frozenlake', { bootstrap: 0, selfplay: 60, sft: 200 }),
      past('other-env', 'sokoban', { selfplay: 999, sft: 999, rl: 999, eval: 999 }),
    ];
    const bench: BenchStageTimes[] = [
      { file: 'spa-stages-x.json', preset: 'spa', size: 'quick', env: 'frozenlake', backend: 'wasm', stageSeconds: { selfplay: 5, rl: 40 } },
      { file: 'spa-stages-x.json', preset: 'spa', size: 'quick', env: 'frozenlake', backend: 'torch', stageSeconds: { rl: 50 } },
      { file: 'spa-stages-y.json', preset: 'spa', size: 'smoke', env: 'frozenlake', backend: 'wasm', stageSeconds: { eval: 1 } },
    ];
    const e = estimateNewRun(t, history, bench, { kind: 'shipped', dir: '/x/frozenlake' }, ['frozenlake']);
    const by = Object.fromEntries(e.stages.map((s) => [s.name, s]));
    expect(by['bootstrap']).toMatchObject({ seconds: 1, source: expect.stringContaining('shipped base (frozenlake)') });
    expect(by['selfplay']).toMatchObject({ seconds: 20, source: 'median of 3 earlier runs here' });
    expect(by['sft']!.seconds).toBe(200);
    expect(by['rl']).toMatchObject({ seconds: 45, source: expect.stringContaining('bench spa-stages-x.json (median of 2 backends)') });
    expect(by['eval']).toMatchObject({ seconds: null, source: null });                 // the smoke bench does not count for quick
    expect(e.unestimated).toEqual(['eval']);
    expect(e.seconds).toBe(1 + 20 + 200 + 45);
    expect(e.warning).toBeNull();
    expect(e.bootstrap).toBe('shipped');
  });

  it('warns when a bootstrap base must be trained, scaling the reference training time by the rows trained', () => {
    const t = target('sokoban');
    const own = bootstrapWork(t.config);
    const reference = { seconds: 5600, steps: 2100, rows: own.rows / 4, env: 'frozenlake' };   // this run trains 4x the reference's rows
    const e = estimateNewRun(t, [], [], { kind: 'train', why: 'no shipped base for sokoban', reference, work: own }, ['frozenlake']);
    expect(e.bootstrap).toBe('train');
    expect(e.warning).toBe(`A bootstrap base must be trained first (no shipped base for sokoban): ${own.steps} training steps, about 6 h 13 min `
      + '(rough: the shipped frozenlake base took 1 h 33 min for 2100 steps). Runs on frozenlake use a shipped base instead.');
    const boot = e.stages.find((s) => s.name === 'bootstrap')!;
    expect(boot).toEqual({ name: 'bootstrap', seconds: 4 * 5600, source: "the shipped frozenlake base's training time, scaled by rows trained" });
    expect(e.unestimated).toEqual(['selfplay', 'sft', 'rl', 'eval']);
    expect(e.seconds).toBe(4 * 5600);
    // an earlier run here that trained the same base measures it instead; a short bootstrap is estimated, not warned about
    const quick = estimateNewRun(t, [{ ...past('p', 'sokoban', { bootstrap: 30 }) }], [], { kind: 'train', why: 'x', reference, work: own }, ['frozenlake']);
    expect(quick.stages[0]).toEqual({ name: 'bootstrap', seconds: 30, source: 'median of 1 earlier run here' });
    expect(quick.warning).toBeNull();
    // nothing to go by: not estimated, and warned without a number
    const blind = estimateNewRun(t, [], [], { kind: 'train', why: 'no shipped base for sokoban', reference: null, work: own }, []);
    expect(blind.stages[0]!.seconds).toBeNull();
    expect(blind.warning).toBe(`A bootstrap base must be trained first (no shipped base for sokoban): ${own.steps} training steps.`);
  });
});

describe('the run ETA of a first run', () => {
  it('takes the stages to come from the bench when no earlier run here measured them', () => {
    const live = { ...past('live', 'frozenlake', {}), status: 'running' as const,
      stages: [stage('selfplay', null), stage('sft', null), stage('rl', null)],
      progress: { stage: 'selfplay', done: 1, total: 4, etaSeconds: 30 } };
    live.stages[0] = { ...live.stages[0]!, status: 'running', startedAt: 0 };
    const bench: BenchStageTimes[] = [{ file: 'b.json', preset: 'spa', size: 'quick', env: 'frozenlake', backend: 'wasm', stageSeconds: { sft: 40, rl: 60 } }];
    expect(estimateRunEta(live, [], 0, bench)).toEqual({ seconds: 30 + 40 + 60, unestimated: 0 });
    expect(estimateRunEta(live, [], 0, [])).toEqual({ seconds: 30, unestimated: 2 });
    // an earlier run here wins over the bench
    expect(estimateRunEta(live, [{ ...past('p', 'frozenlake', { sft: 10 }), progress: null }], 0, bench)).toEqual({ seconds: 30 + 10 + 60, unestimated: 0 });
    // the bench of another env does not count
    expect(estimateRunEta({ ...live, env: 'sokoban' }, [], 0, bench)).toEqual({ seconds: 30, unestimated: 2 });
  });
});

describe('runs.estimate', () => {
  it('FrozenLake quick uses the shipped base; Sokoban quick must train one (warned); bad input names the field', async () => {
    isolateHome();
    const d = createDispatcher({ host: 'cli' });
    open.push(d);
    await d.api.projects.create({ path: path.join(tempDir(), 'proj') });
    const fl = await d.api.runs.estimate({ preset: 'spa', size: 'quick', set: { 'env.id': 'frozenlake' } });
    expect(fl.bootstrap).toBe('shipped');
    expect(fl.warning).toBeNull();
    expect(fl.shippedBaseEnvs).toContain('frozenlake');
    // the repository's bench measured this preset, size and env (bench/results/spa-stages-quick-frozenlake.json)
    expect(fl.stages.find((s) => s.name === 'rl')!.source).toContain('spa-stages-quick-frozenlake.json');
    expect(fl.seconds).toBeGreaterThan(0);

    const sk = await d.api.runs.estimate({ preset: 'spa', size: 'quick', set: { 'env.id': 'sokoban' } });
    expect(sk.bootstrap).toBe('train');
    expect(sk.warning).toMatch(/must be trained first/);

    const diag = await d.api.runs.estimate({ preset: 'diagnostic', size: 'smoke' });
    expect(diag.bootstrap).toBeNull();
    await expect(d.api.runs.estimate({ preset: 'spa', set: { 'seeds.base': 'x' } })).rejects.toThrow(/seeds\.base/);
  }, 180_000);
});
