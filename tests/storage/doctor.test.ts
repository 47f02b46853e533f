// doctor (issue 10): examination reads only; repair removes a stale lock, cleans interrupted-write
// leftovers and rebuilds a damaged run.json from the index and a checkpoint manifest, keeping the
// damaged bytes. Also through the API (projects.doctor) and the CLI command.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command } from 'commander';
import { registerDoctorCommand } from '../../core/cli/doctor-command.js';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { runDoctor } from '../../core/storage/doctor.js';
import { LOCK_FILE } from '../../core/storage/lock.js';
import { ProjectStore } from '../../core/storage/project-store.js';
import { listTree } from '../fuzz/fuzz-lib.js';
import { diagConfig, isolateHome, tempDir } from '../api/helpers.js';

const dispatchers: Dispatcher[] = [];
afterEach(async () => { for (const d of dispatchers.splice(0)) await d.dispose(); vi.restoreAllMocks(); });

const deadPid = () => Number(spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout.trim());

/** A project with one run, then damaged in every way doctor knows. */
async function damagedProject(): Promise<{ dir: string; runId: string; runDir: string }> {
  isolateHome();
  const dir = tempDir();
  const d = createDispatcher({ host: 'in-process' });
  const api = createInProcessClient(d);
  await api.projects.create({ path: dir });
  const run = await api.runs.create({ config: diagConfig({ 'diag-wait': { steps: 1 } }) });
  const config = (await api.runs.get({ runId: run.id })).config;
  await d.dispose();
  const runDir = path.join(dir, 'runs', run.id);
  const dead = deadPid();
  // a checkpoint whose manifest carries the resolved config (as every pipeline checkpoint does)
  fs.mkdirSync(path.join(runDir, 'checkpoints', 'sft-1'), { recursive: true });
  fs.writeFileSync(path.join(runDir, 'checkpoints', 'sft-1', 'config.json'), '{}');
  fs.writeFileSync(path.join(runDir, 'checkpoints', 'sft-1', 'manifest.json'), JSON.stringify({ format: 'x', step: 1, created: new Date().toISOString(), extra: { config, runId: run.id } }));
  fs.writeFileSync(path.join(runDir, 'run.json'), '{"id": "torn');                                           // damaged run.json
  fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: dead, host: os.hostname(), startedAt: 1, token: 'old', purpose: 'cli run' }));   // stale lock
  fs.mkdirSync(path.join(runDir, 'checkpoints', `.rl-2.tmp-${dead}-abc`));                                    // leftover
  fs.mkdirSync(path.join(runDir, 'stages', 'sft'), { recursive: true });
  fs.writeFileSync(path.join(runDir, 'stages', 'sft', 'done.json'), JSON.stringify({ stage: 'sft', completedAt: 1, attempt: 1, output: { checkpoint: `runs/${run.id}/checkpoints/gone` } }));
  fs.writeFileSync(path.join(runDir, 'metrics.jsonl'), '{"stage":"x","step":0,"time":1,"values":{}}\n{"torn');
  fs.writeFileSync(path.join(dir, 'workbench.json.corrupt-2026-01-01T00-00-00-000Z'), 'old damaged index');
  return { dir, runId: run.id, runDir };
}

describe('doctor', () => {
  it('examines without changing anything, then repairs what is safe and keeps the damaged bytes', async () => {
    const { dir, runId, runDir } = await damagedProject();
    const before = listTree(dir);
    const look = runDoctor(dir);
    expect(listTree(dir)).toEqual(before);                                     // examination reads only
    expect(look.lock).toMatchObject({ state: 'dead', removed: false, holder: { purpose: 'cli run' } });
    expect(look.runs.damaged).toEqual([expect.objectContaining({ id: runId, problem: 'run.json damaged', repair: expect.stringMatching(/rebuild from the run index and checkpoints\/sft-1/), repaired: false })]);
    expect(look.tempLeftovers).toEqual([expect.objectContaining({ kind: 'tmp', stale: true, action: 'remove', done: false })]);
    expect(look.stageMarkers).toEqual([expect.objectContaining({ problem: expect.stringMatching(/checkpoints\/gone is missing/) })]);
    expect(look.streams).toEqual([expect.objectContaining({ path: `runs/${runId}/metrics.jsonl`, badLines: 1, tornLast: true })]);
    expect(look.movedAside.map((m) => m.path)).toEqual(['workbench.json.corrupt-2026-01-01T00-00-00-000Z']);
    expect(look.problems).toBeGreaterThanOrEqual(5);

    const fixed = runDoctor(dir, { repair: true });
    expect(fixed.lock?.removed).toBe(true);
    expect(fixed.runs.damaged[0]!.repaired).toBe(true);
    expect(fixed.tempLeftovers[0]!.done).toBe(true);
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
    const aside = fs.readdirSync(runDir).filter((f) => f.startsWith('run.json.corrupt-'));
    expect(aside.length).toBe(1);
    expect(fs.readFileSync(path.join(runDir, aside[0]!), 'utf8')).toBe('{"id": "torn');   // kept
    expect(fs.existsSync(path.join(dir, 'workbench.json.corrupt-2026-01-01T00-00-00-000Z'))).toBe(true);   // never deleted
    const s = await ProjectStore.open(dir);
    try {
      expect(s.damagedRuns).toEqual([]);
      const rec = s.readRun(runId)!;
      expect(rec.id).toBe(runId);
      expect(rec.reason).toMatch(/rebuilt by doctor/);
    } finally { s.close(); }
    expect(runDoctor(dir).runs.damaged).toEqual([]);
  });

  it('refuses to repair a project a live process holds, and works through the API on the open project', async () => {
    const { dir } = await damagedProject();
    fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: process.ppid, host: os.hostname(), startedAt: 1, token: 'live', purpose: 'another host' }));
    expect(() => runDoctor(dir, { repair: true })).toThrow(/in use \(process \d+/);
    fs.rmSync(path.join(dir, LOCK_FILE));
    const d = createDispatcher({ host: 'in-process' });
    dispatchers.push(d);
    const api = createInProcessClient(d);
    await api.projects.open({ path: dir });
    const report = await api.projects.doctor({});
    expect(report.lock?.state).toBe('alive');                                  // this host holds it
    const repaired = await api.projects.doctor({ repair: true });
    expect(repaired.runs.damaged[0]?.repaired).toBe(true);
    expect((await api.projects.info({})).project?.path).toBe(dir);             // open again afterwards
    expect((await api.runs.list({})).total).toBe(1);
  });

  it('the CLI prints the report and exits 1 while problems remain, 0 once healthy', async () => {
    const { dir } = await damagedProject();
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => { out.push(String(c)); return true; });
    const run = async (...args: string[]) => {
      out.length = 0;
      process.exitCode = undefined;
      const program = new Command().exitOverride();
      registerDoctorCommand(program);
      await program.parseAsync(['node', 'spa-workbench', 'doctor', '--project', dir, ...args]);
      const code = process.exitCode;
      process.exitCode = undefined;
      return { code, text: out.join('') };
    };
    const look = await run();
    expect(look.code).toBe(1);
    expect(look.text).toMatch(/lock: dead \(pid \d+ on .*cli run/);
    expect(look.text).toMatch(/run with --repair/);
    const json = await run('--repair', '--json');
    expect(JSON.parse(json.text).repairs.length).toBeGreaterThan(0);
  });
});
