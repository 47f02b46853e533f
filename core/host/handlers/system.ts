// system.*: the host, versions, compute backends and paths.
import { workbenchHome } from '../../storage/home.js';
import { detectBackends, electronBinary, versions } from '../system-info.js';
import { defineHandlers, type HostContext } from './context.js';
import { ModelImportRunner } from '../model-import-child.js';

export function systemHandlers(ctx: HostContext, imports = new ModelImportRunner()) {
  return defineHandlers({
    'system.importModel': (req) => imports.run(req),
    'system.info': () => ({
      host: ctx.options.host, versions: versions(), backends: detectBackends(),
      paths: { home: workbenchHome(), project: ctx.session()?.store.dir ?? null, cwd: process.cwd() },
      electronAvailable: electronBinary() !== null,
    }),
  });
}
