// Requests to the engine process settle exactly once: reply, error, exit, or timeout.
import type { ApiError } from '../api/records.js';
import { WorkbenchError } from '../api/errors.js';

interface Pending { resolve(v: unknown): void; reject(e: Error): void; timer: ReturnType<typeof setTimeout> | null; what: string }

export class RequestTracker {
  private next = 1;
  private readonly pending = new Map<number, Pending>();
  private closedReason: string | null = null;

  /** Send a request built with a fresh id; the promise settles exactly once. */
  request(what: string, send: (requestId: number) => void, timeoutMs: number | null): Promise<unknown> {
    if (this.closedReason) return Promise.reject(new WorkbenchError('Unavailable', `${what}: engine process is gone (${this.closedReason})`, { where: what }));
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = timeoutMs === null ? null : setTimeout(() => {
        this.settle(id, (p) => p.reject(new WorkbenchError('Timeout', `${what}: no answer from the engine process within ${timeoutMs} ms`, { where: what })));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer, what });
      try { send(id); } catch (err) {
        this.settle(id, (p) =>
          p.reject(new WorkbenchError('Unavailable', `${what}: could not send to the engine process (${(err as Error).message})`, { where: what })),
        );
      }
    });
  }

  reply(id: number, result: unknown): void { this.settle(id, (p) => p.resolve(result)); }

  error(id: number, error: ApiError): void {
    this.settle(id, (p) => p.reject(new WorkbenchError(error.name, error.message, error.details ?? {})));
  }

  /** The process exited: every open request fails with the reason; later requests fail at once. */
  closeAll(reason: string): void {
    this.closedReason = reason;
    for (const id of [...this.pending.keys()]) {
      this.settle(id, (p) => p.reject(new WorkbenchError('Unavailable', `${p.what}: engine process exited before answering (${reason})`, { where: p.what })));
    }
  }

  get size(): number { return this.pending.size; }

  private settle(id: number, fn: (p: Pending) => void): void {
    const p = this.pending.get(id);
    if (!p) return;                 // already settled: later replies are ignored
    this.pending.delete(id);
    if (p.timer) clearTimeout(p.timer);
    fn(p);
  }
}
