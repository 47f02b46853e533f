// The engine runs in a session of its own (node-launcher.ts forks it detached, so that a Ctrl-C in the terminal reaches the
// host only). On Linux with sched_autogroup on (the default of Debian's and Ubuntu's kernels), a new session is a new
// scheduling group, and `nice` then acts only between the processes of one group: an engine started under
// `nice -n 15 spa-workbench run ...` got a full share of the CPU against every other session all the same (measured here:
// two study streams under nice 15 took as much CPU as two at nice 0). So at its start the engine gives its group the nice
// value it inherited, which makes `nice` on the host's command line mean what a user expects. Nothing else is changed:
// a process at nice 0, another OS, or a kernel without autogroups is left as it is.
import { readFileSync, writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';

const AUTOGROUP = '/proc/self/autogroup';

/** What was done: 'set' (the group's nice is now `nice`), or why not ('nice 0', 'no autogroup', 'already', 'refused'). */
export interface AutogroupResult { outcome: 'set' | 'nice 0' | 'no autogroup' | 'already' | 'refused'; nice: number; detail?: string }

/**
 * Give this process's autogroup (Linux sched_autogroup, /proc/self/autogroup, "/autogroup-N nice K") the process's own nice
 * value when that is above 0 and the group's is lower. Raising a group's nice needs no privilege. Never throws.
 * `path` is for tests (a file in the same format).
 */
export function applyNiceToAutogroup(path = AUTOGROUP, nice = safePriority()): AutogroupResult {
  if (nice <= 0) return { outcome: 'nice 0', nice };
  let text: string;
  try { text = readFileSync(path, 'utf8'); } catch { return { outcome: 'no autogroup', nice }; }
  const m = /nice\s+(-?\d+)/.exec(text);
  if (!m) return { outcome: 'no autogroup', nice, detail: text.trim() };
  if (Number(m[1]) >= nice) return { outcome: 'already', nice };
  try {
    writeFileSync(path, String(nice));
    return { outcome: 'set', nice };
  } catch (err) {
    return { outcome: 'refused', nice, detail: err instanceof Error ? err.message : String(err) };
  }
}

function safePriority(): number {
  try { return getPriority(); } catch { return 0; }
}
