// projects.*: create, open, close and list project folders (one open project per host).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { liveLockHolder } from '../../storage/lock.js';
import { conflict, WorkbenchError } from '../../api/errors.js';
import { runDoctor } from '../../storage/doctor.js';
import { ProjectStore } from '../../storage/project-store.js';
import { readRecent } from '../../storage/recent.js';
import { defineHandlers, type HostContext } from './context.js';

export function projectHandlers(ctx: HostContext) {
  /**
   * Makes the project `openStore` opens (or creates) the open one. The new project is opened, and so validated, before the
   * open one is closed: a bad path leaves the current project open. Refused while a run of the open project is active.
   */
  async function switchTo(where: 'projects.create' | 'projects.open', openStore: () => Promise<ProjectStore>) {
    const session = ctx.session();
    if (session) {
      await session.runs.settleFinishing();
      const active = session.runs.activeIds();
      if (active.length) {
        throw conflict(`${where}: ${active.length} run(s) are still active (${active.join(', ')}); stop them first`, where, {
          received: `${active.length} active run(s)`,
        });
      }
    }
    const store = await openStore();
    try {
      await ctx.closeSession(where);
    } catch (err) {
      store.close();
      throw err;
    }
    await ctx.openSession(store);
    return store.info();
  }

  return defineHandlers({
    'projects.create': (req) =>
      switchTo('projects.create', () => ProjectStore.create(req.path, { name: req.name, purpose: ctx.options.lockPurpose ?? ctx.options.host })),
    'projects.open': async (req) => {
      const abs = path.resolve(req.path);
      const session = ctx.session();
      // the same project again: as it is, unless it was watched read-only and its holder has exited (then take it over)
      if (session && session.store.dir === abs && !(session.store.lockHolder && !liveLockHolder(abs))) return session.store.info();
      return switchTo('projects.open', async () => {
        const holder = ctx.options.watchWhenLocked ? liveLockHolder(abs) : null;
        return holder && fs.existsSync(path.join(abs, 'workbench.json'))
          ? ProjectStore.openReadOnly(abs, holder)
          : ProjectStore.open(abs, { purpose: ctx.options.lockPurpose ?? ctx.options.host });
      });
    },
    'projects.recent': () => ({ projects: readRecent().projects }),
    'projects.info': () => ({ project: ctx.session()?.store.info() ?? null }),
    'projects.close': async () => ({ closed: await ctx.closeSession('projects.close') }),
    'projects.doctor': async (req) => {
      const session = ctx.session();
      const target = req.path !== undefined ? path.resolve(req.path) : session?.store.dir;
      if (!target) throw new WorkbenchError('NoProject', 'projects.doctor: no project is open; give a path', { where: 'projects.doctor path',
        expected: 'a project folder', received: 'none' });
      if (!session || session.store.dir !== target || !req.repair) return runDoctor(target, { repair: req.repair });
      // repairing the open project: release it (no run may be active), repair, open it again
      const purpose = ctx.options.lockPurpose ?? ctx.options.host;
      await ctx.closeSession('projects.doctor');
      try { return runDoctor(target, { repair: true, purpose: 'doctor' }); } finally { await ctx.openSession(await ProjectStore.open(target, { purpose })); }
    },
  });
}
