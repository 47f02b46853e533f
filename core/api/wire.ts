// The client half of the wire protocol that every client shares, free of zod and of Node (type
// imports only), so the renderer may import it at run time: request ids and the table of requests
// in flight (each settles exactly once: reply, error, timeout or connection loss), and the
// subscription table that queues events arriving before their `subscribe` reply. Used by
// core/api/client.ts (Node and tests), renderer/src/api/ws-transport.ts (browser) and
// electron/bridge-impl.ts (preload).
import type { WorkbenchEvent } from './contract.js';

/** At most this many events are queued per subscription while its `subscribe` reply is in flight. */
export const EARLY_EVENT_LIMIT = 1000;

interface Entry<C> { context: C; resolve(value: unknown): void; reject(error: unknown): void; timer: ReturnType<typeof setTimeout> | null }

/** Requests in flight by id. `C` is what the caller keeps per request (e.g. the method name, for errors). */
export class PendingRequests<C> {
  private lastId = 0;
  private readonly entries = new Map<number, Entry<C>>();

  /** A fresh request id (also used for messages that expect no tracked reply). */
  nextId(): number { return ++this.lastId; }

  /**
   * Track a request: returns its id and the promise of its reply. With `timeoutMs` > 0 it is
   * rejected with `timeoutError(context)` when no reply came in time.
   */
  add(context: C, timeoutMs = 0, timeoutError?: (context: C) => unknown): { id: number; reply: Promise<unknown> } {
    const id = this.nextId();
    const reply = new Promise<unknown>((resolve, reject) => {
      const onTimeout = () => this.reject(id, timeoutError ? timeoutError(context) : new Error(`no reply after ${timeoutMs} ms`));
      const timer = timeoutMs > 0 ? setTimeout(onTimeout, timeoutMs) : null;
      this.entries.set(id, { context, resolve, reject, timer });
    });
    return { id, reply };
  }

  has(id: number): boolean { return this.entries.has(id); }
  context(id: number): C | undefined { return this.entries.get(id)?.context; }
  get size(): number { return this.entries.size; }

  /** Settle a request with its reply; false when it is not in flight (a late reply after a timeout). */
  resolve(id: number, value: unknown): boolean {
    const e = this.take(id);
    e?.resolve(value);
    return e !== null;
  }

  /** Settle a request with an error; false when it is not in flight. */
  reject(id: number, error: unknown): boolean {
    const e = this.take(id);
    e?.reject(error);
    return e !== null;
  }

  /** Reject every request in flight (the connection closed), each with its own error. */
  rejectAll(error: (context: C) => unknown): void {
    for (const id of [...this.entries.keys()]) {
      const e = this.take(id)!;
      e.reject(error(e.context));
    }
  }

  private take(id: number): Entry<C> | null {
    const e = this.entries.get(id);
    if (!e) return null;
    this.entries.delete(id);
    if (e.timer) clearTimeout(e.timer);
    return e;
  }
}

/**
 * Listeners by the host's subscription id. The host may push a subscription's first events before
 * its `subscribe` reply reaches the client: while any subscribe is in flight (`subscribing()`),
 * events of a subscription without a listener are queued (bounded) and replayed on `attach`.
 */
export class SubscriptionTable {
  private readonly listeners = new Map<number, (event: WorkbenchEvent) => void>();
  private readonly early = new Map<number, WorkbenchEvent[]>();
  private inFlight = 0;

  /** Mark a subscribe request in flight; call the returned function once its reply is handled. */
  subscribing(): () => void {
    this.inFlight++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--this.inFlight === 0) this.early.clear();   // nothing is waiting: events of unknown subscriptions are stale
    };
  }

  /** Route an event to its listener, or queue it while a subscribe is in flight. */
  deliver(subscription: number, event: WorkbenchEvent): void {
    const listener = this.listeners.get(subscription);
    if (listener) { listener(event); return; }
    if (this.inFlight === 0) return;
    const q = this.early.get(subscription) ?? [];
    if (q.length < EARLY_EVENT_LIMIT) q.push(event);
    this.early.set(subscription, q);
  }

  /** Attach a listener and replay the events queued for it, oldest first. */
  attach(subscription: number, listener: (event: WorkbenchEvent) => void): void {
    this.listeners.set(subscription, listener);
    const queued = this.early.get(subscription);
    this.early.delete(subscription);
    for (const e of queued ?? []) listener(e);
  }

  detach(subscription: number): void {
    this.listeners.delete(subscription);
    this.early.delete(subscription);
  }

  clear(): void {
    this.listeners.clear();
    this.early.clear();
  }
}
