// The shared runner of the host's model commands (core/host/child-runner.ts, used by probe.turn and
// templates.perplexity): one at a time, a timeout, the child's own JSON error, a crash with its stderr
// tail, a start that throws. Driven by fake children (streams the test writes), so nothing is spawned.
import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { ChildRunner, type ChildHandle, type ChildJob } from '../../core/host/child-runner.js';
import { PerplexityRunner } from '../../core/host/template-perplexity-child.js';

interface FakeChild extends ChildHandle {
  out: PassThrough;
  err: PassThrough;
  exit(code: number | null, signal?: string | null): void;
  kills: string[];
}

function fakeChild(): FakeChild {
  const out = new PassThrough();
  const err = new PassThrough();
  const exits: Array<(code: number | null, signal: string | null) => void> = [];
  const kills: string[] = [];
  return {
    out, err, kills, stdout: out, stderr: err,
    kill: (signal) => { kills.push(signal ?? 'SIGTERM'); },
    onExit: (l) => { exits.push(l); },
    onSpawnError: () => {},
    // let the stream 'data' events reach the runner before the exit, as a real child's 'close' does
    exit: (code, signal = null) => setImmediate(() => exits.forEach((l) => l(code, signal))),
  };
}

const busy = { running: 'another fake job', expected: 'one fake job at a time' };
const job = (child: ChildHandle, extra: Partial<ChildJob> = {}): ChildJob => ({
  start: () => child, timeoutMs: 60_000, where: 'fake.run', name: 'the fake process', onTimeout: 'it was stopped', maxStdout: 1_000_000, ...extra,
});

describe('ChildRunner', () => {
  it('returns the last JSON object on stdout, and refuses a second job while one runs', async () => {
    const runner = new ChildRunner(busy);
    const child = fakeChild();
    const first = runner.run(job(child));
    expect(runner.active).toBe(1);
    await expect(runner.run(job(fakeChild()))).rejects.toMatchObject({
      name: 'Conflict', message: expect.stringMatching(/^fake\.run: another fake job is running \(started \d+ s ago\); wait for it to finish$/),
      details: { expected: 'one fake job at a time' },
    });
    child.out.write('progress line\n{\n  "value": 1\n}\n{\n  "value": 2\n}\n');
    child.exit(0);
    await expect(first).resolves.toEqual({ value: 2 });
    expect(runner.active).toBe(0);
    const next = fakeChild();
    const second = runner.run(job(next));
    next.out.write('{\n"ok": true\n}\n');
    next.exit(0);
    await expect(second).resolves.toEqual({ ok: true });
  });

  it("maps the child's JSON error to its own error name and details, and an unknown name to InternalError", async () => {
    const runner = new ChildRunner(busy);
    const child = fakeChild();
    const p = runner.run(job(child));
    child.err.write('loading\n');
    child.out.write(`${JSON.stringify({ error: { name: 'NotFound', message: 'no run r9', details: { where: 'run lookup', received: 'r9' } } }, null, 2)}\n`);
    child.exit(1);
    await expect(p).rejects.toMatchObject({
      name: 'NotFound', message: 'fake.run: no run r9', details: { where: 'fake.run run lookup', received: 'r9', stderrTail: ['loading'] },
    });

    const odd = fakeChild();
    const q = runner.run(job(odd));
    odd.out.write(`${JSON.stringify({ error: { name: 'Weird', message: 'boom' } }, null, 2)}\n`);
    odd.exit(1);
    await expect(q).rejects.toMatchObject({ name: 'InternalError', message: 'fake.run: boom' });
  });

  it('reports a crash with the exit code, the stderr tail and the caller details, and cleans up once', async () => {
    const runner = new ChildRunner(busy);
    const child = fakeChild();
    let cleanups = 0;
    const p = runner.run(job(child, { crashDetails: { command: 'fake cmd' }, cleanup: () => { cleanups++; } }));
    child.err.write('line 1\nout of memory');
    child.exit(134);
    await expect(p).rejects.toMatchObject({
      name: 'InternalError', message: 'fake.run: the fake process exited with code 134: out of memory',
      details: { where: 'fake.run child process', received: 'exit code 134', stderrTail: ['line 1', 'out of memory'], command: 'fake cmd' },
    });
    expect(cleanups).toBe(1);
  });

  it('stops a child past its timeout with SIGTERM and reports Timeout', async () => {
    const runner = new ChildRunner(busy);
    const child = fakeChild();
    const p = runner.run(job(child, { timeoutMs: 50 }));
    await new Promise((r) => setTimeout(r, 200));
    expect(child.kills).toEqual(['SIGTERM']);
    child.exit(null, 'SIGTERM');
    await expect(p).rejects.toMatchObject({ name: 'Timeout', message: 'fake.run: no result within 0 s; it was stopped' });
  });

  it('reports a start that throws as Unavailable, cleans up, and frees the runner', async () => {
    const runner = new ChildRunner(busy);
    let cleanups = 0;
    const failing = job(fakeChild(), { start: () => { throw new Error('no binary'); }, cleanup: () => { cleanups++; } });
    await expect(runner.run(failing)).rejects.toMatchObject({ name: 'Unavailable', message: 'fake.run: the fake process could not start: no binary' });
    expect(cleanups).toBe(1);
    const child = fakeChild();
    const p = runner.run(job(child));
    child.out.write('{\n"ok": 1\n}\n');
    child.exit(0);
    await expect(p).resolves.toEqual({ ok: 1 });
  });
});

describe('PerplexityRunner on the shared runner', () => {
  it('writes no template temp file for a request refused while another runs, and removes the one it wrote', async () => {
    const savedTmp = process.env.TMPDIR;
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'child-runner-test-'));
    process.env.TMPDIR = tmp; // os.tmpdir() reads it on each call: the runner's temp files land here
    try {
      const launched: string[][] = [];
      let current: FakeChild | null = null;
      const runner = new PerplexityRunner((args) => { launched.push(args); current = fakeChild(); return current; });
      const req = { project: '/p', runId: 'r1', env: { id: 'sokoban', options: {} }, template: { source: '{"name":"t"}' }, samples: 2, timeoutMs: 60_000 };
      const first = runner.run(req);
      expect(launched).toHaveLength(1);
      const file = launched[0]!.find((a) => a.startsWith('--template-file='))!.slice('--template-file='.length);
      expect(path.dirname(path.dirname(file))).toBe(tmp);
      expect(fs.readFileSync(file, 'utf8')).toBe('{"name":"t"}');
      await expect(runner.run(req)).rejects.toMatchObject({ name: 'Conflict' });
      expect(launched).toHaveLength(1);
      expect(fs.readdirSync(tmp)).toHaveLength(1); // only the running one's folder
      current!.out.write('{\n"perplexity": 2\n}\n');
      current!.exit(0);
      await expect(first).resolves.toEqual({ perplexity: 2 });
      expect(fs.readdirSync(tmp)).toEqual([]);
    } finally {
      if (savedTmp === undefined) delete process.env.TMPDIR; else process.env.TMPDIR = savedTmp;
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
