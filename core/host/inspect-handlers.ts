// Handlers of the inspection methods (issue 12: items 5, 6, 7, 11, 12): rollouts.query with every
// filter (sort by any column, group, search, world-model accuracy), inspect.runTemplate,
// inspect.systemMetrics, inspect.tokenHistograms and probe.turn (in a child process). The
// dispatcher spreads these into its handler table; they reach the project through `deps`.
import type { ApiMethodName, ApiRequestParsed, ApiResponse, RunInfo } from '../api/contract.js';
import { WorkbenchError } from '../api/errors.js';
import { assertTemplate, templateHash } from '../prompts/template.js';
import type { RunData } from '../storage/run-data.js';
import { readSystemSamples } from '../storage/system-samples.js';
import { queryRolloutsInspect, tokenHistograms } from './rollout-inspect.js';
import { readPinnedTemplate } from '../storage/run-files.js';
import { ProbeRunner, type ProbeLauncher } from './probe-child.js';

type Handler<M extends ApiMethodName> = (req: ApiRequestParsed<M>) => Promise<ApiResponse<M>> | ApiResponse<M>;
type InspectMethods = 'rollouts.query' | 'inspect.runTemplate' | 'inspect.systemMetrics' | 'inspect.tokenHistograms' | 'probe.turn';

export interface InspectDeps {
  /** The open project's folder (throws NoProject when none). */
  projectDir(where: string): string;
  /** The run (throws NotFound) with its folder. */
  runInfo(runId: string, where: string): RunInfo;
  runData(runId: string, where: string): RunData;
  /** The template a run names, resolved as at creation (for runs created before template.json was pinned). */
  resolveRunTemplate(ref: RunInfo['config']['template']): { source: string; hash: string };
  /** How the probe child starts (default: the same Node binary; Electron: a utilityProcess). */
  probeLauncher?: ProbeLauncher;
}

export function inspectHandlers(deps: InspectDeps): { handlers: { [M in InspectMethods]: Handler<M> }; dispose(): void } {
  const probes = new ProbeRunner(deps.probeLauncher);
  const handlers: { [M in InspectMethods]: Handler<M> } = {
    'rollouts.query': (req) => queryRolloutsInspect(deps.runData(req.runId, 'rollouts.query'), req),
    'inspect.runTemplate': (req) => {
      const where = 'inspect.runTemplate';
      const run = deps.runInfo(req.runId, where);
      const env = { id: run.config.env.id, options: run.config.env.options ?? {} };
      const pinned = readPinnedTemplate(run.dir, assertTemplate);
      if (pinned) {
        const { json, template } = pinned;
        return {
          runId: run.id, pinned: true, name: template.name, hash: templateHash(template), recordedHash: run.templateHash,
          responseFormat: run.config.template.responseFormat, source: JSON.stringify(json, null, 2), env,
        };
      }
      const resolved = deps.resolveRunTemplate(run.config.template);
      const template = assertTemplate(JSON.parse(resolved.source));
      return {
        runId: run.id, pinned: false, name: template.name, hash: resolved.hash, recordedHash: run.templateHash,
        responseFormat: run.config.template.responseFormat, source: resolved.source, env,
      };
    },
    'inspect.systemMetrics': (req) => readSystemSamples(deps.runInfo(req.runId, 'inspect.systemMetrics').dir, req.maxPoints),
    'inspect.tokenHistograms': (req) => tokenHistograms(deps.runData(req.runId, 'inspect.tokenHistograms'), req),
    'probe.turn': async (req) => {
      const where = 'probe.turn';
      const project = deps.projectDir(where);
      deps.runInfo(req.runId, where);
      if ((req.seed === undefined) === (req.episodeId === undefined)) {
        throw new WorkbenchError('ValidationError', `${where}: give a puzzle seed or a saved episode (episodeId), ` +
          `not ${req.seed === undefined ? 'neither' : 'both'}`, {
          where, expected: '{ seed } or { episodeId, turn }', received: req.seed === undefined ? 'neither' : 'both',
        });
      }
      const { timeoutSeconds, ...request } = req;
      return await probes.run(project, request, timeoutSeconds * 1000, where) as ApiResponse<'probe.turn'>;
    },
  };
  return { handlers, dispose: () => probes.killAll() };
}
