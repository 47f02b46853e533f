// Ctrl-C handling for the long-running commands (run, resume, start, serve): the first interrupt
// stops gracefully, a second one kills. One key press can arrive as two signals: `npm start` (npm's
// run-script) forwards the SIGINT it receives to its child, which has already had the terminal's
// own SIGINT. Signals closer together than `sameKeyMs` therefore count as one press.

export interface InterruptOptions {
  /** First press: stop gracefully. */
  stop: () => void;
  /** Second press: kill. */
  kill: () => void;
  /** Signals closer together than this are one key press (ms). */
  sameKeyMs?: number;
  /** Clock (tests). */
  now?: () => number;
}

/** A signal handler that calls `stop` on the first press and `kill` on the next distinct one. */
export function interruptHandler(o: InterruptOptions): () => void {
  const now = o.now ?? Date.now;
  const sameKeyMs = o.sameKeyMs ?? 1000;
  let first: number | null = null;
  let killed = false;
  return () => {
    const t = now();
    if (first === null) { first = t; o.stop(); return; }
    if (killed || t - first < sameKeyMs) return;
    killed = true;
    o.kill();
  };
}

/** Installs the handler for SIGINT and SIGTERM; returns the uninstaller. */
export function onInterrupt(o: InterruptOptions): () => void {
  const handler = interruptHandler(o);
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => { process.off('SIGINT', handler); process.off('SIGTERM', handler); };
}
