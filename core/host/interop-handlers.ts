// API handlers of SPA/RAGEN interop (core/interop): runs.exportBundle and runs.import. Wired into
// the dispatcher's handler table; the dispatcher validates requests and responses.
import * as path from 'node:path';
import type { ApiRequestParsed, ApiResponse, ProjectEvent, RunSummary } from '../api/contract.js';
import { WorkbenchError } from '../api/errors.js';
import type { ProjectStore } from '../storage/project-store.js';
import { summaryOf } from '../engine/run-host.js';
import { exportSpaRagenBundle } from '../interop/export-bundle.js';
import { importRagenRun } from '../interop/import-run.js';

export interface InteropContext {
  need(where: string): { store: ProjectStore };
  needRun(s: { store: ProjectStore }, runId: string, where: string): RunSummary;
  emitProject(event: ProjectEvent): void;
}

type M = 'runs.exportBundle' | 'runs.import';
export type InteropHandlers = { [K in M]: (req: ApiRequestParsed<K>) => Promise<ApiResponse<K>> | ApiResponse<K> };

/** The two handlers, closed over the dispatcher's session helpers. */
export function interopHandlers(ctx: InteropContext): InteropHandlers {
  return {
    'runs.exportBundle': (req) => {
      const where = 'runs.exportBundle';
      const s = ctx.need(where);
      ctx.needRun(s, req.runId, where);
      const out = path.resolve(req.out);
      const project = path.resolve(s.store.dir);
      if (out === project || out.startsWith(project + path.sep)) {
        throw new WorkbenchError('ValidationError', `${where}: ${out} is inside the project folder ${project}; choose a folder outside it`,
          { where: `${where} out`, expected: 'a folder outside the project', received: out });
      }
      return exportSpaRagenBundle({ runDir: s.store.runDir(req.runId), out, ...(req.model ? { model: req.model } : {}) });
    },
    'runs.import': async (req) => {
      const where = 'runs.import';
      const s = ctx.need(where);
      const source = path.resolve(req.path);
      const runs = path.join(path.resolve(s.store.dir), 'runs');
      if (source === runs || source.startsWith(runs + path.sep)) {
        throw new WorkbenchError('ValidationError', `${where}: ${source} is a run folder of this project; import from a SPA/RAGEN output folder`,
          { where: `${where} path`, received: source });
      }
      const r = await importRagenRun({ projectDir: s.store.dir, source, ...(req.name ? { name: req.name } : {}) });
      const summary = summaryOf(r.record);
      s.store.putRun(summary);
      await s.store.flush();
      ctx.emitProject({ type: 'runs-changed', time: Date.now(), runIds: [r.runId] });
      return { run: summary, sources: r.sources, skipped: r.skipped, warnings: r.warnings };
    },
  };
}
