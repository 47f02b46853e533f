// Studies started, stopped and resumed through the API (studies.start / studies.stop): the grid
// runs one run at a time through the dispatcher's RunHost, the study's state is recorded in
// studies/<name>/state.json, studies.list reports status and progress, and a study survives a
// host restart (studies.start with its name resumes it without redoing completed runs).
import { afterAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ProjectEvent, WorkbenchClient } from '../../core/api/contract.js';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { isolateHome, tempDir, waitFor } from './helpers.js';

isolateHome();
const open: Dispatcher[] = [];
afterAll(async () => { for (const d of open) await d.dispose({ kill: true }).catch(() => undefined); });

async function host(dir: string, create: boolean): Promise<{ d: Dispatcher; api: WorkbenchClient; events: ProjectEvent[] }> {
  const d = createDispatcher({ host: 'in-process' });
  open.push(d);
  const api = createInProcessClient(d);
  const events: ProjectEvent[] = [];
  api.subscribe({ kind: 'project' }, (e) => { if (e.kind === 'project') events.push(e.event); });
  if (create) await api.projects.create({ path: dir }); else await api.projects.open({ path: dir });
  return { d, api, events };
}

describe('studies.start through the dispatcher', () => {
  it('runs a 1 method × 1 env × 2 seed smoke study to completion, with status, progress, events and a table', async () => {
    const dir = path.join(tempDir(), 'p');
    const { d, api, events } = await host(dir, true);
    // wasm (CI has torch, and auto would start a Python worker per run) and a 5-turn bootstrap gate (smoke's is 50 generated
    // turns): this test is about the study's bookkeeping, and the runs stay whole smoke runs through the engine
    const started = await api.studies.start({
      name: 'smoke-grid', methods: ['vanilla-rl'], envs: ['frozenlake'], seeds: [0, 1], size: 'smoke', set: { backend: 'wasm', 'stages.bootstrap.gateTurns': 5 },
    });
    expect(started.status).toBe('running');
    expect(started.progress).toMatchObject({ done: 0, total: 2 });
    await expect(api.studies.start({ name: 'smoke-grid' })).rejects.toMatchObject({ name: 'Conflict' });
    await d.waitForStudy('smoke-grid');

    const { studies } = await api.studies.list();
    const s = studies.find((x) => x.name === 'smoke-grid')!;
    expect(s).toMatchObject({ status: 'completed', reason: null, methods: ['vanilla-rl'], envs: ['frozenlake'], seeds: [0, 1], size: 'smoke', runs: 2, completed: 2 });
    expect(s.progress).toEqual({ done: 2, failed: 0, total: 2, currentRunId: null });
    expect(s.runIds).toHaveLength(2);
    expect(s.startedAt).toBeGreaterThan(0);
    expect(s.finishedAt).toBeGreaterThanOrEqual(s.startedAt!);

    // Ordinary runs, visible in the run table.
    const { runs } = await api.runs.list();
    expect(runs.map((r) => r.name).sort()).toEqual(['study:smoke-grid:vanilla-rl:frozenlake:s0', 'study:smoke-grid:vanilla-rl:frozenlake:s1']);
    expect(runs.every((r) => r.status === 'completed' && r.size === 'smoke')).toBe(true);
    expect((await api.runs.get({ runId: s.runIds[1]! })).config.seeds.base).toBe(1);

    const table = await api.studies.table({ name: 'smoke-grid' });
    expect(table.cells).toHaveLength(1);
    expect(table.cells[0]).toMatchObject({ method: 'vanilla-rl', env: 'frozenlake', runs: 2, completed: 2 });
    expect(table.cells[0]!.passAt['1']).toMatchObject({ low: expect.any(Number), high: expect.any(Number) });
    expect(table.markdown).toContain('| vanilla-rl |');

    // The files the CLI reads too.
    const state = JSON.parse(fs.readFileSync(path.join(dir, 'studies', 'smoke-grid', 'state.json'), 'utf8'));
    expect(state).toMatchObject({ status: 'completed', host: 'in-process', currentRunId: null });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'studies', 'smoke-grid', 'spec.json'), 'utf8'))).toMatchObject({ name: 'smoke-grid', seeds: [0, 1] });
    expect(fs.existsSync(path.join(dir, 'studies', 'smoke-grid', 'table.md'))).toBe(true);

    // study-changed events: running with a current run, then completed.
    const changes = events.filter((e): e is Extract<ProjectEvent, { type: 'study-changed' }> => e.type === 'study-changed');
    expect(changes[0]).toMatchObject({ name: 'smoke-grid', status: 'running' });
    expect(changes.some((e) => e.status === 'running' && e.progress.currentRunId === s.runIds[0])).toBe(true);
    expect(changes.at(-1)).toMatchObject({ status: 'completed', progress: { done: 2, total: 2 } });
    // The engine's run events flowed as for any run.
    expect(events.some((e) => e.type === 'run-status' && e.runId === s.runIds[0] && e.status === 'completed')).toBe(true);

    // Starting it again skips every completed run.
    await api.studies.start({ name: 'smoke-grid' });
    await d.waitForStudy('smoke-grid');
    expect((await api.runs.list()).runs.map((r) => r.attempts)).toEqual([1, 1]);
    expect((await api.studies.list()).studies[0]!.status).toBe('completed');
  });

  it('rejects bad grids with errors naming the bad value and the valid ones', async () => {
    const dir = path.join(tempDir(), 'p');
    const { api } = await host(dir, true);
    const grid = { name: 'g', methods: ['spa'], envs: ['sokoban'], seeds: [0], size: 'smoke' as const };
    const err = (p: Promise<unknown>) => p.then(() => { throw new Error('expected an error'); }, (e: { name: string; message: string }) => e);

    const m = await err(api.studies.start({ ...grid, methods: ['spa', 'vanila-rl'] }));
    expect(m.name).toBe('ValidationError');
    expect(m.message).toMatch(/unknown method preset "vanila-rl"/);
    expect(m.message).toMatch(/valid methods: .*vanilla-rl/);

    const e = await err(api.studies.start({ ...grid, envs: ['sokoban', 'chess'] }));
    expect(e.name).toBe('ValidationError');
    expect(e.message).toMatch(/unknown environment "chess".*valid envs: .*frozenlake/);

    for (const bad of [{ methods: [] }, { envs: [] }, { seeds: [] }]) {
      await expect(api.studies.start({ ...grid, ...bad })).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(new RegExp(Object.keys(bad)[0]!)) });
    }
    await expect(api.studies.start({ ...grid, seeds: [0, 0] })).rejects.toThrow(/seeds: 0 appears more than once/);
    await expect(api.studies.start({ ...grid, name: '../runs' })).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(/study name/) });
    await expect(api.studies.start({ ...grid, name: 'has space' })).rejects.toMatchObject({ name: 'ValidationError' });
    await expect(api.studies.start({ ...grid, size: 'huge' as 'smoke' })).rejects.toMatchObject({ name: 'ValidationError' });
    await expect(api.studies.start({ name: 'new-one', methods: ['spa'] })).rejects.toThrow(/does not exist yet; give envs/);
    await expect(api.studies.start({ ...grid, set: { 'model.nonsense': 1 } })).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(/spa × sokoban does not resolve: model: Unrecognized key/) });
    await expect(api.studies.stop({ name: 'nope' })).rejects.toMatchObject({ name: 'NotFound' });

    // Nothing was created by the refused requests.
    expect((await api.studies.list()).studies).toEqual([]);
    expect((await api.runs.list()).total).toBe(0);
  });

  it('stops a study after its current run, and resumes it (also after a host restart) without redoing completed runs', async () => {
    const dir = path.join(tempDir(), 'p');
    const first = await host(dir, true);
    // Diagnostic runs that take ~1.5 s each, so the study can be stopped mid-grid.
    const grid = { name: 'resumable', methods: ['diagnostic'], envs: ['frozenlake'], seeds: [0, 1, 2], size: 'smoke' as const, set: { 'stages.diag-wait.steps': 30, 'stages.diag-wait.delayMs': 50 } };
    await first.api.studies.start(grid);
    // Wait until the second run is executing, then stop the study.
    const second = await waitFor('the second run of the study to run', async () => {
      const s = (await first.api.studies.list()).studies[0]!;
      if (s.progress.done !== 1 || !s.progress.currentRunId) return null;
      const r = (await first.api.runs.list()).runs.find((x) => x.id === s.progress.currentRunId);
      return r?.status === 'running' ? r.id : null;
    }, 60_000, 50);
    const stopping = await first.api.studies.stop({ name: 'resumable' });
    expect(stopping.progress.currentRunId).toBe(second);
    await first.d.waitForStudy('resumable');
    let s = (await first.api.studies.list()).studies[0]!;
    expect(s.status).toBe('stopped');
    expect(s.reason).toMatch(/stopped on request/);
    expect(s.progress).toMatchObject({ done: 1, total: 3, currentRunId: null });
    let runs = (await first.api.runs.list()).runs;
    expect(runs).toHaveLength(2);                                      // the third run was never started
    expect(runs.find((r) => r.id === second)!.status).toBe('stopped');
    await expect(first.api.studies.stop({ name: 'resumable' })).rejects.toMatchObject({ name: 'Conflict' });
    await expect(first.api.studies.start({ name: 'resumable', size: 'quick' })).rejects.toMatchObject({ name: 'Conflict', message: expect.stringMatching(/size smoke/) });
    const firstRunId = s.runIds[0]!;

    // A host that dies while the study runs leaves state.json saying "running".
    await first.d.dispose();
    const stateFile = path.join(dir, 'studies', 'resumable', 'state.json');
    fs.writeFileSync(stateFile, JSON.stringify({ ...JSON.parse(fs.readFileSync(stateFile, 'utf8')), status: 'running', reason: null }));

    const next = await host(dir, false);
    s = (await next.api.studies.list()).studies[0]!;
    expect(s.status).toBe('stopped');
    expect(s.reason).toMatch(/interrupted/);
    const resumed = await next.api.studies.start({ name: 'resumable' });   // the saved grid
    expect(resumed.status).toBe('running');
    await next.d.waitForStudy('resumable');
    s = (await next.api.studies.list()).studies[0]!;
    expect(s).toMatchObject({ status: 'completed', progress: { done: 3, failed: 0, total: 3 } });
    runs = (await next.api.runs.list()).runs;
    expect(runs).toHaveLength(3);
    expect(runs.find((r) => r.id === firstRunId)!.attempts).toBe(1);    // completed: not redone
    expect(runs.find((r) => r.id === second)!.attempts).toBe(2);        // stopped: resumed
    expect(runs.every((r) => r.status === 'completed')).toBe(true);
    expect(s.runIds[0]).toBe(firstRunId);
  });

  it('closing the host while a study runs stops its run and leaves the study stopped, not running', async () => {
    const dir = path.join(tempDir(), 'p');
    const { d, api } = await host(dir, true);
    await api.studies.start({ name: 'closing', methods: ['diagnostic'], envs: ['sudoku'], seeds: [0, 1], size: 'smoke', set: { 'stages.diag-wait.steps': 200, 'stages.diag-wait.delayMs': 50 } });
    await waitFor('the first run to run', async () => (await api.runs.list()).runs.some((r) => r.status === 'running'), 60_000, 50);
    await expect(api.projects.close()).rejects.toMatchObject({ name: 'Conflict' });
    await d.dispose();
    const state = JSON.parse(fs.readFileSync(path.join(dir, 'studies', 'closing', 'state.json'), 'utf8'));
    expect(state).toMatchObject({ status: 'stopped', currentRunId: null, reason: expect.stringMatching(/shutting down/) });
    const again = await host(dir, false);
    const s = (await again.api.studies.list()).studies[0]!;
    expect(s).toMatchObject({ status: 'stopped', progress: { done: 0, failed: 1, total: 2 } });
    expect((await again.api.runs.list()).runs.map((r) => r.status)).toEqual(['stopped']);
  });

  it('is the same study from the CLI and the API: the CLI\'s study is listed, and extended and resumed through the API', async () => {
    const dir = path.join(tempDir(), 'p');
    const bin = fileURLToPath(new URL('../../bin/spa-workbench.mjs', import.meta.url));
    const r = spawnSync(process.execPath, [bin, 'study', 'run', '--methods', 'diagnostic', '--envs', 'sokoban', '--seeds', '0', '--size', 'smoke', '--project', dir, '--name', 'shared'],
      { encoding: 'utf8', env: { ...process.env }, timeout: 120_000 });
    expect(r.stderr).not.toMatch(/error/);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/study completed/);
    const bad = spawnSync(process.execPath, [bin, 'study', 'run', '--methods', 'dignostic', '--envs', 'sokoban', '--project', dir, '--name', 'typo'], { encoding: 'utf8', timeout: 120_000 });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/unknown preset "dignostic"; available: .*diagnostic/);

    const { d, api } = await host(dir, false);
    let s = (await api.studies.list()).studies.find((x) => x.name === 'shared')!;
    expect(s).toMatchObject({ status: 'completed', progress: { done: 1, total: 1 } });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'studies', 'shared', 'state.json'), 'utf8')).host).toBe('cli');
    const cliRun = s.runIds[0]!;
    await api.studies.start({ name: 'shared', seeds: [0, 1] });                 // one more seed, the rest from spec.json
    await d.waitForStudy('shared');
    s = (await api.studies.list()).studies.find((x) => x.name === 'shared')!;
    expect(s).toMatchObject({ status: 'completed', seeds: [0, 1], methods: ['diagnostic'], progress: { done: 2, total: 2 } });
    expect((await api.runs.get({ runId: cliRun })).attempts).toBe(1);
  });
});
