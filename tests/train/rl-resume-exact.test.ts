// RL resume loses nothing and is exact with the shared-trunk critic (issue 37, N6 and N6b; the
// reliability retest's R3/R4): a run killed right after RL saved its state (the old order saved the
// state before the step's tracked Pass@k, so that Pass@k and its 11 metric points were lost for
// good), one killed after the Pass@k but before the state, and one stopped during the Pass@k all
// resume to the same metric points, Pass@k files and checkpoints as an uninterrupted run. The kill
// is simulated in process: the stage's context throws right after the write named (nothing of the
// stage runs after it, as after kill -9). TF.js wasm on one thread, the smallest RL that shows it
// (3 steps of 1 group x 2 episodes, Pass@k every step); tests/torch/rl-resume-exact.test.ts runs the
// kill on the torch worker.
import { describe, expect, it, beforeAll } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { passAtKFile } from '../../core/train/rl-stage.js';
import { tempProject } from './helpers.js';
import { RL_RESUME_OVERRIDES, expectSameRun, metricValues, rlProducts, runRl, weightHashes } from './rl-resume-helpers.js';

describe('RL resume after a kill or a stop (N6, N6b)', () => {
  let reference = '';
  let referenceWeights: Record<string, string> = {};
  beforeAll(async () => {
    const run = await runRl(tempProject('spa-rl-resume-'), 'ref', RL_RESUME_OVERRIDES);
    expect(run.outcome.status).toBe('completed');
    reference = run.runDir;
    referenceWeights = await weightHashes(reference);
  }, 240_000);

  it('the reference has every tracked Pass@k (steps 0-3) and the milestones', () => {
    expect(rlProducts(reference).passAtK.map(([f]) => f)).toEqual([0, 1, 2, 3].map((s) => passAtKFile(s).slice('eval/'.length)));
    expect(Object.keys(referenceWeights)).toEqual(['rl-1', 'rl-2', 'rl-3']);
    // the points a lost Pass@k took with it (R4): the step's rl/ metrics
    expect([...metricValues(reference).keys()].filter((k) => k.startsWith('rl/2/rl/')).length).toBeGreaterThan(3);
  });

  it('a kill right after the state of step 1 is saved loses nothing, and the shared-trunk resume is exact', async () => {
    const project = tempProject('spa-rl-resume-');
    const first = await runRl(project, 'r', RL_RESUME_OVERRIDES, { kill: { after: 'saveState', nextStep: 1 } });
    expect(first.outcome.status).toBe('failed');
    // the step's Pass@k was written before its state (the old order lost it here)
    expect(existsSync(join(first.runDir, passAtKFile(1)))).toBe(true);
    // the resume point carries the value step's own AdamW moments
    expect(existsSync(join(first.runDir, 'checkpoints', 'rl-latest', 'optimizer.value.safetensors'))).toBe(true);
    const second = await runRl(project, 'r', RL_RESUME_OVERRIDES);
    expect(second.outcome.status).toBe('completed');
    expect(second.events.some((e) => e.type === 'log' && /rl: resuming at step 1 .*the shared-trunk value step's too/.test(e.message))).toBe(true);
    expectSameRun(second.runDir, reference);
    expect(await weightHashes(second.runDir)).toEqual(referenceWeights);
  }, 240_000);

  it('a kill after the Pass@k of step 1, before its state, redoes the step with the same numbers', async () => {
    const project = tempProject('spa-rl-resume-');
    const first = await runRl(project, 'r', RL_RESUME_OVERRIDES, { kill: { after: 'writeJson', file: passAtKFile(1) } });
    expect(first.outcome.status).toBe('failed');
    expect(existsSync(join(first.runDir, 'stages', 'rl', 'state.json'))).toBe(false);
    const second = await runRl(project, 'r', RL_RESUME_OVERRIDES);
    expect(second.outcome.status).toBe('completed');
    expectSameRun(second.runDir, reference);
  }, 240_000);

  it('a kill right after the last step\'s state: the resume finishes the stage and removes rl-latest', async () => {
    const project = tempProject('spa-rl-resume-');
    const first = await runRl(project, 'r', RL_RESUME_OVERRIDES, { kill: { after: 'saveState', nextStep: 3 } });
    expect(first.outcome.status).toBe('failed');
    expect(existsSync(join(first.runDir, 'checkpoints', 'rl-latest'))).toBe(true);   // its removal came after the state
    const second = await runRl(project, 'r', RL_RESUME_OVERRIDES);
    expect(second.outcome.status).toBe('completed');
    expect(existsSync(join(second.runDir, 'checkpoints', 'rl-latest'))).toBe(false);
    expectSameRun(second.runDir, reference);
  }, 240_000);

  it('a stop between step 2\'s rollouts and its update saves nothing of step 2; the resume redoes it exactly', async () => {
    const project = tempProject('spa-rl-resume-');
    const controller = new AbortController();
    const first = await runRl(project, 'r', RL_RESUME_OVERRIDES, {
      signal: controller.signal,
      // step 2's two episodes are written (rollouts/rl-000001), its update not begun: a Stop there must not save the step
      // with part of its updates (or none) applied
      kill: { after: 'episode', file: 'rl-000001', count: 2, before: () => controller.abort() },
    });
    expect(first.outcome.status).toBe('stopped');
    expect(JSON.parse(readFileSync(join(first.runDir, 'stages', 'rl', 'state.json'), 'utf8'))).toMatchObject({ nextStep: 1 });
    expect(existsSync(join(first.runDir, passAtKFile(2)))).toBe(false);
    const second = await runRl(project, 'r', RL_RESUME_OVERRIDES);
    expect(second.outcome.status).toBe('completed');
    expectSameRun(second.runDir, reference);
    expect(await weightHashes(second.runDir)).toEqual(referenceWeights);
  }, 240_000);

  it('a stop during the Pass@k of step 2 keeps the step; the resume computes the missing Pass@k first', async () => {
    const project = tempProject('spa-rl-resume-');
    const controller = new AbortController();
    const first = await runRl(project, 'r', RL_RESUME_OVERRIDES, {
      signal: controller.signal,
      // after step 2's update and metrics, before its Pass@k ends (progress events are throttled; metrics are not)
      onEvent: (e) => { if (e.type === 'metric' && e.point.stage === 'rl' && e.point.step === 2 && 'rollout/reward' in e.point.values) controller.abort(); },
    });
    expect(first.outcome.status).toBe('stopped');
    expect(existsSync(join(first.runDir, passAtKFile(2)))).toBe(false);
    expect(JSON.parse(readFileSync(join(first.runDir, 'stages', 'rl', 'state.json'), 'utf8'))).toMatchObject({ nextStep: 2 });
    const second = await runRl(project, 'r', RL_RESUME_OVERRIDES);
    expect(second.outcome.status).toBe('completed');
    expect(second.events.some((e) => e.type === 'log' && /the Pass@k of step 2 is missing; computing it/.test(e.message))).toBe(true);
    expectSameRun(second.runDir, reference);
  }, 240_000);
});
