// Worker-thread entry of runs.import (core/host/import-pool.ts): reads, validates and writes one
// imported run off the host's event loop (issue 24 item 8). Plain JSON in and out; errors cross as
// { name, message, details }.
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { WorkbenchError } from '../api/errors.js';
import { importRagenRun, type ImportOptions } from '../interop/import-run.js';

// Lower this thread's CPU priority (Linux: setpriority on the thread id, from /proc/thread-self), so
// that on a busy machine the host's own thread, which answers the UI, runs before the import.
try {
  const tid = Number(/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1]);
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.min(19, getPriority(tid) + 10));
} catch { /* not Linux, or not allowed: the import runs at the host's priority */ }

parentPort?.on('message', (job: { id: number; options: ImportOptions }) => {
  importRagenRun(job.options).then(
    (value) => parentPort!.postMessage({ id: job.id, ok: true, value }),
    (err: unknown) => {
      const e = err as Error & { code?: string };
      const error = err instanceof WorkbenchError ? err.toJSON()
        : { name: 'InternalError', message: `${e?.message ?? String(err)}${e?.code ? ` (${e.code})` : ''}`, details: {} };
      parentPort!.postMessage({ id: job.id, ok: false, error });
    },
  );
});
