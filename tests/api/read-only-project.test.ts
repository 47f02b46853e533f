// A project opened read-only because its folder cannot be written (no other process holds it) refuses
// the API's writes with a ReadOnly error that says why; the host used to fail with a TypeError there
// (its read-only message assumed a lock holder).
import { afterEach, describe, expect, it } from 'vitest';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { diagConfig, isolateHome, tempDir } from './helpers.js';
import { withWriteFault } from '../storage/fs-faults.js';

const dispatchers: Dispatcher[] = [];
afterEach(async () => { for (const d of dispatchers.splice(0)) await d.dispose(); });

describe('a project on a read-only file system', () => {
  it('refuses runs.create with a ReadOnly error naming the folder, not a TypeError', async () => {
    isolateHome();
    const dir = tempDir();
    const owner = createDispatcher({ host: 'in-process' });
    dispatchers.push(owner);
    const ownerApi = createInProcessClient(owner);
    await ownerApi.projects.create({ path: dir });
    await ownerApi.projects.close({});
    await withWriteFault(dir, 'EROFS', async () => {
      const d = createDispatcher({ host: 'in-process' });
      dispatchers.push(d);
      const api = createInProcessClient(d);
      expect((await api.projects.open({ path: dir })).readOnly).toBe(true);
      await expect(api.runs.create({ config: diagConfig({ 'diag-wait': { steps: 1 } }) })).rejects.toMatchObject({
        name: 'ReadOnly', message: expect.stringMatching(/^runs\.create: the project is open read-only: its folder cannot be written/),
        details: { where: 'runs.create', received: 'a folder that cannot be written' },
      });
    });
  });
});
