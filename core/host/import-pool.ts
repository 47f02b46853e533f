// runs.import off the host's thread: imports run in a worker thread (core/host/import-worker.ts,
// kept warm for IMPORT_WORKER_IDLE_MS after an import) with a bounded heap (IMPORT_LIMITS.heapMb)
// and a wall-time budget (IMPORT_LIMITS.timeoutMs), one at a time, so a large or hostile source (10^6 rows, a 16k-duplicate recorder file, a huge line) never
// stops the host from answering other requests. Over the budget, or when the worker runs out of
// memory or dies, the worker is terminated, its temporary folder in the project is removed, and the
// caller gets a named error. The reads themselves never block (core/interop/import-read.ts refuses
// FIFOs, sockets and devices from lstat), so a terminated worker always ends. Where no worker can
// start (a bundle without the worker file), or when SPA_WORKBENCH_IMPORT_INLINE=1 (a diagnostic
// switch: the fuzz suite's control case shows the ping probe catches a blocked host), the import
// runs inline, still bounded by IMPORT_LIMITS.
import { existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { WorkbenchError } from '../api/errors.js';
import { IMPORT_LIMITS, type ImportLimits } from '../interop/import-read.js';
import { importRagenRun, type ImportOptions, type ImportResult } from '../interop/import-run.js';

type Reply =
  | { id: number; ok: true; value: ImportResult }
  | { id: number; ok: false; error: { name: string; message: string; details?: Record<string, unknown> } };

/** The worker entry: the TypeScript source through tsx, else the bundled file next to the Electron build. */
function workerEntry(): URL | null {
  const bundled = new URL('../../dist-electron/import-worker.js', import.meta.url);
  const source = new URL('./import-worker-boot.mjs', import.meta.url);
  const sourceTs = new URL('./import-worker.ts', import.meta.url);
  if (existsSync(fileURLToPath(sourceTs)) && existsSync(fileURLToPath(source))) return source;
  if (existsSync(fileURLToPath(bundled))) return bundled;
  return null;
}

/** A worker left idle this long is closed (its heap, which a large import grew, goes with it). */
export const IMPORT_WORKER_IDLE_MS = 30_000;

export class ImportPool {
  private queue: Promise<unknown> = Promise.resolve();
  private worker: Worker | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private nextId = 1;
  private disposed = false;
  private readonly limits: ImportLimits;
  private readonly inline: boolean;
  private readonly log: (line: string) => void;

  constructor(o: { limits?: Partial<ImportLimits>; inline?: boolean; log?: (line: string) => void } = {}) {
    this.limits = { ...IMPORT_LIMITS, ...(o.limits ?? {}) };
    this.inline = o.inline ?? process.env.SPA_WORKBENCH_IMPORT_INLINE === '1';
    this.log = o.log ?? (() => undefined);
  }

  /** Import one run (queued behind any import in progress). */
  run(options: Omit<ImportOptions, 'tempName' | 'limits'>, where = 'runs.import'): Promise<ImportResult> {
    const job = this.queue.then(() => this.runOne(options, where));
    this.queue = job.catch(() => undefined);
    return job;
  }

  dispose(): void {
    this.disposed = true;
    this.close();
  }

  private close(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    void this.worker?.terminate();
    this.worker = null;
  }

  /** The warm worker, or a new one; null where none can start (then the import runs inline). */
  private start(): Worker | null {
    if (this.idleTimer) { clearTimeout(this.idleTimer); this.idleTimer = null; }
    if (this.worker) return this.worker;
    const entry = this.inline ? null : workerEntry();
    if (!entry) return null;
    try {
      const w = new Worker(entry, { resourceLimits: { maxOldGenerationSizeMb: this.limits.heapMb } });
      w.unref();
      w.on('error', () => undefined);   // reported through the job's own listeners; never an unhandled 'error'
      this.worker = w;
      return w;
    } catch (err) {
      this.log(`import worker could not start (${(err as Error).message}); importing inline`);
      return null;
    }
  }

  private runOne(options: Omit<ImportOptions, 'tempName' | 'limits'>, where: string): Promise<ImportResult> {
    if (this.disposed) return Promise.reject(new WorkbenchError('Unavailable', `${where}: the host is shutting down`, { where }));
    const tempName = `.import-${randomBytes(6).toString('hex')}`;
    const full: ImportOptions = { ...options, tempName, limits: this.limits };
    const worker = this.start();
    if (!worker) return importRagenRun(full);
    const id = this.nextId++;
    return new Promise<ImportResult>((resolve, reject) => {
      let done = false;
      const finish = (fail?: WorkbenchError) => {
        done = true;
        clearTimeout(timer);
        worker.off('message', onMessage); worker.off('error', onError); worker.off('exit', onExit);
        if (fail) {
          if (this.worker === worker) this.close(); else void worker.terminate();
          void fsp.rm(path.join(options.projectDir, tempName), { recursive: true, force: true }).catch(() => undefined);
          reject(fail);
          return;
        }
        if (this.worker === worker && !this.disposed) { this.idleTimer = setTimeout(() => this.close(), IMPORT_WORKER_IDLE_MS); this.idleTimer.unref(); }
      };
      const onMessage = (m: Reply) => {
        if (done || m.id !== id) return;
        finish();
        if (m.ok) resolve(m.value);
        else reject(new WorkbenchError(m.error.name, m.error.message, m.error.details ?? {}));
      };
      const onError = (err: Error & { code?: string }) => {
        if (done) return;
        const oom = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
        if (this.worker === worker) this.worker = null;
        finish(new WorkbenchError(oom ? 'ValidationError' : 'InternalError', oom
          ? `${where}: ${options.source} needs more than ${this.limits.heapMb} MB of memory to import (IMPORT_LIMITS.heapMb); import fewer or smaller files`
          : `${where}: the import worker failed: ${err.message}`, { where, received: options.source }));
      };
      const onExit = (code: number) => {
        if (this.worker === worker) this.worker = null;
        if (!done) finish(new WorkbenchError('InternalError', `${where}: the import worker exited (code ${code}) before answering`, { where }));
      };
      const timer = setTimeout(() => {
        if (done) return;
        const ms = this.limits.timeoutMs;
        const budget = ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
        finish(new WorkbenchError('Timeout', `${where}: importing ${options.source} took longer than ${budget} (IMPORT_LIMITS.timeoutMs) and was ` +
          'stopped; nothing was written', { where, expected: `an import within ${budget}`, received: options.source }));
      }, this.limits.timeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ id, options: full });
    });
  }
}
