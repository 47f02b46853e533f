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

  /** Start a diag-wait run, stop it once its first step has begun, wait for its end and return its id. */
  async function stopDuringStep(stage: Record<string, unknown>): Promise<string> {
    const run = await api.runs.create({ config: diagConfig({ 'diag-wait': stage }), start: true });
    await waitFor('the engine has started the stage', async () => (await api.runs.get({ runId: run.id })).stages[0]?.status === 'running');
    await new Promise((r) => setTimeout(r, 200));   // inside step 1
    await api.runs.stop({ runId: run.id });
    await d.waitForRun(run.id);
    return run.id;
  }

  it('a step on a worker (the engine answers) ends and is kept: stopped, not killed, and the resume starts after it', async () => {
    const id = await stopDuringStep({ steps: 3, delayMs: 2500, step: 'worker' });
    const stopped = await api.runs.get({ runId: id });
    expect(stopped.status).toBe('stopped');
    expect(stopped.reason ?? '').not.toMatch(/killed/);   // a step of 4 graces: the pings kept it past the grace
    expect(metrics(id).filter((m) => m.stage === 'diag-wait').map((m) => m.step)).toEqual([1]);   // step 1 finished, no step 2
    await api.runs.resume({ runId: id });
    await d.waitForRun(id);
    expect((await api.runs.get({ runId: id })).status).toBe('completed');
    expect(logs(id).some((l) => /diag-wait: resuming after step 1 of 3/.test(l))).toBe(true);
    expect(metrics(id).filter((m) => m.stage === 'diag-wait').map((m) => m.step)).toEqual([1, 2, 3]);
  }, 60_000);

  it('an engine that cannot answer (a blocked event loop) is killed after the grace, as before', async () => {
    const id = await stopDuringStep({ steps: 3, delayMs: 3000, step: 'blocking' });
    const run = await api.runs.get({ runId: id });
    expect(run.status).toBe('stopped');
    expect(run.reason).toMatch(/killed after it did not stop within \d+ s \(it stopped answering\)/);
    expect(metrics(id).filter((m) => m.stage === 'diag-wait')).toEqual([]);   // killed before its step ended: the step is lost
  }, 60_000);

  it('a step longer than stopStepWaitMs is killed at that bound, with the reason', async () => {
    const id = await stopDuringStep({ steps: 2, delayMs: 8000, step: 'worker' });
    const run = await api.runs.get({ runId: id });
    expect(run.status).toBe('stopped');
    const waited = /killed after its step did not end within (\d+) s of the stop/.exec(run.reason ?? '');
    expect(waited, run.reason ?? '').not.toBeNull();
    expect(Number(waited![1])).toBeGreaterThanOrEqual(STEP_WAIT_MS / 1000);   // the host's record: it waited to the bound, not less
    expect(metrics(id).filter((m) => m.stage === 'diag-wait')).toEqual([]);   // killed at the bound, before its step ended
  }, 60_000);
});
