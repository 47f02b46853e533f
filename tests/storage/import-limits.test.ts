// runs.import's bounds and guards, in process (the host-level fuzz suite is tests/fuzz/import.fuzz.test.ts):
// each IMPORT_LIMITS bound refuses naming the file, the line and the field; Python's NaN/Infinity
// parse, 1e400 is refused by field; duplicate ids stay unique; a read-only project is refused before
// anything is written; an import over its time budget is stopped and leaves nothing; the guards'
// real paths follow links, also to folders that do not exist yet.
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDispatcher } from '../../core/host/dispatcher.js';
import { ImportPool } from '../../core/host/import-pool.js';
import { parseJsonText } from '../../core/interop/import-read.js';
import { importRagenRun } from '../../core/interop/import-run.js';
import { LOCK_FILE } from '../../core/storage/lock.js';
import { isInside, realPathOf } from '../../core/storage/real-path.js';
import { stopChild } from '../lib/child-exit.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-wb-import-limits-'));
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) await stopChild(c, 'SIGKILL');   // gone before its folders are (issue 37 item 7)
  fs.rmSync(root, { recursive: true, force: true });
});

function folder(name: string, files: Record<string, string>): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  for (const [f, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), text);
  }
  return dir;
}
const metricLines = (n: number) => Array.from({ length: n }, (_, i) => `{"step": ${i}, "data": {"loss": ${i / 10}}}\n`).join('');

describe('parseJsonText', () => {
  const limits = { maxDepth: 8 };
  it('reads NaN, Infinity and -Infinity outside strings as those numbers, and leaves strings alone', () => {
    const v = parseJsonText('{"a": NaN, "b": [Infinity, -Infinity, 1], "s": "NaN and -Infinity", "t": "\\"NaN\\""}', 'f.jsonl', 3, limits) as
      Record<string, unknown>;
    expect(v.a).toBeNaN();
    expect(v.b).toEqual([Infinity, -Infinity, 1]);
    expect(v.s).toBe('NaN and -Infinity');
    expect(v.t).toBe('"NaN"');
    expect(parseJsonText('NaN', 'f.json', 0, limits)).toBeNaN();
  });
  it('refuses a number beyond a double by its field path, and nesting over the limit by file and line', () => {
    expect(() => parseJsonText('{"a": {"b": [0, 1, 1e400]}}', 'f.jsonl', 7, limits)).toThrow(/^f\.jsonl:7 a\.b\[2\]: a number too large for a double/);
    expect(() => parseJsonText('{"odd key": -2e999}', 'f.jsonl', 1, limits)).toThrow(/f\.jsonl:1 \["odd key"\]: a number too large/);
    expect(() => parseJsonText(`${'9'.repeat(400)}`, 'f.json', 0, limits)).toThrow(/f\.json \(the value\): a number too large/);
    expect(parseJsonText('{"a": 1e300, "b": "1e400"}', 'f.jsonl', 1, limits)).toEqual({ a: 1e300, b: '1e400' });
    expect(() => parseJsonText(`${'['.repeat(9)}${']'.repeat(9)}`, 'f.jsonl', 4, limits)).toThrow(/^f\.jsonl:4: nested more than 8 levels deep/);
    // brackets inside strings do not count as nesting
    expect(parseJsonText(`{"s": "${'['.repeat(50)}"}`, 'f.jsonl', 1, limits)).toEqual({ s: '['.repeat(50) });
    expect(() => parseJsonText('{"a": nan}', 'f.jsonl', 2, limits)).toThrow(/^f\.jsonl:2: not valid JSON/);
  });
});

describe('IMPORT_LIMITS refuse by file and line', () => {
  const project = path.join(root, 'project');
  it('rows, line length and folder entries', async () => {
    const src = folder('rows', { 'metrics.jsonl': metricLines(20) });
    await expect(importRagenRun({ projectDir: project, source: src, limits: { maxRows: 10 } }))
      .rejects.toThrow(/metrics\.jsonl:11: the import holds more than 10 rows \(IMPORT_LIMITS\.maxRows\)/);
    const long = folder('long', { 'metrics.jsonl': `${metricLines(2)}{"step": 2, "data": {"loss": 1, "pad": "${'x'.repeat(300)}"}}\n` });
    await expect(importRagenRun({ projectDir: project, source: long, limits: { maxLineBytes: 200 } }))
      .rejects.toThrow(/metrics\.jsonl:3: the line is longer than/);
    const many = folder('many', Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}.txt`, 'x'])));
    await expect(importRagenRun({ projectDir: project, source: many, limits: { maxWalkEntries: 5 } }))
      .rejects.toThrow(/more than 5 entries under .*many \(IMPORT_LIMITS\.maxWalkEntries\)/);
    expect(fs.existsSync(path.join(project, 'runs')) ? fs.readdirSync(path.join(project, 'runs')) : []).toEqual([]);
  });

  it('duplicate ids get the next free suffix of that id, in order', async () => {
    const chat = 'user\nTurn 1:\nState:\nP_\n_G\nYou have 3 actions left\nassistant\n<answer>Right</answer>\nuser\nReward:\n0\n';
    const line = () => JSON.stringify({ step: 1, output: chat, score: 0 });
    // verl validation dumps name episodes valdump-<step>-<line>: equal lines in two files give equal ids
    const src = folder('dupes', { 'a/1.jsonl': `${line()}\n${line()}\n`, 'b/1.jsonl': `${line()}\n${line()}\n`, 'c/1.jsonl': `${line()}\n` });
    const r = await importRagenRun({ projectDir: project, source: src, now: 1 });
    const ids = fs.readFileSync(path.join(project, 'runs', r.runId, 'rollouts', 'index.jsonl'), 'utf8').trimEnd().split('\n')
      .map((l) => (JSON.parse(l) as { id: string }).id);
    expect(ids).toEqual(['valdump-000001-1', 'valdump-000001-2', 'valdump-000001-1-2', 'valdump-000001-2-2', 'valdump-000001-1-3']);
  });
});

describe('runs.import through the host', () => {
  it('a project open read-only answers ReadOnly and writes nothing', async () => {
    process.env.SPA_WORKBENCH_HOME = path.join(root, 'home');
    const dir = path.join(root, 'held');
    const owner = createDispatcher({ host: 'cli', lockPurpose: 'cli' });
    await owner.api.projects.create({ path: dir });
    await owner.dispose();
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    children.push(child);
    fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: child.pid, host: os.hostname(), startedAt: Date.now(), token: 't', purpose: 'cli run' }));
    const watcher = createDispatcher({ host: 'serve', lockPurpose: 'serve', watchWhenLocked: true });
    try {
      const info = await watcher.api.projects.open({ path: dir });
      expect(info.readOnly).toBe(true);
      const src = folder('ro-src', { 'metrics.jsonl': metricLines(3) });
      await expect(watcher.api.runs.import({ path: src })).rejects.toMatchObject({ name: 'ReadOnly' });
      expect(fs.readdirSync(path.join(dir, 'runs'))).toEqual([]);
      expect(fs.readdirSync(dir).filter((f) => f.startsWith('.import-'))).toEqual([]);
    } finally {
      await watcher.dispose();
    }
  });

  it('an import over its time budget is stopped with a Timeout naming the source; nothing is left in the project', async () => {
    const project = path.join(root, 'budget');
    fs.mkdirSync(project, { recursive: true });
    const src = folder('budget-src', { 'metrics.jsonl': metricLines(200_000) });
    const pool = new ImportPool({ limits: { timeoutMs: 300 } });
    try {
      await expect(pool.run({ projectDir: project, source: src })).rejects.toMatchObject({
        name: 'Timeout', message: expect.stringMatching(/budget-src took longer than 300 ms \(IMPORT_LIMITS\.timeoutMs\) and was stopped/) as unknown,
      });
      // the temporary folder is removed in the background; wait for it without a timing assertion
      for (let i = 0; i < 2400 && fs.readdirSync(project).some((f) => f.startsWith('.import-')); i++) await new Promise((r) => setTimeout(r, 50));   // up to 120 s
      expect(fs.readdirSync(project).filter((f) => f !== 'runs')).toEqual([]);
      expect(fs.existsSync(path.join(project, 'runs')) ? fs.readdirSync(path.join(project, 'runs')) : []).toEqual([]);
      // the pool starts a fresh worker for the next import
      const ok = await new ImportPool().run({ projectDir: project, source: folder('small-src', { 'metrics.jsonl': metricLines(3) }) });
      expect(ok.sources).toEqual([{ file: 'metrics.jsonl', kind: 'metrics', count: 3 }]);
    } finally {
      pool.dispose();
    }
  }, 240_000);
});

describe('realPathOf', () => {
  it('resolves links, also above folders that do not exist yet and through dangling links', () => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(root, 'rp-')));
    const project = path.join(base, 'project');
    fs.mkdirSync(path.join(project, 'runs', 'r1'), { recursive: true });
    fs.symlinkSync(path.join(project, 'runs'), path.join(base, 'link'));
    fs.symlinkSync(path.join(project, 'runs', 'r1', 'new'), path.join(base, 'dangling'));
    expect(realPathOf(path.join(base, 'link', 'r1'))).toBe(path.join(project, 'runs', 'r1'));
    expect(realPathOf(path.join(base, 'link', 'r1', 'a', 'b'))).toBe(path.join(project, 'runs', 'r1', 'a', 'b'));
    expect(realPathOf(path.join(base, 'dangling', 'x'))).toBe(path.join(project, 'runs', 'r1', 'new', 'x'));
    expect(isInside(realPathOf(path.join(base, 'dangling')), project)).toBe(true);
    expect(isInside(path.join(base, 'project2'), project)).toBe(false);
  });
});
