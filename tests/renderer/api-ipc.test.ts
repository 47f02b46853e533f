// The Electron IPC path without the Electron binary: the real preload bridge (createBridge) and
// the real main-process handlers (registerIpcHandlers) over a stubbed ipcMain/ipcRenderer pair
// that clones messages like a process boundary does, with the renderer's IpcTransport on top.
import { describe, expect, it } from 'vitest';
import type { EventTopic, WorkbenchEvent } from '../../core/api/contract.js';
import { apiMethodNames, methodSpec } from '../../core/api/contract.js';
import { createBridge, type IpcRendererLike } from '../../electron/bridge-impl.js';
import { registerIpcHandlers, type InvokeEventLike, type IpcMainLike } from '../../electron/ipc-host.js';
import { isTrustedOrigin, resolveAppPath, originOf } from '../../electron/security.js';
import { createClient } from '../../renderer/src/api/client.js';
import { IpcTransport } from '../../renderer/src/api/ipc-transport.js';

type Handler = (event: InvokeEventLike, ...args: unknown[]) => unknown;

/** A fake dispatcher: validates requests with the contract's zod schemas, answers a few methods. */
function fakeDispatcher() {
  const listeners = new Map<string, Set<(e: WorkbenchEvent) => void>>();
  const key = (t: EventTopic) => (t.kind === 'run' ? `run:${t.runId}` : 'project');
  return {
    listeners,
    async call(method: string, params?: unknown) {
      const spec = methodSpec(method)!;
      const parsed = spec.request.safeParse(params);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw Object.assign(new Error(`${method}: invalid request at ${issue.path.join('.') || '(root)'}: ${issue.message}`), {
          name: 'ValidationError', details: { where: method, issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) },
        });
      }
      if (method === 'projects.recent') return { projects: [] };
      if (method === 'projects.create') return { id: 'p1', name: 'demo', path: (parsed.data as { path: string }).path, createdAt: 1, schemaVersion: 1, runCount: 0, readOnly: false, warnings: [] };
      return {};
    },
    subscribe(topic: EventTopic, l: (e: WorkbenchEvent) => void) {
      const k = key(topic);
      const set = listeners.get(k) ?? new Set();
      set.add(l);
      listeners.set(k, set);
      return () => { set.delete(l); };
    },
    emit(topic: EventTopic, e: WorkbenchEvent) { for (const l of listeners.get(key(topic)) ?? []) l(e); },
  };
}

function stubIpc(frameUrl: string) {
  const handlers = new Map<string, Handler>();
  const rendererListeners = new Map<string, Set<(e: unknown, ...a: unknown[]) => void>>();
  let destroyed = false;
  const sender = {
    id: 1,
    isDestroyed: () => destroyed,
    send: (channel: string, ...args: unknown[]) => {
      const copy = structuredClone(args);
      queueMicrotask(() => { for (const l of rendererListeners.get(channel) ?? []) l({}, ...copy); });
    },
    once: () => sender,
  };
  const frame = { url: frameUrl, parent: null };
  const ipcMain: IpcMainLike = {
    handle: (ch, l) => { handlers.set(ch, l as Handler); },
    removeHandler: (ch) => { handlers.delete(ch); },
  };
  const ipcRenderer: IpcRendererLike = {
    async invoke(channel, ...args) {
      const h = handlers.get(channel);
      if (!h) throw new Error(`No handler registered for '${channel}'`);
      const result = await h({ senderFrame: frame, sender }, ...structuredClone(args));
      return structuredClone(result);
    },
    on(channel, l) { const s = rendererListeners.get(channel) ?? new Set(); s.add(l); rendererListeners.set(channel, s); },
    removeListener(channel, l) { rendererListeners.get(channel)?.delete(l); },
  };
  return { ipcMain, ipcRenderer, handlers, frame, destroy: () => { destroyed = true; } };
}

function setup(frameUrl = 'app://bundle/index.html') {
  const dispatcher = fakeDispatcher();
  const ipc = stubIpc(frameUrl);
  const rejected: string[] = [];
  const dispose = registerIpcHandlers(ipc.ipcMain, {
    dispatcher,
    isTrusted: (url) => isTrustedOrigin(url, null),
    openFolder: async () => '/picked/folder',
    toApiError: (err) => ({ name: (err as Error).name, message: (err as Error).message, details: (err as { details?: Record<string, unknown> }).details }),
    onRejected: (ch) => rejected.push(ch),
  });
  const bridge = createBridge(ipc.ipcRenderer, new Set(apiMethodNames()), 'linux');
  const client = createClient(new IpcTransport(bridge));
  return { dispatcher, ipc, bridge, client, dispose, rejected };
}

describe('IPC bridge round trip (stubbed channel)', () => {
  it('carries a call and its result', async () => {
    const { client } = setup();
    const p = await client.projects.create({ path: '/tmp/demo' });
    expect(p.path).toBe('/tmp/demo');
    expect(client.transport).toBe('ipc');
  });

  it('carries a validation error with its details across', async () => {
    const { client } = setup();
    const err = await client.projects.create({ path: 42 as unknown as string }).catch((e: unknown) => e) as { name: string; message: string; details: { issues: unknown[] } };
    expect(err.name).toBe('ValidationError');
    expect(err.message).toMatch(/projects\.create: invalid request at path/);
    expect(err.details.issues.length).toBeGreaterThan(0);
  });

  it('refuses method names outside the contract in the preload and in main', async () => {
    const { bridge, ipc } = setup();
    const r = await bridge.invoke('fs.readFile' as never, {});
    expect(r).toMatchObject({ ok: false, error: { name: 'UnknownMethod' } });
    const direct = await ipc.ipcRenderer.invoke('spa:invoke', 'process.exit', {});
    expect(direct).toMatchObject({ ok: false, error: { name: 'UnknownMethod' } });
  });

  it('delivers subscribed events and stops after unsubscribe', async () => {
    const { client, dispatcher } = setup();
    const got: WorkbenchEvent[] = [];
    const unsub = client.subscribe({ kind: 'run', runId: 'r1' }, (e) => got.push(e));
    await new Promise((r) => setTimeout(r, 5));
    const ev: WorkbenchEvent = { kind: 'run', runId: 'r1', event: { type: 'progress', runId: 'r1', time: 1, stage: 'rl', done: 1, total: 4, etaSeconds: 3 } };
    dispatcher.emit({ kind: 'run', runId: 'r1' }, ev);
    await new Promise((r) => setTimeout(r, 5));
    expect(got).toEqual([ev]);
    unsub();
    await new Promise((r) => setTimeout(r, 5));
    expect(dispatcher.listeners.get('run:r1')?.size ?? 0).toBe(0);
    dispatcher.emit({ kind: 'run', runId: 'r1' }, ev);
    await new Promise((r) => setTimeout(r, 5));
    expect(got).toHaveLength(1);
  });

  it('refuses every channel from a frame that is not the app', async () => {
    const { client, bridge, rejected } = setup('https://evil.example/page');
    await expect(client.projects.recent()).rejects.toMatchObject({ name: 'Forbidden' });
    await expect(bridge.subscribe({ kind: 'project' }, () => {})).rejects.toThrow(/not the SPA Workbench app/);
    await expect(bridge.dialogs.openFolder()).rejects.toThrow(/refused/);
    expect(rejected).toEqual(['spa:invoke', 'spa:subscribe', 'spa:dialog-open-folder']);
  });

  it('opens the folder dialog for the app frame', async () => {
    const { bridge } = setup();
    await expect(bridge.dialogs.openFolder({ create: true })).resolves.toBe('/picked/folder');
  });
});

describe('desktop security policy', () => {
  it('trusts only the app origin (and an explicit dev server)', () => {
    expect(isTrustedOrigin('app://bundle/index.html#/runs')).toBe(true);
    expect(isTrustedOrigin('app://other/index.html')).toBe(false);
    expect(isTrustedOrigin('file:///etc/passwd')).toBe(false);
    expect(isTrustedOrigin('http://localhost:5173/')).toBe(false);
    expect(isTrustedOrigin('http://localhost:5173/', 'http://localhost:5173')).toBe(true);
    expect(isTrustedOrigin('not a url')).toBe(false);
    expect(originOf('app://bundle/x')).toBe('app://bundle');
  });

  it('maps app:// URLs into the renderer build and blocks traversal', () => {
    expect(resolveAppPath('app://bundle/')).toBe('index.html');
    expect(resolveAppPath('app://bundle/assets/index-1.js?x=1')).toBe('assets/index-1.js');
    expect(resolveAppPath('app://bundle/../../etc/passwd')).not.toMatch(/\.\./);
    // dot segments (also percent-encoded) are resolved by the URL parser and can never climb out
    for (const u of ['app://bundle/assets/%2e%2e/%2e%2e/secret', 'app://bundle/%2e%2e/%2e%2e/secret', 'app://bundle/a/../../../secret']) {
      const r = resolveAppPath(u);
      expect(r === null || r === 'secret', `${u} → ${r}`).toBe(true);
    }
    expect(resolveAppPath('app://bundle/a%5c..%5cb')).toBeNull();
    expect(resolveAppPath('app://elsewhere/index.html')).toBeNull();
  });
});
