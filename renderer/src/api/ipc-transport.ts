// Electron transport: the preload bridge (window.spa, see bridge.ts). The main process hosts
// the same dispatcher as `serve`; replies come as {ok, result|error} envelopes.
import type { ApiMethodName, EventTopic, Unsubscribe, WorkbenchEvent } from '../../../core/api/contract.js';
import type { SpaBridge } from '../../../electron/bridge.js';
import { ApiClientError } from './errors.js';
import { TopicFanout, type ConnectionState, type Transport } from './client.js';

export class IpcTransport implements Transport {
  readonly kind = 'ipc' as const;
  private readonly fanout: TopicFanout;
  private closed = false;

  constructor(private readonly bridge: SpaBridge) {
    this.fanout = new TopicFanout((topic, deliver) => {
      let hostId: number | null = null;
      let released = false;
      bridge.subscribe(topic, deliver).then((id) => {
        if (released) void bridge.unsubscribe(id);
        else hostId = id;
      }, (err) => console.error('workbench: subscription refused', err));
      return () => {
        released = true;
        if (hostId !== null) void bridge.unsubscribe(hostId);
      };
    });
  }

  async call(method: ApiMethodName, params: unknown): Promise<unknown> {
    if (this.closed) throw new ApiClientError({ name: 'ClientClosed', message: `The API client was closed; cannot call "${method}".` }, method);
    let reply;
    try {
      reply = await this.bridge.invoke(method, params);
    } catch (err) {
      throw new ApiClientError({
        name: 'IpcError',
        message: `The desktop host did not answer "${method}": ${err instanceof Error ? err.message : String(err)}`,
        details: { where: method },
      }, method);
    }
    if (reply.ok) return reply.result;
    throw new ApiClientError(reply.error, method);
  }

  subscribe(topic: EventTopic, listener: (event: WorkbenchEvent) => void): Unsubscribe {
    return this.fanout.add(topic, listener);
  }

  onState(listener: (s: ConnectionState) => void): Unsubscribe {
    listener(this.closed ? 'closed' : 'open');
    return () => {};
  }

  close(): void {
    this.closed = true;
    this.fanout.clear();
  }
}
