// projects.*: create, open, close and list project folders (one open project per host).
import * as path from 'node:path';
import { conflict } from '../../api/errors.js';
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
      if (session && session.store.dir === abs) return session.store.info();
      if (session) await ctx.closeSession('projects.open');
      const store = await ProjectStore.open(abs, { purpose: ctx.options.lockPurpose ?? ctx.options.host });
      await ctx.openSession(store);
      return store.info();
    },
    'projects.recent': () => ({ projects: readRecent().projects }),
    'projects.info': () => ({ project: ctx.session()?.store.info() ?? null }),
    'projects.close': async () => ({ closed: await ctx.closeSession('projects.close') }),
  });
}
