// templates.*: list, read, save and preview prompt templates, and their state perplexity under a
// run's checkpoint (TF.js in a child process, never on the host's event loop).
import type { ApiResponse, TemplateListItem, TemplateVersion } from '../../api/contract.js';
import { notFound, WorkbenchError } from '../../api/errors.js';
import { findCheckpoint, latestCheckpoint, listRunCheckpoints, TemplatePerplexityError } from '../../eval/template-perplexity.js';
import * as adapter from '../env-adapter.js';
import type { PerplexityRunner } from '../template-perplexity-child.js';
import { defineHandlers, resolveTemplate, type HostContext } from './context.js';
import type { RenderPool } from '../render-pool.js';

function perplexityErrors<T>(where: string, fn: () => T): T {
  try { return fn(); } catch (err) {
    if (err instanceof TemplatePerplexityError)
      throw new WorkbenchError(err.code, `${where}: ${err.message}`, { ...err.details, where: `${where} ${err.details.where}` });
    throw err;
  }
}

/** `perplexityRunner` and `renderPool` are the dispatcher's (it kills the children and the worker on dispose). */
export function templateHandlers(ctx: HostContext, perplexityRunner: PerplexityRunner, renderPool: RenderPool) {
  return defineHandlers({
    'templates.list': () => {
      const presets = adapter.templatePresetItems();
      const saved: TemplateListItem[] = ctx.session()?.store.savedTemplates().map(({ name, versions: vs }) => ({
        name, kind: 'saved' as const, description: vs[vs.length - 1]?.description ?? '', latestHash: vs[vs.length - 1]?.hash ?? null, versionCount: vs.length,
      })) ?? [];
      return { templates: [...saved, ...presets.filter((p) => !saved.some((s) => s.name === p.name))] };
    },
    'templates.get': (req) => resolveTemplate(ctx.session(), { preset: req.name, hash: req.hash, responseFormat: 'world-model' }).version,
    'templates.save': async (req) => {
      const s = ctx.need('templates.save');
      const checked = adapter.checkTemplateSource(req.source, req.name);
      if (!checked.ok) {
        const d = checked.diagnostics[0]!;
        throw new WorkbenchError('ValidationError', `templates.save: the template does not ` +
          `validate: ${d.message}${d.line ? ` (line ${d.line}, column ${d.column})` : ''}`, {
          where: 'templates.save source', expected: 'a valid template (JSON with name, ' +
            'responseFormat, parts)', received: `${checked.diagnostics.length} problem(s)`,
          issues: checked.diagnostics.map((x) => ({ path: x.line ? `line ${x.line}:${x.column}` : '', message: x.message })),
        });
      }
      const version: TemplateVersion = {
        name: req.name, hash: checked.hash, createdAt: Date.now(), description: req.description || checked.template.description,
        parent: req.parent ?? null, source: `${JSON.stringify(checked.template, null, 2)}\n`,
      };
      const r = await s.store.saveTemplate(version);
      if (r.created) ctx.emitProject({ type: 'templates-changed', time: Date.now(), name: req.name });
      return { version: r.version, created: r.created, diagnostics: [] };
    },
    'templates.versions': (req) => {
      const saved = ctx.session()?.store.templateVersions(req.name) ?? [];
      if (saved.length) return { versions: saved };
      if (adapter.isTemplatePreset(req.name)) { const { source: _s, ...meta } = adapter.presetTemplateVersion(req.name); return { versions: [meta] }; }
      throw notFound(`template ${JSON.stringify(req.name)}`, 'templates.versions name', 'see templates.list');
    },
    'templates.preview': (req) => {
      let source: string;
      if (req.source !== undefined) source = req.source;
      else if (req.name !== undefined) {
        source = resolveTemplate(ctx.session(), { preset: req.name, hash: req.hash, responseFormat: req.responseFormat }).version.source;
      } else
        throw new WorkbenchError('ValidationError', 'templates.preview: give the template text (source) or a template name', {
          where: 'templates.preview',
          expected: '{ source } or { name }',
          received: 'neither',
        });
      const checked = adapter.checkTemplateSource(source);
      if (!checked.ok) return { ok: false, diagnostics: checked.diagnostics, hash: null, stateText: null, prompt: null, messages: [], board: null };
      return renderPool.preview({ template: checked.template, env: { id: req.env.id, options: req.env.options }, seed: req.seed,
        responseFormat: req.responseFormat });
    },
    'templates.checkpoints': (req) => {
      const s = ctx.need('templates.checkpoints');
      ctx.needRun(s, req.runId, 'templates.checkpoints');
      const checkpoints = perplexityErrors('templates.checkpoints', () => listRunCheckpoints(s.store.dir, req.runId));
      return { runId: req.runId, latest: latestCheckpoint(checkpoints)?.name ?? null, checkpoints };
    },
    'templates.perplexity': async (req) => {
      const where = 'templates.perplexity';
      const s = ctx.need(where);
      ctx.needRun(s, req.runId, where);
      if ((req.source === undefined) === (req.name === undefined)) {
        throw new WorkbenchError(
          'ValidationError',
          `${where}: give the template text (source) or a template name, ` + `not ${req.source === undefined ? 'neither' : 'both'}`,
          { where, expected: '{ source } or { name, hash? }', received: req.source === undefined ? 'neither' : 'both' },
        );
      }
      // the quick checks here, so a bad request gets its answer without starting a process
      const checkpoint = perplexityErrors(where, () => findCheckpoint(s.store.dir, req.runId, req.checkpoint));
      let template: { source: string } | { name: string; hash: string };
      if (req.source !== undefined) {
        const checked = adapter.checkTemplateSource(req.source);
        if (!checked.ok) {
          const d = checked.diagnostics[0]!;
          throw new WorkbenchError('ValidationError', `${where}: the template does not ` +
            `validate: ${d.message}${d.line ? ` (line ${d.line}, column ${d.column})` : ''}`, {
            where: `${where} source`, expected: 'a valid template (JSON with name, ' +
              'responseFormat, parts)', received: `${checked.diagnostics.length} problem(s)`,
            issues: checked.diagnostics.map((x) => ({ path: x.line ? `line ${x.line}:${x.column}` : '', message: x.message })),
          });
        }
        template = { source: req.source };
      } else {
        const { version } = resolveTemplate(s, { preset: req.name!, hash: req.hash, responseFormat: 'world-model' });
        template = { name: req.name!, hash: version.hash };
      }
      const started = Date.now();
      const result = await perplexityRunner.run({
        project: s.store.dir, runId: req.runId, checkpoint: checkpoint.name, env: { id: req.env.id, options: req.env.options }, template,
        samples: req.samples, ...(req.seedStart !== undefined ? { seedStart: req.seedStart } : {}), timeoutMs: req.timeoutSeconds * 1000,
      }, where);
      return { ...(result as Omit<ApiResponse<'templates.perplexity'>, 'processSeconds'>), processSeconds: Math.round((Date.now() - started) / 10) / 100 };
    },
  });
}
