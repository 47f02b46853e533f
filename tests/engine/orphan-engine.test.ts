// A host killed with -9 can leave its engine running and appending to the run folder. Before a
// later host marks such a run interrupted it stops that engine — but only a process that is
// provably this run's engine (pid file + SPA_WORKBENCH_RUN_ID in its environment), never a
// process that merely reuses the pid.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ENGINE_PID_FILE, stopOrphanEngine } from '../../core/engine/run-host.js';
import { tempDir } from '../api/helpers.js';

const children: ChildProcess[] = [];
afterEach(() => { for (const c of children.splice(0)) c.kill('SIGKILL'); });

function sleeper(env: Record<string, string>): Promise<ChildProcess> {
  // wait for the child's own "ready": right after fork (the 'spawn' event) /proc/<pid>/environ can
  // still be the parent's, before exec
  const child = spawn(process.execPath, ['-e', 'process.stdout.write("ready"); setInterval(() => {}, 1000)'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(child);
  return new Promise((resolve) => child.stdout!.once('data', () => resolve(child)));
}
const exited = (c: ChildProcess): Promise<string | null> => new Promise((resolve) => { if (c.exitCode !== null || c.signalCode !== null) resolve(c.signalCode); else c.once('exit', (_code, signal) => resolve(signal)); });

describe.runIf(process.platform === 'linux')('stopOrphanEngine', () => {
  it('stops the run\'s own orphaned engine', async () => {
    const dir = tempDir();
    const engine = await sleeper({ SPA_WORKBENCH_RUN_ID: 'run-1', SPA_WORKBENCH_ENGINE: '1' });
    fs.writeFileSync(path.join(dir, ENGINE_PID_FILE), JSON.stringify({ pid: engine.pid, runId: 'run-1', startedAt: 0 }));
    expect(stopOrphanEngine(dir, 'run-1')).toBe(engine.pid);
    expect(await exited(engine)).toBe('SIGKILL');
  });

  it('leaves alone a process that is not that run\'s engine, and tolerates a missing or stale file', async () => {
    const dir = tempDir();
    expect(stopOrphanEngine(dir, 'run-1')).toBeNull();                    // no pid file
    const other = await sleeper({ SPA_WORKBENCH_RUN_ID: 'run-2' });       // another run's engine
    fs.writeFileSync(path.join(dir, ENGINE_PID_FILE), JSON.stringify({ pid: other.pid, runId: 'run-1', startedAt: 0 }));
    expect(stopOrphanEngine(dir, 'run-1')).toBeNull();
    const plain = await sleeper({});                                       // a reused pid: no run id at all
    fs.writeFileSync(path.join(dir, ENGINE_PID_FILE), JSON.stringify({ pid: plain.pid, runId: 'run-1', startedAt: 0 }));
    expect(stopOrphanEngine(dir, 'run-1')).toBeNull();
    expect(other.exitCode === null && other.signalCode === null && plain.exitCode === null && plain.signalCode === null).toBe(true);
    fs.writeFileSync(path.join(dir, ENGINE_PID_FILE), '{ torn');
    expect(stopOrphanEngine(dir, 'run-1')).toBeNull();
  });
});
