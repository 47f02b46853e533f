// Client side of the wire protocol, independent of the channel: build a WorkbenchClient over any
// `Transport` (WebSocket, Electron IPC, a stubbed pair in tests). No Node imports.
import type {
  ApiError, EventTopic, WireRequest, WireResponse, WorkbenchApi, WorkbenchClient, WorkbenchEvent,
} from './contract.js';
import { apiMethodNames } from './contract.js';
import { fromApiError, WorkbenchError } from './errors.js';

/** A bidirectional message channel carrying plain JSON objects. */
export interface Transport<Out = unknown, In = unknown> {
  send(message: Out): void;
  /** Register the message listener; returns a function that removes it. */
  onMessage(listener: (message: In) => void): () => void;
  /** Called when the channel closes for good (socket closed, window gone). */
  onClose?(listener: (reason: string) => void): () => void;
  close?(): void;
}

export type ClientTransport = Transport<WireRequest, WireResponse>;

/** Build the nested typed object from a generic `call(method, params)`. */
export function buildApi(call: (method: string, params: unknown) => Promise<unknown>): WorkbenchApi {
  const api: Record<string, Record<string, (p?: unknown) => Promise<unknown>>> = {};
  for (const name of apiMethodNames()) {
    const [ns, m] = name.split('.') as [string, string];
    (api[ns] ??= {})[m] = (params?: unknown) => call(name, params);
  }
  return api as unknown as WorkbenchApi;
}

export interface RpcClientOptions {
  /** Reject a call that got no reply in this many ms (default: none; runs can take long to create). */
  timeoutMs?: number;
}

/** A WorkbenchClient over a Transport speaking the wire protocol of contract.ts. */
export function createRpcClient(transport: ClientTransport, options: RpcClientOptions = {}): WorkbenchClient {
  let nextId = 1;
  let closed: string | null = null;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void; timer?: ReturnType<typeof setTimeout> }>();
  const subscriptions = new Map<number, (event: WorkbenchEvent) => void>();
  // Events may arrive for a subscription whose `subscribe` reply is still in flight: queue them.
  const early = new Map<number, WorkbenchEvent[]>();

  const settle = (id: number, fn: (p: { resolve(v: unknown): void; reject(e: Error): void }) => void) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    if (p.timer) clearTimeout(p.timer);
    fn(p);
  };

  const removeMessage = transport.onMessage((msg) => {
    if (!msg || typeof msg !== 'object') return;
    if (msg.type === 'result') settle(msg.id, (p) => p.resolve(msg.result));
    else if (msg.type === 'error') settle(msg.id, (p) => p.reject(fromApiError(msg.error as ApiError)));
    else if (msg.type === 'event') {
      const listener = subscriptions.get(msg.subscription);
      if (listener) listener(msg.event);
      else {
        const q = early.get(msg.subscription) ?? [];
        if (q.length < 1000) q.push(msg.event);
        early.set(msg.subscription, q);
      }
    }
  });

  const failAll = (reason: string) => {
    closed = reason;
    for (const id of [...pending.keys()]) {
      settle(id, (p) => p.reject(new WorkbenchError('TransportError', `connection to the workbench host closed: ${reason}`, { where: 'client' })));
    }
  };
  const removeClose = transport.onClose?.((reason) => failAll(reason));

  type Unsent = WireRequest extends infer R ? R extends WireRequest ? Omit<R, 'id'> : never : never;
  const request = (msg: Unsent): Promise<unknown> => {
    if (closed) return Promise.reject(new WorkbenchError('TransportError', `connection to the workbench host closed: ${closed}`, { where: 'client' }));
    const id = nextId++;
    return new Promise((resolve, reject) => {
      const entry: { resolve(v: unknown): void; reject(e: Error): void; timer?: ReturnType<typeof setTimeout> } = { resolve, reject };
      if (options.timeoutMs) {
        entry.timer = setTimeout(() => settle(id, (p) => p.reject(new WorkbenchError('Timeout', `no reply from the workbench host after ${options.timeoutMs} ms`, { where: String((msg as { method?: string }).method ?? msg.type) }))), options.timeoutMs);
      }
      pending.set(id, entry);
      try {
        transport.send({ ...msg, id } as WireRequest);
      } catch (err) {
        settle(id, (p) => p.reject(new WorkbenchError('TransportError', `could not send: ${(err as Error).message}`, { where: 'client' })));
      }
    });
  };

  const api = buildApi((method, params) => request({ type: 'call', method, params }));

  const subscribe = (topic: EventTopic, listener: (event: WorkbenchEvent) => void) => {
    let subscription: number | null = null;
    let cancelled = false;
    request({ type: 'subscribe', topic }).then((r) => {
      subscription = (r as { subscription: number }).subscription;
      if (cancelled) { void request({ type: 'unsubscribe', subscription }).catch(() => undefined); return; }
      subscriptions.set(subscription, listener);
      const queued = early.get(subscription);
      early.delete(subscription);
      for (const e of queued ?? []) listener(e);
    }, () => undefined);
    return () => {
      cancelled = true;
      if (subscription !== null) {
        subscriptions.delete(subscription);
        void request({ type: 'unsubscribe', subscription }).catch(() => undefined);
      }
    };
  };

  return Object.assign(api, {
    subscribe,
    close() {
      removeMessage();
      removeClose?.();
      failAll('client closed');
      transport.close?.();
    },
  });
}
