// WebSocket transport (browser mode, `spa-workbench serve`). Speaks the wire protocol of
// core/api/contract.ts: {type:'call'|'subscribe'|'unsubscribe', id} → {type:'result'|'error', id}
// and pushed {type:'event', subscription}. Every call settles exactly once: reply, error, or
// connection loss. Reconnects with backoff and re-subscribes live topics.
import type {
  ApiMethodName, EventTopic, Unsubscribe, WireRequest, WireResponse, WorkbenchEvent,
} from '../../../core/api/contract.js';
import { PendingRequests, SubscriptionTable } from '../../../core/api/wire.js';
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

type Sub = { topic: EventTopic; deliver: (e: WorkbenchEvent) => void; hostId: number | null };

const OPEN = 1;

export class WsTransport implements Transport {
  readonly kind = 'websocket' as const;
  private socket: SocketLike | null = null;
  private state: ConnectionState = 'connecting';
  private readonly stateListeners = new Set<(s: ConnectionState) => void>();
  private readonly requests = new PendingRequests<ApiMethodName>();   // calls in flight (context: the method)
  private readonly queue: string[] = [];
  private readonly subs = new Map<number, Sub>();            // local id → subscription
  /** Host subscription id → listener, queueing events that arrive before the subscribe reply. */
  private readonly table = new SubscriptionTable();
  private readonly subscribeRequests = new Map<number, { localId: number; done: () => void }>(); // request id → local sub id
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
    this.requests.rejectAll((method) => new ApiClientError({
      name: 'ConnectionLost',
      message: `The connection to the workbench server closed before "${method}" was answered (${this.lastCloseReason}).`,
      details: { where: method, expected: 'a reply from the server', received: 'connection closed', fix: 'check that `spa-workbench serve` is still running, then retry' },
    }, method));
    for (const { done } of this.subscribeRequests.values()) done();
    this.subscribeRequests.clear();
    this.table.clear();
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
    const timeoutMs = this.options.callTimeoutMs ?? 0;
    const timeout = (m: ApiMethodName) => new ApiClientError({ name: 'Timeout', message: `"${m}" got no reply within ${timeoutMs} ms.`, details: { where: m } }, m);
    const { id, reply } = this.requests.add(method, timeoutMs, timeout);
    this.send({ type: 'call', id, method, params });
    return reply;
  }

  subscribe(topic: EventTopic, listener: (event: WorkbenchEvent) => void): Unsubscribe {
    return this.fanout.add(topic, listener);
  }

  private openSub(topic: EventTopic, deliver: (e: WorkbenchEvent) => void): () => void {
    const localId = this.requests.nextId();
    this.subs.set(localId, { topic, deliver, hostId: null });
    if (this.socket && this.socket.readyState === OPEN) this.sendSubscribe(localId, topic);
    // else: sent on open
    return () => {
      const sub = this.subs.get(localId);
      this.subs.delete(localId);
      if (sub && sub.hostId !== null) {
        this.table.detach(sub.hostId);
        if (this.socket && this.socket.readyState === OPEN) this.send({ type: 'unsubscribe', id: this.requests.nextId(), subscription: sub.hostId });
      }
    };
  }

  private sendSubscribe(localId: number, topic: EventTopic): void {
    const id = this.requests.nextId();
    this.subscribeRequests.set(id, { localId, done: this.table.subscribing() });
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
      this.table.deliver(msg.subscription, msg.event);
      return;
    }
    const subscribing = this.subscribeRequests.get(msg.id);
    if (subscribing !== undefined) {
      this.subscribeRequests.delete(msg.id);
      this.onSubscribed(msg, subscribing.localId);
      subscribing.done();
      return;
    }
    const method = this.requests.context(msg.id);
    if (method === undefined) return; // unsubscribe acks, late replies after a timeout
    if (msg.type === 'result') this.requests.resolve(msg.id, msg.result);
    else this.requests.reject(msg.id, new ApiClientError(msg.error, method));
  }

  private onSubscribed(msg: WireResponse, localId: number): void {
    if (msg.type === 'error') { console.error('workbench: subscription refused', msg.error); return; }
    if (msg.type !== 'result') return;
    const hostId = subscriptionIdOf(msg.result);
    const sub = this.subs.get(localId);
    if (hostId === null) return;
    if (!sub) { this.send({ type: 'unsubscribe', id: this.requests.nextId(), subscription: hostId }); return; } // unsubscribed meanwhile
    sub.hostId = hostId;
    this.table.attach(hostId, sub.deliver);
  }

  close(): void {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.fanout.clear();
    const s = this.socket;
    this.socket = null;
    this.requests.rejectAll((method) => new ApiClientError({ name: 'ClientClosed', message: `The API client was closed before "${method}" was answered.` }, method));
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
