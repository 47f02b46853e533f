// Worker-thread entry of runs.import (core/host/import-pool.ts): reads, validates and writes one
// imported run off the host's event loop (issue 24 item 8). Plain JSON in and out; errors cross as
// { name, message, details }.
import { parentPort } from 'node:worker_threads';
import { WorkbenchError } from '../api/errors.js';
import { importRagenRun, type ImportOptions } from '../interop/import-run.js';

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
