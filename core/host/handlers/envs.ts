// envs.*: the environment registry, and one puzzle rendered through a template.
import * as adapter from '../env-adapter.js';
import { defineHandlers, resolveTemplate, type HostContext } from './context.js';
import type { RenderPool } from '../render-pool.js';

/** `renderPool` is the dispatcher's: renders run in a worker thread with a time budget (user options drive the generation work). */
export function envHandlers(ctx: HostContext, renderPool: RenderPool) {
  return defineHandlers({
    'envs.list': () => ({ envs: adapter.envInfos() }),
    'envs.describe': (req) => adapter.envDescription(req.id),
    'envs.render': (req) => {
      const ref = req.template ?? { preset: 'spa', responseFormat: 'world-model' as const };
      const { version } = resolveTemplate(ctx.session(), { preset: ref.preset, hash: ref.hash, responseFormat: ref.responseFormat ?? 'world-model' });
      const t = adapter.parseStoredTemplate(version);
      return renderPool.render({ template: t, env: { id: req.env.id, options: req.env.options }, seed: req.seed,
        responseFormat: ref.responseFormat ?? t.responseFormat });
    },
  });
}
