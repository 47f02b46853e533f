// envs.*: the environment registry, and one puzzle rendered through a template.
import * as adapter from '../env-adapter.js';
import { defineHandlers, resolveTemplate, type HostContext } from './context.js';

export function envHandlers(ctx: HostContext) {
  return defineHandlers({
    'envs.list': () => ({ envs: adapter.envInfos() }),
    'envs.describe': (req) => adapter.envDescription(req.id),
    'envs.render': (req) => {
      const ref = req.template ?? { preset: 'spa', responseFormat: 'world-model' as const };
      const { version } = resolveTemplate(ctx.session(), { preset: ref.preset, hash: ref.hash, responseFormat: ref.responseFormat ?? 'world-model' });
      const t = adapter.parseStoredTemplate(version);
      return adapter.renderPuzzle(t, { id: req.env.id, options: req.env.options }, req.seed, ref.responseFormat ?? t.responseFormat);
    },
  });
}
