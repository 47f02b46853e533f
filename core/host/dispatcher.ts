// The one implementation of the WorkbenchApi contract. Every request is validated against its zod
// schema (ValidationError saying where, what was expected and what arrived), every response
// against its schema (a mismatch is a bug: InternalError). Hosts (Electron IPC, WebSocket server,
// in-process CLI) only carry `call` and `subscribe`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type {
  ApiMethodName, ApiRequestParsed, ApiResponse, EventTopic, ProjectEvent, RunInfo, RunSummary, SystemInfo,
  TemplateListItem, TemplateVersion, Unsubscribe, WorkbenchApi, WorkbenchEvent,
} from '../api/contract.js';
import { EventTopicSchema, methodSpec, apiMethodNames } from '../api/contract.js';
import { RunConfigSchema, type RunConfig } from '../api/run-config.js';
import type { RunEvent } from '../api/records.js';
import { conflict, describeValue, notFound, validationError, WorkbenchError } from '../api/errors.js';
import { buildApi } from '../api/client.js';
import * as adapter from './env-adapter.js';
import { detectBackends, electronBinary, versions } from './system-info.js';
import { ProjectStore } from '../storage/project-store.js';
import { addRecent, readRecent } from '../storage/recent.js';
import { workbenchHome } from '../storage/home.js';
import { RunData } from '../storage/run-data.js';
import { writeJsonAtomicSync } from '../storage/atomic.js';
import { appendJsonl } from '../storage/jsonl.js';
import { EVENTS_FILE, writeRunRecord, type RunRecord } from '../storage/run-files.js';
import { resolveRunConfig, type ResolveRequest } from '../engine/config.js';
import { listPresets } from '../engine/presets.js';
import { stageTitle } from '../engine/stages.js';
import { findStudyRuns, readStudySpec, studyTable, tableCsv, tableMarkdown, type StudySpec } from '../eval/study.js';
import { StudyHost, type StudyHostOptions } from '../engine/study-host.js';
import { findCheckpoint, latestCheckpoint, listRunCheckpoints, TemplatePerplexityError } from '../eval/template-perplexity.js';
import { PerplexityRunner } from './template-perplexity-child.js';
import type { ProcessLauncher } from '../engine/launcher.js';
import { NodeProcessLauncher } from '../engine/node-launcher.js';
import { isActiveStatus, RunHost, summaryOf, type RunHostOptions } from '../engine/run-host.js';

export interface DispatcherOptions {
  host: SystemInfo['host'];
  /** How engine processes start (default: Node child_process.fork). */
  launcher?: ProcessLauncher;
  runHost?: Pick<RunHostOptions, 'stopGraceMs' | 'startTimeoutMs' | 'flushIntervalMs' | 'maxOldSpaceMb'>;
  /** Written into the project lock (who holds it), e.g. "serve" or "cli run". */
  lockPurpose?: string;
  /** Progress callbacks of the study runner (the CLI prints a line per run). */
  studyHooks?: Pick<StudyHostOptions, 'onRunStarting' | 'onRunEnded'>;
}

export interface Dispatcher {
  /** Validate and execute one method; throws WorkbenchError (serialise with toApiError). */
  call(method: string, params?: unknown): Promise<unknown>;
  /** The same, typed. */
  readonly api: WorkbenchApi;
  subscribe(topic: EventTopic, listener: (event: WorkbenchEvent) => void): Unsubscribe;
  /** Resolves when the run's engine process has exited (immediately if not active). */
  waitForRun(runId: string): Promise<void>;
  /** Resolves when a study's runner has finished (immediately if not running). */
  waitForStudy(name: string): Promise<void>;
  /** The open project folder, or null. */
  projectPath(): string | null;
  /** Stop (or kill) active runs, release the project lock. */
  dispose(opts?: { kill?: boolean }): Promise<void>;
}

interface Session { store: ProjectStore; runs: RunHost; studies: StudyHost; data: Map<string, RunData> }

type Handler<M extends ApiMethodName> = (req: ApiRequestParsed<M>) => Promise<ApiResponse<M>> | ApiResponse<M>;
type Handlers = { [M in ApiMethodName]: Handler<M> };

function newRunId(config: RunConfig): string {
  const d = new Date();
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp = `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
  const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 24);
  return `${stamp}-${slug(config.method)}-${slug(config.env.id)}-${randomBytes(2).toString('hex')}`;
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const launcher = options.launcher ?? new NodeProcessLauncher();
  let session: Session | null = null;
  const projectListeners = new Set<(e: WorkbenchEvent) => void>();
  const runListeners = new Map<string, Set<(e: WorkbenchEvent) => void>>();

  const emitProject = (event: ProjectEvent) => {
    const e: WorkbenchEvent = { kind: 'project', event };
    for (const l of [...projectListeners]) try { l(e); } catch { /* a listener's bug must not break the host */ }
  };
  const emitRun = (runId: string, event: RunEvent) => {
    const set = runListeners.get(runId);
    if (!set) return;
    const e: WorkbenchEvent = { kind: 'run', runId, event };
    for (const l of [...set]) try { l(e); } catch { /* ignore */ }
  };

  const need = (where: string): Session => {
    if (!session) throw new WorkbenchError('NoProject', `${where}: no project is open; open or create one first (projects.open / projects.create)`, { where, expected: 'an open project', received: 'none' });
    return session;
  };
  const needRun = (s: Session, runId: string, where: string): RunSummary => {
    const r = s.store.getRun(runId);
    if (!r) throw notFound(`run ${JSON.stringify(runId)}`, `${where} runId`, `the project has ${s.store.listRuns().length} run(s); list them with runs.list`);
    return r;
  };
  const runData = (s: Session, runId: string): RunData => {
    let d = s.data.get(runId);
    if (!d) s.data.set(runId, (d = new RunData(runId, s.store.runDir(runId))));
    return d;
  };

  async function openSession(store: ProjectStore): Promise<void> {
    const heapMb = Number(process.env.SPA_WORKBENCH_ENGINE_HEAP_MB);   // engine heap limit, e.g. 8192 for big models
    const runs = new RunHost({
      store, launcher, ...(Number.isFinite(heapMb) && heapMb > 0 ? { maxOldSpaceMb: heapMb } : {}), ...options.runHost,
      onRunEvent: emitRun,
      onProjectEvent: emitProject,
    });
    const studies = new StudyHost({ store, runs, api: () => api, onProjectEvent: emitProject, host: options.host, ...options.studyHooks });
    session = { store, runs, studies, data: new Map() };
    const recovered = runs.recoverInterrupted();
    for (const name of studies.recoverInterrupted()) store.warnings.push(`study ${name} was running when the previous host exited; marked stopped (start it again to resume)`);
    for (const id of recovered) store.warnings.push(`run ${id} was active when the previous host exited; marked failed (resume it to continue)`);
    addRecent(store.dir, store.data.project.name);
    emitProject({ type: 'project', time: Date.now(), project: store.info() });
  }

  async function closeSession(where: string): Promise<boolean> {
    if (!session) return false;
    await session.runs.settleFinishing();
    const active = session.runs.activeIds();
    if (active.length) throw conflict(`${where}: ${active.length} run(s) are still active (${active.join(', ')}); stop them first`, where, { received: `${active.length} active run(s)` });
    const studying = session.studies.activeNames();
    if (studying.length) throw conflict(`${where}: study ${studying.join(', ')} is running; stop it first (studies.stop)`, where, { received: `${studying.length} running study(ies)` });
    await session.store.flush().catch(() => undefined);
    session.store.close();
    session = null;
    emitProject({ type: 'project', time: Date.now(), project: null });
    return true;
  }

  function resolveTemplate(s: Session | null, ref: RunConfig['template']): { version: TemplateVersion; kind: 'preset' | 'saved' } {
    if (s && (s.store.data.templates[ref.preset]?.length ?? 0) > 0) {
      const v = s.store.readTemplate(ref.preset, ref.hash);
      if (!v) throw notFound(`template ${ref.preset}@${ref.hash}`, 'template.hash', 'see templates.versions');
      return { version: v, kind: 'saved' };
    }
    if (!adapter.isTemplatePreset(ref.preset)) {
      throw new WorkbenchError('NotFound', `template ${JSON.stringify(ref.preset)} is neither a preset nor saved in this project; presets: ${adapter.templatePresetItems().map((t) => t.name).join(', ')}`, {
        where: 'template.preset', expected: 'a template preset or saved template name', received: JSON.stringify(ref.preset),
      });
    }
    const v = adapter.presetTemplateVersion(ref.preset);
    if (ref.hash && !v.hash.startsWith(ref.hash)) throw notFound(`template ${ref.preset}@${ref.hash}`, 'template.hash', `the preset's hash is ${v.hash.slice(0, 12)}`);
    return { version: v, kind: 'preset' };
  }

  function resolveOrThrow(req: ResolveRequest, where: string): { config: RunConfig; stages: string[] } {
    const r = resolveRunConfig(req);
    if (!r.ok || !r.config) {
      const first = r.issues[0]!;
      throw new WorkbenchError('ValidationError', `${where}: invalid config at ${first.path}: ${first.message}${r.issues.length > 1 ? ` (and ${r.issues.length - 1} more)` : ''}`, {
        where: `${where} ${first.path}`, expected: first.message, received: describeValue(req.config ?? req.preset), issues: r.issues,
      });
    }
    return { config: r.config, stages: r.stages };
  }

  /** studies.start: the grid checked against the presets, envs and config schema before anything runs. */
  function validateStudy(s: Session, req: ApiRequestParsed<'studies.start'>): StudySpec {
    const where = 'studies.start';
    const bad = (field: string, message: string, expected: string, received: unknown): never => {
      throw new WorkbenchError('ValidationError', `${where}: ${message}`, { where: `${where} ${field}`, expected, received: describeValue(received) });
    };
    let stored: StudySpec | null = null;
    try { stored = readStudySpec(s.store.dir, req.name); } catch (err) {
      throw new WorkbenchError('CorruptData', `${where}: study ${req.name} exists but its spec.json does not parse (${(err as Error).message}); fix or remove it, or use another name`, { where: `${where} name` });
    }
    const methods = req.methods ?? stored?.methods;
    const envs = req.envs ?? stored?.envs;
    if (!methods || !envs) {
      const missing = [!methods && 'methods', !envs && 'envs'].filter(Boolean).join(' and ');
      bad(missing.split(' ')[0]!, `study ${JSON.stringify(req.name)} does not exist yet; give ${missing} (and seeds, size) to create it`, 'methods and envs for a new study', undefined);
    }
    const seeds = req.seeds ?? stored?.seeds ?? [0];
    const size = req.size ?? stored?.size ?? 'quick';
    const set = req.set ?? stored?.set;
    const presets = listPresets();
    const envIds = adapter.envInfos().map((e) => e.id);
    const checkList = (field: 'methods' | 'envs' | 'seeds', values: ReadonlyArray<string | number>, valid: ReadonlyArray<string> | null, what: string) => {
      values.forEach((v, i) => {
        if (values.indexOf(v) !== i) bad(`${field}[${i}]`, `${field}: ${JSON.stringify(v)} appears more than once`, `distinct ${field}`, v);
        if (valid && !valid.includes(String(v))) bad(`${field}[${i}]`, `unknown ${what} ${JSON.stringify(v)} in ${field}; valid ${field}: ${valid.join(', ')}`, `one of ${valid.join(', ')}`, v);
      });
    };
    checkList('methods', methods!, presets.map((p) => p.id), 'method preset');
    checkList('envs', envs!, envIds, 'environment');
    checkList('seeds', seeds, null, 'seed');
    const cells = methods!.length * envs!.length * seeds.length;
    if (cells > 10_000) bad('seeds', `the grid has ${cells} runs (methods × envs × seeds); at most 10000`, 'at most 10000 runs', cells);
    if (stored && stored.size !== size) {
      const started = s.store.listRuns().some((r) => r.name.startsWith(`study:${req.name}:`));
      if (started) throw conflict(`${where}: study ${req.name} was run at size ${stored.size}; its runs cannot be mixed with size ${size} in one table. Use another name for a ${size} study`, `${where} size`, { expected: stored.size, received: size });
    }
    // Every cell's config must resolve (catches a bad `set` path or a size a preset lacks) before any run starts.
    for (const method of methods!) for (const env of envs!) {
      const r = resolveRunConfig({ preset: method, size, set: { 'env.id': env, 'seeds.base': seeds[0]!, ...(set ?? {}) } });
      if (!r.ok) {
        const first = r.issues[0]!;
        throw new WorkbenchError('ValidationError', `${where}: the run ${method} × ${env} does not resolve: ${first.path}: ${first.message}`, {
          where: `${where} ${first.path.startsWith('set') || !set ? first.path : `set ${first.path}`}`, expected: first.message, received: describeValue(set ?? method), issues: r.issues,
        });
      }
    }
    const spec: StudySpec = { name: req.name, methods: [...methods!], envs: [...envs!], seeds: [...seeds], size, ...(set && Object.keys(set).length ? { set } : {}) };
    return spec;
  }

  const runInfo = (s: Session, runId: string): RunInfo => {
    const rec = s.runs.liveRecord(runId) ?? s.store.readRun(runId);
    if (!rec) throw notFound(`run ${JSON.stringify(runId)}`, 'runId');
    return { ...rec, dir: s.store.runDir(runId) };
  };

  // templates.perplexity runs TF.js in a child process (never on this event loop)
  const perplexityRunner = new PerplexityRunner();
  const perplexityErrors = <T>(where: string, fn: () => T): T => {
    try { return fn(); } catch (err) {
      if (err instanceof TemplatePerplexityError) throw new WorkbenchError(err.code, `${where}: ${err.message}`, { ...err.details, where: `${where} ${err.details.where}` });
      throw err;
    }
  };

  const handlers: Handlers = {
    // ── projects ──
    'projects.create': async (req) => {
      // Create (and so validate) the new project before closing the open one: a bad path must
      // leave the current project open.
      if (session) {
        await session.runs.settleFinishing();
        const active = session.runs.activeIds();
        if (active.length) throw conflict(`projects.create: ${active.length} run(s) are still active (${active.join(', ')}); stop them first`, 'projects.create', { received: `${active.length} active run(s)` });
      }
      const store = await ProjectStore.create(req.path, { name: req.name, purpose: options.lockPurpose ?? options.host });
      try {
        await closeSession('projects.create');
      } catch (err) {
        store.close();
        throw err;
      }
      await openSession(store);
      return store.info();
    },
    'projects.open': async (req) => {
      const abs = path.resolve(req.path);
      if (session && session.store.dir === abs) return session.store.info();
      if (session) await closeSession('projects.open');
      const store = await ProjectStore.open(abs, { purpose: options.lockPurpose ?? options.host });
      await openSession(store);
      return store.info();
    },
    'projects.recent': () => ({ projects: readRecent().projects }),
    'projects.info': () => ({ project: session ? session.store.info() : null }),
    'projects.close': async () => ({ closed: await closeSession('projects.close') }),

    // ── runs ──
    'runs.create': async (req) => {
      const s = need('runs.create');
      if (req.preset === undefined && req.config === undefined) {
        throw new WorkbenchError('ValidationError', 'runs.create: give a preset, a config, or both', { where: 'runs.create', expected: '{ preset } or { config }', received: 'neither' });
      }
      const { config, stages } = resolveOrThrow(req, 'runs.create');
      const id = newRunId(config);
      const dir = s.store.runDir(id);
      fs.mkdirSync(dir, { recursive: true });
      let templateHash: string | null = null;
      const notes: string[] = [];
      try {
        const t = resolveTemplate(s, config.template);
        templateHash = t.version.hash;
        config.template.hash = t.version.hash;                 // pin the version in the resolved config
        writeJsonAtomicSync(path.join(dir, 'template.json'), JSON.parse(t.version.source));
      } catch (err) {
        notes.push(`template not resolved at creation: ${(err as Error).message}`);
      }
      const now = Date.now();
      const record: RunRecord = {
        id, name: config.name ?? `${config.method} · ${config.env.id}`, method: config.method, env: config.env.id, size: config.size,
        preset: req.preset ?? null, templateHash, status: 'created', reason: null, createdAt: now, startedAt: null, finishedAt: null,
        durationMs: 0, attempts: 0,
        stages: stages.map((name) => ({ name, title: stageTitle(name), status: 'pending', startedAt: null, finishedAt: null, reason: null, done: 0, total: 0 })),
        progress: null, latest: {}, config, versions: versions(),
      };
      writeRunRecord(dir, record);
      for (const n of notes) appendJsonl(path.join(dir, EVENTS_FILE), [{ type: 'log', runId: id, time: now, level: 'warn', message: n }]);
      s.store.putRun(summaryOf(record));
      await s.store.flush();
      emitProject({ type: 'runs-changed', time: now, runIds: [id] });
      if (req.start) await s.runs.start(id, { resume: false });
      return runInfo(s, id);
    },
    'runs.validateConfig': (req) => {
      const r = resolveRunConfig(req);
      return { ok: r.ok, config: r.config, stages: r.stages, issues: r.issues };
    },
    'runs.list': (req) => {
      const s = need('runs.list');
      let runs = [...s.store.listRuns()].reverse();
      if (req.status) runs = runs.filter((r) => req.status!.includes(r.status));
      return { runs: runs.slice(req.offset, req.offset + req.limit), total: runs.length };
    },
    'runs.get': (req) => { const s = need('runs.get'); needRun(s, req.runId, 'runs.get'); return runInfo(s, req.runId); },
    'runs.start': async (req) => { const s = need('runs.start'); needRun(s, req.runId, 'runs.start'); return s.runs.start(req.runId, { resume: false }); },
    'runs.stop': async (req) => { const s = need('runs.stop'); needRun(s, req.runId, 'runs.stop'); return s.runs.stop(req.runId); },
    'runs.resume': async (req) => { const s = need('runs.resume'); needRun(s, req.runId, 'runs.resume'); return s.runs.start(req.runId, { resume: true }); },
    'runs.delete': async (req) => {
      const s = need('runs.delete');
      const r = needRun(s, req.runId, 'runs.delete');
      if (s.runs.isActive(req.runId) || isActiveStatus(r.status)) throw conflict(`run ${req.runId} is ${r.status}; stop it before deleting`, 'runs.delete', { received: r.status });
      fs.rmSync(s.store.runDir(req.runId), { recursive: true, force: true });
      s.data.delete(req.runId);
      const deleted = s.store.removeRun(req.runId);
      await s.store.flush();
      emitProject({ type: 'runs-changed', time: Date.now(), runIds: [req.runId] });
      return { deleted };
    },
    'runs.events': (req) => {
      const s = need('runs.events');
      needRun(s, req.runId, 'runs.events');
      return runData(s, req.runId).readEvents(req.types, req.offset, req.limit);
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

    // ── envs ──
    'envs.list': () => ({ envs: adapter.envInfos() }),
    'envs.describe': (req) => adapter.envDescription(req.id),
    'envs.render': (req) => {
      const ref = req.template ?? { preset: 'spa', responseFormat: 'world-model' as const };
      const { version } = resolveTemplate(session, { preset: ref.preset, hash: ref.hash, responseFormat: ref.responseFormat ?? 'world-model' });
      const t = adapter.parseStoredTemplate(version);
      return adapter.renderPuzzle(t, { id: req.env.id, options: req.env.options }, req.seed, ref.responseFormat ?? t.responseFormat);
    },

    // ── templates ──
    'templates.list': () => {
      const presets = adapter.templatePresetItems();
      const saved: TemplateListItem[] = session ? session.store.savedTemplates().map(({ name, versions: vs }) => ({
        name, kind: 'saved' as const, description: vs[vs.length - 1]?.description ?? '', latestHash: vs[vs.length - 1]?.hash ?? null, versionCount: vs.length,
      })) : [];
      return { templates: [...saved, ...presets.filter((p) => !saved.some((s) => s.name === p.name))] };
    },
    'templates.get': (req) => resolveTemplate(session, { preset: req.name, hash: req.hash, responseFormat: 'world-model' }).version,
    'templates.save': async (req) => {
      const s = need('templates.save');
      const checked = adapter.checkTemplateSource(req.source, req.name);
      if (!checked.ok) {
        const d = checked.diagnostics[0]!;
        throw new WorkbenchError('ValidationError', `templates.save: the template does not validate: ${d.message}${d.line ? ` (line ${d.line}, column ${d.column})` : ''}`, {
          where: 'templates.save source', expected: 'a valid template (JSON with name, responseFormat, parts)', received: `${checked.diagnostics.length} problem(s)`,
          issues: checked.diagnostics.map((x) => ({ path: x.line ? `line ${x.line}:${x.column}` : '', message: x.message })),
        });
      }
      const version: TemplateVersion = {
        name: req.name, hash: checked.hash, createdAt: Date.now(), description: req.description || checked.template.description,
        parent: req.parent ?? null, source: `${JSON.stringify(checked.template, null, 2)}\n`,
      };
      const r = await s.store.saveTemplate(version);
      if (r.created) emitProject({ type: 'templates-changed', time: Date.now(), name: req.name });
      return { version: r.version, created: r.created, diagnostics: [] };
    },
    'templates.versions': (req) => {
      const saved = session?.store.templateVersions(req.name) ?? [];
      if (saved.length) return { versions: saved };
      if (adapter.isTemplatePreset(req.name)) { const { source: _s, ...meta } = adapter.presetTemplateVersion(req.name); return { versions: [meta] }; }
      throw notFound(`template ${JSON.stringify(req.name)}`, 'templates.versions name', 'see templates.list');
    },
    'templates.preview': (req) => {
      let source: string;
      if (req.source !== undefined) source = req.source;
      else if (req.name !== undefined) source = resolveTemplate(session, { preset: req.name, hash: req.hash, responseFormat: req.responseFormat }).version.source;
      else throw new WorkbenchError('ValidationError', 'templates.preview: give the template text (source) or a template name', { where: 'templates.preview', expected: '{ source } or { name }', received: 'neither' });
      const checked = adapter.checkTemplateSource(source);
      if (!checked.ok) return { ok: false, diagnostics: checked.diagnostics, hash: null, stateText: null, prompt: null, messages: [], board: null };
      return adapter.previewTemplate(checked.template, { id: req.env.id, options: req.env.options }, req.seed, req.responseFormat);
    },
    'templates.checkpoints': (req) => {
      const s = need('templates.checkpoints');
      needRun(s, req.runId, 'templates.checkpoints');
      const checkpoints = perplexityErrors('templates.checkpoints', () => listRunCheckpoints(s.store.dir, req.runId));
      return { runId: req.runId, latest: latestCheckpoint(checkpoints)?.name ?? null, checkpoints };
    },
    'templates.perplexity': async (req) => {
      const where = 'templates.perplexity';
      const s = need(where);
      needRun(s, req.runId, where);
      if ((req.source === undefined) === (req.name === undefined)) {
        throw new WorkbenchError('ValidationError', `${where}: give the template text (source) or a template name, not ${req.source === undefined ? 'neither' : 'both'}`, { where, expected: '{ source } or { name, hash? }', received: req.source === undefined ? 'neither' : 'both' });
      }
      // the quick checks here, so a bad request gets its answer without starting a process
      const checkpoint = perplexityErrors(where, () => findCheckpoint(s.store.dir, req.runId, req.checkpoint));
      let template: { source: string } | { name: string; hash: string };
      if (req.source !== undefined) {
        const checked = adapter.checkTemplateSource(req.source);
        if (!checked.ok) {
          const d = checked.diagnostics[0]!;
          throw new WorkbenchError('ValidationError', `${where}: the template does not validate: ${d.message}${d.line ? ` (line ${d.line}, column ${d.column})` : ''}`, {
            where: `${where} source`, expected: 'a valid template (JSON with name, responseFormat, parts)', received: `${checked.diagnostics.length} problem(s)`,
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

    // ── rollouts, datasets, metrics, evals ──
    'rollouts.query': (req) => { const s = need('rollouts.query'); needRun(s, req.runId, 'rollouts.query'); return runData(s, req.runId).queryRollouts(req); },
    'rollouts.facets': (req) => { const s = need('rollouts.facets'); needRun(s, req.runId, 'rollouts.facets'); return runData(s, req.runId).facets(); },
    'rollouts.get': (req) => { const s = need('rollouts.get'); needRun(s, req.runId, 'rollouts.get'); return runData(s, req.runId).getEpisode(req.id); },
    'datasets.query': (req) => { const s = need('datasets.query'); needRun(s, req.runId, 'datasets.query'); return runData(s, req.runId).datasetPage(req.split, req.offset, req.limit); },
    'datasets.stats': (req) => { const s = need('datasets.stats'); needRun(s, req.runId, 'datasets.stats'); return { stats: runData(s, req.runId).datasetStats() }; },
    'metrics.names': (req) => {
      const s = need('metrics.names');
      const names = new Set<string>(); const stages = new Set<string>();
      for (const id of req.runIds) { needRun(s, id, 'metrics.names'); const r = runData(s, id).metricNames(); r.names.forEach((n) => names.add(n)); r.stages.forEach((x) => stages.add(x)); }
      return { names: [...names].sort(), stages: [...stages] };
    },
    'metrics.query': (req) => {
      const s = need('metrics.query');
      const series = req.runIds.flatMap((id) => { needRun(s, id, 'metrics.query'); return runData(s, id).metricSeries(req); });
      return { series };
    },
    'evals.list': (req) => { const s = need('evals.list'); needRun(s, req.runId, 'evals.list'); return { results: runData(s, req.runId).evalResults() }; },

    // ── system ──
    'studies.list': () => ({ studies: need('studies.list').studies.list() }),
    'studies.start': (req) => {
      const s = need('studies.start');
      return s.studies.start(validateStudy(s, req));
    },
    'studies.stop': async (req) => need('studies.stop').studies.stop(req.name),
    'studies.table': (req) => {
      const s = need('studies.table');
      const spec = readStudySpec(s.store.dir, req.name);
      if (!spec) throw notFound(`study ${JSON.stringify(req.name)}`, 'name', 'see studies.list');
      const table = studyTable(findStudyRuns([s.store.dir], spec.name), spec.methods, spec.envs);
      const references = table.references.map((r) => ({ env: r.env, kind: r.kind, label: r.label, how: r.how, puzzles: r.puzzles, passAt: r.passAt }));
      return { name: spec.name, methods: spec.methods, envs: spec.envs, ks: table.ks, cells: table.cells, references, markdown: tableMarkdown(table, spec.methods, spec.envs), csv: tableCsv(table) };
    },
    'system.info': () => ({
      host: options.host, versions: versions(), backends: detectBackends(),
      paths: { home: workbenchHome(), project: session?.store.dir ?? null, cwd: process.cwd() },
      electronAvailable: electronBinary() !== null,
    }),
  };

  async function call(method: string, params?: unknown): Promise<unknown> {
    const spec = typeof method === 'string' ? methodSpec(method) : undefined;
    if (!spec) {
      const names = apiMethodNames();
      const ns = typeof method === 'string' ? method.split('.')[0] : '';
      const near = names.filter((n) => n.startsWith(`${ns}.`));
      throw new WorkbenchError('NotFound', `unknown API method ${describeValue(method)}; ${near.length ? `methods of ${ns}: ${near.join(', ')}` : `namespaces: ${[...new Set(names.map((n) => n.split('.')[0]))].join(', ')}`}`, {
        where: 'method', expected: 'a method name such as "runs.list"', received: describeValue(method),
      });
    }
    const parsed = spec.request.safeParse(params);
    if (!parsed.success) throw validationError(method, parsed.error, params);
    const handler = (handlers as unknown as Record<string, (r: unknown) => unknown>)[method]!;
    const result = await handler(parsed.data);
    const out = spec.response.safeParse(result);
    if (!out.success) {
      const i = out.error.issues[0];
      throw new WorkbenchError('InternalError', `${method}: the response does not match the contract at ${i?.path.join('.') || '(root)'}: ${i?.message} (a bug or a file written by another version)`, {
        where: `${method} response`, issues: out.error.issues.slice(0, 20).map((x) => ({ path: x.path.join('.'), message: x.message })),
      });
    }
    return out.data;
  }

  function subscribe(topic: EventTopic, listener: (event: WorkbenchEvent) => void): Unsubscribe {
    const t = EventTopicSchema.safeParse(topic);
    if (!t.success) throw validationError('subscribe', t.error, topic);
    if (t.data.kind === 'project') {
      projectListeners.add(listener);
      return () => { projectListeners.delete(listener); };
    }
    const runId = t.data.runId;
    let set = runListeners.get(runId);
    if (!set) runListeners.set(runId, (set = new Set()));
    set.add(listener);
    return () => { set!.delete(listener); if (set!.size === 0) runListeners.delete(runId); };
  }

  const api = buildApi(call);
  return {
    call,
    api,
    subscribe,
    waitForRun: async (runId) => { await session?.runs.waitForExit(runId); },
    waitForStudy: async (name) => { await session?.studies.waitFor(name); },
    projectPath: () => session?.store.dir ?? null,
    async dispose(opts = {}) {
      perplexityRunner.killAll();
      if (!session) return;
      await session.studies.dispose();
      await session.runs.dispose(opts);
      await session.studies.settle();
      session.store.close();
      session = null;
    },
  };
}
