// API handlers of SPA/RAGEN interop (core/interop): runs.exportBundle and runs.import. Wired into
// the dispatcher's handler table; the dispatcher validates requests and responses.
import * as path from 'node:path';
import type { ApiRequestParsed, ApiResponse, ProjectEvent, RunSummary } from '../api/contract.js';
import { WorkbenchError } from '../api/errors.js';
import type { ProjectStore } from '../storage/project-store.js';
import { summaryOf } from '../engine/run-host.js';
import { exportSpaRagenBundle } from '../interop/export-bundle.js';
import { realSource } from '../interop/import-run.js';
import { isInside, realPathOf } from '../storage/real-path.js';
import { ImportPool } from './import-pool.js';

export interface InteropContext {
  need(where: string): { store: ProjectStore };
  needRun(s: { store: ProjectStore }, runId: string, where: string): RunSummary;
  emitProject(event: ProjectEvent): void;
}

type M = 'runs.exportBundle' | 'runs.import';
export type InteropHandlers = { [K in M]: (req: ApiRequestParsed<K>) => Promise<ApiResponse<K>> | ApiResponse<K> };

/** The two handlers, closed over the dispatcher's session helpers. */
export function interopHandlers(ctx: InteropContext): InteropHandlers {
  let pool: ImportPool | null = null;   // started on the first import
  return {
    'runs.exportBundle': (req) => {
      const where = 'runs.exportBundle';
      const s = ctx.need(where);
      ctx.needRun(s, req.runId, where);
      // real paths: a link (or a link above a folder still to be made) cannot lead the bundle into the project
      const out = realPathOf(req.out);
      const project = realPathOf(s.store.dir);
      if (isInside(out, project)) {
        throw new WorkbenchError('ValidationError', `${where}: ${out} is inside the project folder ${project}; choose a folder outside it`,
          { where: `${where} out`, expected: 'a folder outside the project', received: out });
      }
      return exportSpaRagenBundle({ runDir: s.store.runDir(req.runId), out, values: req.values, ...(req.model ? { model: req.model } : {}) });
    },
    'runs.import': async (req) => {
      const where = 'runs.import';
      const s = ctx.need(where);
      // (a project open read-only is refused before this handler: runs.import is in the dispatcher's WRITE_METHODS)
      const given = path.resolve(req.path);
      const source = realSource(given);      // links resolved: the guard applies to what would be read
      const runs = path.join(realPathOf(s.store.dir), 'runs');
      if (isInside(source, runs)) {
        throw new WorkbenchError('ValidationError', `${where}: ${given}${source !== given ? ` (a link to ${source})` : ''} is a run folder of this ` +
          'project; import from a SPA/RAGEN output folder', { where: `${where} path`, received: source });
      }
      pool ??= new ImportPool();
      const r = await pool.run({ projectDir: s.store.dir, source, ...(req.name ? { name: req.name } : {}) }, where);
      const summary = summaryOf(r.record);
      s.store.putRun(summary);
      await s.store.flush();
      ctx.emitProject({ type: 'runs-changed', time: Date.now(), runIds: [r.runId] });
      return { run: summary, sources: r.sources, skipped: r.skipped, warnings: r.warnings };
    },
  };
}
