// The one implementation of the WorkbenchApi contract. Every request is validated against its zod
// schema (ValidationError saying where, what was expected and what arrived), every response
// against its schema (a mismatch is a bug: InternalError). Hosts (Electron IPC, WebSocket server,
// in-process CLI) only carry `call` and `subscribe`. This file owns the state (the open project
// session, event listeners); the handlers live by namespace in core/host/handlers/.
import type { ApiMethodName, EventTopic, ProjectEvent, RunInfo, RunSummary, Unsubscribe, WorkbenchApi, WorkbenchEvent } from '../api/contract.js';
import { EventTopicSchema, methodSpec, apiMethodNames } from '../api/contract.js';
import type { RunEvent } from '../api/records.js';
import { conflict, describeValue, notFound, validationError, WorkbenchError } from '../api/errors.js';
import { buildApi } from '../api/client.js';
import type { ProjectStore } from '../storage/project-store.js';
import { addRecent } from '../storage/recent.js';
import { RunData } from '../storage/run-data.js';
import { StudyHost } from '../engine/study-host.js';
import { NodeProcessLauncher } from '../engine/node-launcher.js';
import { RunHost } from '../engine/run-host.js';
import { PerplexityRunner } from './template-perplexity-child.js';
import { ModelImportRunner } from './model-import-child.js';
import { RenderPool } from './render-pool.js';
import { RunWatcher } from './run-watcher.js';
import { inspectHandlers } from './inspect-handlers.js';
import { resolveTemplate } from './handlers/context.js';
import type { DispatcherOptions, Handler, HostContext, Session } from './handlers/context.js';
import { projectHandlers } from './handlers/projects.js';
import { runHandlers } from './handlers/runs.js';
import { envHandlers } from './handlers/envs.js';
import { templateHandlers } from './handlers/templates.js';
import { runDataHandlers } from './handlers/run-data.js';
import { studyHandlers } from './handlers/studies.js';
import { systemHandlers } from './handlers/system.js';
import { interopHandlers } from './interop-handlers.js';

export type { DispatcherOptions } from './handlers/context.js';

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

type Handlers = { [M in ApiMethodName]: Handler<M> };

/** Methods that change a project: refused while it is open read-only (watched, or a folder that cannot be written). */
const WRITE_METHODS = new Set(['runs.create', 'runs.start', 'runs.resume', 'runs.delete', 'runs.update', 'templates.save', 'studies.start', 'studies.stop',
  'runs.import']);

function readOnlyError(store: ProjectStore, method: string): WorkbenchError {
  const h = store.lockHolder;
  if (!h) {
    // opened read-only without a holder: the folder cannot be written (a read-only file system, no permission)
    return new WorkbenchError('ReadOnly', `${method}: the project is open read-only: its folder cannot be written. ` +
      'Make it writable (or copy it somewhere writable) and open it again', {
      where: method, expected: 'a project folder this process can write', received: 'a folder that cannot be written',
    });
  }
  const who = `process ${h.pid} on ${h.host} (${h.purpose ?? 'workbench'})`;
  const message = `${method}: the project is open read-only, to watch: ${who} holds it. Make changes there, or open the project again after it exits`;
  return new WorkbenchError('ReadOnly', message, {
    where: method, expected: 'a project this process holds', received: `held by process ${h.pid} (${h.purpose ?? 'workbench'})`,
  });
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
    if (!session)
      throw new WorkbenchError('NoProject', `${where}: no project is open; open or create one first (projects.open / projects.create)`, {
        where,
        expected: 'an open project',
        received: 'none',
      });
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
    if (store.readOnly) {
      // Another process holds the project, or its folder cannot be written: follow its runs from the files, write nothing.
      const runs = new RunWatcher({ store, onRunEvent: emitRun, onProjectEvent: emitProject, watched: () => [...runListeners.keys()] });
      const studies = new StudyHost({ store, runs, api: () => api, onProjectEvent: emitProject, host: options.host, ...options.studyHooks });
      session = { store, runs, studies, data: new Map() };
      emitProject({ type: 'project', time: Date.now(), project: store.info() });
      return;
    }
    const heapMb = Number(process.env.SPA_WORKBENCH_ENGINE_HEAP_MB);   // engine heap limit, e.g. 8192 for big models
    const runs = new RunHost({
      store, launcher, ...(Number.isFinite(heapMb) && heapMb > 0 ? { maxOldSpaceMb: heapMb } : {}), ...options.runHost,
      onRunEvent: emitRun,
      onProjectEvent: emitProject,
    });
    const studies = new StudyHost({ store, runs, api: () => api, onProjectEvent: emitProject, host: options.host, ...options.studyHooks });
    session = { store, runs, studies, data: new Map() };
    const recovered = runs.recoverInterrupted();
    for (const name of studies.recoverInterrupted()) store.warnings.push(`study ${name} was running when the previous host exited; marked stopped ` +
      `(start it again to resume)`);
    for (const id of recovered) store.warnings.push(`run ${id} was active when the previous host exited; marked failed (resume it to continue)`);
    addRecent(store.dir, store.data.project.name);
    emitProject({ type: 'project', time: Date.now(), project: store.info() });
  }

  async function closeSession(where: string): Promise<boolean> {
    if (!session) return false;
    await session.runs.settleFinishing();
    const active = session.runs.activeIds();
    if (active.length)
      throw conflict(`${where}: ${active.length} run(s) are still active (${active.join(', ')}); stop them first`, where, {
        received: `${active.length} active run(s)`,
      });
    const studying = session.studies.activeNames();
    if (studying.length)
      throw conflict(`${where}: study ${studying.join(', ')} is running; stop it first (studies.stop)`, where, {
        received: `${studying.length} running study(ies)`,
      });
    await session.store.flush().catch(() => undefined);
    if (session.runs instanceof RunWatcher) await session.runs.dispose();
    session.store.close();
    session = null;
    emitProject({ type: 'project', time: Date.now(), project: null });
    return true;
  }

  const runInfo = (s: Session, runId: string): RunInfo => {
    const rec = s.runs.liveRecord(runId) ?? s.store.readRun(runId);
    if (!rec) throw notFound(`run ${JSON.stringify(runId)}`, 'runId');
    return { ...rec, dir: s.store.runDir(runId) };
  };

  const ctx: HostContext = { options, session: () => session, need, needRun, runData, runInfo, emitProject, openSession, closeSession };
  // templates.perplexity runs TF.js in a child process (never on this event loop)
  const perplexityRunner = new PerplexityRunner(options.perplexityLauncher);
  const modelImports = new ModelImportRunner();   // system.importModel's child process (killed on dispose)
  const renderPool = new RenderPool(options.renderTimeoutMs);   // envs.render / templates.preview off the event loop
  const inspect = inspectHandlers({
    projectDir: (where) => need(where).store.dir,
    runInfo: (runId, where) => { const s = need(where); needRun(s, runId, where); return runInfo(s, runId); },
    runData: (runId, where) => { const s = need(where); needRun(s, runId, where); return runData(s, runId); },
    resolveRunTemplate: (ref) => { const { version } = resolveTemplate(session, ref); return { source: version.source, hash: version.hash }; },
    ...(options.probeLauncher ? { probeLauncher: options.probeLauncher } : {}),
  });
  const handlers: Handlers = {
    ...projectHandlers(ctx),
    ...runHandlers(ctx),
    ...envHandlers(ctx, renderPool),
    ...templateHandlers(ctx, perplexityRunner, renderPool),
    ...runDataHandlers(ctx),
    ...studyHandlers(ctx),
    ...systemHandlers(ctx, modelImports),
    ...inspect.handlers,   // rollouts.query (all filters), inspect.*, probe.turn: core/host/inspect-handlers.ts
    ...interopHandlers({ need, needRun, emitProject }),   // runs.exportBundle, runs.import (core/host/interop-handlers.ts)
  };

  async function call(method: string, params?: unknown): Promise<unknown> {
    const spec = typeof method === 'string' ? methodSpec(method) : undefined;
    if (!spec) {
      const names = apiMethodNames();
      const ns = typeof method === 'string' ? method.split('.')[0] : '';
      const near = names.filter((n) => n.startsWith(`${ns}.`));
      const known = near.length ? `methods of ${ns}: ${near.join(', ')}` : `namespaces: ${[...new Set(names.map((n) => n.split('.')[0]))].join(', ')}`;
      throw new WorkbenchError('NotFound', `unknown API method ${describeValue(method)}; ${known}`, {
        where: 'method', expected: 'a method name such as "runs.list"', received: describeValue(method),
      });
    }
    const parsed = spec.request.safeParse(params);
    if (!parsed.success) throw validationError(method, parsed.error, params);
    if (session?.store.readOnly && WRITE_METHODS.has(method)) throw readOnlyError(session.store, method);
    const handler = (handlers as unknown as Record<string, (r: unknown) => unknown>)[method]!;
    const result = await handler(parsed.data);
    const out = spec.response.safeParse(result);
    if (!out.success) {
      const i = out.error.issues[0];
      throw new WorkbenchError('InternalError', `${method}: the response does not match the contract ` +
        `at ${i?.path.join('.') || '(root)'}: ${i?.message} (a bug or a file written by another version)`, {
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
      modelImports.killAll();
      renderPool.dispose();
      inspect.dispose();
      if (!session) return;
      await session.studies.dispose();
      await session.runs.dispose(opts);
      await session.studies.settle();
      session.store.close();
      session = null;
    },
  };
}
