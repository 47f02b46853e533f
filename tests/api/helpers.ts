// Test helpers shared by tests/api, tests/engine, tests/server, tests/storage: temp folders, a
// per-test SPA_WORKBENCH_HOME, and waiting for conditions.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import type { WorkbenchClient } from '../../core/api/contract.js';

export function tempDir(prefix = 'spa-wb-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Point the recent-projects list at a fresh folder (never the user's real config). */
export function isolateHome(): string {
  const home = tempDir('spa-wb-home-');
  process.env.SPA_WORKBENCH_HOME = home;
  return home;
}

/** An in-process host (a fresh home) with an empty project open: for tests of the run host. Dispose with `d.dispose({ kill: true })`. */
export async function inProcessProject(runHost: Parameters<typeof createDispatcher>[0]['runHost']):
  Promise<{ d: Dispatcher; api: WorkbenchClient; projectDir: string }> {
  isolateHome();
  const d = createDispatcher({ host: 'in-process', runHost });
  const api = createInProcessClient(d);
  const projectDir = path.join(tempDir(), 'project');
  await api.projects.create({ path: projectDir });
  return { d, api, projectDir };
}

/**
 * Polls `fn` until it returns a truthy value. `timeoutMs` is a hang guard, never a speed bound (issue 37 item 7): it is
 * raised to at least WAIT_GUARD_MS, because what the tests wait for (an engine child process starting under tsx, a run's
 * first progress) took over 20 s on a 2-core CI machine at load 10-15.
 */
export const WAIT_GUARD_MS = 120_000;
export async function waitFor<T>(what: string, fn: () => T | undefined | null | false | Promise<T | undefined | null | false>, timeoutMs = WAIT_GUARD_MS, everyMs = 25): Promise<T> {
  timeoutMs = Math.max(timeoutMs, WAIT_GUARD_MS);
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A diagnostic run config: the given stages with their options. */
export function diagConfig(stages: Record<string, Record<string, unknown>>, name = 'diag'): Record<string, unknown> {
  return { name, method: 'sft-only', size: 'smoke', stages: { plan: { order: Object.keys(stages) }, ...stages } };
}
