// WebSocket transport (browser mode, `spa-workbench serve`). Speaks the wire protocol of
// core/api/contract.ts: {type:'call'|'subscribe'|'unsubscribe', id} → {type:'result'|'error', id}
// and pushed {type:'event', subscription}. Every call settles exactly once: reply, error, or
// connection loss. Reconnects with backoff and re-subscribes live topics.
import type {
  ApiMethodName, EventTopic, Unsubscribe, WireRequest, WireResponse, WorkbenchEvent,
} from '../../../core/api/contract.js';
import { ApiClientError } from './errors.js';
import { TopicFanout, type ConnectionState, type Transport } from './client.js';

/** The subset of the browser WebSocket the transport uses (tests pass a fake). */
export interface SocketLike {
  readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
}

export interface WsTransportOptions {
  url: string;                                    // ws://host:port/<path>?token=...
  createSocket?: (url: string) => SocketLike;     // default: new WebSocket(url)
  reconnect?: boolean;                            // default true
  callTimeoutMs?: number;                         // default 0 = none (runs.create may take a while)
  backoffMs?: { initial: number; max: number };   // default 300 → 5000
}

type Pending = { method: string; resolve: (v: unknown) => void; reject: (e: unknown) => void; timer: ReturnType<typeof setTimeout> | null };
type Sub = { topic: EventTopic; deliver: (e: WorkbenchEvent) => void; hostId: number | null };

const OPEN = 1;

export class WsTransport implements Transport {
  readonly kind = 'websocket' as const;
  private socket: SocketLike | null = null;
  private state: ConnectionState = 'connecting';
  private readonly stateListeners = new Set<(s: ConnectionState) => void>();
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly queue: string[] = [];
  private readonly subs = new Map<number, Sub>();            // local id → subscription
  private readonly hostToLocal = new Map<number, number>();  // host subscription id → local id
  private readonly subscribeRequests = new Map<number, number>(); // request id → local sub id
  /** Events for a host subscription whose `subscribe` reply has not arrived yet (bounded). */
  private readonly early = new Map<number, WorkbenchEvent[]>();
  private readonly fanout: TopicFanout;
  private closed = false;
  private backoff: number;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  /** Last close reason from the host (e.g. token refused), for the status bar. */
  lastCloseReason = '';

  constructor(private readonly options: WsTransportOptions) {
    this.backoff = options.backoffMs?.initial ?? 300;
    this.fanout = new TopicFanout((topic, deliver) => this.openSub(topic, deliver));
    this.connect();
  }

  private connect(): void {
    const create = this.options.createSocket ?? ((url: string) => new WebSocket(url) as unknown as SocketLike);
    this.setState('connecting');
    let socket: SocketLike;
    try {
      socket = create(this.options.url);
    } catch (err) {
      this.lastCloseReason = err instanceof Error ? err.message : String(err);
      this.onSocketClosed();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      this.backoff = this.options.backoffMs?.initial ?? 300;
      this.setState('open');
      // Re-subscribe live topics (after a reconnect), then flush queued calls.
      for (const [localId, sub] of this.subs) {
        if (sub.hostId === null) this.sendSubscribe(localId, sub.topic);
      }
      for (const msg of this.queue.splice(0)) socket.send(msg);
    };
    socket.onmessage = (ev) => this.onMessage(ev.data);
    socket.onerror = () => { /* followed by onclose */ };
    socket.onclose = (ev) => {
      if (this.socket !== socket) return;
      this.lastCloseReason = ev.reason || (ev.code === 1006 ? 'connection lost' : `closed (code ${ev.code})`);
      this.onSocketClosed();
    };
  }

  private onSocketClosed(): void {
    this.socket = null;
    // Every in-flight call settles now: the host cannot answer on a new socket.
    for (const [id, p] of this.pending) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(new ApiClientError({
        name: 'ConnectionLost',
        message: `The connection to the workbench server closed before "${p.method}" was answered (${this.lastCloseReason}).`,
        details: { where: p.method, expected: 'a reply from the server', received: 'connection closed', fix: 'check that `spa-workbench serve` is still running, then retry' },
      }, p.method));
      this.pending.delete(id);
    }
    this.subscribeRequests.clear();
    this.hostToLocal.clear();
    this.early.clear();
    for (const sub of this.subs.values()) sub.hostId = null;
    this.setState('closed');
    if (!this.closed && this.options.reconnect !== false) {
      const delay = this.backoff;
      this.backoff = Math.min(this.backoff * 2, this.options.backoffMs?.max ?? 5000);
      this.reconnectTimer = setTimeout(() => { this.reconnectTimer = null; if (!this.closed) this.connect(); }, delay);
    }
  }

  private setState(s: ConnectionState): void {
    if (this.state === s) return;
    this.state = s;
    for (const l of [...this.stateListeners]) l(s);
  }

  onState(listener: (s: ConnectionState) => void): Unsubscribe {
    this.stateListeners.add(listener);
    listener(this.state);
    return () => this.stateListeners.delete(listener);
  }

  private send(msg: WireRequest): void {
    const text = JSON.stringify(msg);
    if (this.socket && this.socket.readyState === OPEN) this.socket.send(text);
    else this.queue.push(text);
  }

  call(method: ApiMethodName, params: unknown): Promise<unknown> {
    if (this.closed) {
      return Promise.reject(new ApiClientError({ name: 'ClientClosed', message: `The API client was closed; cannot call "${method}".` }, method));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timeoutMs = this.options.callTimeoutMs ?? 0;
      const timer = timeoutMs > 0
        ? setTimeout(() => {
          if (!this.pending.delete(id)) return;
          reject(new ApiClientError({ name: 'Timeout', message: `"${method}" got no reply within ${timeoutMs} ms.`, details: { where: method } }, method));
        }, timeoutMs)
        : null;
      this.pending.set(id, { method, resolve, reject, timer });
      this.send({ type: 'call', id, method, params });
    });
  }

  subscribe(topic: EventTopic, listener: (event: WorkbenchEvent) => void): Unsubscribe {
    return this.fanout.add(topic, listener);
  }

  private openSub(topic: EventTopic, deliver: (e: WorkbenchEvent) => void): () => void {
    const localId = this.nextId++;
    this.subs.set(localId, { topic, deliver, hostId: null });
    if (this.socket && this.socket.readyState === OPEN) this.sendSubscribe(localId, topic);
    // else: sent on open
    return () => {
      const sub = this.subs.get(localId);
      this.subs.delete(localId);
      if (sub && sub.hostId !== null) {
        this.hostToLocal.delete(sub.hostId);
        if (this.socket && this.socket.readyState === OPEN) this.send({ type: 'unsubscribe', id: this.nextId++, subscription: sub.hostId });
      }
    };
  }

  private sendSubscribe(localId: number, topic: EventTopic): void {
    const id = this.nextId++;
    this.subscribeRequests.set(id, localId);
    this.send({ type: 'subscribe', id, topic });
  }

  private onMessage(data: unknown): void {
    let msg: WireResponse;
    try {
      msg = JSON.parse(typeof data === 'string' ? data : String(data)) as WireResponse;
    } catch {
      console.error('workbench: unparseable message from server', data);
      return;
    }
    if (msg.type === 'event') {
      const localId = this.hostToLocal.get(msg.subscription);
      const sub = localId === undefined ? undefined : this.subs.get(localId);
      if (sub) sub.deliver(msg.event);
      else if (this.subscribeRequests.size > 0) {
        const q = this.early.get(msg.subscription) ?? [];
        if (q.length < 1000) q.push(msg.event);
        this.early.set(msg.subscription, q);
      }
      return;
    }
    const subLocal = this.subscribeRequests.get(msg.id);
    if (subLocal !== undefined) {
      this.subscribeRequests.delete(msg.id);
      if (msg.type === 'result') {
        const hostId = subscriptionIdOf(msg.result);
        const sub = this.subs.get(subLocal);
        if (hostId === null) return;
        if (!sub) { this.send({ type: 'unsubscribe', id: this.nextId++, subscription: hostId }); return; } // unsubscribed meanwhile
        sub.hostId = hostId;
        this.hostToLocal.set(hostId, subLocal);
        const queued = this.early.get(hostId);
        this.early.delete(hostId);
        for (const e of queued ?? []) sub.deliver(e);
      } else {
        console.error('workbench: subscription refused', msg.error);
      }
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return; // unsubscribe acks, late replies after a timeout
    this.pending.delete(msg.id);
    if (p.timer) clearTimeout(p.timer);
    if (msg.type === 'result') p.resolve(msg.result);
    else p.reject(new ApiClientError(msg.error, p.method));
  }

  close(): void {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.fanout.clear();
    const s = this.socket;
    this.socket = null;
    for (const [id, p] of this.pending) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(new ApiClientError({ name: 'ClientClosed', message: `The API client was closed before "${p.method}" was answered.` }, p.method));
      this.pending.delete(id);
    }
    s?.close(1000, 'client closed');
    this.setState('closed');
  }
}

/** The host answers `subscribe` with the subscription id: a number or `{ subscription: n }`. */
function subscriptionIdOf(result: unknown): number | null {
  if (typeof result === 'number') return result;
  if (result && typeof result === 'object') {
    const r = result as { subscription?: unknown; id?: unknown };
    if (typeof r.subscription === 'number') return r.subscription;
    if (typeof r.id === 'number') return r.id;
  }
  return null;
}
