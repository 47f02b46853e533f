// What `spa-workbench start --run PRESET` (and so `npm start`) does with the project's runs:
// start the demo run only when the project has none, resume it when it is unfinished, and
// otherwise just open the newest run. Starting twice never makes two identical runs.
import type { RunSummary } from '../api/contract.js';
import { DEFAULT_ENV_ID } from '../api/run-config.js';

/**
 * The env of the demo run when `start --run` names none (the CLI's --env default and the desktop app's SPA_START_RUN fallback):
 * the run config's default env (DEFAULT_ENV_ID in core/api/run-config.ts, FrozenLake, which has a shipped base), so
 * `npm start`, `run spa --size quick` and a config without an env all play the same game.
 */
export const START_RUN_ENV = DEFAULT_ENV_ID;

export type StartupAction =
  | { kind: 'create' }                                        // no runs yet: create and start one
  | { kind: 'start'; runId: string }                          // created but never started
  | { kind: 'resume'; runId: string }                         // stopped or failed: continue it
  | { kind: 'open'; runId: string; why: string };             // finished (or not the demo): show it

/** `runs`: the project's runs in any order. */
type RunLike = Pick<RunSummary, 'id' | 'preset' | 'size' | 'status' | 'createdAt'>;

export function startupRunAction(runs: ReadonlyArray<RunLike>, preset: string, size: string): StartupAction {
  if (runs.length === 0) return { kind: 'create' };
  const newest = [...runs].sort((a, b) => b.createdAt - a.createdAt);
  const demo = newest.find((r) => r.preset === preset && r.size === size);
  if (!demo) return { kind: 'open', runId: newest[0]!.id, why: `the project already has runs, none of them ${preset} at size ${size}` };
  switch (demo.status) {
    case 'created': return { kind: 'start', runId: demo.id };
    case 'stopped': case 'failed': return { kind: 'resume', runId: demo.id };
    case 'completed': return { kind: 'open', runId: demo.id, why: `its ${preset} run finished` };
    default: return { kind: 'open', runId: demo.id, why: `its ${preset} run is ${demo.status}` };
  }
}

/** One line for the terminal saying what was done. */
export function describeStartup(action: StartupAction, preset: string, size: string, project: string): string {
  switch (action.kind) {
    case 'create': return `started a ${preset} run (${size}) on the new project`;
    case 'start': return `started run ${action.runId} (created earlier, never started)`;
    case 'resume': return `resumed the unfinished run ${action.runId}`;
    case 'open': {
      const another = `\`spa-workbench run ${preset} --size ${size} --project ${project}\``;
      return `no run started: ${action.why}; opening ${action.runId}. Start another with ${another} or from New run in the UI`;
    }
  }
}
