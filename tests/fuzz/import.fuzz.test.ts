// Fuzz and fault suite of runs.import (issue 24 item 8): each hostile or large source is imported
// over the WebSocket of a real host (`serve`'s dispatcher and server, in its own process:
// tests/fuzz/import-host.ts) while the test pings it (projects.info) every 20 ms. The host must keep
// answering pings while the import runs (it never blocks): no stretch of the call without an answer
// is longer than half the call. Both are measured in the same window on the same machine, so a loaded
// (slower) machine stretches both alike (issue 37 item 7: no absolute time bound; the 200 ms figure
// and the latencies are measured by bench/import-responsiveness.ts).
// Every import must end in the expected clear error (naming file, line and field) or a faithful
// import; a refused import leaves nothing in the project. The control case runs the same kind of
// import on the host's own thread (SPA_WORKBENCH_IMPORT_INLINE=1) and shows the probe catches the block.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Host, pinged, type Pinged, RECORDER_LINE, verlMetrics } from './import-lib.js';

const ROWS = 200_000;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-wb-import-fuzz-'));
afterAll(() => { fs.rmSync(root, { recursive: true, force: true }); });   // runs after the describes' own afterAll, which await their host's exit

function source(name: string, files: Record<string, string>): string {
  const dir = path.join(root, 'sources', name);
  fs.mkdirSync(dir, { recursive: true });
  for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text);
  return dir;
}

const runFolders = (project: string) => fs.readdirSync(path.join(project, 'runs'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
const leftovers = (project: string) => fs.readdirSync(project).filter((f) => f.startsWith('.import-'));

function expectRefused(p: Pinged, project: string, before: string[], message: RegExp): void {
  expect(p.reply.ok, JSON.stringify(p.reply).slice(0, 500)).toBe(false);
  if (!p.reply.ok) expect(p.reply.error.message).toMatch(message);
  expect(runFolders(project).sort()).toEqual([...before].sort());
  expect(leftovers(project)).toEqual([]);
}

/**
 * The host answered while the call ran: in a call long enough for 25 pings (about 0.5 s or more), the longest stretch
 * without an answer is under half the call. Measured here at load ~11 on 2 cores: 1-3% for the worker-thread import,
 * 98% for the control's inline one. A shorter call (a refusal from lstat or from the size) cannot block for long; its
 * reply, and the pings answered before and after it, show that it did not hang.
 */
function expectResponsive(p: Pinged): void {
  expect(p.pings).toBeGreaterThanOrEqual(6);
  if (p.during.sent >= 25) {
    expect(p.maxSilenceMs, `no ping answered for ${Math.round(p.maxSilenceMs)} ms of a ${Math.round(p.callMs)} ms call`).toBeLessThan(p.callMs / 2);
  }
}

describe('runs.import never blocks the host, and refuses what it cannot store by name', () => {
  const project = path.join(root, 'p', 'project');
  const host = new Host(project);
  beforeAll(async () => { await host.start(); }, 120_000);
  afterAll(async () => { await host.stop(); }, 60_000);   // the host has exited before the root folder is removed

  it('a FIFO as the source, and a FIFO inside a folder: refused from lstat, never opened', async () => {
    const fifo = path.join(root, 'sources', 'fifo', 'val_step0.jsonl');
    fs.mkdirSync(path.dirname(fifo), { recursive: true });
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const before = runFolders(project);
    const alone = await pinged(host, 'runs.import', { path: fifo });
    expectResponsive(alone);
    expectRefused(alone, project, before, /val_step0\.jsonl is a FIFO \(named pipe\)/);
    fs.writeFileSync(path.join(path.dirname(fifo), 'val_step1.jsonl'), `${RECORDER_LINE}\n`);
    const inFolder = await pinged(host, 'runs.import', { path: path.dirname(fifo) });
    expectResponsive(inFolder);
    expect(inFolder.reply.ok).toBe(true);
    if (inFolder.reply.ok) expect((inFolder.reply.result.skipped as string[]).join('\n')).toMatch(/val_step0\.jsonl \(a FIFO \(named pipe\); only regular/);
  }, 120_000);

  // 2 x 10^5 rows (10^6 before issue 37: 20 s of the unit tier on this machine; the scale is the bench's, same code path)
  it('2 x 10^5 verl metric rows: imported whole, the host answers throughout', async () => {
    const dir = path.join(root, 'sources', 'rows');
    fs.mkdirSync(dir, { recursive: true });
    verlMetrics(path.join(dir, 'metrics.jsonl'), ROWS);
    const p = await pinged(host, 'runs.import', { path: dir });
    expectResponsive(p);
    expect(p.reply.ok, JSON.stringify(p.reply).slice(0, 500)).toBe(true);
    if (!p.reply.ok) return;
    expect(p.reply.result.sources).toEqual([{ file: 'metrics.jsonl', kind: 'metrics', count: ROWS }]);
    const runId = (p.reply.result.run as { id: string }).id;
    const stored = fs.readFileSync(path.join(project, 'runs', runId, 'metrics.jsonl'), 'utf8').trimEnd().split('\n');
    expect(stored.length).toBe(ROWS);
    const last = ROWS - 1;
    expect(JSON.parse(stored[last]!)).toMatchObject({ step: last, values: { loss: (last % 97) / 100, reward: last % 7 } });
  }, 180_000);

  it('16,000 recorder lines with one episode id: 16,000 episodes with unique ids (linear), the host answers throughout', async () => {
    const dir = source('dupes', { 'val_step1.jsonl': `${RECORDER_LINE}\n`.repeat(16_000) });
    const p = await pinged(host, 'runs.import', { path: dir });
    expectResponsive(p);
    expect(p.reply.ok, JSON.stringify(p.reply).slice(0, 500)).toBe(true);
    if (!p.reply.ok) return;
    const runId = (p.reply.result.run as { id: string }).id;
    const index = fs.readFileSync(path.join(project, 'runs', runId, 'rollouts', 'index.jsonl'), 'utf8').trimEnd().split('\n')
      .map((l) => (JSON.parse(l) as { id: string }).id);
    expect(index.length).toBe(16_000);
    expect(new Set(index).size).toBe(16_000);
    expect(index.slice(0, 3)).toEqual(['val-000001-e0', 'val-000001-e0-2', 'val-000001-e0-3']);
    expect(index[15_999]).toBe('val-000001-e0-16000');
  }, 180_000);

  it('NaN, Infinity and -Infinity as Python writes them: imported; the non-finite values are reported by name, finite ones stored', async () => {
    const withNan = RECORDER_LINE.replace('"SimpleFrozenLake/success":1', '"SimpleFrozenLake/success":NaN,"SimpleFrozenLake/loss":Infinity');
    const dir = source('nan', {
      'metrics.jsonl': '{"step": 0, "data": {"loss": NaN, "kl": 0.5}}\n{"step": 1, "data": {"loss": Infinity, "kl": -Infinity}}\n' +
        '{"step": 2, "data": {"loss": 0.25, "note": "NaN stays a string"}}\n',
      'val_step1.jsonl': `${withNan}\n`,
    });
    const p = await pinged(host, 'runs.import', { path: dir });
    expectResponsive(p);
    expect(p.reply.ok, JSON.stringify(p.reply).slice(0, 500)).toBe(true);
    if (!p.reply.ok) return;
    const r = p.reply.result;
    expect(r.sources).toEqual([{ file: 'metrics.jsonl', kind: 'metrics', count: 3 }, { file: 'val_step1.jsonl', kind: 'recorder', count: 1 }]);
    expect((r.warnings as string[]).join('\n')).toMatch(/metrics\.jsonl: 2 value\(s\) of loss were NaN or infinite/);
    expect((r.warnings as string[]).join('\n')).toMatch(/metrics\.jsonl: 1 value\(s\) of kl were NaN or infinite/);
    const runId = (r.run as { id: string }).id;
    const points = fs.readFileSync(path.join(project, 'runs', runId, 'metrics.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as unknown);
    expect(points).toMatchObject([{ step: 0, values: { kl: 0.5 } }, { step: 1, values: {} }, { step: 2, values: { loss: 0.25 } }]);
    const index = fs.readFileSync(path.join(project, 'runs', runId, 'rollouts', 'index.jsonl'), 'utf8');
    expect(JSON.parse(index)).toMatchObject({ totalReward: 1, success: true });   // a NaN success metric: success from the final board
  }, 120_000);

  it('1e400 (beyond a double) is refused naming the file, the line and the field; nothing is written', async () => {
    const before = runFolders(project);
    const metrics = source('overflow-metrics', { 'metrics.jsonl': '{"step": 0, "data": {"loss": 1}}\n{"step": 1, "data": {"loss": 1e400}}\n' });
    const a = await pinged(host, 'runs.import', { path: metrics });
    expectResponsive(a);
    expectRefused(a, project, before, /metrics\.jsonl:2 data\.loss: a number too large for a double/);
    const reward = RECORDER_LINE.replace('"reward":1,', '"reward":1e400,');
    const rec = source('overflow-reward', { 'val_step1.jsonl': `${RECORDER_LINE}\n${reward}\n` });
    const b = await pinged(host, 'runs.import', { path: rec });
    expectResponsive(b);
    expectRefused(b, project, before, /val_step1\.jsonl:2 history\[1\]\.reward: a number too large for a double/);
    const step = source('overflow-step', { 'metrics.jsonl': '{"step": 1e400, "data": {"loss": 1}}\n' });
    const c = await pinged(host, 'runs.import', { path: step });
    expectRefused(c, project, before, /metrics\.jsonl:1 step: a number too large/);
  }, 120_000);

  it('deep nesting (100,000 levels) is refused naming the file and the line', async () => {
    const before = runFolders(project);
    const deep = `{"step": 0, "data": {"x": ${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;
    const dir = source('deep', { 'metrics.jsonl': `{"step": 0, "data": {"loss": 1}}\n${deep}\n` });
    const p = await pinged(host, 'runs.import', { path: dir });
    expectResponsive(p);
    expectRefused(p, project, before, /metrics\.jsonl:2: nested more than 64 levels deep/);
    const table = source('deep-json', { 'val_generations.table.json': `{"columns": ["step"], "data": ${'['.repeat(5000)}${']'.repeat(5000)}}` });
    const q = await pinged(host, 'runs.import', { path: table });
    expectRefused(q, project, before, /val_generations\.table\.json: nested more than 64 levels deep/);
  }, 120_000);

  it('a huge file (a sparse 5 GiB JSONL, a 300 MiB JSON) is refused from its size, unread', async () => {
    const before = runFolders(project);
    const dir = path.join(root, 'sources', 'huge');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'metrics.jsonl'), '');
    fs.truncateSync(path.join(dir, 'metrics.jsonl'), 5 * 1024 ** 3);
    const p = await pinged(host, 'runs.import', { path: dir });
    expectResponsive(p);
    expectRefused(p, project, before, /metrics\.jsonl: is 5\.0 GiB, over the 4\.0 GiB limit/);
    const doc = path.join(root, 'sources', 'huge-doc', 'raw_trajectories_1.json');
    fs.mkdirSync(path.dirname(doc), { recursive: true });
    fs.writeFileSync(doc, '');
    fs.truncateSync(doc, 300 * 1024 ** 2);
    const q = await pinged(host, 'runs.import', { path: doc });
    expectResponsive(q);
    expectRefused(q, project, before, /raw_trajectories_1\.json: is 300 MiB, over the 256 MiB limit/);
  }, 120_000);

  it('symlinks: not followed inside a folder (listed); a link into the project\'s runs is refused; export guards resolve links', async () => {
    const outside = path.join(root, 'outside-secret.jsonl');
    fs.writeFileSync(outside, `${RECORDER_LINE}\n`);
    const dir = source('links', { 'val_step1.jsonl': `${RECORDER_LINE}\n` });
    fs.symlinkSync(outside, path.join(dir, 'val_step2.jsonl'));
    fs.symlinkSync(path.dirname(outside), path.join(dir, 'escape'));
    const p = await pinged(host, 'runs.import', { path: dir });
    expectResponsive(p);
    expect(p.reply.ok, JSON.stringify(p.reply).slice(0, 500)).toBe(true);
    if (!p.reply.ok) return;
    expect(p.reply.result.sources).toEqual([{ file: 'val_step1.jsonl', kind: 'recorder', count: 1 }]);
    const skipped = (p.reply.result.skipped as string[]).join('\n');
    expect(skipped).toMatch(/val_step2\.jsonl \(a symbolic link; links are not followed/);
    expect(skipped).toMatch(/escape \(a symbolic link/);
    const runId = (p.reply.result.run as { id: string }).id;

    const before = runFolders(project);
    const intoRuns = path.join(root, 'link-to-run');
    fs.symlinkSync(path.join(project, 'runs', runId), intoRuns);
    const q = await pinged(host, 'runs.import', { path: intoRuns });
    expectResponsive(q);
    expectRefused(q, project, before, /link-to-run \(a link to .*runs.*\) is a run folder of this project/);

    const outLink = path.join(root, 'bundle-out');
    fs.symlinkSync(path.join(project, 'runs', runId), outLink);
    const e = await host.call('runs.exportBundle', { runId, out: outLink });
    expect(e.ok).toBe(false);
    if (!e.ok) expect(e.error.message).toMatch(/is inside the project folder/);
    const dangling = path.join(root, 'bundle-dangling');
    fs.symlinkSync(path.join(project, 'runs', runId, 'not-yet'), dangling);
    const f = await host.call('runs.exportBundle', { runId, out: path.join(dangling, 'sub') });
    expect(f.ok).toBe(false);
    if (!f.ok) expect(f.error.message).toMatch(/is inside the project folder/);
    expect(fs.existsSync(path.join(project, 'runs', runId, 'not-yet'))).toBe(false);
  }, 120_000);
});

describe('control: the same probe catches a host that imports on its own thread', () => {
  const project = path.join(root, 'inline', 'project');
  const host = new Host(project, { SPA_WORKBENCH_IMPORT_INLINE: '1' });
  beforeAll(async () => { await host.start(); }, 120_000);
  afterAll(async () => { await host.stop(); }, 60_000);   // the host has exited before the root folder is removed

  it('100,000 rows imported inline: the host answers no ping for most of the import', async () => {
    const dir = path.join(root, 'sources', 'inline');
    fs.mkdirSync(dir, { recursive: true });
    verlMetrics(path.join(dir, 'metrics.jsonl'), 100_000);
    const p = await pinged(host, 'runs.import', { path: dir });
    expect(p.reply.ok).toBe(true);
      expect(p.during.sent).toBeGreaterThanOrEqual(5);   // the probe was running during the import
    expect(p.maxSilenceMs).toBeGreaterThan(p.callMs / 2);   // what expectResponsive refuses
  }, 180_000);
});
