// Hostile traffic to `serve` on 127.0.0.1: bad cookies, bad Host and Origin headers, path
// traversal, malformed and huge WebSocket frames, junk protocol messages and bursts of calls.
// After each family the server must still answer a valid call; nothing may leak a file outside
// the static folder. Shared by tests/fuzz/server.fuzz.test.ts and bench/reliability.ts.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import WebSocket from 'ws';
import { createDispatcher } from '../../core/host/dispatcher.js';
import { startServer, TOKEN_COOKIE } from '../../core/server/server.js';
import { NASTY_STRINGS, NoEngineLauncher, rng } from './fuzz-lib.js';

export interface ServerFuzzResult {
  httpRequests: number; wsConnections: number; wsFrames: number; bytesSent: number;
  statuses: Record<string, number>;
  leaks: string[];            // responses that served something they must not
  failures: string[];         // the server stopped answering, or answered wrongly
  aliveChecks: number;
  seconds: number;
}

function httpGet(port: number, p: string, headers: Record<string, string>): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, method: 'GET', headers, timeout: 20_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { if (body.length < 100_000) body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('timeout', () => { req.destroy(); resolve({ status: -1, body: 'timeout', headers: {} }); });
    req.on('error', (e) => resolve({ status: -2, body: e.message, headers: {} }));
    req.end();
  });
}

function rawSend(port: number, data: Buffer | string, waitMs = 3000): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    const s = net.connect(port, '127.0.0.1', () => s.write(data));
    s.on('data', (d) => { if (out.length < 10_000) out += d.toString('latin1'); });
    const done = () => resolve(out);
    s.on('close', done);
    s.on('error', done);
    setTimeout(() => s.destroy(), waitMs).unref();
  });
}

/** Open a WebSocket (or fail), send frames, collect replies until quiet. */
function wsSession(url: string, headers: Record<string, string>, frames: Array<string | Buffer>, waitMs = 1500, expectReplies = Infinity): Promise<{ opened: boolean; replies: string[]; closeCode: number | null; error: string | null }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers, maxPayload: 64 * 1024 * 1024 });
    const replies: string[] = [];
    let opened = false;
    let closeCode: number | null = null;
    let error: string | null = null;
    let timer: NodeJS.Timeout | undefined;
    const finish = () => { clearTimeout(timer); try { ws.terminate(); } catch { /* closed */ } resolve({ opened, replies, closeCode, error }); };
    ws.on('open', () => {
      opened = true;
      for (const f of frames) ws.send(f, { binary: Buffer.isBuffer(f) });
      timer = setTimeout(finish, waitMs);
    });
    ws.on('message', (d) => {
      if (replies.length < 10_000) replies.push(d.toString().slice(0, 64_000));
      if (replies.length >= expectReplies) finish();
    });
    ws.on('unexpected-response', (_req, res) => { error = `HTTP ${res.statusCode}`; finish(); });
    ws.on('close', (code) => { closeCode = code; finish(); });
    ws.on('error', (e) => { error = e.message; finish(); });
  });
}

export async function runServerFuzz(o: { seed: number; rounds: number }): Promise<ServerFuzzResult> {
  const started = Date.now();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-wb-sfuzz-'));
  const prevHome = process.env.SPA_WORKBENCH_HOME;
  process.env.SPA_WORKBENCH_HOME = path.join(root, 'home');
  const staticDir = path.join(root, 'static');
  fs.mkdirSync(path.join(staticDir, 'assets'), { recursive: true });
  fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>app</title>');
  fs.writeFileSync(path.join(staticDir, 'assets', 'a.js'), 'console.log(1)');
  const SECRET = `secret-${Math.random().toString(36).slice(2)}`;
  fs.writeFileSync(path.join(root, 'secret.txt'), SECRET);
  const d = createDispatcher({ host: 'serve', launcher: new NoEngineLauncher() });
  const server = await startServer({ dispatcher: d, staticDir });
  const r = rng(o.seed);
  const res: ServerFuzzResult = { httpRequests: 0, wsConnections: 0, wsFrames: 0, bytesSent: 0, statuses: {}, leaks: [], failures: [], aliveChecks: 0, seconds: 0 };
  const count = (k: string | number) => { res.statuses[String(k)] = (res.statuses[String(k)] ?? 0) + 1; };
  const host = `127.0.0.1:${server.port}`;
  const get = async (p: string, headers: Record<string, string>) => {
    res.httpRequests++;
    const reply = await httpGet(server.port, p, { Host: host, ...headers });
    count(reply.status);
    if (reply.body.includes(SECRET)) res.leaks.push(`GET ${p} served the secret file`);
    if (reply.status > 0 && !reply.headers['content-security-policy']) res.failures.push(`GET ${p} (${reply.status}) has no Content-Security-Policy`);
    return reply;
  };
  const alive = async (what: string) => {
    res.aliveChecks++;
    const s = await wsSession(server.wsUrl, {}, [JSON.stringify({ type: 'call', id: 1, method: 'projects.info', params: {} })], 10_000, 1);
    const ok = s.replies.some((x) => x.includes('"type":"result"') && x.includes('"id":1'));
    if (!ok) res.failures.push(`after ${what}: the server did not answer a valid call (${s.error ?? s.closeCode})`);
    const page = await httpGet(server.port, `/?token=${server.token}`, { Host: host });
    if (page.status !== 200) res.failures.push(`after ${what}: GET / with the token gave ${page.status}`);
  };
  try {
    for (let round = 0; round < o.rounds; round++) {
      // 1. cookies: malformed escapes, many, huge
      for (const c of ['%E0%A4%A', '%', '%%', '%zz', '\u00ff', `${'%41'.repeat(2000)}`, ';;;', '=', `x=${'y'.repeat(6000)}`]) {
        await get('/', { Cookie: `${TOKEN_COOKIE}=${c}` });
        await get('/', { Cookie: `a=1; ${TOKEN_COOKIE}=${c}; ${TOKEN_COOKIE}=${server.token.slice(1)}` });
      }
      // 2. Host / Origin
      for (const h of ['evil.example', `evil.example:${server.port}`, '', '127.0.0.1', `localhost:${server.port + 1}`, `[::1]:${server.port}x`]) {
        res.httpRequests++;
        const reply = await httpGet(server.port, `/?token=${server.token}`, { Host: h });
        count(reply.status);
        if (reply.status === 200 && h !== '') res.failures.push(`Host ${JSON.stringify(h)} was served`);
      }
      for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${server.port + 1}`, 'file://', 'x'.repeat(5000)]) {
        res.wsConnections++;
        const s = await wsSession(server.wsUrl, { Origin: origin }, [], 200);
        if (s.opened) res.failures.push(`Origin ${origin.slice(0, 40)} was accepted`);
      }
      // 3. path traversal (with the token: the static handler must stay inside its folder)
      for (const p of ['/../secret.txt', '/..%2fsecret.txt', '/%2e%2e/secret.txt', '/%2e%2e%2fsecret.txt', '/assets/../../secret.txt', '/assets/..%2f..%2fsecret.txt',
        '/%252e%252e/secret.txt', '/..\\secret.txt', '/%5c..%5csecret.txt', '//secret.txt', `/${root}/secret.txt`, '/assets/%00', '/%E0%A4%A', '/.%2e/secret.txt']) {
        await get(`${p}${p.includes('?') ? '&' : '?'}token=${server.token}`, {});
        res.bytesSent += await rawSend(server.port, `GET ${p}?token=${server.token} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`, 2000).then((t) => { if (t.includes(SECRET)) res.leaks.push(`raw GET ${p}`); return p.length; });
      }
      // 4. malformed HTTP
      for (const raw of ['GARBAGE\r\n\r\n', 'GET / HTTP/1.1\r\nHost: \r\n\r\n', `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`, 'GET / HTTP/9.9\r\n\r\n',
        `POST /api HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 5\r\n\r\nhello`, `GET /api HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n`,
        `GET /api?token=${server.token} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: bad\r\n\r\n`]) {
        res.httpRequests++;
        res.bytesSent += raw.length;
        await rawSend(server.port, raw.replace(/\r\n\r\n/, '\r\nConnection: close\r\n\r\n'), 1000);
      }
      await alive(`HTTP round ${round}`);
      // 5. WebSocket frames: not JSON, binary, wrong shapes, odd ids, unknown methods, junk subscriptions
      const frames: Array<string | Buffer> = ['', 'not json', '{', '[]', 'null', '42', '"x"', Buffer.from([0, 1, 2, 255]),
        JSON.stringify({ type: 'call' }), JSON.stringify({ type: 'call', id: 'x', method: 'runs.list' }), JSON.stringify({ type: 'call', id: 1.5, method: 'runs.list' }),
        JSON.stringify({ type: 'call', id: 2 ** 60, method: 'runs.list' }), JSON.stringify({ type: 'call', id: -1, method: '__proto__.toString' }),
        JSON.stringify({ type: 'call', id: 3, method: 'constructor.name', params: {} }), JSON.stringify({ type: 'subscribe', id: 4, topic: { kind: 'run', runId: '__proto__' } }),
        JSON.stringify({ type: 'subscribe', id: 5, topic: 'everything' }), JSON.stringify({ type: 'unsubscribe', id: 6, subscription: -7 }),
        JSON.stringify({ type: 'nope', id: 7 }), `{"type":"call","id":8,"method":"runs.list","params":${'['.repeat(5000)}${']'.repeat(5000)}}`,
        JSON.stringify({ type: 'call', id: 9, method: 'envs.render', params: { env: { id: 'sokoban', options: { width: 1e9 } }, seed: 1 } })];
      for (let i = 0; i < 30; i++) {
        const s = NASTY_STRINGS[Math.floor(r() * NASTY_STRINGS.length)]!;
        frames.push(JSON.stringify({ type: 'call', id: 100 + i, method: s, params: { path: s, runId: s, name: s } }));
      }
      res.wsConnections++;
      res.wsFrames += frames.length;
      res.bytesSent += frames.reduce((a, f) => a + f.length, 0);
      const session = await wsSession(server.wsUrl, {}, frames, 2000);
      if (!session.opened) res.failures.push(`the junk-frame session did not open (${session.error})`);
      for (const reply of session.replies) {
        const m = JSON.parse(reply) as { type: string; error?: { name: string } };
        if (m.type === 'error' && !['ValidationError', 'NotFound', 'NoProject', 'Conflict'].includes(m.error!.name)) res.failures.push(`frame answered with ${m.error!.name}: ${reply.slice(0, 200)}`);
      }
      // 6. a message over the size limit, then bad cookie on the upgrade
      const huge = Buffer.alloc(17 * 1024 * 1024, 0x61);
      res.wsConnections++; res.wsFrames++; res.bytesSent += huge.length;
      const big = await wsSession(server.wsUrl, {}, [huge.toString('latin1')], 10_000, 1);
      if (big.opened && big.closeCode !== 1009 && big.closeCode !== 1006) res.failures.push(`a 17 MiB frame closed with ${big.closeCode}, expected 1009`);
      res.wsConnections++;
      const badCookie = await wsSession(`ws://${host}/api`, { Cookie: `${TOKEN_COOKIE}=%E0%A4%A` }, [], 200);
      if (badCookie.opened) res.failures.push('the upgrade with a malformed cookie was accepted');
      // 7. a burst of concurrent calls and subscriptions on one connection
      const burst: string[] = [];
      for (let i = 0; i < 300; i++) burst.push(JSON.stringify(i % 3 === 0 ? { type: 'subscribe', id: 1000 + i, topic: { kind: 'project' } } : { type: 'call', id: 1000 + i, method: 'envs.list', params: {} }));
      res.wsConnections++; res.wsFrames += burst.length; res.bytesSent += burst.reduce((a, f) => a + f.length, 0);
      const b = await wsSession(server.wsUrl, {}, burst, 20_000, burst.length);
      const answered = new Set(b.replies.map((x) => (JSON.parse(x) as { id?: number }).id).filter((x) => x !== undefined));
      if (answered.size !== burst.length) res.failures.push(`burst: ${answered.size} of ${burst.length} requests answered`);
      await alive(`WebSocket round ${round}`);
    }
  } finally {
    await server.close();
    await d.dispose({ kill: true });
    if (prevHome === undefined) delete process.env.SPA_WORKBENCH_HOME; else process.env.SPA_WORKBENCH_HOME = prevHome;
    fs.rmSync(root, { recursive: true, force: true });
  }
  res.seconds = (Date.now() - started) / 1000;
  return res;
}
