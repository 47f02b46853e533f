// Issue 36: a project written before the run spec was typed (tests/fixtures/projects/v1-before-run-spec: run.json without
// schemaVersion or provenance, configs holding only the stage keys that were set) still opens, its runs read with their
// resolved spec (every stage section with its defaults, schema version 2), and its never-started run runs; the run.json it
// then has names the backend, the device and the code version that ran it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import type { WorkbenchClient } from '../../core/api/contract.js';
import { RUN_SPEC_VERSION } from '../../core/api/run-config.js';
import { readRunRecord, upgradeRunRecord, type RunRecord } from '../../core/storage/run-files.js';
import { isolateHome, tempDir, waitFor } from '../api/helpers.js';

const FIXTURE = path.resolve('tests/fixtures/projects/v1-before-run-spec');
const SPA_RUN = '20261129-085338-spa-frozenlake-3a9a';
const DIAG_RUN = '20261129-085338-sft-only-sokoban-3a20';

describe('a project from before the run spec (schema version 1)', () => {
  let d: Dispatcher, api: WorkbenchClient, dir: string;
  const previousBackend = process.env.SPA_BACKEND;
  beforeAll(async () => {
    isolateHome();
    process.env.SPA_BACKEND = 'cpu';   // the engine process inherits it: TF.js cpu for the micro model, no Python probe
    dir = path.join(tempDir(), 'project');
    fs.cpSync(FIXTURE, dir, { recursive: true });
    d = createDispatcher({ host: 'in-process' });
    api = createInProcessClient(d);
    await api.projects.open({ path: dir });
  });
  afterAll(async () => {
    await d.dispose();
    if (previousBackend === undefined) delete process.env.SPA_BACKEND; else process.env.SPA_BACKEND = previousBackend;
  });

  it('the fixture is version 1: sparse stage sections, no schema version, no provenance', () => {
    const raw = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'runs', SPA_RUN, 'run.json'), 'utf8')) as RunRecord;
    expect(raw.schemaVersion).toBeUndefined();
    expect(raw.provenance).toBeUndefined();
    expect(raw.config.stages.rl).not.toHaveProperty('lr');
  });

  it('reads each run with its resolved spec (version 2), the values its stages used', async () => {
    const spa = await api.runs.get({ runId: SPA_RUN });
    expect(spa.schemaVersion).toBe(RUN_SPEC_VERSION);
    expect(spa.config.stages.rl).toMatchObject({ lr: 1e-4, criticLr: 5e-4, clipHigh: 0.28, steps: 1, groupSize: 2 });
    expect(spa.config.stages.selfplay).toMatchObject({ games: 2, policy: 'random', valFraction: 0.1 });
    expect(spa.config.stages.plan).toEqual({ order: ['selfplay'] });
    const diag = await api.runs.get({ runId: DIAG_RUN });
    expect(diag.status).toBe('completed');
    expect(diag.config.stages['diag-wait']).toEqual({ steps: 2, delayMs: 1 });
  });

  it('a config the schema refuses is kept as it was (never lost), without a version', () => {
    const raw = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'runs', SPA_RUN, 'run.json'), 'utf8')) as RunRecord;
    const bad = { ...raw, config: { ...raw.config, stages: { ...raw.config.stages, rl: { removedKey: 1 } } } } as unknown as RunRecord;
    expect(upgradeRunRecord(bad)).toBe(bad);
  });

  it('runs the never-started run; its run.json then names backend, device and code version', async () => {
    await api.runs.start({ runId: SPA_RUN });
    const done = await waitFor('the v1 run to finish', async () => {
      const r = await api.runs.get({ runId: SPA_RUN });
      return ['completed', 'failed'].includes(r.status) ? r : null;
    }, 120_000, 200);
    expect(done.reason).toBeNull();
    expect(done.status).toBe('completed');
    const onDisk = readRunRecord(path.join(dir, 'runs', SPA_RUN));
    if (onDisk.status !== 'ok') throw new Error(`run.json unreadable: ${onDisk.status}`);
    expect(onDisk.value.provenance).toMatchObject({ backend: 'cpu', device: 'CPU' });
    expect(onDisk.value.provenance!.codeVersion).toMatch(/^(git:[0-9a-f]{40}(-dirty)?|package:\S+)$/);
    const file = JSON.parse(fs.readFileSync(path.join(dir, 'runs', SPA_RUN, 'run.json'), 'utf8')) as RunRecord;
    expect(file.schemaVersion).toBe(RUN_SPEC_VERSION);   // written back in the current layout
    expect(file.config.stages.rl.lr).toBe(1e-4);
  });
});
