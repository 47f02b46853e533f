// Defects found by the reliability review of `serve` (issue 10): one request must never crash the
// server (D1: a malformed cookie escape, on HTTP and on the WebSocket upgrade), and every refused
// response carries the security headers (CSP included).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as http from 'node:http';
import * as net from 'node:net';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { startServer, TOKEN_COOKIE, type RunningServer } from '../../core/server/server.js';
import { connectWorkbench } from '../../core/server/ws-client.js';
import { isolateHome, tempDir } from '../api/helpers.js';

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => { res.resume(); res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers })); }).on('error', reject);
  });
}

/** Send raw bytes, return what came back before the server closed (or 5 s passed). */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(text));
    let out = '';
    s.on('data', (d) => { out += d.toString('utf8'); });
    const done = () => resolve(out);
    s.on('close', done);
    s.on('error', done);
    setTimeout(() => { s.destroy(); }, 5000).unref();
  });
}

describe('serve: hostile requests', () => {
  let d: Dispatcher;
  let server: RunningServer;
  beforeAll(async () => {
    isolateHome();
    d = createDispatcher({ host: 'serve' });
    server = await startServer({ dispatcher: d, staticDir: tempDir() });
  });
  afterAll(async () => { await server.close(); await d.dispose(); });

  it('a malformed cookie escape is a wrong token (401), not a crash, on HTTP and on the upgrade (D1)', async () => {
    const bad = `${TOKEN_COOKIE}=%E0%A4%A`;
    expect((await get(`${server.origin}/`, { Cookie: bad })).status).toBe(401);
    await expect(connectWorkbench(`ws://127.0.0.1:${server.port}/api`, { headers: { Cookie: bad } })).rejects.toThrow(/HTTP 401/);
    // still serving, and the right token in the URL still wins over a bad cookie
    expect((await get(`${server.origin}/?token=${server.token}`, { Cookie: bad })).status).toBe(200);
    const client = await connectWorkbench(`${server.wsUrl}`, { headers: { Cookie: bad } });
    expect((await client.projects.info({})).project).toBeNull();
    client.close();
  });

  it('a second token cookie planted by another 127.0.0.1 page does not lock the user out (every cookie is checked)', async () => {
    const planted = `${TOKEN_COOKIE}=planted-by-another-page; ${TOKEN_COOKIE}=${server.token}`;
    expect((await get(`${server.origin}/`, { Cookie: planted })).status).toBe(200);
    const client = await connectWorkbench(`ws://127.0.0.1:${server.port}/api`, { headers: { Cookie: planted } });
    expect((await client.projects.info({})).project).toBeNull();
    client.close();
    // only wrong cookies: still refused
    expect((await get(`${server.origin}/`, { Cookie: `${TOKEN_COOKIE}=a; ${TOKEN_COOKIE}=%E0%A4%A` })).status).toBe(401);
  });

  it('refused WebSocket upgrades carry the CSP like every other response', async () => {
    const reply = await raw(server.port, `GET /nope HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n`
      + 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 404/);
    expect(reply).toMatch(/Content-Security-Policy: default-src 'self'/);
    const noToken = await raw(server.port, `GET /api HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n`
      + 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
    expect(noToken).toMatch(/^HTTP\/1\.1 401/);
    expect(noToken).toMatch(/Content-Security-Policy:/);
    expect((await get(`${server.origin}/`)).headers['content-security-policy']).toMatch(/default-src 'self'/);
  });
});
