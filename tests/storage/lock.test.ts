// Project lock: stale-lock takeover is atomic between processes (D7) and a lock whose pid now
// belongs to another process is recognised as stale (D8).
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import fsDefault from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { acquireProjectLock, holderState, LOCK_FILE, lockTestHooks, processStartTime, type ProjectLock } from '../../core/storage/lock.js';
import { tempDir, waitFor } from '../api/helpers.js';

const children: ChildProcess[] = [];
afterEach(() => {
  lockTestHooks.beforeStaleRemoval = undefined;
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

function deadPid(): number {
  const c = spawn(process.execPath, ['-e', '0']);
  const pid = c.pid!;
  return pid;
}

async function liveChild(): Promise<number> {
  const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  children.push(c);
  await waitFor('child start', () => processStartTime(c.pid!) !== null || process.platform !== 'linux');
  return c.pid!;
}

describe('project lock', () => {
  it('two takeovers of the same stale lock never give two holders (D7)', async () => {
    const dir = tempDir();
    const pid = deadPid();
    await waitFor('the short process to exit', () => { try { process.kill(pid, 0); return false; } catch { return true; } });
    fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid, host: os.hostname(), startedAt: 1, token: 'stale', purpose: 'test' }));
    // Process B runs its whole takeover inside A's window between "confirmed stale" and "removed".
    const holders: ProjectLock[] = [];
    let inner: unknown = null;
    lockTestHooks.beforeStaleRemoval = () => {
      lockTestHooks.beforeStaleRemoval = undefined;
      try { holders.push(acquireProjectLock(dir, 'B')); } catch (err) { inner = err; }
    };
    let outer: unknown = null;
    try { holders.push(acquireProjectLock(dir, 'A')); } catch (err) { outer = err; }
    const onDisk = JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')) as { token: string };
    expect(holders.length).toBe(1);                              // one winner...
    expect(holders[0]!.info.token).toBe(onDisk.token);           // ...and it is the lock on disk
    expect(inner ?? outer).toBeInstanceOf(Error);
    expect(fs.existsSync(path.join(dir, LOCK_FILE + '.takeover'))).toBe(false);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    for (const h of holders) h.release();
  });

  it.runIf(process.platform === 'linux')('a lock whose pid now names another process is stale (D8)', async () => {
    const dir = tempDir();
    const pid = await liveChild();
    const start = processStartTime(pid)!;
    const lockFile = path.join(dir, LOCK_FILE);
    // the same pid, started at another time: a different process (pid reuse after a restart)
    fs.writeFileSync(lockFile, JSON.stringify({ pid, host: os.hostname(), startedAt: 1, token: 'old', purpose: 'test', procStart: start + 1000 }));
    expect(holderState({ pid, host: os.hostname(), procStart: start + 1000 })).toBe('pid-reused');
    const lock = acquireProjectLock(dir);
    expect(lock.tookOver?.pid).toBe(pid);
    lock.release();
    // the real holder (same pid, same start time) keeps its lock
    fs.writeFileSync(lockFile, JSON.stringify({ pid, host: os.hostname(), startedAt: 1, token: 'live', purpose: 'test', procStart: start }));
    expect(() => acquireProjectLock(dir)).toThrow(new RegExp(`process ${pid} on .* holds its lock`));
    // a lock from another boot is stale even if its pid is alive now
    fs.writeFileSync(lockFile, JSON.stringify({ pid, host: os.hostname(), startedAt: 1, token: 'boot', purpose: 'test', bootId: 'another-boot' }));
    const again = acquireProjectLock(dir);
    expect(again.tookOver?.token).toBe('boot');
    expect(again.info.procStart).toBe(processStartTime(process.pid));
    again.release();
  });

  it('a lock write that fails on a full disk leaves no temp file behind (D16)', () => {
    const dir = tempDir();
    const orig = fsDefault.writeFileSync;
    // a full disk: the file is created, then the write fails
    fsDefault.writeFileSync = ((file: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
      if (typeof file === 'string' && file.startsWith(dir)) {
        orig(file, '');
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      return (orig as (...a: unknown[]) => void)(file, ...rest);
    }) as typeof fsDefault.writeFileSync;
    syncBuiltinESMExports();
    try {
      expect(() => acquireProjectLock(dir)).toThrow(/ENOSPC/);
    } finally {
      fsDefault.writeFileSync = orig;
      syncBuiltinESMExports();
    }
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
