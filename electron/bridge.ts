// The Electron preload bridge (window.spa): the ONE declaration of what the preload exposes.
// electron/preload.ts implements it (type-only import of this file); the IPC transport uses it.
// Named, typed functions only: no raw ipcRenderer, no generic channel.
// This file must stay free of DOM and Node types (both tsconfigs compile it).
import type { ApiError, ApiMethodName, EventTopic, WorkbenchEvent } from '../core/api/contract.js';

/** Reply envelope of bridge.invoke: Electron's ipcRenderer.invoke would flatten thrown errors. */
export type BridgeReply = { ok: true; result: unknown } | { ok: false; error: ApiError };

/** Commands the native menu sends to the renderer. */
export type MenuCommand =
  | { type: 'new-project' }
  | { type: 'open-project' }
  | { type: 'open-recent'; path: string }
  | { type: 'navigate'; view: string }
  | { type: 'toggle-theme' }
  | { type: 'engine-died'; message: string }
  | { type: 'project-opened'; path: string };

export interface OpenFolderOptions {
  title?: string;
  /** Allow creating a new folder in the dialog (for "New project"). */
  create?: boolean;
  defaultPath?: string;
}

export interface SpaBridge {
  readonly bridgeVersion: 1;
  readonly platform: string;
  /** Call an API method by its wire name ("runs.create"); only contract method names pass. */
  invoke(method: ApiMethodName, params: unknown): Promise<BridgeReply>;
  /** Subscribe to an event topic; resolves to a subscription id used by unsubscribe. */
  subscribe(topic: EventTopic, listener: (event: WorkbenchEvent) => void): Promise<number>;
  unsubscribe(subscription: number): Promise<void>;
  dialogs: {
    /** Native folder picker; null when cancelled. */
    openFolder(options?: OpenFolderOptions): Promise<string | null>;
  };
  /** Menu commands from the main process; returns a disposer. */
  onMenu(listener: (command: MenuCommand) => void): () => void;
}

/** Names of the bridge's own IPC channels (main ↔ preload). */
export const BRIDGE_CHANNELS = {
  invoke: 'spa:invoke',
  subscribe: 'spa:subscribe',
  unsubscribe: 'spa:unsubscribe',
  event: 'spa:event',
  openFolder: 'spa:dialog-open-folder',
  menu: 'spa:menu',
} as const;
