// Host-level defects of issue 10: D14 (projects.open with a bad path used to close the open
// project) and D16 (a run creation that fails on a full disk used to leave an orphan run folder).
import { afterEach, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { diagConfig, isolateHome, tempDir } from './helpers.js';
import { withWriteFault } from '../storage/fs-faults.js';

const dispatchers: Dispatcher[] = [];
afterEach(async () => { for (const d of dispatchers.splice(0)) await d.dispose(); });
function client() {
  isolateHome();
  const d = createDispatcher({ host: 'in-process' });
  dispatchers.push(d);
  return createInProcessClient(d);
}

describe('host reliability', () => {
  it('projects.open with a bad path leaves the open project open (D14)', async () => {
    const api = client();
    const dir = tempDir();
    await api.projects.create({ path: dir });
    await expect(api.projects.open({ path: path.join(dir, 'no-such-folder') })).rejects.toMatchObject({ name: 'NotFound' });
    await expect(api.projects.open({ path: tempDir() })).rejects.toMatchObject({ name: 'NotFound' });   // empty folder: not a project
    expect((await api.projects.info({})).project?.path).toBe(dir);
    expect((await api.runs.list({})).total).toBe(0);   // still usable
  });

  it('a run creation that fails on a full disk leaves no orphan run folder (D16)', async () => {
    const api = client();
    const dir = tempDir();
    await api.projects.create({ path: dir });
    const err = await withWriteFault(path.join(dir, 'runs'), 'ENOSPC',
      () => api.runs.create({ config: diagConfig({ 'diag-wait': { steps: 1 } }) }).then(() => null, (e: unknown) => e), { except: ['mkdirSync', 'rmSync', 'unlinkSync'] });
    expect(err).toMatchObject({ message: expect.stringMatching(/ENOSPC/) });
    expect(fs.readdirSync(path.join(dir, 'runs'))).toEqual([]);
    expect((await api.runs.list({})).total).toBe(0);
    expect((await api.runs.create({ config: diagConfig({ 'diag-wait': { steps: 1 } }) })).status).toBe('created');   // space again: works
  });

  it('names equal to Object.prototype keys are NotFound, not TypeErrors (D6)', async () => {
    const api = client();
    const d = dispatchers[dispatchers.length - 1]!;
    await api.projects.create({ path: tempDir() });
    for (const name of ['constructor', 'hasOwnProperty', 'toString']) {
      await expect(api.templates.get({ name })).rejects.toMatchObject({ name: 'NotFound' });
      await expect(api.templates.versions({ name })).rejects.toMatchObject({ name: 'NotFound' });
    }
    await expect(api.runs.get({ runId: 'constructor' })).rejects.toMatchObject({ name: 'NotFound' });
    for (const method of ['__proto__.toString', 'constructor.name', '__proto__.hasOwnProperty']) {
      await expect(d.call(method, {})).rejects.toMatchObject({ name: 'NotFound' });
    }
  });

  it('a project path with a NUL byte or a name too long for the file system is a ValidationError (D16)', async () => {
    const api = client();
    await expect(api.projects.create({ path: `${tempDir()}/a\u0000b` })).rejects.toMatchObject({ name: 'ValidationError' });
    await expect(api.projects.create({ path: `${tempDir()}/${'x'.repeat(300)}` })).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(/too long/) });
    await expect(api.projects.open({ path: `${tempDir()}/${'x'.repeat(300)}` })).rejects.toMatchObject({ name: expect.stringMatching(/ValidationError|NotFound/) });
  });
});
