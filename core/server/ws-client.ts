// Node WebSocket client of the workbench server (tests, scripts, a CLI talking to a running
// serve). The browser uses the same protocol through renderer/api.
import WebSocket from 'ws';
import type { WireRequest, WireResponse, WorkbenchClient } from '../api/contract.js';
import { createRpcClient, type RpcClientOptions } from '../api/client.js';
import { WorkbenchError } from '../api/errors.js';

/** Connect to `ws://host:port/api?token=...` and return the typed client once open. */
export function connectWorkbench(wsUrl: string, options: RpcClientOptions & { headers?: Record<string, string> } = {}): Promise<WorkbenchClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl, { headers: options.headers });
    const messageListeners = new Set<(m: WireResponse) => void>();
    const closeListeners = new Set<(r: string) => void>();
    ws.on('message', (data) => {
      let msg: WireResponse;
      try { msg = JSON.parse(data.toString()) as WireResponse; } catch { return; }
      for (const l of messageListeners) l(msg);
    });
    ws.on('close', (code) => { for (const l of [...closeListeners]) l(`socket closed (${code})`); });
    ws.once('unexpected-response', (_req, res) => {
      reject(
        new WorkbenchError('TransportError', `the server refused the WebSocket: HTTP ${res.statusCode}`, {
          where: wsUrl.replace(/token=[^&]+/, 'token=***'),
          received: String(res.statusCode),
        }),
      );
    });
    ws.once('error', (err) =>
      reject(new WorkbenchError('TransportError', `could not connect: ${err.message}`, { where: wsUrl.replace(/token=[^&]+/, 'token=***') })),
    );
    ws.once('open', () => {
      resolve(createRpcClient({
        send: (m: WireRequest) => ws.send(JSON.stringify(m)),
        onMessage: (l) => { messageListeners.add(l); return () => { messageListeners.delete(l); }; },
        onClose: (l) => { closeListeners.add(l); return () => { closeListeners.delete(l); }; },
        close: () => ws.close(),
      }, options));
    });
  });
}
