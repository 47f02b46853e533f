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
  return defineHandlers({
    'projects.create': async (req) => {
      // Create (and so validate) the new project before closing the open one: a bad path must
      // leave the current project open.
      const session = ctx.session();
      if (session) {
        await session.runs.settleFinishing();
        const active = session.runs.activeIds();
        if (active.length) throw conflict(`projects.create: ${active.length} run(s) are still active (${active.join(', ')}); stop them first`, 'projects.create', { received: `${active.length} active run(s)` });
      }
      const store = await ProjectStore.create(req.path, { name: req.name, purpose: ctx.options.lockPurpose ?? ctx.options.host });
      try {
        await ctx.closeSession('projects.create');
      } catch (err) {
        store.close();
        throw err;
      }
      await ctx.openSession(store);
      return store.info();
    },
    'projects.open': async (req) => {
      const abs = path.resolve(req.path);
      const session = ctx.session();
      // the same project again: as it is, unless it was watched read-only and its holder has exited (then take it over)
      if (session && session.store.dir === abs && !(session.store.lockHolder && !liveLockHolder(abs))) return session.store.info();
      if (session) {
        // Open (and so validate) the new project before closing the open one: a bad path must
        // leave the current project open (as projects.create does).
        await session.runs.settleFinishing();
        const active = session.runs.activeIds();
        if (active.length) throw conflict(`projects.open: ${active.length} run(s) are still active (${active.join(', ')}); stop them first`,
          'projects.open', { received: `${active.length} active run(s)` });
      }
      const holder = ctx.options.watchWhenLocked ? liveLockHolder(abs) : null;
      const store = holder && fs.existsSync(path.join(abs, 'workbench.json'))
        ? await ProjectStore.openReadOnly(abs, holder)
        : await ProjectStore.open(abs, { purpose: ctx.options.lockPurpose ?? ctx.options.host });
      try {
        await ctx.closeSession('projects.open');
      } catch (err) {
        store.close();
        throw err;
      }
      await ctx.openSession(store);
      return store.info();
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
