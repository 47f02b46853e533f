// JSONL appends are fsynced at stage boundaries: every stream a stage appended to is synced before
// the stage's done marker is written (core/engine/runner.ts, RunWriters.syncAll).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StageDefinition } from '../../core/api/stage.js';
import { resolveRunConfig } from '../../core/engine/config.js';
import { executeRun } from '../../core/engine/runner.js';
import { JsonlWriter } from '../../core/storage/jsonl.js';
import { stageDoneFile } from '../../core/storage/run-files.js';
import { tempDir } from '../api/helpers.js';

afterEach(() => { vi.restoreAllMocks(); });

describe('JSONL fsync at stage boundaries', () => {
  it('syncs each stream a stage wrote before its done.json exists', async () => {
    const dir = path.join(tempDir('spa-wb-jsonl-sync-'), 'runs', 'r1');
    fs.mkdirSync(dir, { recursive: true });
    const synced: { file: string; doneExists: Record<string, boolean> }[] = [];
    const real = JsonlWriter.prototype.sync;
    vi.spyOn(JsonlWriter.prototype, 'sync').mockImplementation(function (this: JsonlWriter) {
      synced.push({ file: path.basename(this.file), doneExists: { a: fs.existsSync(path.join(dir, stageDoneFile('a'))),
        b: fs.existsSync(path.join(dir, stageDoneFile('b'))) } });
      real.call(this);
    });
    const stage = (name: string): StageDefinition => ({ name, title: name, async run(ctx) {
      ctx.metric(1, { x: 1 });
      return { steps: 1 };
    } });
    const config = resolveRunConfig({ preset: 'spa', size: 'smoke' }).config!;
    const outcome = await executeRun({ runId: 'r1', runDir: dir, config, stages: ['a', 'b'], attempt: 1, signal: new AbortController().signal,
      send: () => undefined, loadStage: async (name) => stage(name) });
    expect(outcome.status).toBe('completed');
    const atA = synced.filter((s) => !s.doneExists.a);
    const atB = synced.filter((s) => s.doneExists.a && !s.doneExists.b);
    expect(atA.map((s) => s.file).sort()).toEqual(['events.jsonl', 'metrics.jsonl']);
    expect(atB.map((s) => s.file).sort()).toEqual(['events.jsonl', 'metrics.jsonl']);
  });

  it('sync() before any append, and twice in a row, is harmless; the rows are as appended', () => {
    const file = path.join(tempDir('spa-wb-jsonl-sync-'), 'x.jsonl');
    const w = new JsonlWriter(file);
    try {
      w.sync();   // nothing appended: nothing to do, no error
      expect(w.append([{ a: 1 }])).toEqual([{ offset: 0, length: 7 }]);
      w.sync();
      w.sync();
    } finally { w.close(); }
    expect(fs.readFileSync(file, 'utf8')).toBe('{"a":1}\n');
  });
});
