// The one client interface of the renderer: a typed WorkbenchClient (core/api/contract.ts) over
// a Transport. Two transports exist: the Electron preload bridge (ipc-transport.ts) and the
// WebSocket of `serve` (ws-transport.ts). Views only ever see WorkbenchClient.
import type {
  ApiMethodName, ApiNamespace, EventTopic, Unsubscribe, WorkbenchClient, WorkbenchEvent,
} from '../../../core/api/contract.js';

export type ConnectionState = 'connecting' | 'open' | 'closed';

/** What a transport carries: calls by wire name, event topics, connection state. */
export interface Transport {
  readonly kind: 'ipc' | 'websocket' | 'memory';
  call(method: ApiMethodName, params: unknown): Promise<unknown>;
  subscribe(topic: EventTopic, listener: (event: WorkbenchEvent) => void): Unsubscribe;
  onState?(listener: (state: ConnectionState) => void): Unsubscribe;
  close(): void;
}

/** Extra, non-contract abilities of the client (transport info, connection state). */
export interface ClientExtras {
  readonly transport: Transport['kind'];
  onConnection(listener: (state: ConnectionState) => void): Unsubscribe;
}

export type Client = WorkbenchClient & ClientExtras;

// Every namespace of the contract, checked by the compiler: a namespace added to core/api/contract.ts
// and missing here fails the type check (it would otherwise be `undefined` in the page).
const NAMESPACE_TABLE: Record<ApiNamespace, true> = {
  projects: true, runs: true, envs: true, templates: true, rollouts: true, datasets: true, metrics: true, evals: true, studies: true,
  system: true, inspect: true, probe: true,
};
const NAMESPACES = new Set<string>(Object.keys(NAMESPACE_TABLE));

/**
 * Build the nested typed API object (`client.runs.create(...)`) on top of a transport.
 * Namespaces are created lazily by a Proxy so the client needs no runtime copy of the contract;
 * unknown namespaces are `undefined` (the host rejects unknown method names with a clear error).
 */
export function createClient(transport: Transport): Client {
  const namespaces = new Map<string, Record<string, (params?: unknown) => Promise<unknown>>>();
  const namespace = (ns: string) => {
    let obj = namespaces.get(ns);
    if (!obj) {
      obj = new Proxy({} as Record<string, (params?: unknown) => Promise<unknown>>, {
        get(_target, method) {
          if (typeof method !== 'string' || method === 'then') return undefined;
          return (params?: unknown) => transport.call(`${ns}.${method}` as ApiMethodName, params === undefined ? {} : params);
        },
      });
      namespaces.set(ns, obj);
    }
    return obj;
  };
  const base = {
    transport: transport.kind,
    subscribe: (topic: EventTopic, listener: (event: WorkbenchEvent) => void) => transport.subscribe(topic, listener),
    close: () => transport.close(),
    onConnection: (listener: (state: ConnectionState) => void): Unsubscribe => transport.onState?.(listener) ?? (() => {}),
  };
  return new Proxy(base, {
    get(target, prop) {
      if (typeof prop === 'string' && NAMESPACES.has(prop)) return namespace(prop);
      return (target as Record<string | symbol, unknown>)[prop];
    },
  }) as unknown as Client;
}

/**
 * Shares one host subscription per topic among many listeners (the run view, the status bar and
 * the runs table may all listen to the same run). Used by both transports.
 */
export class TopicFanout {
  private readonly topics = new Map<string, { listeners: Set<(e: WorkbenchEvent) => void>; release: (() => void) | null }>();

  constructor(private readonly open: (topic: EventTopic, deliver: (e: WorkbenchEvent) => void) => () => void) {}

  static key(topic: EventTopic): string {
    return topic.kind === 'run' ? `run:${topic.runId}` : 'project';
  }

  add(topic: EventTopic, listener: (e: WorkbenchEvent) => void): Unsubscribe {
    const key = TopicFanout.key(topic);
    let entry = this.topics.get(key);
    if (!entry) {
      const created: { listeners: Set<(e: WorkbenchEvent) => void>; release: (() => void) | null } = { listeners: new Set(), release: null };
      this.topics.set(key, created);
      created.release = this.open(topic, (e) => {
        for (const l of [...created.listeners]) {
          try { l(e); } catch (err) { console.error('event listener failed', err); }
        }
      });
      entry = created;
    }
    entry.listeners.add(listener);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const current = this.topics.get(key);
      if (!current) return;
      current.listeners.delete(listener);
      if (current.listeners.size === 0) {
        this.topics.delete(key);
        current.release?.();
      }
    };
  }

  /** Topics with at least one listener (re-subscribed after a reconnect). */
  active(): EventTopic[] {
    return [...this.topics.keys()].map((k) => (k === 'project' ? { kind: 'project' } : { kind: 'run', runId: k.slice(4) }));
  }

  clear(): void {
    for (const entry of this.topics.values()) entry.release?.();
    this.topics.clear();
  }
}
