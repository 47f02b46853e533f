import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { WorkbenchClient, WorkbenchEvent } from '../../core/api/contract.js';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import type { EngineProcess, LaunchOptions, ProcessLauncher } from '../../core/engine/launcher.js';
import { NodeProcessLauncher } from '../../core/engine/node-launcher.js';
import { RequestTracker } from '../../core/engine/request-tracker.js';
import { readJsonl } from '../../core/storage/jsonl.js';
import type { MetricPoint, RunEvent } from '../../core/api/records.js';
import { diagConfig, isolateHome, tempDir, waitFor } from '../api/helpers.js';

/** A Node launcher that remembers the engine processes it started (to kill them in tests). */
class RecordingLauncher implements ProcessLauncher {
  readonly kind = 'recording';
  readonly processes: { runId: string; proc: EngineProcess }[] = [];
  private readonly inner = new NodeProcessLauncher();
  launch(o: LaunchOptions): EngineProcess {
    const proc = this.inner.launch(o);
    this.processes.push({ runId: o.runId, proc });
    return proc;
  }
  pid(runId: string): number | undefined { return [...this.processes].reverse().find((p) => p.runId === runId)?.proc.pid; }
}

describe('engine process', () => {
  let d: Dispatcher;
  let api: WorkbenchClient;
  let launcher: RecordingLauncher;
  let projectDir: string;
  beforeAll(async () => {
    isolateHome();
    launcher = new RecordingLauncher();
    d = createDispatcher({ host: 'in-process', launcher, runHost: { stopGraceMs: 5000, flushIntervalMs: 100 } });
    api = createInProcessClient(d);
    projectDir = path.join(tempDir(), 'project');
    await api.projects.create({ path: projectDir });
  });
  afterAll(() => d.dispose({ kill: true }));

  const metrics = (runId: string) => readJsonl<MetricPoint>(path.join(projectDir, 'runs', runId, 'metrics.jsonl')).rows;
  const events = (runId: string) => readJsonl<RunEvent>(path.join(projectDir, 'runs', runId, 'events.jsonl')).rows;

  it('SIGKILL mid-run marks the run failed with the reason; the host still answers; resume continues from the last completed stage', async () => {
    const run = await api.runs.create({ config: diagConfig({ 'diag-wait': { steps: 3, delayMs: 5 }, 'diag-wait2': { steps: 30, delayMs: 40 } }) });
    const live: WorkbenchEvent[] = [];
    api.subscribe({ kind: 'run', runId: run.id }, (e) => live.push(e));
    await api.runs.start({ runId: run.id });
    // Wait until the second stage is under way, then kill the engine like the OOM killer would.
    await waitFor('diag-wait2 progress', () => live.some((e) => e.kind === 'run' && e.event.type === 'progress' && e.event.stage === 'diag-wait2' && e.event.done >= 4));
    const pid = launcher.pid(run.id)!;
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    await d.waitForRun(run.id);

    const failed = await api.runs.get({ runId: run.id });
    expect(failed.status).toBe('failed');
    expect(failed.reason).toMatch(/engine process died unexpectedly \(signal SIGKILL\)/);
    expect(failed.stages.map((s) => [s.name, s.status])).toEqual([['diag-wait', 'completed'], ['diag-wait2', 'failed']]);
    expect(live.some((e) => e.kind === 'run' && e.event.type === 'status' && e.event.status === 'failed')).toBe(true);
    expect(events(run.id).at(-1)).toMatchObject({ type: 'status', status: 'failed' });
    // The host keeps serving.
    expect((await api.system.info()).host).toBe('in-process');
    expect((await api.runs.list()).runs.find((r) => r.id === run.id)?.status).toBe('failed');
    const killedAt = Math.max(...metrics(run.id).filter((m) => m.stage === 'diag-wait2').map((m) => m.step));
    expect(killedAt).toBeGreaterThanOrEqual(4);
    expect(killedAt).toBeLessThan(30);

    const resumed = await api.runs.resume({ runId: run.id });
    expect(resumed.attempts).toBe(2);
    await d.waitForRun(run.id);
    const done = await api.runs.get({ runId: run.id });
    expect(done.status).toBe('completed');
    expect(done.stages.map((s) => s.status)).toEqual(['completed', 'completed']);
    const m = metrics(run.id);
    expect(m.filter((p) => p.stage === 'diag-wait').map((p) => p.step)).toEqual([1, 2, 3]);      // not re-run
    const wait2Steps = m.filter((p) => p.stage === 'diag-wait2').map((p) => p.step);
    expect(new Set(wait2Steps).size).toBe(30);
    expect(wait2Steps.length).toBeLessThanOrEqual(31);                                          // resumed within the stage, at most the step in flight repeated
    const logs = events(run.id).filter((e) => e.type === 'log').map((e) => (e as { message: string }).message);
    expect(logs.some((l) => /stage diag-wait already completed/.test(l))).toBe(true);
    expect(logs.some((l) => /diag-wait2: resuming after step \d+ of 30/.test(l))).toBe(true);
    expect(fs.existsSync(path.join(projectDir, 'runs', run.id, 'stages', 'diag-wait2', 'done.json'))).toBe(true);
  });

  it('an engine that exits with an error code fails the run with the code and its last output, and resume passes', async () => {
    const run = await api.runs.create({ config: diagConfig({ 'diag-wait': { steps: 1, delayMs: 1 }, 'diag-crash': { mode: 'exit', code: 3 } }), start: true });
    await d.waitForRun(run.id);
    const failed = await api.runs.get({ runId: run.id });
    expect(failed.status).toBe('failed');
    expect(failed.reason).toContain('exit code 3');
    expect(failed.reason).toContain('crashing the engine process on purpose');
    await api.runs.resume({ runId: run.id });
    await d.waitForRun(run.id);
    expect((await api.runs.get({ runId: run.id })).status).toBe('completed');
  });

  it('a stage that throws fails the run with its message; stop stops; delete removes the folder', async () => {
    const failing = await api.runs.create({ config: diagConfig({ 'diag-fail': { message: 'bad hyperparameter' } }), start: true });
    await d.waitForRun(failing.id);
    const f = await api.runs.get({ runId: failing.id });
    expect(f.status).toBe('failed');
    expect(f.reason).toBe('stage diag-fail: bad hyperparameter');
    expect(f.stages[0]).toMatchObject({ status: 'failed', reason: 'bad hyperparameter' });

    const long = await api.runs.create({ config: diagConfig({ 'diag-wait': { steps: 200, delayMs: 20 } }), start: true });
    await waitFor('some progress', () => fs.existsSync(path.join(projectDir, 'runs', long.id, 'stages', 'diag-wait', 'state.json')));
    const stopping = await api.runs.stop({ runId: long.id });
    expect(['stopping', 'stopped']).toContain(stopping.status);
    await d.waitForRun(long.id);
    const stopped = await api.runs.get({ runId: long.id });
    expect(stopped.status).toBe('stopped');
    expect(stopped.stages[0]!.status).toBe('stopped');
    const err = await api.runs.start({ runId: long.id }).catch((e: Error) => e);
    expect((err as Error).name).toBe('Conflict');
    await api.runs.delete({ runId: failing.id });
    expect((await api.runs.list()).runs.some((r) => r.id === failing.id)).toBe(false);
    expect(fs.existsSync(path.join(projectDir, 'runs', failing.id))).toBe(false);
  });

  it('serves episodes, metrics and events of a run through the API', async () => {
    const run = await api.runs.create({ preset: 'diagnostic', size: 'smoke', start: true });
    await d.waitForRun(run.id);
    expect((await api.runs.get({ runId: run.id })).status).toBe('completed');
    const all = await api.rollouts.query({ runId: run.id });
    expect(all.total).toBe(4);
    const successes = await api.rollouts.query({ runId: run.id, outcome: 'success' });
    expect(successes.episodes.every((e) => e.success)).toBe(true);
    const withErrors = await api.rollouts.query({ runId: run.id, formatErrors: 'some', limit: 1 });
    expect(withErrors.episodes).toHaveLength(1);
    const ep = await api.rollouts.get({ runId: run.id, id: all.episodes[2]!.id });
    expect(ep.id).toBe(all.episodes[2]!.id);
    expect(ep.turns[0]!.stateBefore.board.rows).toBe(5);
    const facets = await api.rollouts.facets({ runId: run.id });
    expect(facets.stages[0]).toMatchObject({ stage: 'diag-episodes', count: 4 });
    const names = await api.metrics.names({ runIds: [run.id] });
    expect(names.names).toContain('diag/value');
    const series = await api.metrics.query({ runIds: [run.id], names: ['diag/step'], maxPoints: 2 });
    expect(series.series[0]).toMatchObject({ downsampled: true, totalPoints: 5 });
    expect(Math.max(...series.series[0]!.max)).toBe(5);
    const ev = await api.runs.events({ runId: run.id, types: ['stage'] });
    expect(ev.events.map((e) => e.type === 'stage' && e.status)).toEqual(['running', 'completed', 'running', 'completed']);
    const evals = await api.evals.list({ runId: run.id });
    expect(evals.results.map((r) => r.id)).toEqual(['diagnostic']);
  });

  /** A project whose run was left `running` (with `patch` in run.json) by a host that died; the project is closed. */
  async function leftRunning(name: string, patch: (now: number) => Record<string, unknown> = () => ({})) {
    const dir = path.join(tempDir(), name);
    const d2 = createDispatcher({ host: 'in-process' });
    const api2 = createInProcessClient(d2);
    await api2.projects.create({ path: dir });
    const run = await api2.runs.create({ config: diagConfig({ 'diag-wait': {} }) });
    await api2.projects.close();
    const runDir = path.join(dir, 'runs', run.id);
    const now = Date.now();
    const file = path.join(runDir, 'run.json');
    fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), status: 'running', ...patch(now) }));
    return { dir, d2, api2, run, runDir, now };
  }

  it('marks runs that were active when a previous host died as failed on open', async () => {
    const { dir, d2, api2, run } = await leftRunning('other');
    const info = await api2.projects.open({ path: dir });
    expect(info.warnings.join('\n')).toContain(`run ${run.id} was active`);
    const r = await api2.runs.get({ runId: run.id });
    expect(r.status).toBe('failed');
    expect(r.reason).toMatch(/interrupted/);
    await d2.dispose();
  });

  it('a run whose host died counts the time its attempt ran (start to its last line), not 0', async () => {
    // an earlier attempt counted 5 s; this one started 60 s ago and its engine wrote its last event 20 s ago
    const { dir, d2, api2, run, runDir, now } = await leftRunning('lost-time', (t) => ({ startedAt: t - 60_000, finishedAt: null, durationMs: 5_000 }));
    fs.appendFileSync(path.join(runDir, 'events.jsonl'), '');
    fs.utimesSync(path.join(runDir, 'events.jsonl'), (now - 20_000) / 1000, (now - 20_000) / 1000);
    fs.rmSync(path.join(runDir, 'metrics.jsonl'), { force: true });
    await api2.projects.open({ path: dir });
    const r = await api2.runs.get({ runId: run.id });
    expect(r.status).toBe('failed');
    expect(r.durationMs).toBeGreaterThanOrEqual(5_000 + 40_000 - 1_000);
    expect(r.durationMs).toBeLessThanOrEqual(5_000 + 40_000 + 1_000);
    await d2.dispose();
  });
});

describe('RequestTracker: every request settles exactly once', () => {
  it('reply, then a late error is ignored', async () => {
    const t = new RequestTracker();
    let id = 0;
    const p = t.request('x', (i) => { id = i; }, 1000);
    t.reply(id, 'ok');
    t.error(id, { name: 'E', message: 'late' });
    await expect(p).resolves.toBe('ok');
    expect(t.size).toBe(0);
  });
  it('timeout, exit and send failure reject with a reason', async () => {
    const t = new RequestTracker();
    await expect(t.request('slow', () => undefined, 20)).rejects.toThrow(/no answer .* within 20 ms/);
    const pending = t.request('pending', () => undefined, null);
    t.closeAll('signal SIGKILL');
    await expect(pending).rejects.toThrow(/exited before answering \(signal SIGKILL\)/);
    await expect(t.request('after', () => undefined, null)).rejects.toThrow(/engine process is gone/);
    const t2 = new RequestTracker();
    await expect(t2.request('send', () => { throw new Error('channel closed'); }, null)).rejects.toThrow(/could not send/);
  });
});

describe('engine out of memory', () => {
  it('an engine that runs out of heap fails the run with an out-of-memory reason; the host is unaffected', async () => {
    isolateHome();
    const d = createDispatcher({ host: 'in-process', runHost: { maxOldSpaceMb: 96 } });
    const api = createInProcessClient(d);
    try {
      await api.projects.create({ path: path.join(tempDir(), 'oom') });
      const run = await api.runs.create({ config: diagConfig({ 'diag-crash': { mode: 'oom' } }), start: true });
      await d.waitForRun(run.id);
      const r = await api.runs.get({ runId: run.id });
      expect(r.status).toBe('failed');
      expect(r.reason).toMatch(/out of memory/);
      expect((await api.system.info()).host).toBe('in-process');
    } finally { await d.dispose({ kill: true }); }
  });
});
