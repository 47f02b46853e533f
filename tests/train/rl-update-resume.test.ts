// An RL step's update survives a stop or a kill (the resume point of core/train/rl-stage.ts: checkpoints/rl-update with the
// AdamW moments, the updates done in the stage state, the old log-probs in the step's stats journal). On a CPU one step of a
// real model's update runs for hours (docs/results/study-v4: vanilla RL's 38 updates a step), longer than a session: without
// it a stopped step lost its whole update. The resumed run must give the uninterrupted run's numbers: every metric value,
// Pass@k file and milestone's weights. TF.js wasm on one thread, PPO with the shared-trunk critic (its value step's own
// AdamW moments ride in the point too), each turn row its own update (miniBatchSize 1). tests/train/rl-resume-exact.test.ts
// covers the kills between steps.
import { describe, expect, it, beforeAll } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunConfigInput } from '../../core/api/run-config.js';
import { statsJournalKey, UPDATE_POINT, type UpdatePoint } from '../../core/train/rl-stage.js';
import { journalSummaries } from '../../core/train/episode-journal.js';
import { tempProject } from './helpers.js';
import { RL_RESUME_OVERRIDES, expectSameRun, runRl, weightHashes } from './rl-resume-helpers.js';

const rlOf = (o: RunConfigInput) => (o.stages as { rl: Record<string, unknown> }).rl;
const OVERRIDES: RunConfigInput = {
  ...RL_RESUME_OVERRIDES,
  stages: { ...RL_RESUME_OVERRIDES.stages, rl: { ...rlOf(RL_RESUME_OVERRIDES), steps: 2, miniBatchSize: 1 } },
};
// a resume point after every update (1e-6 minutes: ~0.06 ms)
const TIMED: RunConfigInput = { ...OVERRIDES, model: { ...OVERRIDES.model, memory: { resumePointMinutes: 1e-6 } } };

function stageState(runDir: string): { nextStep?: number; update?: UpdatePoint } {
  return JSON.parse(readFileSync(join(runDir, 'stages', 'rl', 'state.json'), 'utf8')) as { nextStep?: number; update?: UpdatePoint };
}

function logs(events: Array<{ type: string }>): string[] {
  return events.filter((e): e is { type: 'log'; message: string } => e.type === 'log').map((e) => e.message);
}

describe('RL update resume points', () => {
  let reference = '';
  let referenceWeights: Record<string, string> = {};
  let updates = 0;
  const progress: string[] = [];
  beforeAll(async () => {
    // no timed resume point: writing one must not change a number
    const run = await runRl(tempProject('spa-rl-upd-'), 'ref', { ...OVERRIDES, model: { ...OVERRIDES.model, memory: { resumePointMinutes: 0 } } }, { progress });
    expect(run.outcome.status).toBe('completed');
    reference = run.runDir;
    referenceWeights = await weightHashes(reference);
    const metrics = readFileSync(join(reference, 'metrics.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { stage: string; step: number; values: Record<string, number> });
    updates = metrics.find((m) => m.stage === 'rl' && m.step === 2 && 'charts/updates' in m.values)!.values['charts/updates']!;
  }, 240_000);

  it('the reference has several updates a step and leaves no point, journal or rl-update behind', () => {
    expect(updates).toBeGreaterThanOrEqual(3);
    expect(existsSync(join(reference, 'checkpoints', UPDATE_POINT))).toBe(false);
    expect(journalSummaries(reference)).toEqual([]);
  });

  it('each step reports its rollouts, its old log-probs and its updates, in that order, each to its total', () => {
    for (const step of [1, 2]) {
      const own = progress.filter((m) => m.startsWith(`RL step ${step}/2: `)).map((m) => m.slice(`RL step ${step}/2: `.length));
      const phases = own.map((m) => ['rollouts', 'old log-probs', 'update', 'success'].findIndex((p) => m.startsWith(p)));
      expect(phases, own.join(' | ')).toEqual([...phases].sort((a, b) => a - b));   // in order, nothing else
      expect(phases.every((p) => p >= 0)).toBe(true);
      const last = (phase: string) => own.filter((m) => m.startsWith(phase)).pop() ?? '';
      expect(last('rollouts')).toMatch(/^rollouts (\d+)\/\1 episodes$/);
      expect(last('old log-probs')).toMatch(/^old log-probs (\d+)\/\1 rows$/);
      expect(last('update')).toBe(`update ${updates}/${updates}`);
      expect(own.filter((m) => m.startsWith('update'))).toHaveLength(updates);
    }
  });

  it('a kill after a timed resume point in step 2\'s update resumes there with the same numbers', async () => {
    const project = tempProject('spa-rl-upd-');
    const first = await runRl(project, 'r', TIMED, { kill: { after: 'updatePoint', step: 1, batchesDone: 2 } });
    expect(first.outcome.status).toBe('failed');
    const point = stageState(first.runDir).update!;
    expect(point).toMatchObject({ step: 1, batchesDone: 2, batches: updates });
    expect(point.updateStats).toHaveLength(2);
    expect(stageState(first.runDir).nextStep).toBe(1);   // the step itself is not saved
    // what the run keeps: the rollouts and every scored batch of old log-probs (spa-workbench show lists them)
    const kept = journalSummaries(first.runDir);
    expect(kept.find((j) => j.key === statsJournalKey(1))).toMatchObject({ unit: 'rows' });
    const second = await runRl(project, 'r', TIMED);
    expect(second.outcome.status).toBe('completed');
    const lines = logs(second.events);
    expect(lines.some((m) => new RegExp(`rl: resuming step 2 after 2 of its ${updates} updates`).test(m))).toBe(true);
    expect(lines.some((m) => /rl: step 2: \d+ scored batch\(es\) of old log-probs restored from its stats journal/.test(m))).toBe(true);
    expectSameRun(second.runDir, reference);
    expect(await weightHashes(second.runDir)).toEqual(referenceWeights);
    expect(existsSync(join(second.runDir, 'checkpoints', UPDATE_POINT))).toBe(false);
    expect(stageState(second.runDir).update).toBeUndefined();
  }, 240_000);

  it('a Stop during step 2\'s update keeps the updates done (no timed points); the resume applies the rest exactly', async () => {
    const project = tempProject('spa-rl-upd-');
    const controller = new AbortController();
    const first = await runRl(project, 'r', OVERRIDES, {
      signal: controller.signal, kill: { after: 'progress', message: /^RL step 2\/2: update 1\//, before: () => controller.abort() },
    });
    expect(first.outcome.status).toBe('stopped');
    expect(stageState(first.runDir).update).toMatchObject({ step: 1, batchesDone: 1, batches: updates });
    const second = await runRl(project, 'r', OVERRIDES);
    expect(second.outcome.status).toBe('completed');
    expect(logs(second.events).some((m) => /rl: resuming step 2 after 1 of its/.test(m))).toBe(true);
    expectSameRun(second.runDir, reference);
    expect(await weightHashes(second.runDir)).toEqual(referenceWeights);
  }, 240_000);

  it('a point whose weights are not the ones recorded (a kill while rl-update was written) is not used: the step is redone', async () => {
    const project = tempProject('spa-rl-upd-');
    const first = await runRl(project, 'r', TIMED, { kill: { after: 'updatePoint', step: 1, batchesDone: 2 } });
    expect(first.outcome.status).toBe('failed');
    const file = join(first.runDir, 'stages', 'rl', 'state.json');
    const state = JSON.parse(readFileSync(file, 'utf8')) as { update: UpdatePoint };
    writeFileSync(file, JSON.stringify({ ...state, update: { ...state.update, manifest: '0'.repeat(64) } }));
    const second = await runRl(project, 'r', TIMED);
    expect(second.outcome.status).toBe('completed');
    expect(logs(second.events).some((m) => /resume point of step 2's update is not used \(checkpoints\/rl-update does not hold its weights/.test(m))).toBe(true);
    expectSameRun(second.runDir, reference);
    expect(await weightHashes(second.runDir)).toEqual(referenceWeights);
  }, 240_000);
});
