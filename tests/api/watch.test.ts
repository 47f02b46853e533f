// Watching a project another process holds: serve / the app open it read-only and follow its runs
// live from the files (run.json, events.jsonl, metrics.jsonl, rollouts/index.jsonl); writes are refused.
import { afterEach, describe, expect, it } from 'vitest';
import * as path from 'node:path';
import type { WorkbenchEvent } from '../../core/api/contract.js';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { diagConfig, isolateHome, tempDir, waitFor } from './helpers.js';

const open: Dispatcher[] = [];
afterEach(async () => { for (const d of open.splice(0)) await d.dispose({ kill: true }); });

describe('a project held by another process', () => {
  it('opens read-only, follows a live run (status, progress with ETAs, metrics, episodes) and refuses writes', async () => {
    isolateHome();
    const dir = path.join(tempDir(), 'proj');
    const owner = createDispatcher({ host: 'serve', lockPurpose: 'serve' });
    open.push(owner);
    await owner.api.projects.create({ path: dir });
    const run = await owner.api.runs.create({ config: diagConfig({ 'diag-wait': { steps: 400, delayMs: 30 }, 'diag-episodes': { count: 3 } }) });

    const watcher = createDispatcher({ host: 'serve', lockPurpose: 'serve', watchWhenLocked: true });
    open.push(watcher);
    const info = await watcher.api.projects.open({ path: dir });
    expect(info.readOnly).toBe(true);
    expect(info.holder).toMatchObject({ pid: process.pid, purpose: 'serve', canStop: false });

    const events: WorkbenchEvent[] = [];
    watcher.subscribe({ kind: 'run', runId: run.id }, (e) => events.push(e));
    const projectEvents: WorkbenchEvent[] = [];
    watcher.subscribe({ kind: 'project' }, (e) => projectEvents.push(e));
    await new Promise((r) => setTimeout(r, 700));             // the watcher's first poll notes where the files end
    await owner.api.runs.start({ runId: run.id });

    await waitFor('running in the watcher', async () => (await watcher.api.runs.get({ runId: run.id })).status === 'running', 30_000);
    const kinds = (type: string) => events.filter((e) => e.kind === 'run' && e.event.type === type);
    await waitFor('live metric and progress events', () => kinds('metric').length > 2 && kinds('progress').length > 0, 30_000);
    const progress = kinds('progress').at(-1)!;
    expect(progress.kind === 'run' && progress.event.type === 'progress' && 'runEtaSeconds' in progress.event).toBe(true);
    expect(projectEvents.some((e) => e.kind === 'project' && e.event.type === 'run-status')).toBe(true);

    for (const [method, params] of [
      ['runs.create', { preset: 'diagnostic' }], ['runs.resume', { runId: run.id }], ['runs.delete', { runId: run.id }],
      ['runs.update', { runId: run.id, name: 'x' }], ['templates.save', { name: 't', source: '{}' }],
    ] as const) {
      await expect(watcher.call(method, params), method).rejects.toMatchObject({ name: 'ReadOnly', message: expect.stringContaining(`process ${process.pid}`) });
    }
    // a serve holder cannot be signalled to stop: say where to stop it
    await expect(watcher.api.runs.stop({ runId: run.id })).rejects.toThrow(/stop it there/);

    await owner.api.runs.stop({ runId: run.id });
    await owner.waitForRun(run.id);
    await waitFor('stopped in the watcher', async () => (await watcher.api.runs.get({ runId: run.id })).status === 'stopped', 30_000);
    await waitFor('the stop event', () => events.some((e) => e.kind === 'run' && e.event.type === 'status' && e.event.status === 'stopped'), 30_000);
    // reads work: past metrics from the files
    const { series } = await watcher.api.metrics.query({ runIds: [run.id], names: ['diag/step'] });
    expect(series[0]!.y.length).toBeGreaterThan(2);
    // the holder exits: the watcher says so, and opening the project again takes it over, writable
    await owner.dispose();
    await waitFor('the holder-gone notice', async () => (await watcher.api.projects.info()).project?.warnings.some((w) => /no longer holds the project/.test(w)), 30_000);
    const reopened = await watcher.api.projects.open({ path: dir });
    expect(reopened.readOnly).toBe(false);
    await watcher.api.runs.update({ runId: run.id, tags: ['watched'] });
  }, 180_000);

  it('without watchWhenLocked (the CLI), opening a held project is still refused', async () => {
    isolateHome();
    const dir = path.join(tempDir(), 'proj');
    const owner = createDispatcher({ host: 'cli' });
    open.push(owner);
    await owner.api.projects.create({ path: dir });
    const other = createDispatcher({ host: 'cli' });
    open.push(other);
    await expect(other.api.projects.open({ path: dir })).rejects.toThrow(/holds its lock/);
  });
});
