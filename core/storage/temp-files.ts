// Leftovers of interrupted writes inside a project, found and (where safe) cleaned:
//   .<name>.tmp-<pid>-<id>          a whole-file write (atomic.ts) or a checkpoint folder being written
//                                   (core/model/checkpoint.ts): incomplete, never verified
//   .<name>.old-<pid>-<id>          the previous checkpoint folder during a swap: if <name> is gone the
//                                   swap was cut between its two renames, and this IS the checkpoint
//   .workbench.lock.<pid>-<tok>.tmp a lock file being created (lock.ts)
//   .<name>.import-<pid>-<time>     a model folder being written by `model import` (core/model/gguf.ts):
//                                   incomplete (it is renamed to <name> only when complete); hundreds of MB
//   .<name>.import-<pid>-<time>.old the model folder --force replaces, during the swap (as `.old` above)
// A leftover is stale when the process in its name is no longer running (or the pid now names a
// process started after the leftover was written). Stale `.tmp` leftovers are removed (they hold
// only an unfinished copy; the finished file or folder, if any, is untouched); a stale `.old`
// folder is renamed back to <name> when <name> is missing, and otherwise kept (reported: it is a
// complete earlier checkpoint, and only the user deletes data).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pidAlive, processStartTime } from './lock.js';

export interface TempLeftover {
  path: string;                       // absolute
  relPath: string;                    // relative to the project
  kind: 'tmp' | 'old' | 'lock-tmp' | 'import' | 'import-old';
  pid: number;
  isDir: boolean;
  bytes: number;
  mtimeMs: number;
  stale: boolean;
  /** What a repair does (or did) with it. */
  action: 'remove' | 'restore' | 'keep';
  target: string | null;              // the file or folder it belongs to (absolute)
}

const LEFTOVER = /^\.(.+)\.(tmp|old)-(\d+)-[0-9a-z]+$/;
const LOCK_TMP = /^\.workbench\.lock\.(\d+)-[0-9a-f]+\.tmp$/;
const IMPORT_TMP = /^\.(.+)\.import-(\d+)-\d+(\.old)?$/;
const MAX_DEPTH = 5;                    // project/runs/<id>/stages/<stage>/<file>
const SKIP_DIRS = new Set(['rollouts', 'node_modules']);   // many files, no whole-file writes

let bootMs: number | null | undefined;
/** When did a process start (epoch ms), from /proc; null where unknown. */
function processStartedMs(pid: number): number | null {
  const ticks = processStartTime(pid);
  if (ticks === null) return null;
  if (bootMs === undefined) {
    try {
      const m = /^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'));
      bootMs = m ? Number(m[1]) * 1000 : null;
    } catch { bootMs = null; }
  }
  return bootMs === null ? null : bootMs + (ticks / 100) * 1000;   // USER_HZ is 100 on Linux
}

function writerGone(pid: number, mtimeMs: number): boolean {
  if (pid === process.pid) return false;
  if (!pidAlive(pid)) return true;
  const started = processStartedMs(pid);
  return started !== null && started > mtimeMs + 2000;   // the pid was reused after the leftover was written
}

function sizeOf(p: string, depth = 0): number {
  try {
    const st = fs.lstatSync(p);
    if (!st.isDirectory()) return st.size;
    if (depth > 3) return 0;
    return fs.readdirSync(p).reduce((sum, e) => sum + sizeOf(path.join(p, e), depth + 1), 0);
  } catch { return 0; }
}

/** Every leftover of an interrupted write in the project (bounded walk; rollouts/ skipped). */
export function findTempLeftovers(projectDir: string): TempLeftover[] {
  const root = path.resolve(projectDir);
  const out: TempLeftover[] = [];
  const walk = (dir: string, depth: number) => {
    let entries: fs.Dirent[];
    try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      const full = path.join(dir, e.name);
      const found = leftoverAt(root, dir, e.name);
      if (found) { out.push(found); continue; }
      if (e.isDirectory() && depth < MAX_DEPTH && !SKIP_DIRS.has(e.name) && !e.name.startsWith('.')) walk(full, depth + 1);
    }
  };
  walk(root, 0);
  return out.sort((a, b) => a.relPath.localeCompare(b.relPath));
}

/** The leftover named `name` in `dir` (relPath relative to `root`), or null when the name is not a leftover's. */
function leftoverAt(root: string, dir: string, name: string): TempLeftover | null {
  const full = path.join(dir, name);
  const m = LEFTOVER.exec(name);
  const l = m ? null : LOCK_TMP.exec(name);
  const i = m || l ? null : IMPORT_TMP.exec(name);
  if (!m && !l && !i) return null;
  let st: fs.Stats;
  try { st = fs.lstatSync(full); } catch { return null; }
  const pid = Number(m ? m[3] : l ? l[1] : i![2]);
  const kind: TempLeftover['kind'] = l ? 'lock-tmp' : m ? (m[2] as 'tmp' | 'old') : i![3] ? 'import-old' : 'import';
  const target = m ? path.join(dir, m[1]!) : i ? path.join(dir, i[1]!) : null;
  const stale = writerGone(pid, st.mtimeMs);
  let action: TempLeftover['action'] = 'keep';
  const isOld = kind === 'old' || kind === 'import-old';
  if (stale && !isOld) action = 'remove';
  if (stale && isOld && target && !fs.existsSync(target)) action = 'restore';
  // the model folder --force replaced, left by an import killed after its swap: the new folder is in place
  if (stale && kind === 'import-old' && target && fs.existsSync(target)) action = 'remove';
  return { path: full, relPath: path.relative(root, full), kind, pid, isDir: st.isDirectory(), bytes: sizeOf(full), mtimeMs: st.mtimeMs, stale,
    action, target };
}

/**
 * Cleans what interrupted `model import` runs left in `dir` (one folder, not walked): stale
 * `.<name>.import-<pid>-<time>` folders are removed, a cut --force swap is restored. `model import`
 * runs it on the folder it writes into; `doctor` finds the same leftovers inside a project.
 */
export function cleanImportLeftovers(dir: string): CleanReport & { messages: string[] } {
  let names: string[];
  try { names = fs.readdirSync(dir); } catch { return { removed: [], restored: [], kept: [], errors: [], messages: [] }; }
  const found = names.filter((n) => IMPORT_TMP.test(n)).map((n) => leftoverAt(dir, dir, n)).filter((t): t is TempLeftover => t !== null);
  // restore a cut swap before removing the unfinished copy beside it
  found.sort((a, b) => Number(b.kind === 'import-old') - Number(a.kind === 'import-old'));
  const report = cleanTempLeftovers(dir, found);
  const messages = [...report.restored, ...report.removed].map((t) =>
    `${t.action === 'restore' ? 'restored' : 'removed'} ${t.path}, left by an interrupted import (process ${t.pid} is gone)`);
  return { ...report, messages: [...messages, ...report.errors] };
}

export interface CleanReport { removed: TempLeftover[]; restored: TempLeftover[]; kept: TempLeftover[]; errors: string[] }

/** Remove stale `.tmp` leftovers and restore cut swaps (see the header); never touches finished files. */
export function cleanTempLeftovers(projectDir: string, leftovers = findTempLeftovers(projectDir)): CleanReport {
  const report: CleanReport = { removed: [], restored: [], kept: [], errors: [] };
  for (const t of leftovers) {
    try {
      if (t.action === 'remove') { fs.rmSync(t.path, { recursive: true, force: true }); report.removed.push(t); }
      else if (t.action === 'restore' && t.target && !fs.existsSync(t.target)) { fs.renameSync(t.path, t.target); report.restored.push(t); }
      else report.kept.push(t);
    } catch (err) {
      report.errors.push(`${t.relPath}: ${(err as Error).message}`);
    }
  }
  return report;
}
