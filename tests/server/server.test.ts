import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { isLoopback, startServer, TOKEN_COOKIE, type RunningServer } from '../../core/server/server.js';
import { connectWorkbench } from '../../core/server/ws-client.js';
import { isolateHome, tempDir } from '../api/helpers.js';

interface Reply { status: number; headers: http.IncomingHttpHeaders; body: string }
function get(url: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    }).on('error', reject);
  });
}

describe('serve: token, bind address, headers', () => {
  let d: Dispatcher;
  let server: RunningServer;
  let staticDir: string;
  beforeAll(async () => {
    isolateHome();
    d = createDispatcher({ host: 'serve' });
    staticDir = tempDir();
    fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>shell</title><div id="root"></div>');
    fs.mkdirSync(path.join(staticDir, 'assets'));
    fs.writeFileSync(path.join(staticDir, 'assets', 'app.js'), 'console.log(1)');
    server = await startServer({ dispatcher: d, staticDir });
  });
  afterAll(async () => { await server.close(); await d.dispose(); });

  it('binds loopback only by default', () => {
    expect(server.host).toBe('127.0.0.1');
    expect(isLoopback(server.host)).toBe(true);
    expect(server.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${server.port}/\\?token=[0-9a-f]{64}$`));
  });

  it('refuses to bind another interface without the explicit flag', async () => {
    await expect(startServer({ dispatcher: d, host: '0.0.0.0' })).rejects.toThrow(/--allow-remote/);
    const remote = await startServer({ dispatcher: d, host: '0.0.0.0', allowRemote: true });
    expect(remote.host).toBe('0.0.0.0');
    expect((await get(`http://127.0.0.1:${remote.port}/`)).status).toBe(401);   // the token is still required
    await remote.close();
  });

  it('refuses HTTP requests without the token or with a wrong one', async () => {
    const none = await get(`${server.origin}/`);
    expect(none.status).toBe(401);
    expect(none.body).toMatch(/missing access token/);
    expect(none.body).not.toContain('shell');
    const wrong = await get(`${server.origin}/?token=${'0'.repeat(64)}`);
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatch(/wrong access token/);
    expect((await get(`${server.origin}/assets/app.js?token=short`)).status).toBe(401);
    expect((await get(`${server.origin}/assets/app.js`, { Cookie: `${TOKEN_COOKIE}=nope` })).status).toBe(401);
  });

  it('serves the app with the token, then by cookie, with strict security headers', async () => {
    const ok = await get(server.url);
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('shell');
    const cookie = (ok.headers['set-cookie'] ?? [])[0]!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const csp = String(ok.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain(`connect-src 'self' ws://127.0.0.1:${server.port}`);
    expect(ok.headers['x-content-type-options']).toBe('nosniff');
    expect(ok.headers['referrer-policy']).toBe('no-referrer');
    const asset = await get(`${server.origin}/assets/app.js`, { Cookie: cookie.split(';')[0]! });
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    const deep = await get(`${server.origin}/runs/abc?token=${server.token}`);
    expect(deep.body).toContain('shell');                                  // SPA fallback
    const traversal = await get(`${server.origin}/..%2f..%2fpackage.json?token=${server.token}`);
    expect(traversal.body).not.toContain('"name"');
  });

  it('refuses a foreign Host header (DNS rebinding)', async () => {
    const r = await get(server.url, { Host: `evil.example:${server.port}` });
    expect(r.status).toBe(421);
  });

  it('refuses WebSocket upgrades without the token, with a wrong one, or from another origin', async () => {
    await expect(connectWorkbench(`ws://127.0.0.1:${server.port}/api`)).rejects.toThrow(/HTTP 401/);
    await expect(connectWorkbench(`ws://127.0.0.1:${server.port}/api?token=${'f'.repeat(64)}`)).rejects.toThrow(/HTTP 401/);
    await expect(connectWorkbench(server.wsUrl, { headers: { Origin: 'http://evil.example' } })).rejects.toThrow(/HTTP 403/);
    const client = await connectWorkbench(server.wsUrl, { headers: { Origin: server.origin } });
    expect((await client.system.info()).host).toBe('serve');
    client.close();
  });

  it('says how to build the UI when dist-renderer is missing', async () => {
    const bare = await startServer({ dispatcher: d, staticDir: path.join(tempDir(), 'missing') });
    const r = await get(bare.url);
    expect(r.status).toBe(200);
    expect(r.body).toContain('npm run build:renderer');
    await bare.close();
  });
});
