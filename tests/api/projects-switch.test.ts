// projects.create and projects.open switch the host to another project through one path
// (core/host/handlers/projects.ts, switchTo): refused while a run of the open project is active,
// with nothing created on disk, and the open project stays open and usable.
import { afterAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { diagConfig, isolateHome, tempDir, waitFor } from './helpers.js';

describe('switching projects while a run is active', () => {
  let host: Dispatcher | null = null;
  afterAll(() => host?.dispose());

  it('projects.create and projects.open refuse with Conflict, create nothing, and keep the open project', async () => {
    isolateHome();
    host = createDispatcher({ host: 'in-process' });
    const api = createInProcessClient(host);
    const dir = tempDir();
    await api.projects.create({ path: dir });
    const run = await api.runs.create({ config: diagConfig({ 'diag-wait': { steps: 100_000, delayMs: 50 } }) });
    await api.runs.start({ runId: run.id });
    await waitFor('the run to be running', async () => (await api.runs.get({ runId: run.id })).status === 'running', 60_000);

    const other = path.join(tempDir(), 'other');
    await expect(api.projects.create({ path: other })).rejects.toMatchObject({
      name: 'Conflict', message: `projects.create: 1 run(s) are still active (${run.id}); stop them first`, details: { received: '1 active run(s)' },
    });
    expect(fs.existsSync(other)).toBe(false);
    await expect(api.projects.open({ path: tempDir() })).rejects.toMatchObject({
      name: 'Conflict', message: `projects.open: 1 run(s) are still active (${run.id}); stop them first`,
    });
    expect((await api.projects.info({})).project?.path).toBe(dir);
    expect((await api.runs.get({ runId: run.id })).status).toBe('running');

    await api.runs.stop({ runId: run.id });
    await waitFor('the run to stop', async () => (await api.runs.get({ runId: run.id })).status === 'stopped', 60_000);
    const created = await api.projects.create({ path: other });
    expect(created.path).toBe(other);
    expect((await api.projects.info({})).project?.path).toBe(other);
    const reopened = await api.projects.open({ path: dir });
    expect(reopened.path).toBe(dir);
    expect((await api.runs.get({ runId: run.id })).status).toBe('stopped');
  });
});
