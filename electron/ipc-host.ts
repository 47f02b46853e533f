// Main-process side of the preload bridge (renderer/src/api/bridge.ts): ipcMain handlers that
// check the sender frame, call the one dispatcher, and push subscribed events to the window.
// No Electron import here (types are structural) so tests can drive it with a stub channel.
import type { ApiError, EventTopic, WorkbenchEvent } from '../core/api/contract.js';
import { EventTopicSchema, methodSpec } from '../core/api/contract.js';
import { BRIDGE_CHANNELS, type BridgeReply, type OpenFolderOptions } from './bridge.js';

/** The part of Electron's IpcMainInvokeEvent the host uses. */
export interface InvokeEventLike {
  senderFrame: { url: string; parent?: unknown | null } | null;
  sender: { id: number; send(channel: string, ...args: unknown[]): void; isDestroyed(): boolean; once?(event: 'destroyed', listener: () => void): unknown };
}
export interface IpcMainLike {
  handle(channel: string, listener: (event: InvokeEventLike, ...args: unknown[]) => unknown): void;
  removeHandler(channel: string): void;
}
export interface DispatcherLike {
  call(method: string, params?: unknown): Promise<unknown>;
  subscribe(topic: EventTopic, listener: (event: WorkbenchEvent) => void): () => void;
}
export interface IpcHostOptions {
  dispatcher: DispatcherLike;
  /** Is this frame URL the app itself? (security.ts isTrustedOrigin) */
  isTrusted(frameUrl: string): boolean;
  openFolder(event: InvokeEventLike, options: OpenFolderOptions): Promise<string | null>;
  /** Serialise any thrown value as an ApiError (core/api/errors.ts toApiError). */
  toApiError(err: unknown, where: string): ApiError;
  onRejected?(channel: string, frameUrl: string | null): void;
}

class UntrustedSender extends Error {
  constructor(channel: string, url: string | null) {
    super(`IPC ${channel} refused: the sender frame (${url ?? 'unknown'}) is not the SPA Workbench app`);
    this.name = 'Forbidden';
  }
}

/** Register the bridge's handlers; returns a function that removes them and all subscriptions. */
export function registerIpcHandlers(ipcMain: IpcMainLike, options: IpcHostOptions): () => void {
  let nextSubscription = 1;
  const subscriptions = new Map<number, { senderId: number; release: () => void }>();

  const check = (channel: string, event: InvokeEventLike) => {
    const frame = event.senderFrame;
    const url = frame?.url ?? null;
    // main frame only (no iframes), and only the app's own origin
    if (!frame || (frame.parent !== null && frame.parent !== undefined) || !url || !options.isTrusted(url)) {
      options.onRejected?.(channel, url);
      throw new UntrustedSender(channel, url);
    }
  };

  ipcMain.handle(BRIDGE_CHANNELS.invoke, async (event, method, params): Promise<BridgeReply> => {
    try {
      check(BRIDGE_CHANNELS.invoke, event);
      if (typeof method !== 'string' || !methodSpec(method)) {
        return { ok: false, error: { name: 'UnknownMethod', message: `unknown API method ${JSON.stringify(method)}`, details: { where: 'ipc invoke', expected: 'a method name of the WorkbenchApi contract, e.g. "runs.list"', received: JSON.stringify(method) } } };
      }
      return { ok: true, result: await options.dispatcher.call(method, params) };
    } catch (err) {
      return { ok: false, error: options.toApiError(err, typeof method === 'string' ? method : 'ipc invoke') };
    }
  });

  ipcMain.handle(BRIDGE_CHANNELS.subscribe, (event, topic) => {
    check(BRIDGE_CHANNELS.subscribe, event);
    const parsed = EventTopicSchema.safeParse(topic);
    if (!parsed.success) throw new Error(`subscribe: expected {kind:"project"} or {kind:"run", runId}, received ${JSON.stringify(topic)}`);
    const id = nextSubscription++;
    const sender = event.sender;
    const release = options.dispatcher.subscribe(parsed.data, (ev) => {
      if (sender.isDestroyed()) { drop(id); return; }
      sender.send(BRIDGE_CHANNELS.event, { subscription: id, event: ev });
    });
    subscriptions.set(id, { senderId: sender.id, release });
    sender.once?.('destroyed', () => { for (const [sid, s] of subscriptions) if (s.senderId === sender.id) drop(sid); });
    return id;
  });

  ipcMain.handle(BRIDGE_CHANNELS.unsubscribe, (event, subscription) => {
    check(BRIDGE_CHANNELS.unsubscribe, event);
    const s = typeof subscription === 'number' ? subscriptions.get(subscription) : undefined;
    if (s && s.senderId === event.sender.id) drop(subscription as number);
    return null;
  });

  ipcMain.handle(BRIDGE_CHANNELS.openFolder, (event, opts) => {
    check(BRIDGE_CHANNELS.openFolder, event);
    const o = (opts && typeof opts === 'object' ? opts : {}) as Record<string, unknown>;
    const clean: OpenFolderOptions = {
      ...(typeof o['title'] === 'string' ? { title: o['title'].slice(0, 200) } : {}),
      ...(o['create'] === true ? { create: true } : {}),
      ...(typeof o['defaultPath'] === 'string' ? { defaultPath: o['defaultPath'] } : {}),
    };
    return options.openFolder(event, clean);
  });

  function drop(id: number) {
    const s = subscriptions.get(id);
    if (!s) return;
    subscriptions.delete(id);
    s.release();
  }

  return () => {
    for (const ch of [BRIDGE_CHANNELS.invoke, BRIDGE_CHANNELS.subscribe, BRIDGE_CHANNELS.unsubscribe, BRIDGE_CHANNELS.openFolder]) ipcMain.removeHandler(ch);
    for (const id of [...subscriptions.keys()]) drop(id);
  };
}
