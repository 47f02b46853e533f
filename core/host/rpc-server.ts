// Host side of the wire protocol over any Transport (a WebSocket connection, an Electron
// webContents, a stubbed pair in tests): validates each message, calls the dispatcher, replies
// exactly once per request id, pushes events of the connection's subscriptions, and drops them
// when the channel closes.
import type { Transport } from '../api/client.js';
import type { WireRequest, WireResponse, WorkbenchEvent } from '../api/contract.js';
import { WireRequestSchema } from '../api/contract.js';
import { toApiError, validationError } from '../api/errors.js';
import type { Dispatcher } from './dispatcher.js';

export type ServerTransport = Transport<WireResponse, unknown>;

export interface ServeOptions {
  /** Called for protocol errors that cannot be answered (no usable id). */
  onProtocolError?(message: string): void;
}

/** Serve one client connection; returns a function that detaches it (also called on close). */
export function serveConnection(dispatcher: Pick<Dispatcher, 'call' | 'subscribe'>, transport: ServerTransport, options: ServeOptions = {}): () => void {
  let nextSubscription = 1;
  const subscriptions = new Map<number, () => void>();
  let open = true;

  const send = (m: WireResponse) => {
    if (!open) return;
    try { transport.send(m); } catch (err) { options.onProtocolError?.(`send failed: ${(err as Error).message}`); }
  };

  const detach = () => {
    if (!open) return;
    open = false;
    for (const u of subscriptions.values()) u();
    subscriptions.clear();
    removeMessage();
    removeClose?.();
  };

  const removeMessage = transport.onMessage((raw) => {
    const parsed = WireRequestSchema.safeParse(raw);
    if (!parsed.success) {
      const id = (raw as { id?: unknown } | null)?.id;
      const err = validationError('message', parsed.error, raw, 'expected {type:"call", id, method, params} | {type:"subscribe", id, topic} | ' +
        '{type:"unsubscribe", id, subscription}');
      if (typeof id === 'number' && Number.isInteger(id)) send({ type: 'error', id, error: err.toJSON() });
      else options.onProtocolError?.(err.message);
      return;
    }
    const msg: WireRequest = parsed.data;
    if (msg.type === 'call') {
      dispatcher.call(msg.method, msg.params).then(
        (result) => send({ type: 'result', id: msg.id, result }),
        (err) => send({ type: 'error', id: msg.id, error: toApiError(err, msg.method) }),
      );
    } else if (msg.type === 'subscribe') {
      try {
        const subscription = nextSubscription++;
        const unsubscribe = dispatcher.subscribe(msg.topic, (event: WorkbenchEvent) => send({ type: 'event', subscription, event }));
        subscriptions.set(subscription, unsubscribe);
        send({ type: 'result', id: msg.id, result: { subscription } });
      } catch (err) {
        send({ type: 'error', id: msg.id, error: toApiError(err, 'subscribe') });
      }
    } else {
      const u = subscriptions.get(msg.subscription);
      if (u) { u(); subscriptions.delete(msg.subscription); }
      send({ type: 'result', id: msg.id, result: { unsubscribed: !!u } });
    }
  });
  const removeClose = transport.onClose?.(() => detach());
  return detach;
}
