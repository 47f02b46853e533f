// Stopping a test's child process before its folders are removed (issue 37 item 7: a teardown that
// removed a project while the child was still writing into it failed CI with ENOTEMPTY). A signal
// only asks; this waits for the 'exit' event, so nothing of the child writes after it returns.
import type { ChildProcess } from 'node:child_process';

/** Whether the child has already exited (by a code or a signal). */
export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Send `signal` (default SIGTERM) and resolve once the child has exited. A child that is still alive after
 * `killAfterMs` (default 30 s: a fallback for a hung child, not a bound on how fast it must stop) gets SIGKILL,
 * and the wait goes on until it is gone. Resolves at once for a child that never started or already exited.
 */
export async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM', killAfterMs = 30_000): Promise<void> {
  if (!child || child.pid === undefined || hasExited(child)) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => { if (!hasExited(child)) child.kill('SIGKILL'); }, killAfterMs);
  try { await exited; } finally { clearTimeout(timer); }
}
