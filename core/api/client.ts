// Client side of the wire protocol, independent of the channel: build a WorkbenchClient over any
// `Transport` (WebSocket, Electron IPC, a stubbed pair in tests). No Node imports.
import type {
  ApiError, EventTopic, WireRequest, WireResponse, WorkbenchApi, WorkbenchClient, WorkbenchEvent,
} from './contract.js';
import { apiMethodNames } from './contract.js';
import { fromApiError, WorkbenchError } from './errors.js';
import { PendingRequests, SubscriptionTable } from './wire.js';

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
  let closed: string | null = null;
  const pending = new PendingRequests<string>();                 // context: the method (or message type), for errors
  const subscriptions = new SubscriptionTable();
  const closedError = (reason: string) => new WorkbenchError('TransportError', `connection to the workbench host closed: ${reason}`, { where: 'client' });

  const removeMessage = transport.onMessage((msg) => {
    if (!msg || typeof msg !== 'object') return;
    if (msg.type === 'result') pending.resolve(msg.id, msg.result);
    else if (msg.type === 'error') pending.reject(msg.id, fromApiError(msg.error as ApiError));
    else if (msg.type === 'event') subscriptions.deliver(msg.subscription, msg.event);
  });

  const failAll = (reason: string) => {
    closed = reason;
    pending.rejectAll(() => closedError(reason));
  };
  const removeClose = transport.onClose?.((reason) => failAll(reason));

  type Unsent = WireRequest extends infer R ? R extends WireRequest ? Omit<R, 'id'> : never : never;
  const request = (msg: Unsent): Promise<unknown> => {
    if (closed) return Promise.reject(closedError(closed));
    const where = String((msg as { method?: string }).method ?? msg.type);
    const timeout = (w: string) => new WorkbenchError('Timeout', `no reply from the workbench host after ${options.timeoutMs} ms`, { where: w });
    const { id, reply } = pending.add(where, options.timeoutMs ?? 0, timeout);
    try {
      transport.send({ ...msg, id } as WireRequest);
    } catch (err) {
      pending.reject(id, new WorkbenchError('TransportError', `could not send: ${(err as Error).message}`, { where: 'client' }));
    }
    return reply;
  };

  const api = buildApi((method, params) => request({ type: 'call', method, params }));

  const subscribe = (topic: EventTopic, listener: (event: WorkbenchEvent) => void) => {
    let subscription: number | null = null;
    let cancelled = false;
    const done = subscriptions.subscribing();
    request({ type: 'subscribe', topic }).then((r) => {
      subscription = (r as { subscription: number }).subscription;
      if (cancelled) { void request({ type: 'unsubscribe', subscription }).catch(() => undefined); return; }
      subscriptions.attach(subscription, listener);
    }, () => undefined).finally(done);
    return () => {
      cancelled = true;
      if (subscription !== null) {
        subscriptions.detach(subscription);
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
