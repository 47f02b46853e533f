// One process owns a project at a time: a lock file `<project>/.workbench.lock` holding
// { pid, host, startedAt, token }. Created atomically (write a temp file, then hard-link it to
// the lock name, which fails if the lock exists), so a lock file is always complete. A lock whose
// pid is dead on this host is stale and is taken over (and reported).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { WorkbenchError } from '../api/errors.js';

export const LOCK_FILE = '.workbench.lock';

export interface LockInfo { pid: number; host: string; startedAt: number; token: string; purpose: string }

export interface ProjectLock {
  readonly file: string;
  readonly info: LockInfo;
  /** The stale lock that was taken over, if any. */
  readonly tookOver: LockInfo | null;
  release(): void;
}

/** Is a process with this pid alive on this machine? */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

function readLock(file: string): LockInfo | null {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as LockInfo;
    if (typeof v.pid !== 'number' || typeof v.host !== 'string') return null;
    return v;
  } catch {
    return null;
  }
}

const held = new Map<string, LockInfo>();   // locks held by this process, by file
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const [file, info] of held) {
      const cur = readLock(file);
      if (cur && cur.token === info.token) try { fs.unlinkSync(file); } catch { /* gone */ }
    }
  });
}

function makeLock(file: string, info: LockInfo, tookOver: LockInfo | null): ProjectLock {
  held.set(file, info);
  installExitHook();
  return {
    file, info, tookOver,
    release() {
      const cur = readLock(file);
      if (cur && cur.token === info.token) try { fs.unlinkSync(file); } catch { /* gone */ }
      held.delete(file);
    },
  };
}

/** Take the lock of a project folder or throw Conflict saying who holds it. */
export function acquireProjectLock(projectDir: string, purpose = 'workbench host'): ProjectLock {
  const file = path.join(projectDir, LOCK_FILE);
  const info: LockInfo = { pid: process.pid, host: os.hostname(), startedAt: Date.now(), token: randomBytes(8).toString('hex'), purpose };
  let tookOver: LockInfo | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    const tmp = `${file}.${process.pid}-${info.token}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(info));
    try {
      fs.linkSync(tmp, file);
      fs.unlinkSync(tmp);
      return makeLock(file, info, tookOver);
    } catch (err) {
      try { fs.unlinkSync(tmp); } catch { /* ignore */ }
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') {
        // File systems without hard links (FAT, some network shares): exclusive create instead.
        try {
          fs.writeFileSync(file, JSON.stringify(info), { flag: 'wx' });
          return makeLock(file, info, tookOver);
        } catch (e2) {
          if ((e2 as NodeJS.ErrnoException).code !== 'EEXIST') throw e2;
        }
      } else if (code !== 'EEXIST') throw err;
    }
    const current = readLock(file);
    const sameHost = current?.host === os.hostname();
    if (current && sameHost && current.pid !== process.pid && !pidAlive(current.pid)) {
      // Stale: its process is gone. Remove it only if it is still the same lock, then retry.
      const again = readLock(file);
      if (again && again.token === current.token) { fs.unlinkSync(file); tookOver = current; continue; }
      continue;
    }
    if (!current) {
      // Unreadable lock file (hand-edited?): do not guess; tell the user what to do.
      throw new WorkbenchError('Conflict', `project ${projectDir} has an unreadable lock file ${file}; if no other SPA Workbench is using this project, delete that file and try again`, {
        where: file, expected: 'no lock, or a lock file {pid, host}', received: 'unreadable lock file',
      });
    }
    const who = current.pid === process.pid && sameHost ? 'this process already' : `process ${current.pid} on ${current.host}`;
    throw new WorkbenchError('Conflict', `project ${projectDir} is in use: ${who} holds its lock (${current.purpose ?? 'workbench'}, since ${new Date(current.startedAt).toISOString()}). Close it there first${sameHost ? '' : `, or if that machine no longer uses it, delete ${file}`}.`, {
      where: file, expected: 'an unlocked project', received: `locked by pid ${current.pid} on ${current.host}`,
      holder: { pid: current.pid, host: current.host, startedAt: current.startedAt },
    });
  }
  throw new WorkbenchError('Conflict', `could not take the lock of ${projectDir} (it changed while trying)`, { where: file });
}

/** The live holder of a project's lock: a running process on this machine, or any process on another one (null: no lock, or a stale one). */
export function liveLockHolder(projectDir: string): LockInfo | null {
  const current = readLock(path.join(projectDir, LOCK_FILE));
  if (!current) return null;
  return current.host !== os.hostname() || pidAlive(current.pid) ? current : null;
}
