// Test helpers shared by tests/api, tests/engine, tests/server, tests/storage: temp folders, a
// per-test SPA_WORKBENCH_HOME, and waiting for conditions.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export function tempDir(prefix = 'spa-wb-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Point the recent-projects list at a fresh folder (never the user's real config). */
export function isolateHome(): string {
  const home = tempDir('spa-wb-home-');
  process.env.SPA_WORKBENCH_HOME = home;
  return home;
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
