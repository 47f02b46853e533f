// A study started again with new execution settings (`study run --set model.memory.generationRows=8`, studies.start `set`)
// passes them to the cell it resumes (core/engine/study-host.ts, RESUME_SETTABLE): the cell killed at a memory peak
// resumes with less memory, its run.json says so and its events log the change; a method setting in the new `set` is not
// applied to the resumed cell (it keeps the config it started with).
import { afterAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { readJsonl } from '../../core/storage/jsonl.js';
import type { RunEvent } from '../../core/api/records.js';
import { isolateHome, tempDir } from './helpers.js';

isolateHome();
const open: Dispatcher[] = [];
afterAll(async () => { for (const d of open) await d.dispose({ kill: true }).catch(() => undefined); });

describe('a study resumes its cells with its execution settings', () => {
  it('generationRows and the rollout batch size reach the resumed cell; a method setting does not', async () => {
    const dir = path.join(tempDir(), 'p');
    const d = createDispatcher({ host: 'in-process' });
    open.push(d);
    const api = createInProcessClient(d);
    await api.projects.create({ path: dir });
    // one cell whose engine crashes once (diag-crash), so the study ends with it failed
    const crash = { 'stages.plan.order': ['diag-crash'], 'stages.diag-crash': { mode: 'exit', code: 3 }, backend: 'wasm' };
    await api.studies.start({ name: 'g', methods: ['diagnostic'], envs: ['frozenlake'], seeds: [0], size: 'smoke', set: crash });
    await d.waitForStudy('g');
    const [run] = (await api.runs.list()).runs;
    expect(run!.status).toBe('failed');
    const before = (await api.runs.get({ runId: run!.id })).config;
    expect(before.model.memory?.generationRows).not.toBe(8);
    await api.studies.start({
      name: 'g', methods: ['diagnostic'], envs: ['frozenlake'], seeds: [0], size: 'smoke',
      set: { ...crash, 'model.memory.generationRows': 8, 'stages.rollout.batchSize': 2, 'stages.rl.lr': 0.5 },
    });
    await d.waitForStudy('g');
    const after = await api.runs.get({ runId: run!.id });
    expect(after.status).toBe('completed');
    expect(after.attempts).toBe(2);
    expect(after.config.model.memory?.generationRows).toBe(8);
    expect(after.config.stages.rollout.batchSize).toBe(2);
    expect(after.config.stages.rl.lr).toBe(before.stages.rl.lr);
    const logs = readJsonl<RunEvent>(path.join(dir, 'runs', run!.id, 'events.jsonl')).rows
      .flatMap((e) => (e.type === 'log' ? [e.message] : []));
    expect(logs.some((m) => /^resume: execution settings changed .*model\.memory\.generationRows .* → 8/.test(m))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'runs', run!.id, 'run.json'))).toBe(true);
  }, 120_000);
});
