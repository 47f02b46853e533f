// envs.render and templates.preview run user-controlled work (env generation with user options,
// Liquid rendering of user templates): a worker thread does it, so one slow request cannot
// freeze the host's event loop, and a request that takes longer than its budget is stopped (the
// worker is terminated and restarted on the next call) with a Timeout error. Requests are
// served one at a time, in order. Where no worker can start (a bundle without the worker file),
// the work runs inline, still bounded by the env option limits and the Liquid limits.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RenderedPuzzle, TemplatePreview } from '../api/contract.js';
import { WorkbenchError } from '../api/errors.js';
import type { PromptTemplate } from '../prompts/index.js';
import { previewTemplate, renderPuzzle } from './env-adapter.js';

export interface RenderJob {
  id: number;
  kind: 'render' | 'preview';
  template: PromptTemplate;
  env: { id: string; options: Record<string, unknown> };
  seed: number;
  responseFormat: 'plain' | 'world-model';
}
type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: { name: string; message: string; details?: Record<string, unknown> } };

/** Default budget of one request; generation inside the option bounds takes well under a second. */
export const RENDER_TIMEOUT_MS = 15_000;
/**
 * Bound on a worker's start (loading the env code, under tsx from the sources), which a request's budget does not count: it
 * took over 3 s twice in a row at load ~9 on this 2-core machine (fresh-clone CI, 2026-11-30), failing requests that
 * took milliseconds.
 */
export const RENDER_WORKER_START_MS = 120_000;

/** The worker entry: the bundled file next to the Electron build, else the TypeScript source through tsx. */
function workerEntry(): URL | null {
  const bundled = new URL('../../dist-electron/render-worker.js', import.meta.url);
  const source = new URL('./render-worker-boot.mjs', import.meta.url);
  const sourceTs = new URL('./render-worker.ts', import.meta.url);
  if (existsSync(fileURLToPath(sourceTs)) && existsSync(fileURLToPath(source))) return source;
  if (existsSync(fileURLToPath(bundled))) return bundled;
  return null;
}

export class RenderPool {
  private worker: Worker | null = null;
  /** Settles when the current worker has loaded its code (its `{ ready: true }` message), or failed to. */
  private ready: Promise<void> | null = null;
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();
  private inlineReason: string | null = null;
  private disposed = false;

  /** `entry`: the worker's module (tests: a worker that starts slowly); default the bundled file or the sources (workerEntry). */
  constructor(private readonly timeoutMs = RENDER_TIMEOUT_MS, private readonly log: (line: string) => void = () => undefined,
    private readonly entry: URL | null = workerEntry()) {}

  render(job: Omit<RenderJob, 'id' | 'kind'>, where = 'envs.render'): Promise<RenderedPuzzle> {
    return this.enqueue({ ...job, kind: 'render' }, where) as Promise<RenderedPuzzle>;
  }

  preview(job: Omit<RenderJob, 'id' | 'kind'>, where = 'templates.preview'): Promise<TemplatePreview> {
    return this.enqueue({ ...job, kind: 'preview' }, where) as Promise<TemplatePreview>;
  }

  /** Where the work runs now (for tests and system info). */
  get mode(): 'worker' | 'inline' { return this.inlineReason === null ? 'worker' : 'inline'; }

  dispose(): void {
    this.disposed = true;
    void this.worker?.terminate();
    this.worker = null;
  }

  private enqueue(job: Omit<RenderJob, 'id'>, where: string): Promise<unknown> {
    const run = this.queue.then(() => this.runOne({ ...job, id: this.nextId++ }, where));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private start(): Worker | null {
    if (this.worker) return this.worker;
    if (this.inlineReason !== null) return null;
    const entry = this.entry;
    if (!entry) {
      this.inlineReason = 'no worker entry file';
      this.log('render worker: no entry file found; rendering inline (bounded by option and template limits)');
      return null;
    }
    try {
      const w = new Worker(entry);
      w.unref();
      this.worker = w;
      this.ready = new Promise<void>((resolve, reject) => {
        const onReady = (m: unknown) => { if ((m as { ready?: unknown } | null)?.ready === true) { off(); resolve(); } };
        const onError = (err: Error) => { off(); reject(err); };
        const onExit = (code: number) => { off(); reject(new Error(`it exited with code ${code} while starting`)); };
        const off = () => { w.off('message', onReady); w.off('error', onError); w.off('exit', onExit); };
        w.on('message', onReady);
        w.on('error', onError);
        w.on('exit', onExit);
      });
      this.ready.catch(() => undefined);   // awaited by runOne; a worker nobody waits for must not raise an unhandled rejection
      return w;
    } catch (err) {
      this.inlineReason = (err as Error).message;
      this.log(`render worker could not start (${this.inlineReason}); rendering inline`);
      return null;
    }
  }

  private runInline(job: RenderJob): unknown {
    return job.kind === 'render'
      ? renderPuzzle(job.template, job.env, job.seed, job.responseFormat)
      : previewTemplate(job.template, job.env, job.seed, job.responseFormat);
  }

  private runOne(job: RenderJob, where: string): Promise<unknown> {
    if (this.disposed) return Promise.reject(new WorkbenchError('Unavailable', `${where}: the host is shutting down`, { where }));
    const worker = this.start();
    if (!worker) return Promise.resolve().then(() => this.runInline(job));
    return this.started(worker, where).then(() => this.post(worker, job, where));
  }

  /** Resolves when `worker` has loaded (its start is not part of a request's budget); rejects after RENDER_WORKER_START_MS. */
  private started(worker: Worker, where: string): Promise<void> {
    const ready = this.ready ?? Promise.resolve();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new WorkbenchError('Timeout', `${where}: the render worker did not start within ${RENDER_WORKER_START_MS / 1000} s`,
        { where, expected: 'a started render worker' })), RENDER_WORKER_START_MS);
    });
    return Promise.race([ready, bound]).then(() => clearTimeout(timer), (err: unknown) => {
      clearTimeout(timer);
      if (this.worker === worker) { this.worker = null; void worker.terminate(); }
      throw err instanceof WorkbenchError ? err
        : new WorkbenchError('InternalError', `${where}: the render worker could not start: ${(err as Error).message}`, { where });
    });
  }

  private post(worker: Worker, job: RenderJob, where: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let done = false;
      const finish = () => { done = true; clearTimeout(timer); worker.off('message', onMessage); worker.off('error', onError); worker.off('exit', onExit); };
      const onMessage = (m: Reply) => {
        if (m.id !== job.id) return;
        finish();
        if (m.ok) resolve(m.value);
        else reject(new WorkbenchError(m.error.name, m.error.message, m.error.details ?? {}));
      };
      const onError = (err: Error) => {
        if (done) return;
        finish();
        this.worker = null;
        reject(new WorkbenchError('InternalError', `${where}: the render worker failed: ${err.message}`, { where }));
      };
      const onExit = (code: number) => {
        if (done) return;
        finish();
        this.worker = null;
        reject(new WorkbenchError('InternalError', `${where}: the render worker exited (code ${code})`, { where }));
      };
      const timer = setTimeout(() => {
        if (done) return;
        finish();
        this.worker = null;
        void worker.terminate();   // stops the computation; the next request starts a fresh worker
        const s = Math.round(this.timeoutMs / 1000);
        reject(new WorkbenchError('Timeout', `${where}: env generation and rendering took longer than ${s} s and were stopped; use smaller options `
          + '(fewer generation attempts, a reachable difficulty bucket, a smaller map) or a simpler template', {
          where, expected: `a result within ${s} s`, received: `env ${job.env.id} with options ${JSON.stringify(job.env.options).slice(0, 200)}`,
        }));
      }, this.timeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage(job);
    });
  }
}
