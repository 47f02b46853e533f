// Picks the transport: the Electron preload bridge when present (window.spa), otherwise the
// WebSocket of `serve`, with the access token from the page URL (?token=...), kept in
// sessionStorage so reloads and hash navigation keep working.
import type { SpaBridge } from '../../../electron/bridge.js';
import { createClient, type Client } from './client.js';
import { IpcTransport } from './ipc-transport.js';
import { WsTransport } from './ws-transport.js';

/** Path of the API WebSocket on the serve host (core/server). */
export const WS_PATH = '/api';
const TOKEN_KEY = 'spa-workbench.token';

export function bridge(): SpaBridge | null {
  const b = (globalThis as { spa?: SpaBridge }).spa;
  return b && b.bridgeVersion === 1 ? b : null;
}

export function readToken(loc: Pick<Location, 'search'> = location): string | null {
  const fromUrl = new URLSearchParams(loc.search).get('token');
  if (fromUrl) {
    try { sessionStorage.setItem(TOKEN_KEY, fromUrl); } catch { /* storage unavailable */ }
    return fromUrl;
  }
  try { return sessionStorage.getItem(TOKEN_KEY); } catch { return null; }
}

export function wsUrl(loc: Pick<Location, 'protocol' | 'host'>, token: string | null): string {
  const scheme = loc.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${loc.host}${WS_PATH}${token ? `?token=${encodeURIComponent(token)}` : ''}`;
}

export function connect(): Client {
  const b = bridge();
  if (b) return createClient(new IpcTransport(b));
  return createClient(new WsTransport({ url: wsUrl(location, readToken()) }));
}
