// The IPC-style transport pair: an in-memory message channel with the same semantics as Electron
// ipcMain/ipcRenderer (asynchronous delivery, structured-clone of plain JSON, close). Used in
// tests where the Electron binary is absent; electron/ implements the same Transport interface
// with ipcMain.on/webContents.send (host side) and the preload bridge (client side).
import type { Transport } from './client.js';

export interface ChannelPair<A, B> { host: Transport<A, B>; client: Transport<B, A> }

export function createChannelPair<HostOut, ClientOut>(): ChannelPair<HostOut, ClientOut> {
  const hostListeners = new Set<(m: ClientOut) => void>();
  const clientListeners = new Set<(m: HostOut) => void>();
  const closeListeners = new Set<(reason: string) => void>();
  let closed = false;
  const deliver = <T>(listeners: Set<(m: T) => void>, message: T) => {
    if (closed) throw new Error('channel closed');
    const copy = structuredClone(message);          // what crossing a process boundary does
    setTimeout(() => { if (!closed) for (const l of [...listeners]) l(copy); }, 0);
  };
  const close = (reason: string) => {
    if (closed) return;
    closed = true;
    for (const l of [...closeListeners]) l(reason);
  };
  const side = <Out, In>(out: Set<(m: Out) => void>, inn: Set<(m: In) => void>): Transport<Out, In> => ({
    send: (m: Out) => deliver(out, m),
    onMessage: (l: (m: In) => void) => { inn.add(l); return () => { inn.delete(l); }; },
    onClose: (l: (reason: string) => void) => { closeListeners.add(l); return () => { closeListeners.delete(l); }; },
    close: () => close('closed'),
  });
  return {
    host: side<HostOut, ClientOut>(clientListeners, hostListeners),
    client: side<ClientOut, HostOut>(hostListeners, clientListeners),
  };
}
