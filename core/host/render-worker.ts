// Worker-thread entry: env generation and template rendering for envs.render and
// templates.preview, off the host's event loop (issue 10, D3). Plain JSON in and out; errors
// cross as { name, message, details }.
import { parentPort } from 'node:worker_threads';
import { WorkbenchError } from '../api/errors.js';
import { previewTemplate, renderPuzzle } from './env-adapter.js';
import type { RenderJob } from './render-pool.js';

parentPort?.on('message', (job: RenderJob) => {
  try {
    const value = job.kind === 'render'
      ? renderPuzzle(job.template, job.env, job.seed, job.responseFormat)
      : previewTemplate(job.template, job.env, job.seed, job.responseFormat);
    parentPort!.postMessage({ id: job.id, ok: true, value });
  } catch (err) {
    const e = err as Error & { details?: Record<string, unknown> };
    const error = err instanceof WorkbenchError ? err.toJSON() : { name: 'InternalError', message: e?.message ?? String(err), details: {} };
    parentPort!.postMessage({ id: job.id, ok: false, error });
  }
});
// loaded: the pool starts a request's time budget only now (a cold start under tsx on a loaded machine takes seconds)
parentPort?.postMessage({ ready: true });
