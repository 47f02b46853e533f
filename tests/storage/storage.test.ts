import { afterEach, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fork, spawnSync } from 'node:child_process';
import { appendJsonl, JsonlTail, LineIndex, readJsonl, readLineAt } from '../../core/storage/jsonl.js';
import { moveAside, readJsonOrMoveAside, writeFileAtomicSync } from '../../core/storage/atomic.js';
import { acquireProjectLock, LOCK_FILE } from '../../core/storage/lock.js';
import { ProjectStore, WORKBENCH_JSON } from '../../core/storage/project-store.js';
import { migrate, NewerSchemaError, type Migration } from '../../core/storage/migrations.js';
import { downsampleMinMax } from '../../core/storage/downsample.js';
import { addRecent, readRecent } from '../../core/storage/recent.js';
import { isolateHome, tempDir } from '../api/helpers.js';

const stores: ProjectStore[] = [];
afterEach(() => { while (stores.length) stores.pop()!.close(); });

describe('JSONL', () => {
  it('skips and reports a torn last line after a simulated crash, and later appends stay intact', () => {
    const file = path.join(tempDir(), 'metrics.jsonl');
    const spans = appendJsonl(file, [{ a: 1 }, { a: 2 }, { a: 3 }]);
    expect(spans.map((s) => s.offset)).toEqual([0, 8, 16]);
    fs.appendFileSync(file, '{"a": 4, "b": [1, 2');           // the writer died mid-line
    const r = readJsonl<{ a: number }>(file);
    expect(r.rows.map((x) => x.a)).toEqual([1, 2, 3]);
    expect(r.skipped).toHaveLength(1);
    expect(r.skipped[0]).toMatchObject({ line: 4, offset: 24, torn: true });

    const tail = new JsonlTail<{ a: number }>(file);
    expect(tail.read().map((x) => x.a)).toEqual([1, 2, 3]);
    expect(tail.pendingBytes()).toBeGreaterThan(0);             // the fragment is not consumed

    // A new writer appends: the fragment must not swallow the new row.
    const [span] = appendJsonl(file, [{ a: 5 }]);
    const again = readJsonl<{ a: number }>(file);
    expect(again.rows.map((x) => x.a)).toEqual([1, 2, 3, 5]);
    expect(again.skipped).toHaveLength(1);
    expect(again.skipped[0]!.torn).toBe(false);
    expect(readLineAt<{ a: number }>(file, span!)).toEqual({ a: 5 });
    expect(tail.read().map((x) => x.a)).toEqual([5]);
    expect(tail.skipped).toHaveLength(1);
  });

  it('validates rows and reports invalid ones with their line number', () => {
    const file = path.join(tempDir(), 'x.jsonl');
    fs.writeFileSync(file, '{"n":1}\nnot json\n{"n":"two"}\n{"n":3}\n');
    const r = readJsonl(file, (v) => { if (typeof (v as { n: unknown }).n !== 'number') throw new Error('n must be a number'); return v as { n: number }; });
    expect(r.rows).toEqual([{ n: 1 }, { n: 3 }]);
    expect(r.skipped.map((s) => s.line)).toEqual([2, 3]);
    expect(r.skipped[1]!.reason).toContain('n must be a number');
  });

  it('indexes line offsets incrementally for paging', () => {
    const file = path.join(tempDir(), 'rows.jsonl');
    appendJsonl(file, Array.from({ length: 5 }, (_, i) => ({ i })));
    const idx = new LineIndex(file);
    expect(idx.update()).toHaveLength(5);
    fs.appendFileSync(file, '{"i":5}\n{"i":6');                // last one incomplete
    expect(idx.update()).toHaveLength(6);
    fs.appendFileSync(file, '}\n');
    const spans = idx.update();
    expect(spans).toHaveLength(7);
    expect(readLineAt(file, spans[6]!)).toEqual({ i: 6 });
  });
});

describe('atomic writes', () => {
  it('leaves either the old or the new file, never a mix, when the writer is killed mid-write', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'state.json');
    const versions = (n: number) => JSON.stringify({ n, payload: String(n).repeat(200_000) });
    writeFileAtomicSync(file, versions(0));
    // BREAK_ATOMIC=1 swaps in plain fs.writeFileSync: then this test fails (a reader sees a partial file).
    const writer = path.join(dir, 'writer.ts');
    const atomicUrl = new URL('../../core/storage/atomic.ts', import.meta.url).href;
    fs.writeFileSync(writer, `import * as fs from 'node:fs';
import { writeFileAtomicSync } from ${JSON.stringify(atomicUrl)};
const file = process.argv[2];
for (let n = 1; ; n++) ${process.env.BREAK_ATOMIC ? 'fs.writeFileSync' : 'writeFileAtomicSync'}(file, JSON.stringify({ n, payload: String(n).repeat(200_000) }));
`);
    const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
    let progressed = 0;
    for (let round = 0; round < 2; round++) {
      const child = fork(writer, [file], { execArgv: ['--import', tsx], stdio: 'ignore' });
      const before = fs.statSync(file).mtimeMs;
      const deadline = Date.now() + 120_000;   // a hang guard: the writer starts under tsx (seconds at load, never a speed bound)
      while (fs.statSync(file).mtimeMs === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      // Readers during the writes never see a mix (a truncated file or two versions interleaved).
      const readUntil = Date.now() + 150 + round * 17;
      while (Date.now() < readUntil) {
        const text = fs.readFileSync(file, 'utf8');
        let n = -1;
        try { n = (JSON.parse(text) as { n: number }).n; } catch { /* reported below */ }
        expect(text, 'a reader saw a partial file').toBe(versions(n));
        await new Promise((r) => setImmediate(r));
      }
      child.kill('SIGKILL');                                        // and then the writer dies mid-loop
      await new Promise((r) => child.once('exit', r));
      const text = fs.readFileSync(file, 'utf8');
      const parsed = JSON.parse(text) as { n: number };   // never a torn mix
      expect(text).toBe(versions(parsed.n));
      progressed = Math.max(progressed, parsed.n);
    }
    expect(progressed).toBeGreaterThan(0);              // the writer really replaced the file while being killed
  });

  it('keeps the old file when the write fails', () => {
    const dir = tempDir();
    const file = path.join(dir, 'a.json');
    writeFileAtomicSync(file, '{"old":true}');
    fs.mkdirSync(path.join(dir, 'blocker'));
    expect(() => writeFileAtomicSync(path.join(dir, 'blocker'), 'x')).toThrow();
    expect(fs.readFileSync(file, 'utf8')).toBe('{"old":true}');
    expect(fs.readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([]);   // temp cleaned up
  });

  it('moves a file that fails to parse aside instead of overwriting it', () => {
    const dir = tempDir();
    const file = path.join(dir, 'c.json');
    fs.writeFileSync(file, '{"broken": ');
    const r = readJsonOrMoveAside(file);
    expect(r.status).toBe('corrupt');
    if (r.status !== 'corrupt' || !r.movedTo) throw new Error('expected a moved-aside file');
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.readFileSync(r.movedTo, 'utf8')).toBe('{"broken": ');
    expect(path.basename(r.movedTo)).toMatch(/^c\.json\.corrupt-/);
    fs.writeFileSync(file, 'x');
    expect(moveAside(file)).not.toBe(r.movedTo);
  });
});

describe('project store', () => {
  it('creates, reopens and refuses a non-empty folder', async () => {
    isolateHome();
    const dir = tempDir();
    const s = await ProjectStore.create(dir, { name: 'Alpha' });
    expect(fs.existsSync(path.join(dir, WORKBENCH_JSON))).toBe(true);
    expect(s.info()).toMatchObject({ name: 'Alpha', runCount: 0, schemaVersion: 1 });
    s.close();
    const again = await ProjectStore.open(dir);
    stores.push(again);
    expect(again.info().id).toBe(s.info().id);
    const other = tempDir();
    fs.writeFileSync(path.join(other, 'notes.txt'), 'x');
    await expect(ProjectStore.create(other)).rejects.toThrow(/not empty/);
  });

  it('moves a corrupt workbench.json aside, never overwrites it, and rebuilds the run index from run.json', async () => {
    isolateHome();
    const dir = tempDir();
    const s = await ProjectStore.create(dir);
    const runDir = s.runDir('run-1');
    fs.mkdirSync(runDir, { recursive: true });
    const record = {
      id: 'run-1', name: 'r', method: 'spa', env: 'sokoban', size: 'smoke', preset: null, templateHash: null, status: 'completed',
      reason: null, createdAt: 1, startedAt: 1, finishedAt: 2, durationMs: 1, attempts: 1, stages: [], progress: null, latest: {},
      config: {}, versions: {},
    };
    fs.writeFileSync(path.join(runDir, 'run.json'), JSON.stringify(record));
    s.close();
    const garbage = '{"schemaVersion": 1, "project": {"id": "abc", "na';
    fs.writeFileSync(path.join(dir, WORKBENCH_JSON), garbage);
    const reopened = await ProjectStore.open(dir);
    stores.push(reopened);
    const moved = fs.readdirSync(dir).filter((f) => f.startsWith('workbench.json.corrupt-'));
    expect(moved).toHaveLength(1);
    expect(fs.readFileSync(path.join(dir, moved[0]!), 'utf8')).toBe(garbage);
    expect(reopened.warnings.join('\n')).toMatch(/moved to workbench\.json\.corrupt-/);
    expect(reopened.listRuns().map((r) => r.id)).toEqual(['run-1']);
    expect(JSON.parse(fs.readFileSync(path.join(dir, WORKBENCH_JSON), 'utf8')).runs).toHaveLength(1);
  });

  it('refuses a second writer: another process cannot open a locked project', async () => {
    isolateHome();
    const dir = tempDir();
    stores.push(await ProjectStore.create(dir));
    const lockUrl = new URL('../../core/storage/project-store.ts', import.meta.url).href;
    const script = `import { ProjectStore } from ${JSON.stringify(lockUrl)};
try { await ProjectStore.open(process.argv[1]); console.log('OPENED'); } catch (e) { console.log('REFUSED ' + e.name + ': ' + e.message); }`;
    const r = spawnSync(process.execPath, ['--import', new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href, '--input-type=module', '-e', script, dir], {
      encoding: 'utf8', env: { ...process.env }, timeout: 120_000,
    });
    expect(r.stdout).toContain('REFUSED Conflict');
    expect(r.stdout).toContain(`process ${process.pid}`);
    // And in this process too (a second open would be a second writer).
    await expect(ProjectStore.open(dir)).rejects.toThrow(/in use/);
  });

  it('takes over a stale lock whose process is dead, and reports it', async () => {
    isolateHome();
    const dir = tempDir();
    (await ProjectStore.create(dir)).close();
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    const deadPid = Number(dead.stdout.trim());
    fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: deadPid, host: (await import('node:os')).hostname(), startedAt: 1, token: 'old', purpose: 'test' }));
    const s = await ProjectStore.open(dir);
    stores.push(s);
    expect(s.warnings.join('\n')).toContain(`stale lock of process ${deadPid}`);
    expect(JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    s.close();
    stores.pop();
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
  });

  it('lock release only removes its own lock', () => {
    const dir = tempDir();
    const lock = acquireProjectLock(dir);
    expect(() => acquireProjectLock(dir)).toThrow(/this process already holds its lock/);
    lock.release();
    const second = acquireProjectLock(dir);
    lock.release();                                       // stale handle: must not remove the new lock
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(true);
    second.release();
  });

  it('saves immutable template versions by hash', async () => {
    isolateHome();
    const s = await ProjectStore.create(tempDir());
    stores.push(s);
    const v = { name: 'mine', hash: 'abc123', createdAt: 5, description: 'd', parent: null, source: '{"x":1}' };
    expect((await s.saveTemplate(v)).created).toBe(true);
    expect((await s.saveTemplate({ ...v, createdAt: 9 })).created).toBe(false);
    expect(s.readTemplate('mine')).toEqual(v);
    expect(fs.existsSync(path.join(s.dir, 'templates', 'mine@abc123.json'))).toBe(true);
  });
});

describe('schema migrations', () => {
  const steps: Migration[] = [
    { from: 1, to: 2, description: 'rename', migrate: (d) => ({ ...d, renamed: d.old, old: undefined }) },
    { from: 2, to: 3, description: 'add', migrate: (d) => ({ ...d, added: true }) },
  ];
  it('applies the hooks in order up to the target version', () => {
    const r = migrate({ schemaVersion: 1, old: 7 }, 'x', steps, 3);
    expect(r.applied.map((m) => m.to)).toEqual([2, 3]);
    expect(r.data).toMatchObject({ schemaVersion: 3, renamed: 7, added: true });
  });
  it('refuses files from a newer version with a clear message', () => {
    expect(() => migrate({ schemaVersion: 9 }, 'workbench.json', steps, 3)).toThrow(NewerSchemaError);
    expect(() => migrate({ schemaVersion: 9 }, 'workbench.json', steps, 3)).toThrow(/newer SPA Workbench \(schema version 9/);
  });
});

describe('downsampling', () => {
  it('keeps min and max per bucket so spikes are never hidden', () => {
    const xs = Array.from({ length: 10_000 }, (_, i) => i);
    const ys = xs.map((i) => (i === 4321 ? 1000 : i === 777 ? -500 : Math.sin(i / 100)));
    const d = downsampleMinMax(xs, ys, 100);
    expect(d.downsampled).toBe(true);
    expect(d.x.length).toBeLessThanOrEqual(100);
    expect(Math.max(...d.max)).toBe(1000);
    expect(Math.min(...d.min)).toBe(-500);
    expect(d.count.reduce((a, b) => a + b, 0)).toBe(10_000);
    const small = downsampleMinMax([1, 2], [3, 4], 10);
    expect(small).toMatchObject({ downsampled: false, y: [3, 4], count: [1, 1] });
  });
});

describe('recent projects', () => {
  it('keeps newest first, deduplicated, in SPA_WORKBENCH_HOME', () => {
    const home = isolateHome();
    addRecent('/tmp/a', 'A');
    addRecent('/tmp/b', 'B');
    addRecent('/tmp/a', 'A');
    expect(readRecent().projects.map((p) => p.name)).toEqual(['A', 'B']);
    expect(fs.existsSync(path.join(home, 'recent.json'))).toBe(true);
    fs.writeFileSync(path.join(home, 'recent.json'), 'nope');
    const r = readRecent();
    expect(r.projects).toEqual([]);
    expect(r.warning).toMatch(/moved to/);
  });
});

describe('run data readers', () => {
  it('serve metric series per (stage, name), sorted by x even after a resume re-logged steps, and follow appends', async () => {
    const { RunData } = await import('../../core/storage/run-data.js');
    const dir = tempDir();
    const file = path.join(dir, 'metrics.jsonl');
    const point = (stage: string, step: number, v: number) => ({ stage, step, time: 1000 + step, values: { loss: v } });
    appendJsonl(file, [point('sft', 1, 5), point('sft', 2, 4), point('sft', 3, 3), point('sft', 2, 4.5), point('rl', 1, 9)]);
    const rd = new RunData('r', dir);
    const s = rd.metricSeries({ names: ['loss'], x: 'step', maxPoints: 100 });
    expect(s.map((x) => x.stage)).toEqual(['sft', 'rl']);
    expect(s[0]).toMatchObject({ x: [1, 2, 2, 3], y: [5, 4, 4.5, 3], downsampled: false });
    appendJsonl(file, [point('sft', 4, 2)]);
    const s2 = rd.metricSeries({ names: ['loss'], stage: 'sft', x: 'step', xMin: 2, maxPoints: 100 });
    expect(s2).toHaveLength(1);
    expect(s2[0]!.x).toEqual([2, 2, 3, 4]);
    expect(rd.metricNames()).toEqual({ names: ['loss'], stages: ['sft', 'rl'] });
  });
});

describe('datasets and evals', () => {
  it('pages SFT rows by line offsets, reads drop reasons, and lists eval files', async () => {
    const { RunData } = await import('../../core/storage/run-data.js');
    const dir = tempDir();
    const rows = Array.from({ length: 25 }, (_, i) => ({ id: `g${i >> 2}-t${i % 4}`, episodeId: `g${i >> 2}`, seed: i >> 2, turn: i % 4, prompt: 'p', original: `o${i}`, corrected: `c${i}` }));
    appendJsonl(path.join(dir, 'datasets', 'sft-train.jsonl'), rows);
    fs.writeFileSync(path.join(dir, 'datasets', 'sft-stats.json'), JSON.stringify({ train: 25, val: 0, dropped: { 'missing-think': 3 } }));
    fs.mkdirSync(path.join(dir, 'eval'));
    fs.writeFileSync(path.join(dir, 'eval', 'final.json'), JSON.stringify({ stage: 'eval', step: 7, passAtK: [] }));
    fs.writeFileSync(path.join(dir, 'eval', 'partial.json'), '{"stage": "ev');   // being written: skipped
    const rd = new RunData('r', dir);
    const page = rd.datasetPage('train', 20, 10);
    expect(page.total).toBe(25);
    expect(page.rows.map((r) => r.original)).toEqual(['o20', 'o21', 'o22', 'o23', 'o24']);
    expect(rd.datasetPage('val', 0, 10)).toEqual({ rows: [], total: 0, skipped: 0 });
    expect(rd.datasetStats()?.dropped).toEqual({ 'missing-think': 3 });
    expect(rd.evalResults().map((e) => [e.id, e.stage, e.step])).toEqual([['final', 'eval', 7]]);
    fs.writeFileSync(path.join(dir, 'datasets', 'sft-stats.json'), JSON.stringify({ train: 'many' }));
    expect(() => rd.datasetStats()).toThrow(/sft-stats\.json does not match/);
  });
});
