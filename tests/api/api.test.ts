import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { apiMethodNames, WireResponseSchema, type WireRequest, type WireResponse, type WorkbenchClient, type WorkbenchEvent } from '../../core/api/contract.js';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { createRpcClient } from '../../core/api/client.js';
import { serveConnection } from '../../core/host/rpc-server.js';
import { createChannelPair } from '../../core/api/ipc-channel.js';
import { WorkbenchError } from '../../core/api/errors.js';
import { startServer, type RunningServer } from '../../core/server/server.js';
import { connectWorkbench } from '../../core/server/ws-client.js';
import { diagConfig, isolateHome, tempDir, waitFor } from './helpers.js';

async function rejection(p: Promise<unknown>): Promise<WorkbenchError> {
  try { await p; } catch (err) { return err as WorkbenchError; }
  throw new Error('expected the call to be rejected');
}

describe('every method rejects malformed input with a clear error', () => {
  let d: Dispatcher;
  beforeAll(() => { isolateHome(); d = createDispatcher({ host: 'in-process' }); });
  afterAll(() => d.dispose());

  const names = apiMethodNames();
  it('covers the whole contract', () => {
    expect(names.length).toBeGreaterThanOrEqual(30);
    for (const ns of ['projects', 'runs', 'envs', 'templates', 'rollouts', 'datasets', 'metrics', 'evals', 'system']) {
      expect(names.some((n) => n.startsWith(`${ns}.`)), ns).toBe(true);
    }
  });

  for (const method of names) {
    it(method, async () => {
      for (const bad of [42, 'text', [1, 2], { unexpectedField: true }]) {
        const err = await rejection(d.call(method, bad));
        expect(err.name, `${method} with ${JSON.stringify(bad)}`).toBe('ValidationError');
        expect(err.message).toContain(method);
        expect(err.details.where).toContain(method);
        expect(err.details.expected).toBeTruthy();
        expect(err.details.received).toBeTruthy();
        expect(err.details.issues?.length).toBeGreaterThan(0);
      }
    });
  }

  it('names the field, what was expected and what arrived', async () => {
    const err = await rejection(d.call('runs.get', { runId: 5 }));
    expect(err.details.where).toBe('runs.get runId');
    expect(err.details.received).toBe('number 5');
    expect(err.message).toMatch(/runs\.get: invalid runId: .*received number 5/);
    const e2 = await rejection(d.call('rollouts.query', { runId: 'r1', limit: 0 }));
    expect(e2.details.where).toBe('rollouts.query limit');
  });

  it('refuses unknown methods and says which exist', async () => {
    const err = await rejection(d.call('runs.launch', {}));
    expect(err.name).toBe('NotFound');
    expect(err.message).toContain('runs.create');
  });

  it('says a project must be open first', async () => {
    const err = await rejection(d.call('runs.list', {}));
    expect(err.name).toBe('NoProject');
  });
});

/** The same scenario over every transport: create a project, see it in recent, create a run, get errors and events. */
async function roundTrip(api: WorkbenchClient, projectDir: string): Promise<void> {
  const events: WorkbenchEvent[] = [];
  const unsubscribe = api.subscribe({ kind: 'project' }, (e) => events.push(e));
  await new Promise((r) => setTimeout(r, 50));                     // subscription settles
  const info = await api.projects.create({ path: projectDir, name: 'Round trip' });
  expect(info).toMatchObject({ name: 'Round trip', path: projectDir, runCount: 0 });
  expect((await api.projects.recent()).projects[0]).toMatchObject({ path: projectDir, exists: true });
  const sys = await api.system.info();
  expect(sys.backends.map((b) => b.name)).toEqual(['torch', 'tensorflow', 'wasm', 'cpu', 'tensorflow-gpu']);
  const run = await api.runs.create({ config: diagConfig({ 'diag-wait': { steps: 2, delayMs: 1 } }) });
  expect(run.status).toBe('created');
  expect(run.stages.map((s) => s.name)).toEqual(['diag-wait']);
  expect((await api.runs.list()).runs.map((r) => r.id)).toEqual([run.id]);
  const err = await rejection(api.runs.get({ runId: 'no-such-run' }));
  expect(err).toBeInstanceOf(WorkbenchError);
  expect(err.name).toBe('NotFound');
  expect(err.details.where).toBe('runs.get runId');
  const bad = await rejection(api.runs.create({ config: { method: 'nonsense' } }));
  expect(bad.name).toBe('ValidationError');
  expect(bad.details.where).toContain('method');
  // stage sections and env options are checked at creation, not when their stage starts
  const runsBefore = (await api.runs.list()).runs.length;
  const badStage = await rejection(api.runs.create({ preset: 'spa', size: 'smoke', config: { stages: { rl: { steps: 'three' } } } }));
  expect(badStage.name).toBe('ValidationError');
  expect(badStage.details.where).toContain('stages.rl.steps');
  const badEnv = await rejection(api.runs.create({ preset: 'spa', size: 'smoke', config: { env: { id: 'sokoban', options: { width: 'x' } } } }));
  expect(badEnv.details.where).toContain('env.options');
  expect(badEnv.message).toMatch(/option "width".*received "x"/);
  expect((await api.runs.list()).runs.length).toBe(runsBefore);
  await waitFor('project events', () => events.some((e) => e.kind === 'project' && e.event.type === 'runs-changed'), 5000);
  expect(events.some((e) => e.kind === 'project' && e.event.type === 'project' && e.event.project?.path === projectDir)).toBe(true);
  unsubscribe();
  await api.projects.close();
}

describe('round trip through each transport', () => {
  beforeAll(() => { isolateHome(); });

  it('in-process', async () => {
    const d = createDispatcher({ host: 'in-process' });
    try { await roundTrip(createInProcessClient(d), path.join(tempDir(), 'p')); } finally { await d.dispose(); }
  });

  it('IPC via a stubbed channel pair (the Electron preload/ipcMain shape)', async () => {
    const d = createDispatcher({ host: 'electron' });
    const pair = createChannelPair<WireResponse, WireRequest>();
    const seen: WireResponse[] = [];
    pair.client.onMessage((m) => { seen.push(m); });
    serveConnection(d, pair.host);
    const client = createRpcClient(pair.client);
    try {
      await roundTrip(client, path.join(tempDir(), 'p'));
      // Everything that crossed is valid wire protocol and plain JSON.
      expect(seen.length).toBeGreaterThan(5);
      for (const m of seen) expect(WireResponseSchema.safeParse(m).success).toBe(true);
      // A malformed message with an id is answered with a clear error.
      const reply = new Promise<WireResponse>((resolve) => pair.client.onMessage((m) => { if ('id' in m && m.id === 999) resolve(m); }));
      pair.client.send({ type: 'call', id: 999 } as unknown as WireRequest);
      const r = await reply;
      expect(r.type).toBe('error');
      if (r.type === 'error') expect(r.error.message).toMatch(/method/);
      // Closing the channel fails pending calls instead of hanging them.
      const pending = client.system.info();
      pair.client.close!();
      await expect(pending).rejects.toThrow(/closed/);
    } finally { await d.dispose(); }
  });

  describe('WebSocket', () => {
    let d: Dispatcher;
    let server: RunningServer;
    beforeAll(async () => {
      d = createDispatcher({ host: 'serve' });
      server = await startServer({ dispatcher: d, staticDir: tempDir() });
    });
    afterAll(async () => { await server.close(); await d.dispose(); });

    it('round trip', async () => {
      const client = await connectWorkbench(server.wsUrl);
      try { await roundTrip(client, path.join(tempDir(), 'p')); } finally { client.close(); }
    });

    it('streams a run\'s live events to a subscriber', async () => {
      const client = await connectWorkbench(server.wsUrl);
      try {
        await client.projects.create({ path: path.join(tempDir(), 'p') });
        const run = await client.runs.create({ config: diagConfig({ 'diag-wait': { steps: 3, delayMs: 5 } }) });
        const got: WorkbenchEvent[] = [];
        client.subscribe({ kind: 'run', runId: run.id }, (e) => got.push(e));
        await client.runs.start({ runId: run.id });   // the same connection: its subscribe is handled first
        await waitFor('completed status event', () => got.some((e) => e.kind === 'run' && e.event.type === 'status' && e.event.status === 'completed'));
        const types = new Set(got.map((e) => (e.kind === 'run' ? e.event.type : '')));
        for (const t of ['stage', 'metric', 'progress', 'status']) expect(types.has(t as never), t).toBe(true);
        expect((await client.runs.get({ runId: run.id })).status).toBe('completed');
        await client.projects.close();
      } finally { client.close(); }
    });

    it('two clients see the same project events', async () => {
      const a = await connectWorkbench(server.wsUrl);
      const b = await connectWorkbench(server.wsUrl);
      const got: WorkbenchEvent[] = [];
      b.subscribe({ kind: 'project' }, (e) => got.push(e));
      // a round trip on b after its subscribe: the server handles one connection's messages in order, so the subscription
      // is in place before a creates the project (a 50 ms pause raced it on a loaded machine)
      await b.projects.info();
      const dir = path.join(tempDir(), 'p');
      await a.projects.create({ path: dir });
      await waitFor('event on the other client', () => got.some((e) => e.kind === 'project' && e.event.type === 'project'), 5000);
      await a.projects.close();
      a.close(); b.close();
      expect(fs.existsSync(path.join(dir, 'workbench.json'))).toBe(true);
    });
  });
});

describe('config schema, presets, envs and templates through the API', () => {
  let d: Dispatcher;
  let api: WorkbenchClient;
  beforeAll(async () => {
    isolateHome();
    d = createDispatcher({ host: 'in-process' });
    api = createInProcessClient(d);
    await api.projects.create({ path: path.join(tempDir(), 'p') });
  });
  afterAll(() => d.dispose());

  it('a failed projects.create leaves the open project open', async () => {
    const before = await api.projects.info();
    expect(before.project).not.toBeNull();
    const file = path.join(tempDir(), 'not-a-folder');
    fs.writeFileSync(file, 'a plain file where a project folder was asked for');
    await expect(api.projects.create({ path: file })).rejects.toThrow();
    const after = await api.projects.info();
    expect(after.project?.path).toBe(before.project?.path);
  });

  it('serves the RunConfig JSON Schema and defaults for a generated form', async () => {
    const r = await api.runs.configSchema();
    expect(r.schema.type).toBe('object');
    expect(Object.keys(r.schema.properties as object)).toEqual(expect.arrayContaining(['method', 'env', 'template', 'model', 'seeds', 'stages']));
    expect(r.defaults.method).toBe('spa');
  });

  it('validates a config without creating a run', async () => {
    const ok = await api.runs.validateConfig({ config: diagConfig({ 'diag-wait': {} }) });
    expect(ok).toMatchObject({ ok: true, stages: ['diag-wait'] });
    const bad = await api.runs.validateConfig({ config: { seeds: { base: 'x' } } });
    expect(bad.ok).toBe(false);
    expect(bad.issues[0]!.path).toBe('seeds.base');
    const unknownStage = await api.runs.validateConfig({ config: diagConfig({ 'no-such-stage': {} }) });
    expect(unknownStage.issues[0]!.message).toContain('no-such-stage');
    expect((await api.runs.presets()).presets.some((p) => p.id === 'diagnostic')).toBe(true);
  });

  it('lists, describes and renders environments', async () => {
    const envs = (await api.envs.list()).envs;
    expect(envs.length).toBeGreaterThan(0);
    const id = envs[0]!.id;
    const desc = await api.envs.describe({ id });
    expect(desc.sections).toHaveProperty('actions');
    const err = await rejection(api.envs.describe({ id: 'no-such-env' }));
    expect(err.name).toBe('NotFound');
    const tpl = (await api.templates.list()).templates.find((t) => t.kind === 'preset')!;
    const a = await api.envs.render({ env: { id }, seed: 3, template: { preset: tpl.name } });
    const b = await api.envs.render({ env: { id }, seed: 3, template: { preset: tpl.name } });
    expect(a.prompt.length).toBeGreaterThan(20);
    expect(a).toEqual(b);                                          // seeded: the same puzzle
    expect(a.board.rows).toBeGreaterThan(0);
  });

  it('saves immutable template versions and previews unsaved text with line/column errors', async () => {
    const preset = (await api.templates.list()).templates.find((t) => t.kind === 'preset')!;
    const base = await api.templates.get({ name: preset.name });
    const edited = base.source.replace('"description": "', '"description": "Edited. ');
    const first = await api.templates.save({ name: 'my-template', source: edited, parent: base.hash });
    expect(first.created).toBe(true);
    const again = await api.templates.save({ name: 'my-template', source: edited });
    expect(again).toMatchObject({ created: false, version: { hash: first.version.hash } });
    const versions = await api.templates.versions({ name: 'my-template' });
    expect(versions.versions.map((v) => v.hash)).toEqual([first.version.hash]);
    const envId = (await api.envs.list()).envs[0]!.id;
    const preview = await api.templates.preview({ source: edited, env: { id: envId }, seed: 1 });
    expect(preview.ok).toBe(true);
    expect(preview.prompt).toBeTruthy();
    const broken = await api.templates.preview({ source: '{\n  "name": "x",\n  oops\n}', env: { id: envId } });
    expect(broken.ok).toBe(false);
    expect(broken.diagnostics[0]!.line).toBe(3);
    const err = await rejection(api.templates.save({ name: 'broken', source: '{ nope' }));
    expect(err.name).toBe('ValidationError');
  });
});
