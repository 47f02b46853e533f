// The desktop shell's main process without the Electron binary: dist-electron/main.js runs under
// plain Node with a fake `electron` module (fake-electron/), and the test drives it like the
// renderer would — the app:// protocol with its CSP, the IPC handlers with their sender check,
// a run executed in a (forked) engine process through ElectronUtilityLauncher, window settings,
// navigation denial and a clean quit. The real binary is covered by electron.spec.ts.
import { expect, test } from '@playwright/test';
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const APP = 'app://bundle';

type Msg = { op: string; id?: number; result?: unknown; error?: string; channel?: string; args?: unknown[]; serviceName?: string; code?: number };

class MainProcess {
  readonly child: ChildProcess;
  readonly messages: Msg[] = [];
  private nextId = 1;
  private readonly waiting = new Map<number, (m: Msg) => void>();
  output = '';
  constructor(home: string) {
    this.child = fork(join(root, 'dist-electron', 'main.js'), [], {
      cwd: root,
      execArgv: ['--import', new URL('./fake-electron/register.mjs', import.meta.url).href],
      env: { ...process.env, SPA_WORKBENCH_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.child.stdout!.on('data', (c: Buffer) => { this.output += c.toString(); });
    this.child.stderr!.on('data', (c: Buffer) => { this.output += c.toString(); });
    this.child.on('message', (m: Msg) => {
      this.messages.push(m);
      if (m.op === 'reply' && m.id !== undefined) { this.waiting.get(m.id)?.(m); this.waiting.delete(m.id); }
    });
  }
  request(op: string, body: Record<string, unknown> = {}): Promise<Msg> {
    const id = this.nextId++;
    return new Promise((resolveReply, reject) => {
      const t = setTimeout(() => reject(new Error(`no reply to ${op} within 30 s; main output:\n${this.output}`)), 30_000);
      this.waiting.set(id, (m) => { clearTimeout(t); resolveReply(m); });
      this.child.send({ op, id, ...body });
    });
  }
  async invoke(channel: string, args: unknown[], frameUrl = `${APP}/index.html`): Promise<unknown> {
    const r = await this.request('invoke', { channel, args, frameUrl });
    if (r.error) throw new Error(r.error);
    return r.result;
  }
  async api(method: string, params: unknown = {}): Promise<any> {
    const reply = await this.invoke('spa:invoke', [method, params]) as { ok: boolean; result?: unknown; error?: { message: string } };
    if (!reply.ok) throw new Error(`${method}: ${reply.error?.message}`);
    return reply.result;
  }
}

let main: MainProcess;

test.beforeAll(() => {
  const r = spawnSync(process.execPath, [join(root, 'build', 'build-electron.mjs')], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`node build/build-electron.mjs failed:\n${r.stdout}\n${r.stderr}`);
  if (!existsSync(join(root, 'dist-renderer', 'index.html'))) {
    const v = spawnSync(process.execPath, [join(root, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', 'renderer/vite.config.ts'], { cwd: root, encoding: 'utf8' });
    if (v.status !== 0) throw new Error(`renderer build failed:\n${v.stderr}`);
  }
  main = new MainProcess(mkdtempSync(join(tmpdir(), 'spa-fake-electron-home-')));
});

test.afterAll(() => { if (main?.child.exitCode === null) main.child.kill(); });

test.describe.configure({ mode: 'serial' });

test('the main process opens one secure window on app://', async () => {
  await expect.poll(async () => ((await main.request('state')).result as { windows: number }).windows, { timeout: 120_000 }).toBe(1);
  const state = (await main.request('state')).result as {
    url: string; webPreferences: Record<string, unknown>; menu: string[]; privileged: Array<{ scheme: string; privileges: Record<string, boolean> }>; crashUpload: boolean; permission: boolean | null;
  };
  expect(state.url).toBe(`${APP}/index.html`);
  expect(state.webPreferences).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true, webviewTag: false });
  expect(String(state.webPreferences['preload'])).toMatch(/dist-electron[\\/]preload\.cjs$/);
  expect(state.menu).toEqual(expect.arrayContaining(['&File', '&View', '&Help']));
  expect(state.privileged).toEqual([expect.objectContaining({ scheme: 'app', privileges: expect.objectContaining({ standard: true, secure: true }) })]);
  expect(state.crashUpload).toBe(false);
  expect(state.permission).toBe(false);
});

test('app:// serves the renderer build with the strict CSP and nothing outside it', async () => {
  const index = (await main.request('fetch', { url: `${APP}/index.html` })).result as { status: number; headers: Record<string, string>; head: string };
  expect(index.status).toBe(200);
  expect(index.headers['content-type']).toMatch(/text\/html/);
  expect(index.headers['content-security-policy']).toContain("script-src 'self'");
  expect(index.headers['content-security-policy']).not.toContain('unsafe-eval');
  expect(index.head).toContain('<!doctype html>');
  const outside = (await main.request('fetch', { url: `${APP}/%2e%2e/%2e%2e/package.json` })).result as { status: number; headers: Record<string, string> };
  expect(outside.status).toBe(404);
  expect(outside.headers['content-security-policy']).toContain("default-src 'self'");   // a 404 carries the CSP too (issue 10)
  const missing = (await main.request('fetch', { url: `${APP}/no-such-file.js` })).result as { status: number; headers: Record<string, string> };
  expect(missing.status).toBe(404);
  expect(missing.headers['content-security-policy']).toContain("default-src 'self'");
});

test('IPC: the app frame may call the API, any other frame is refused', async () => {
  const project = await main.api('projects.create', { path: join(mkdtempSync(join(tmpdir(), 'spa-fake-electron-proj-')), 'p'), name: 'desktop' });
  expect(project.name).toBe('desktop');
  const info = await main.api('system.info');
  expect(info.host).toBe('electron');
  for (const frameUrl of ['https://evil.example/', 'file:///etc/passwd', 'app://other/index.html']) {
    expect(await main.invoke('spa:invoke', ['projects.info', {}], frameUrl)).toMatchObject({ ok: false, error: { name: 'Forbidden' } });
    await expect(main.invoke('spa:subscribe', [{ kind: 'project' }], frameUrl)).rejects.toThrow(/not the SPA Workbench app/);
    await expect(main.invoke('spa:dialog-open-folder', [{}], frameUrl)).rejects.toThrow(/not the SPA Workbench app/);
  }
  const unknown = await main.invoke('spa:invoke', ['fs.rm', {}]) as { ok: boolean; error: { name: string } };
  expect(unknown).toMatchObject({ ok: false, error: { name: 'UnknownMethod' } });
});

test('a run executes in an engine process started by the utility launcher, events reach the window', async () => {
  const run = await main.api('runs.create', { preset: 'diagnostic', size: 'smoke' });
  const sub = await main.invoke('spa:subscribe', [{ kind: 'run', runId: run.id }]);
  expect(typeof sub).toBe('number');
  await main.api('runs.start', { runId: run.id });
  await expect.poll(async () => (await main.api('runs.get', { runId: run.id })).status, { timeout: 120_000 }).toBe('completed');
  const forks = main.messages.filter((m) => m.op === 'utility-fork');
  expect(forks.map((m) => m.serviceName)).toContain(`spa-engine-${run.id}`);
  const events = main.messages.filter((m) => m.op === 'send' && m.channel === 'spa:event').map((m) => (m.args![0] as { event: { event: { type: string } } }).event.event.type);
  expect(events).toEqual(expect.arrayContaining(['progress', 'metric', 'status']));
});

test('navigation away and new windows are denied', async () => {
  const r = (await main.request('navigate', { url: 'https://example.com/' })).result as { prevented: boolean; windowOpen: string };
  expect(r).toEqual({ prevented: true, windowOpen: 'deny' });
  const same = (await main.request('navigate', { url: `${APP}/index.html#/runs` })).result as { prevented: boolean };
  expect(same.prevented).toBe(false);
});

test('a subframe cannot navigate away either (will-frame-navigate), and every renderer is sandboxed (app.enableSandbox)', async () => {
  const away = (await main.request('frameNavigate', { url: 'https://example.com/frame' })).result as { prevented: boolean };
  expect(away.prevented).toBe(true);
  const same = (await main.request('frameNavigate', { url: `${APP}/index.html#/runs` })).result as { prevented: boolean };
  expect(same.prevented).toBe(false);
  const state = (await main.request('state')).result as { sandboxEnabled: boolean };
  expect(state.sandboxEnabled).toBe(true);
});

test('quitting stops cleanly', async () => {
  const exited = new Promise<number | null>((r) => main.child.once('exit', (code) => r(code)));
  await main.request('quit');
  expect(await exited).toBe(0);
});
