// One process owns a project at a time: a lock file `<project>/.workbench.lock` holding
// { pid, host, startedAt, token, procStart, bootId }. Created atomically (write a temp file, then
// hard-link it to the lock name, which fails if the lock exists), so a lock file is always
// complete. A lock whose holder is gone on this host (pid dead, or the pid now names a process
// with another start time, or the lock is from another boot) is stale and is taken over (and
// reported); the takeover itself is guarded by an O_EXCL `<lock>.takeover` file so that two
// processes finding the same stale lock can never both end up holding the project.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { WorkbenchError } from '../api/errors.js';

export const LOCK_FILE = '.workbench.lock';

export interface LockInfo {
  pid: number; host: string; startedAt: number; token: string; purpose: string;
  /** Start time of the holder process (clock ticks since boot, /proc/<pid>/stat field 22), where known. */
  procStart?: number | null;
  /** The kernel boot id (/proc/sys/kernel/random/boot_id), where known: a pid from another boot is never the holder. */
  bootId?: string | null;
}

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

/** Start time of a process (clock ticks since boot) from /proc/<pid>/stat; null where there is no /proc or no such process. */
export function processStartTime(pid: number): number | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  let text: string;
  try { text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { return null; }
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const start = Number(fields[19]);           // field 22 overall; fields[0] is field 3 (state)
  return Number.isFinite(start) ? start : null;
}

let bootIdCache: string | null | undefined;
export function bootId(): string | null {
  if (bootIdCache === undefined) {
    try { bootIdCache = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null; } catch { bootIdCache = null; }
  }
  return bootIdCache;
}

export type HolderState = 'alive' | 'dead' | 'pid-reused' | 'other-boot' | 'other-host';

/**
 * Is the process that wrote this lock still running? A pid that is alive but belongs to a process
 * started at another time (pid reuse, common after a container restart), or a lock from another
 * boot, is not the holder.
 */
export function holderState(info: Pick<LockInfo, 'pid' | 'host' | 'procStart' | 'bootId'>): HolderState {
  if (info.host !== os.hostname()) return 'other-host';
  const boot = bootId();
  if (info.bootId && boot && info.bootId !== boot) return 'other-boot';
  if (!pidAlive(info.pid)) return 'dead';
  if (typeof info.procStart === 'number') {
    const now = processStartTime(info.pid);
    if (now !== null && now !== info.procStart) return 'pid-reused';
  }
  return 'alive';
}

/**
 * Whether the command line of `pid` (/proc/<pid>/cmdline) is the workbench CLI: an argument whose file name is
 * `spa-workbench` or `spa-workbench.mjs` (bin/, an npm link, npx), or the CLI's own entry (core/cli/main.ts, dist-cli/main*.js).
 * False where the command line cannot be read.
 */
export function isWorkbenchCommandLine(pid: number): boolean {
  let args: string[];
  try { args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'); } catch { return false; }
  return args.some((a) => /(^|\/)spa-workbench(\.mjs)?$/.test(a) || /(^|\/)core\/cli\/main\.ts$/.test(a) || /(^|\/)dist-cli\/main[^/]*\.js$/.test(a));
}

/**
 * Why this process must not send a signal to the holder a lock file names (null: it may). Anyone who can write the
 * project folder can write a lock naming any live pid, so on Linux a signal goes only to a process that is provably the
 * lock's writer and a workbench CLI: the lock carries the process start time and boot id the workbench writes, they
 * match the live process, and its command line is the workbench CLI's. Where there is no /proc (macOS, Windows) the
 * pid and host name are all there is to go on.
 */
export function holderSignalProblem(info: Pick<LockInfo, 'pid' | 'host' | 'procStart' | 'bootId'>): string | null {
  if (info.host !== os.hostname()) return `it runs on another machine (${info.host})`;
  if (!pidAlive(info.pid)) return `process ${info.pid} is not running`;
  if (!fs.existsSync('/proc/self/stat')) return null;
  if (typeof info.procStart !== 'number' || !info.bootId) {
    return 'its lock file lacks the process start time and boot id a workbench writes, so the process it names cannot be verified';
  }
  const boot = bootId();
  if (boot && info.bootId !== boot) return 'its lock file is from an earlier boot';
  if (processStartTime(info.pid) !== info.procStart) return `process ${info.pid} is not the one that wrote the lock (the pid was reused)`;
  if (!isWorkbenchCommandLine(info.pid)) return `process ${info.pid} is not a spa-workbench CLI process (its command line says otherwise)`;
  return null;
}

function readLock(file: string): LockInfo | null {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as LockInfo;
    if (!v || typeof v !== 'object' || typeof v.pid !== 'number' || typeof v.host !== 'string') return null;
    return v;
  } catch {
    return null;
  }
}

/** The lock file of a project as it is now, with its holder's state (for `doctor`); null when unlocked. */
export function inspectProjectLock(projectDir: string): { file: string; info: LockInfo | null; state: HolderState | 'unreadable' } | null {
  const file = path.join(projectDir, LOCK_FILE);
  if (!fs.existsSync(file)) return null;
  const info = readLock(file);
  return { file, info, state: info ? holderState(info) : 'unreadable' };
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

const TAKEOVER_SUFFIX = '.takeover';

/** Write `text` to `file`, removing a partial file if the write fails (a full disk). */
function writeOrClean(file: string, text: string, flag = 'w'): void {
  try { fs.writeFileSync(file, text, { flag }); } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') try { fs.unlinkSync(file); } catch { /* not created */ }
    throw err;
  }
}

/**
 * Remove a stale lock, atomically with respect to other processes doing the same: only the holder
 * of `<lock>.takeover` (created with O_EXCL) may delete the lock, and only after re-reading it
 * under that guard and finding the same stale token. Returns true when the stale lock was removed.
 */
/** Test seam: runs after a stale lock was confirmed under the guard, before it is removed. */
export const lockTestHooks: { beforeStaleRemoval?: () => void } = {};

function removeStaleLock(file: string, stale: LockInfo): boolean {
  const guard = file + TAKEOVER_SUFFIX;
  const mine = JSON.stringify({ pid: process.pid, host: os.hostname(), procStart: processStartTime(process.pid), bootId: bootId(), startedAt: Date.now() });
  try {
    writeOrClean(guard, mine, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // Someone else is taking over. A guard left by a process that died mid-takeover is removed.
    const other = readLock(guard);
    if (other && holderState(other) !== 'alive') try { fs.unlinkSync(guard); } catch { /* raced: fine */ }
    else if (!other) {
      try { if (Date.now() - fs.statSync(guard).mtimeMs > 10_000) fs.unlinkSync(guard); } catch { /* gone */ }
    }
    return false;
  }
  try {
    const again = readLock(file);
    if (!again || again.token !== stale.token) return false;   // changed meanwhile: not ours to remove
    lockTestHooks.beforeStaleRemoval?.();
    fs.unlinkSync(file);
    return true;
  } finally {
    try { fs.unlinkSync(guard); } catch { /* gone */ }
  }
}

/** Take the lock of a project folder or throw Conflict saying who holds it. */
export function acquireProjectLock(projectDir: string, purpose = 'workbench host'): ProjectLock {
  const file = path.join(projectDir, LOCK_FILE);
  const info: LockInfo = {
    pid: process.pid, host: os.hostname(), startedAt: Date.now(), token: randomBytes(8).toString('hex'), purpose,
    procStart: processStartTime(process.pid), bootId: bootId(),
  };
  let tookOver: LockInfo | null = null;
  for (let attempt = 0; attempt < 20; attempt++) {
    const tmp = `${file}.${process.pid}-${info.token}.tmp`;
    writeOrClean(tmp, JSON.stringify(info));
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
          writeOrClean(file, JSON.stringify(info), 'wx');
          return makeLock(file, info, tookOver);
        } catch (e2) {
          if ((e2 as NodeJS.ErrnoException).code !== 'EEXIST') throw e2;
        }
      } else if (code !== 'EEXIST') throw err;
    }
    const current = readLock(file);
    const sameHost = current?.host === os.hostname();
    const state = current ? holderState(current) : null;
    const mineAlready = current?.pid === process.pid && sameHost && held.has(file);
    if (current && !mineAlready && (state === 'dead' || state === 'pid-reused' || state === 'other-boot')) {
      // Stale: its process is gone (or the pid now names another process). Take it over atomically.
      if (removeStaleLock(file, current)) tookOver = current;
      else sleepMs(5 + attempt * 5);   // another process is taking over: let it finish, then look again
      continue;
    }
    if (!current) {
      if (!fs.existsSync(file)) continue;   // released meanwhile
      // Unreadable lock file (hand-edited?): do not guess; tell the user what to do.
      throw new WorkbenchError('Conflict', `project ${projectDir} has an unreadable lock file ${file}; if no other SPA Workbench is using this ` +
        `project, delete that file and try again`, {
        where: file, expected: 'no lock, or a lock file {pid, host}', received: 'unreadable lock file',
      });
    }
    const who = current.pid === process.pid && sameHost ? 'this process already' : `process ${current.pid} on ${current.host}`;
    throw new WorkbenchError('Conflict', `project ${projectDir} is in use: ${who} holds its lock (${current.purpose ?? 'workbench'}, ` +
      `since ${new Date(current.startedAt).toISOString()}). Close it there first${sameHost ? '' : `, or if that machine no longer uses it, delete ${file}`}.`, {
      where: file, expected: 'an unlocked project', received: `locked by pid ${current.pid} on ${current.host}`,
      holder: { pid: current.pid, host: current.host, startedAt: current.startedAt },
    });
  }
  throw new WorkbenchError('Conflict', `could not take the lock of ${projectDir} (it changed while trying)`, { where: file });
}

/** Block this thread for a few milliseconds (lock contention only; never on a hot path). */
function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The live holder of a project's lock: a running process on this machine, or any process on another one (null: no lock, or a stale one). */
export function liveLockHolder(projectDir: string): LockInfo | null {
  const current = readLock(path.join(projectDir, LOCK_FILE));
  if (!current) return null;
  const state = holderState(current);
  return state === 'alive' || state === 'other-host' ? current : null;
}
