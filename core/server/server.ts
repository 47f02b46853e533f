// Browser mode: an HTTP + WebSocket server on 127.0.0.1 (by default) that serves the built
// renderer (dist-renderer/) and the WorkbenchApi over a WebSocket at /api.
//
// Security: a random access token (crypto.randomBytes) is required on every HTTP request
// (?token=..., then an HttpOnly SameSite=Strict cookie) and on the WebSocket upgrade; the Host
// header must name this server (DNS rebinding) and a WebSocket Origin must be this server's;
// binding a non-loopback interface needs allowRemote; strict security headers and CSP.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Dispatcher } from '../host/dispatcher.js';
import { serveConnection } from '../host/rpc-server.js';
import type { WireResponse } from '../api/contract.js';
import { WorkbenchError } from '../api/errors.js';
import { repoRoot } from '../host/system-info.js';

export const TOKEN_COOKIE = 'spa_workbench_token';
export const API_PATH = '/api';

export interface ServerOptions {
  dispatcher: Pick<Dispatcher, 'call' | 'subscribe'>;
  host?: string;                 // default 127.0.0.1
  port?: number;                 // default 0 = a free port
  allowRemote?: boolean;         // required to bind a non-loopback address
  token?: string;                // default: 32 random bytes, hex
  staticDir?: string;            // default: <repo>/dist-renderer
  log?: (line: string) => void;
}

export interface RunningServer {
  url: string;                   // http://host:port/?token=...
  origin: string;                // http://host:port
  wsUrl: string;                 // ws://host:port/api?token=...
  token: string;
  host: string;
  port: number;
  close(): Promise<void>;
}

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || (net.isIPv4(h) && h.startsWith('127.'));
}

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png',
  '.jpg': 'image/jpeg', '.ico': 'image/x-icon', '.woff2': 'font/woff2', '.woff': 'font/woff', '.wasm': 'application/wasm',
  '.map': 'application/json; charset=utf-8', '.txt': 'text/plain; charset=utf-8', '.webmanifest': 'application/manifest+json',
};

function securityHeaders(host: string, port: number): Record<string, string> {
  const ws = `ws://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    'Content-Security-Policy': [
      "default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data: blob:",
      "font-src 'self' data:", `connect-src 'self' ${ws}`, "worker-src 'self' blob:", "object-src 'none'",
      "base-uri 'none'", "frame-ancestors 'none'", "form-action 'none'",
    ].join('; '),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',          // the token is in the URL: never leak it
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=()',
  };
}

function tokenEquals(a: string | null | undefined, b: string): boolean {
  if (!a) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Every value of the token cookie in a Cookie header: another page on 127.0.0.1 (any port shares the
 * cookie jar) can plant a second cookie of the same name, and the browser may send it first, so all
 * of them are checked, never only the first.
 */
function cookieTokens(header: string | undefined): string[] {
  if (!header) return [];
  const out: string[] = [];
  for (const part of header.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k !== TOKEN_COOKIE) continue;
    // A malformed escape (%E0%A4%A) is a wrong token, not a crash: any local page can send one.
    try { out.push(decodeURIComponent(v.join('='))); } catch { /* a wrong one: the others are still checked */ }
  }
  return out;
}

function cookieHasToken(header: string | undefined, token: string): boolean {
  return cookieTokens(header).some((c) => tokenEquals(c, token));
}

const NOT_BUILT = `<!doctype html><html><head><meta charset="utf-8"><title>SPA Workbench</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 4em auto">
<h1>SPA Workbench</h1>
<p>The server is running and the API is available at <code>${API_PATH}</code>, but the user interface has not been built.</p>
<p>Build it with <code>npm run build:renderer</code>, then reload this page.</p>
</body></html>`;

export async function startServer(o: ServerOptions): Promise<RunningServer> {
  const host = o.host ?? '127.0.0.1';
  if (!isLoopback(host) && !o.allowRemote) {
    throw new WorkbenchError('ValidationError', `refusing to bind ${host}: it is not a loopback address, so anyone who can reach this machine ` +
      `could try to use the workbench. Pass --allow-remote to do it anyway (the access token is still required), or use an SSH tunnel to 127.0.0.1.`, {
      where: '--host', expected: 'a loopback address (127.0.0.1, ::1, localhost) or --allow-remote', received: host,
    });
  }
  const token = o.token ?? randomBytes(32).toString('hex');
  const staticDir = path.resolve(o.staticDir ?? path.join(repoRoot, 'dist-renderer'));
  const log = o.log ?? (() => undefined);
  let port = 0;
  const allowedHosts = () => new Set([`${host}:${port}`, `[${host}]:${port}`, `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]);

  const hostOk = (req: http.IncomingMessage): boolean => {
    if (!isLoopback(host)) return true;       // remote binding: the token protects it
    return !!req.headers.host && allowedHosts().has(req.headers.host);
  };

  const server = http.createServer((req, res) => {
    const headers = securityHeaders(host, port);
    const deny = (status: number, text: string) => {
      res.writeHead(status, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(text);
    };
    if (!hostOk(req)) return deny(421, `wrong Host header ${JSON.stringify(req.headers.host)}: use the URL printed by spa-workbench serve`);
    if (req.method !== 'GET' && req.method !== 'HEAD') return deny(405, 'only GET and HEAD are served; the API is on the WebSocket at /api');
    let url: URL;
    try { url = new URL(req.url ?? '/', 'http://localhost'); } catch { return deny(400, 'bad request URL'); }
    const queryToken = url.searchParams.get('token');
    const ok = tokenEquals(queryToken, token) || cookieHasToken(req.headers.cookie, token);
    if (!ok) {
      return deny(401, `${queryToken ? 'wrong' : 'missing'} access token: open the URL that \`spa-workbench serve\` printed (it ends in ?token=...)`);
    }
    const extra: Record<string, string> = {};
    if (tokenEquals(queryToken, token)) extra['Set-Cookie'] = `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`;
    let rel: string;
    try { rel = decodeURIComponent(url.pathname); } catch { return deny(400, 'bad path encoding'); }
    const file = path.resolve(staticDir, `.${rel}`);
    if (file !== staticDir && !file.startsWith(staticDir + path.sep)) return deny(403, 'path outside the app folder');
    let target = file;
    try {
      if (!fs.existsSync(target) || fs.statSync(target).isDirectory()) target = path.join(staticDir, 'index.html'); // SPA fallback
    } catch { target = path.join(staticDir, 'index.html'); }
    if (!fs.existsSync(target)) {
      res.writeHead(200, { ...headers, ...extra, 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      return void res.end(req.method === 'HEAD' ? undefined : NOT_BUILT);
    }
    const type = MIME[path.extname(target).toLowerCase()] ?? 'application/octet-stream';
    res.writeHead(200, { ...headers, ...extra, 'Content-Type': type, 'Cache-Control': target.endsWith('.html') ? 'no-store' : 'private, max-age=3600' });
    if (req.method === 'HEAD') return void res.end();
    fs.createReadStream(target).on('error', () => res.destroy()).pipe(res);
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  const sockets = new Set<WebSocket>();
  server.on('upgrade', (req, socket, head) => {
    const refuse = (status: number, text: string) => {
      // The same security headers (CSP included) as every HTTP response.
      const extra = Object.entries(securityHeaders(host, port)).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      const body = Buffer.from(text, 'utf8');
      socket.write(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: text/plain; charset=utf-8\r\n${extra}`
        + `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
      socket.end(body);
      setTimeout(() => socket.destroy(), 2000).unref();
    };
    socket.on('error', () => socket.destroy());   // a client that resets mid-handshake is not our error
    let url: URL;
    try { url = new URL(req.url ?? '/', 'http://localhost'); } catch { return refuse(400, 'bad request URL'); }
    if (url.pathname !== API_PATH) return refuse(404, `the API WebSocket is at ${API_PATH}`);
    if (!hostOk(req)) return refuse(421, 'wrong Host header');
    const origin = req.headers.origin;
    if (origin && !allowedHosts().has(origin.replace(/^https?:\/\//, '')) && isLoopback(host)) return refuse(403, `origin ${origin} may not use this API`);
    if (!tokenEquals(url.searchParams.get('token'), token) && !cookieHasToken(req.headers.cookie, token))
      return refuse(401, 'missing or wrong access token');
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      const messageListeners = new Set<(m: unknown) => void>();
      const closeListeners = new Set<(r: string) => void>();
      ws.on('message', (data, isBinary) => {
        if (isBinary) return;
        let msg: unknown;
        try { msg = JSON.parse(data.toString()); } catch { log('websocket: a message was not JSON; ignored'); return; }
        for (const l of messageListeners) l(msg);
      });
      ws.on('close', (code) => { sockets.delete(ws); for (const l of [...closeListeners]) l(`closed (${code})`); });
      ws.on('error', (err) => log(`websocket error: ${err.message}`));
      serveConnection(o.dispatcher, {
        send: (m: WireResponse) => { if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(m)); },
        onMessage: (l) => { messageListeners.add(l); return () => { messageListeners.delete(l); }; },
        onClose: (l) => { closeListeners.add(l); return () => { closeListeners.delete(l); }; },
        close: () => ws.close(),
      }, { onProtocolError: (m) => log(`websocket: ${m}`) });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, host, () => { server.off('error', reject); resolve(); });
  });
  port = (server.address() as net.AddressInfo).port;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const origin = `http://${hostPart}:${port}`;
  return {
    url: `${origin}/?token=${token}`,
    origin,
    wsUrl: `ws://${hostPart}:${port}${API_PATH}?token=${token}`,
    token, host, port,
    close: () => new Promise<void>((resolve) => {
      for (const ws of sockets) ws.terminate();
      wss.close();
      server.closeAllConnections?.();
      server.close(() => resolve());
    }),
  };
}
