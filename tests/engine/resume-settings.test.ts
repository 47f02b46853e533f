// runs.resume `set` / `spa-workbench resume RUN --set key=value`: a stopped or failed run may change its execution settings
// (core/api/run-config.ts RESUME_SETTABLE: memory layout, rollout batch size) before it resumes, as study v4 needed after
// an OOM kill at its RL rollout peak; any other key, or a value the config schema refuses, is refused with nothing changed;
// the change is in run.json (what the engine runs) and logged in the run's events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { WorkbenchClient } from '../../core/api/contract.js';
import type { Dispatcher } from '../../core/host/dispatcher.js';
import { readJsonl } from '../../core/storage/jsonl.js';
import type { RunEvent } from '../../core/api/records.js';
import { diagConfig, inProcessProject, tempDir } from '../api/helpers.js';

describe('resume with execution settings', () => {
  let d: Dispatcher;
  let api: WorkbenchClient;
  let projectDir: string;
  beforeAll(async () => {
    ({ d, api, projectDir } = await inProcessProject({ stopGraceMs: 5000, flushIntervalMs: 100 }));
  });
  afterAll(() => d.dispose({ kill: true }));

  const runJson = (id: string) => JSON.parse(fs.readFileSync(path.join(projectDir, 'runs', id, 'run.json'), 'utf8')) as {
    config: { model: { memory?: Record<string, unknown> }; stages: { rollout: { batchSize: number }; rl: { lr: number } } };
  };
  async function failedRun(): Promise<string> {
    const run = await api.runs.create({ config: diagConfig({ 'diag-crash': { mode: 'exit', code: 3 } }), start: true });
    await d.waitForRun(run.id);
    expect((await api.runs.get({ runId: run.id })).status).toBe('failed');
    return run.id;
  }

  it('changes a memory setting and the rollout batch size, logs both, and resumes', async () => {
    const id = await failedRun();
    const before = runJson(id).config;
    expect(before.model.memory?.generationRows).not.toBe(8);
    const resumed = await api.runs.resume({ runId: id, set: { 'model.memory.generationRows': 8, 'stages.rollout.batchSize': 4 } });
    expect(resumed.attempts).toBe(2);
    await d.waitForRun(id);
    const after = runJson(id).config;
    expect(after.model.memory?.generationRows).toBe(8);
    expect(after.stages.rollout.batchSize).toBe(4);
    expect(after.stages.rl.lr).toBe(before.stages.rl.lr);
    // the run table's config columns follow (run.json params and the run summary)
    expect((JSON.parse(fs.readFileSync(path.join(projectDir, 'runs', id, 'run.json'), 'utf8')) as { params: Record<string, unknown> }).params)
      .toMatchObject({ 'model.memory.generationRows': 8, 'stages.rollout.batchSize': 4 });
    const logs = readJsonl<RunEvent>(path.join(projectDir, 'runs', id, 'events.jsonl')).rows
      .filter((e) => e.type === 'log').map((e) => (e as { message: string }).message);
    const line = logs.find((m) => m.startsWith('resume: execution settings changed'));
    expect(line).toContain(`model.memory.generationRows ${JSON.stringify(before.model.memory?.generationRows) ?? 'unset'} → 8`);
    expect(line).toContain(`stages.rollout.batchSize ${before.stages.rollout.batchSize} → 4`);
  }, 60_000);

  it("refuses a method setting by name, and a value the schema refuses, changing nothing", async () => {
    const id = await failedRun();
    const before = fs.readFileSync(path.join(projectDir, 'runs', id, 'run.json'), 'utf8');
    await expect(api.runs.resume({ runId: id, set: { 'stages.rl.lr': 1 } }))
      .rejects.toThrow(/stages\.rl\.lr cannot change on resume: only execution settings can \(model\.memory\.generationRows/);
    await expect(api.runs.resume({ runId: id, set: { 'model.memory.generationRows': 0 } }))
      .rejects.toThrow(/model\.memory\.generationRows: .*\(received 0\)/);
    const now = fs.readFileSync(path.join(projectDir, 'runs', id, 'run.json'), 'utf8');
    expect(JSON.parse(now).config).toEqual(JSON.parse(before).config);
    expect((await api.runs.get({ runId: id })).status).toBe('failed');
  }, 60_000);

  it('the CLI: resume --set refuses a method setting and applies an execution one', () => {
    const bin = path.join(__dirname, '..', '..', 'bin', 'spa-workbench.mjs');
    const project = path.join(tempDir(), 'cli-project');
    const file = path.join(tempDir(), 'crash.json');
    fs.writeFileSync(file, JSON.stringify(diagConfig({ 'diag-crash': { mode: 'exit', code: 3 } })));
    const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 90_000 });
    expect(cli('run', file, '--project', project).status).not.toBe(0);   // the stage crashes its engine once
    const [id] = fs.readdirSync(path.join(project, 'runs'));
    const refused = cli('resume', id!, '--project', project, '--set', 'stages.rl.steps=3');
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/stages\.rl\.steps cannot change on resume/);
    const resumed = cli('resume', id!, '--project', project, '--set', 'model.memory.generationRows=8');
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stdout + resumed.stderr).toMatch(/resume: execution settings changed .*model\.memory\.generationRows .* → 8/);
    const config = JSON.parse(fs.readFileSync(path.join(project, 'runs', id!, 'run.json'), 'utf8')).config as { model: { memory: { generationRows: number } } };
    expect(config.model.memory.generationRows).toBe(8);
  }, 240_000);
});
