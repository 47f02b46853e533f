// The preload bridge object (window.spa), built over an ipcRenderer-like channel. Kept free of
// Electron imports so it can be tested with a stub; preload.ts passes the real ipcRenderer.
// Only named functions are exposed; invoke accepts only the contract's method names.
import type { ApiMethodName, EventTopic, WorkbenchEvent } from '../core/api/contract.js';
import { SubscriptionTable } from '../core/api/wire.js';
import { BRIDGE_CHANNELS, type BridgeReply, type MenuCommand, type OpenFolderOptions, type SpaBridge } from './bridge.js';

export interface IpcRendererLike {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
  removeListener(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
}

export function createBridge(ipc: IpcRendererLike, methodNames: ReadonlySet<string>, platform: string): SpaBridge {
  const subscriptions = new SubscriptionTable();   // events can arrive before the subscribe reply: queued until it does
  ipc.on(BRIDGE_CHANNELS.event, (_e, payload) => {
    const p = payload as { subscription?: unknown; event?: unknown } | null;
    if (!p || typeof p.subscription !== 'number' || !p.event) return;
    subscriptions.deliver(p.subscription, p.event as WorkbenchEvent);
  });

  const bridge: SpaBridge = {
    bridgeVersion: 1,
    platform,
    async invoke(method: ApiMethodName, params: unknown): Promise<BridgeReply> {
      if (typeof method !== 'string' || !methodNames.has(method)) {
        return { ok: false, error: { name: 'UnknownMethod', message: `unknown API method ${JSON.stringify(method)}`, details: { where: 'preload bridge', expected: 'a WorkbenchApi method name such as "runs.list"', received: JSON.stringify(method) } } };
      }
      return (await ipc.invoke(BRIDGE_CHANNELS.invoke, method, params)) as BridgeReply;
    },
    async subscribe(topic: EventTopic, listener: (event: WorkbenchEvent) => void): Promise<number> {
      if (typeof listener !== 'function') throw new TypeError('subscribe(topic, listener): listener must be a function');
      const done = subscriptions.subscribing();
      try {
        const id = (await ipc.invoke(BRIDGE_CHANNELS.subscribe, topic)) as number;
        subscriptions.attach(id, listener);
        return id;
      } finally {
        done();
      }
    },
    async unsubscribe(subscription: number): Promise<void> {
      subscriptions.detach(subscription);
      await ipc.invoke(BRIDGE_CHANNELS.unsubscribe, subscription);
    },
    dialogs: {
      async openFolder(options?: OpenFolderOptions): Promise<string | null> {
        const r = await ipc.invoke(BRIDGE_CHANNELS.openFolder, options ?? {});
        return typeof r === 'string' ? r : null;
      },
    },
    onMenu(listener: (command: MenuCommand) => void): () => void {
      const wrapped = (_e: unknown, command: unknown) => { if (command && typeof command === 'object') listener(command as MenuCommand); };
      ipc.on(BRIDGE_CHANNELS.menu, wrapped);
      return () => { ipc.removeListener(BRIDGE_CHANNELS.menu, wrapped); };
    },
  };
  return bridge;
}
