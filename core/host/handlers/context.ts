// What the API handlers share: the open project session and the dispatcher's helpers around it.
// core/host/dispatcher.ts owns the state (session, listeners) and builds one HostContext; each
// handlers/<namespace>.ts file returns its methods' handlers closed over it.
import type { ApiMethodName, ApiRequestParsed, ApiResponse, ProjectEvent, RunInfo, RunSummary, SystemInfo, TemplateVersion } from '../../api/contract.js';
import type { RunConfig } from '../../api/run-config.js';
import { notFound } from '../../api/errors.js';
import { resolveTemplateRef } from '../../prompts/resolve-template.js';
import type { ProjectStore } from '../../storage/project-store.js';
import type { RunData } from '../../storage/run-data.js';
import type { RunHost } from '../../engine/run-host.js';
import type { StudyHost, StudyHostOptions } from '../../engine/study-host.js';
import type { ProcessLauncher } from '../../engine/launcher.js';
import type { RunHostOptions } from '../../engine/run-host.js';
import type { PerplexityLauncher } from '../template-perplexity-child.js';
import type { ProbeLauncher } from '../probe-child.js';
import * as adapter from '../env-adapter.js';
import type { RunWatcher } from '../run-watcher.js';

export interface DispatcherOptions {
  host: SystemInfo['host'];
  /** How engine processes start (default: Node child_process.fork). */
  launcher?: ProcessLauncher;
  runHost?: Pick<RunHostOptions, 'stopGraceMs' | 'stopStepWaitMs' | 'startTimeoutMs' | 'flushIntervalMs' | 'maxOldSpaceMb'>;
  /** Written into the project lock (who holds it), e.g. "serve" or "cli run". */
  lockPurpose?: string;
  /** Open a project that another live process holds read-only, to watch it (serve, the app), instead of refusing. */
  watchWhenLocked?: boolean;
  /** Progress callbacks of the study runner (the CLI prints a line per run). */
  studyHooks?: Pick<StudyHostOptions, 'onRunStarting' | 'onRunEnded'>;
  /** Time budget of one envs.render / templates.preview request in the render worker (ms; default 15 s). */
  renderTimeoutMs?: number;
  /** How the templates.perplexity child starts (default: the same Node binary; Electron: a utilityProcess). */
  perplexityLauncher?: PerplexityLauncher;
  /** How the probe.turn child starts (default: the same Node binary; Electron: a utilityProcess). */
  probeLauncher?: ProbeLauncher;
}

/** An open project: its store, the hosts of its runs and studies, and cached run readers. */
export interface Session { store: ProjectStore; runs: RunHost | RunWatcher; studies: StudyHost; data: Map<string, RunData> }

export interface HostContext {
  readonly options: DispatcherOptions;
  /** The open session, or null. */
  session(): Session | null;
  /** The open session; NoProject when none is open. */
  need(where: string): Session;
  /** The run's summary; NotFound when the project has no such run. */
  needRun(s: Session, runId: string, where: string): RunSummary;
  /** The cached reader of a run's files. */
  runData(s: Session, runId: string): RunData;
  /** The live record of a run (the engine's, while it runs) plus its folder. */
  runInfo(s: Session, runId: string): RunInfo;
  emitProject(event: ProjectEvent): void;
  openSession(store: ProjectStore): Promise<void>;
  /** Close the open session (false when none was open); Conflict while runs or a study are active. */
  closeSession(where: string): Promise<boolean>;
}

export type Handler<M extends ApiMethodName> = (req: ApiRequestParsed<M>) => Promise<ApiResponse<M>> | ApiResponse<M>;
/** A namespace's handlers, each typed by its method name (the dispatcher checks that every method has one). */
export function defineHandlers<M extends ApiMethodName>(handlers: { [K in M]: Handler<K> }): { [K in M]: Handler<K> } {
  return handlers;
}

/** The template a run config or a request names: saved in the project (that name wins) or a built-in (core/prompts/resolve-template.ts). */
export function resolveTemplate(s: Session | null, ref: RunConfig['template']): { version: TemplateVersion; kind: 'preset' | 'saved' } {
  const r = resolveTemplateRef({ name: ref.preset, hash: ref.hash }, (name) => s?.store.data.templates[name] ?? [], 'template');
  if (r.kind === 'preset') return { version: adapter.presetTemplateVersion(r.name), kind: 'preset' };
  const v = s!.store.readTemplate(r.name, r.hash);
  if (!v) throw notFound(`template ${r.name}@${r.hash}`, 'template hash', 'see templates.versions');
  return { version: v, kind: 'saved' };
}
