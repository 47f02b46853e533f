// A Stop waits for the step in flight while the engine still answers (core/engine/run-host.ts waitForStep). Before, the host
// killed the engine stopGraceMs (15 s) after any stop: a real model's step on a CPU (~36 s of SFT for SmolLM2-135M on one
// thread, minutes of RL update) never ended within it, so "stop after the current step" lost the step, and SFT's whole epoch
// (study v4, 2026-11-29). The diag-wait stage's `step` option stands in for the three kinds of step: "worker" (the engine's
// event loop free while a worker computes: it answers pings), "blocking" (in-process TF.js training: it cannot answer).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as path from 'node:path';
import type { WorkbenchClient } from '../../core/api/contract.js';
import type { MetricPoint, RunEvent } from '../../core/api/records.js';
import type { Dispatcher } from '../../core/host/dispatcher.js';
import { readJsonl } from '../../core/storage/jsonl.js';
import { diagConfig, inProcessProject, waitFor } from '../api/helpers.js';

const GRACE_MS = 600;
const STEP_WAIT_MS = 4000;

describe('a Stop waits for the step in flight while the engine answers', () => {
  let d: Dispatcher;
  let api: WorkbenchClient;
  let projectDir: string;
  beforeAll(async () => {
    ({ d, api, projectDir } = await inProcessProject({ stopGraceMs: GRACE_MS, stopStepWaitMs: STEP_WAIT_MS, flushIntervalMs: 100 }));
  });
  afterAll(() => d.dispose({ kill: true }));

  const metrics = (runId: string) => readJsonl<MetricPoint>(path.join(projectDir, 'runs', runId, 'metrics.jsonl')).rows;
  const logs = (runId: string) => readJsonl<RunEvent>(path.join(projectDir, 'runs', runId, 'events.jsonl')).rows
    .filter((e): e is Extract<RunEvent, { type: 'log' }> => e.type === 'log').map((e) => e.message);

  /** Start a diag-wait run, stop it once its first step has begun, and return the run and the ms the stop took. */
  async function stopDuringStep(stage: Record<string, unknown>): Promise<{ id: string; stoppedInMs: number }> {
    const run = await api.runs.create({ config: diagConfig({ 'diag-wait': stage }), start: true });
    await waitFor('the engine has started the stage', async () => (await api.runs.get({ runId: run.id })).stages[0]?.status === 'running');
    await new Promise((r) => setTimeout(r, 200));   // inside step 1
    const t0 = Date.now();
    await api.runs.stop({ runId: run.id });
    await d.waitForRun(run.id);
    return { id: run.id, stoppedInMs: Date.now() - t0 };
  }

  it('a step on a worker (the engine answers) ends and is kept: stopped, not killed, and the resume starts after it', async () => {
    const { id, stoppedInMs } = await stopDuringStep({ steps: 3, delayMs: 2500, step: 'worker' });
    const stopped = await api.runs.get({ runId: id });
    expect(stopped.status).toBe('stopped');
    expect(stopped.reason ?? '').not.toMatch(/killed/);
    expect(stoppedInMs).toBeGreaterThan(2 * GRACE_MS);   // it outlived the grace: the pings kept it
    expect(metrics(id).filter((m) => m.stage === 'diag-wait').map((m) => m.step)).toEqual([1]);   // step 1 finished, no step 2
    await api.runs.resume({ runId: id });
    await d.waitForRun(id);
    expect((await api.runs.get({ runId: id })).status).toBe('completed');
    expect(logs(id).some((l) => /diag-wait: resuming after step 1 of 3/.test(l))).toBe(true);
    expect(metrics(id).filter((m) => m.stage === 'diag-wait').map((m) => m.step)).toEqual([1, 2, 3]);
  }, 60_000);

  it('an engine that cannot answer (a blocked event loop) is killed after the grace, as before', async () => {
    const { id, stoppedInMs } = await stopDuringStep({ steps: 3, delayMs: 3000, step: 'blocking' });
    const run = await api.runs.get({ runId: id });
    expect(run.status).toBe('stopped');
    expect(run.reason).toMatch(/killed after it did not stop within \d+ s \(it stopped answering\)/);
    expect(stoppedInMs).toBeLessThan(2800);
    expect(metrics(id).filter((m) => m.stage === 'diag-wait')).toEqual([]);   // the step in flight is lost
  }, 60_000);

  it('a step longer than stopStepWaitMs is killed at that bound, with the reason', async () => {
    const { id, stoppedInMs } = await stopDuringStep({ steps: 2, delayMs: 8000, step: 'worker' });
    const run = await api.runs.get({ runId: id });
    expect(run.status).toBe('stopped');
    expect(run.reason).toMatch(/killed after its step did not end within [45] s of the stop/);
    expect(stoppedInMs).toBeGreaterThanOrEqual(STEP_WAIT_MS - 100);
    expect(stoppedInMs).toBeLessThan(7500);
  }, 60_000);
});
