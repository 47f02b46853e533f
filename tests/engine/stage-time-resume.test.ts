// A stage resumed after a stop or a lost host reports all the time it ran (done.json wallSeconds),
// counted from events.jsonl: a stopped attempt to its stop, a dead one to its engine's last line
// (not to the later host's "interrupted" status nor to the next attempt's start).
import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { StageDefinition } from '../../core/api/stage.js';
import { resolveRunConfig } from '../../core/engine/config.js';
import { earlierStageSeconds, executeRun } from '../../core/engine/runner.js';
import { stageDoneFile } from '../../core/storage/run-files.js';
import { tempDir } from '../api/helpers.js';

const config = resolveRunConfig({ preset: 'spa', size: 'smoke' }).config!;
const line = (e: Record<string, unknown>) => `${JSON.stringify({ runId: 'r1', ...e })}\n`;

function runDir(events: Array<Record<string, unknown>>): string {
  const dir = path.join(tempDir('spa-wb-stage-time-'), 'runs', 'r1');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'events.jsonl'), events.map(line).join(''));
  return dir;
}

const stub = (seconds: number): StageDefinition => ({ name: 'rl', title: 'stub rl', async run() { return { wallSeconds: seconds, steps: 3 }; } });

describe('stage wall time across attempts', () => {
  it('counts a stopped attempt to its stop and a dead one to its engine\'s last line', () => {
    const dir = runDir([
      { type: 'status', time: 0, status: 'running' },
      { type: 'stage', time: 1_000, stage: 'sft', status: 'running' },
      { type: 'stage', time: 4_000, stage: 'sft', status: 'completed' },
      { type: 'stage', time: 4_000, stage: 'rl', status: 'running' },
      { type: 'stage', time: 14_000, stage: 'rl', status: 'stopped', reason: 'stopped by the user' },
      { type: 'status', time: 14_100, status: 'stopped' },
      { type: 'status', time: 100_000, status: 'running' },                        // attempt 2: rl again, then the host dies
      { type: 'stage', time: 100_500, stage: 'rl', status: 'running' },
      { type: 'progress', time: 120_500, stage: 'rl', done: 2, total: 3 },
      { type: 'status', time: 900_000, status: 'failed', reason: 'interrupted: the workbench host exited' },   // written by a later host
    ]);
    expect(earlierStageSeconds(dir, 'rl')).toBe(10 + 20);
    expect(earlierStageSeconds(dir, 'sft')).toBe(3);
    expect(earlierStageSeconds(dir, 'eval')).toBe(0);
    expect(earlierStageSeconds(path.join(dir, 'nope'), 'rl')).toBe(0);
  });

  it('a resumed stage\'s done.json has the total in wallSeconds and this attempt\'s in wallSecondsThisAttempt; a first attempt is unchanged', async () => {
    const dir = runDir([
      { type: 'status', time: 0, status: 'running' },
      { type: 'stage', time: 0, stage: 'rl', status: 'running' },
      { type: 'checkpoint', time: 42_000, stage: 'rl', step: 2, path: 'x' },
    ]);
    const outcome = await executeRun({
      runId: 'r1', runDir: dir, config, stages: ['rl'], attempt: 2, signal: new AbortController().signal, send: () => undefined, loadStage: async () => stub(8),
    });
    expect(outcome.status).toBe('completed');
    const done = JSON.parse(fs.readFileSync(path.join(dir, stageDoneFile('rl')), 'utf8'));
    expect(done.output).toEqual({ wallSeconds: 50, wallSecondsThisAttempt: 8, steps: 3 });

    const fresh = runDir([]);
    await executeRun({ runId: 'r1', runDir: fresh, config, stages: ['rl'], attempt: 1, signal: new AbortController().signal, send: () => undefined, loadStage: async () => stub(8) });
    expect(JSON.parse(fs.readFileSync(path.join(fresh, stageDoneFile('rl')), 'utf8')).output).toEqual({ wallSeconds: 8, steps: 3 });
  });
});
