// runs.*: create (resolve the config, pin the template, write run.json), list, start, stop, resume,
// delete, read events, and describe the config schema and the method presets.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { RUN_SPEC_VERSION, RunConfigSchema, type RunConfig } from '../../api/run-config.js';
import { conflict, describeValue, WorkbenchError } from '../../api/errors.js';
import { writeJsonAtomicSync } from '../../storage/atomic.js';
import { appendJsonl } from '../../storage/jsonl.js';
import { EVENTS_FILE, pinnedTemplatePath, writeRunRecord, type RunRecord } from '../../storage/run-files.js';
import { resolveRunConfig, type ResolveRequest } from '../../engine/config.js';
import { listPresets } from '../../engine/presets.js';
import { stageTitle } from '../../engine/stages.js';
import { isActiveStatus, summaryOf } from '../../engine/run-host.js';
import { versions } from '../system-info.js';
import { defineHandlers, resolveTemplate, type HostContext } from './context.js';
import { updateRun, withParams } from '../run-update.js';
import { configParams } from '../../engine/config-params.js';
import { readSamples } from '../run-samples.js';
import { bootstrapFacts, estimateNewRun, readBenchStageTimes } from '../../engine/run-estimate.js';
import { modelFolderMemory } from '../../engine/model-folder-memory.js';

function newRunId(config: RunConfig): string {
  const d = new Date();
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp = `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
  const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 24);
  return `${stamp}-${slug(config.method)}-${slug(config.env.id)}-${randomBytes(2).toString('hex')}`;
}

function resolveOrThrow(req: ResolveRequest, where: string): { config: RunConfig; stages: string[] } {
  const r = resolveRunConfig(req);
  if (!r.ok || !r.config) {
    const first = r.issues[0]!;
    throw new WorkbenchError('ValidationError', `${where}: invalid config ` +
      `at ${first.path}: ${first.message}${r.issues.length > 1 ? ` (and ${r.issues.length - 1} more)` : ''}`, {
      where: `${where} ${first.path}`, expected: first.message, received: describeValue(req.config ?? req.preset), issues: r.issues,
    });
  }
  return { config: r.config, stages: r.stages };
}

export function runHandlers(ctx: HostContext) {
  return defineHandlers({
    'runs.create': async (req) => {
      const s = ctx.need('runs.create');
      if (req.preset === undefined && req.config === undefined) {
        throw new WorkbenchError('ValidationError', 'runs.create: give a preset, a config, or both', {
          where: 'runs.create',
          expected: '{ preset } or { config }',
          received: 'neither',
        });
      }
      const { config, stages } = resolveOrThrow(req, 'runs.create');
      const id = newRunId(config);
      s.store.assertWritable('runs.create');
      const dir = s.store.runDir(id);
      fs.mkdirSync(dir, { recursive: true });
      let templateHash: string | null = null;
      const notes: string[] = [];
      const now = Date.now();
      let record: RunRecord;
      try {   // a failure before run.json exists (a full disk) removes the new folder (nothing in it yet): no orphan run folder
        try {
          const t = resolveTemplate(s, config.template);
          templateHash = t.version.hash;
          config.template.hash = t.version.hash;                 // pin the version in the resolved config
          writeJsonAtomicSync(pinnedTemplatePath(dir), JSON.parse(t.version.source));
        } catch (err) {
          notes.push(`template not resolved at creation: ${(err as Error).message}`);
        }
        record = {
          id, name: config.name ?? `${config.method} · ${config.env.id}`, method: config.method, env: config.env.id, size: config.size,
          preset: req.preset ?? null, templateHash, status: 'created', reason: null, createdAt: now, startedAt: null, finishedAt: null,
          durationMs: 0, attempts: 0,
          stages: stages.map((name) => ({ name, title: stageTitle(name), status: 'pending', startedAt: null, finishedAt: null, reason: null, done: 0,
            total: 0 })),
          progress: null, latest: {}, params: configParams(config), config, schemaVersion: RUN_SPEC_VERSION, versions: versions(),
        };
        writeRunRecord(dir, record);
      } catch (err) {
        fs.rmSync(dir, { recursive: true, force: true });
        throw err;
      }
      for (const n of notes) appendJsonl(path.join(dir, EVENTS_FILE), [{ type: 'log', runId: id, time: now, level: 'warn', message: n }]);
      s.store.putRun(summaryOf(record));
      await s.store.flush();
      ctx.emitProject({ type: 'runs-changed', time: now, runIds: [id] });
      if (req.start) await s.runs.start(id, { resume: false });
      return ctx.runInfo(s, id);
    },
    'runs.validateConfig': (req) => {
      const r = resolveRunConfig(req);
      return { ok: r.ok, config: r.config, stages: r.stages, issues: r.issues };
    },
    'runs.estimate': async (req) => {
      const { config, stages } = resolveOrThrow(req, 'runs.estimate');
      const s = ctx.session();
      const { source, baseEnvs } = await bootstrapFacts(config, stages.includes('bootstrap'), s ? s.store.dir : null);
      const estimate = estimateNewRun({ preset: req.preset ?? null, config, stages }, s ? s.store.listRuns() : [], readBenchStageTimes(), source, baseEnvs);
      return { ...estimate, memory: modelFolderMemory(config) };   // a model folder's memory per stage (null without one)
    },
    'runs.list': (req) => {
      const s = ctx.need('runs.list');
      let runs = [...s.store.listRuns()].reverse();
      if (req.status) runs = runs.filter((r) => req.status!.includes(r.status));
      return { runs: withParams(s.store, runs.slice(req.offset, req.offset + req.limit)), total: runs.length };
    },
    'runs.get': (req) => { const s = ctx.need('runs.get'); ctx.needRun(s, req.runId, 'runs.get'); return ctx.runInfo(s, req.runId); },
    'runs.start': async (req) => {
      const s = ctx.need('runs.start');
      ctx.needRun(s, req.runId, 'runs.start');
      return s.runs.start(req.runId, { resume: false });
    },
    'runs.stop': async (req) => { const s = ctx.need('runs.stop'); ctx.needRun(s, req.runId, 'runs.stop'); return s.runs.stop(req.runId); },
    'runs.resume': async (req) => {
      const s = ctx.need('runs.resume');
      ctx.needRun(s, req.runId, 'runs.resume');
      return s.runs.start(req.runId, { resume: true, ...(req.set ? { set: req.set } : {}) });
    },
    'runs.delete': async (req) => {
      const s = ctx.need('runs.delete');
      const r = ctx.needRun(s, req.runId, 'runs.delete');
      if (s.runs.isActive(req.runId) || isActiveStatus(r.status))
        throw conflict(`run ${req.runId} is ${r.status}; stop it before deleting`, 'runs.delete', { received: r.status });
      fs.rmSync(s.store.runDir(req.runId), { recursive: true, force: true });
      s.data.delete(req.runId);
      const deleted = s.store.removeRun(req.runId);
      await s.store.flush();
      ctx.emitProject({ type: 'runs-changed', time: Date.now(), runIds: [req.runId] });
      return { deleted };
    },
    'runs.events': (req) => {
      const s = ctx.need('runs.events');
      ctx.needRun(s, req.runId, 'runs.events');
      return ctx.runData(s, req.runId).readEvents(req.types, req.offset, req.limit);
    },
    'runs.samples': (req) => {
      const s = ctx.need('runs.samples');
      ctx.needRun(s, req.runId, 'runs.samples');
      return readSamples(s.store.runDir(req.runId), req);
    },
    'runs.update': async (req) => {
      const s = ctx.need('runs.update');
      ctx.needRun(s, req.runId, 'runs.update');
      const summary = await updateRun(s.store, s.runs.liveRecord(req.runId), req);
      ctx.emitProject({ type: 'runs-changed', time: Date.now(), runIds: [req.runId] });
      return summary;
    },
    'runs.configSchema': () => ({
      schema: z.toJSONSchema(RunConfigSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>,
      defaults: RunConfigSchema.parse({}),
    }),
    'runs.presets': () => ({
      presets: listPresets().map((p) => {
        const config = p.config(p.sizes[0]!) as Record<string, unknown>;
        const r = resolveRunConfig({ preset: p.id });
        return { id: p.id, title: p.title, description: p.description, method: p.method, sizes: p.sizes, stages: r.stages, config };
      }),
    }),
  });
}
