// The stage context is the stages' only door to the disk: a tolerant JSONL reader (one torn-line
// policy with core/storage) and the one folder outside the run that a stage may write.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeStageContext, createStageContext, RunWriters } from '../../core/engine/stage-context.js';
import { RunConfigSchema } from '../../core/api/run-config.js';
import type { RunEvent } from '../../core/api/records.js';

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

function context(now?: () => number) {
  const project = mkdtempSync(join(tmpdir(), 'spa-ctx-'));
  dirs.push(project);
  const runDir = join(project, 'runs', 'r1');
  mkdirSync(join(runDir, 'datasets'), { recursive: true });
  const events: RunEvent[] = [];
  const writers = new RunWriters(runDir);
  const ctx = createStageContext({
    runId: 'r1', runDir, config: RunConfigSchema.parse({}), stage: 'sft', previous: {}, signal: new AbortController().signal,
    emit: (e) => events.push(e), writers, ...(now ? { now } : {}),
  });
  return { project, runDir, ctx, events };
}

describe('StageContext', () => {
  it('readJsonl skips a torn last line and logs it as a warning instead of failing the stage', () => {
    const { runDir, ctx, events } = context();
    writeFileSync(join(runDir, 'datasets', 'sft-train.jsonl'), '{"id":"a"}\n{"id":"b"}\n{"id":"c","messa');
    expect(ctx.readJsonl<{ id: string }>('datasets/sft-train.jsonl').map((r) => r.id)).toEqual(['a', 'b']);
    const warnings = events.filter((e) => e.type === 'log' && e.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ stage: 'sft', message: expect.stringMatching(/sft-train\.jsonl: skipped line 3 .*torn/) });
  });

  it('readJsonl of a missing file is empty; paths outside the run folder are refused', () => {
    const { ctx, events } = context();
    expect(ctx.readJsonl('datasets/sft-val.jsonl')).toEqual([]);
    expect(events).toEqual([]);
    expect(() => ctx.readJsonl('../other/x.jsonl')).toThrow();
  });

  it('cacheDir is <project>/cache/<kind>/<key> and takes plain names only', () => {
    const { project, ctx } = context();
    expect(ctx.cacheDir('bootstrap', 'abc123')).toBe(join(project, 'cache', 'bootstrap', 'abc123'));
    expect(() => ctx.cacheDir('bootstrap', '../../x')).toThrow(/plain name/);
    expect(() => ctx.cacheDir('', 'k')).toThrow(/plain name/);
  });

  describe('throttled progress (one event per 250 ms)', () => {
    const messages = (events: RunEvent[]) => events.map((e) => (e.type === 'progress' ? `progress ${e.done} ${e.message}` : e.type));
    it('holds an event inside the interval and lets it out before the next event of another kind', () => {
      let t = 1_000;
      const { ctx, events } = context(() => t);
      ctx.progress(0, 16, 'update 4/4');
      t += 100;
      ctx.progress(1, 16, 'success 3%');   // an RL step's end, 100 ms after its last update's message
      expect(messages(events)).toEqual(['progress 0 update 4/4']);
      t += 100;
      ctx.progress(1, 16, 'rollouts 8/32 episodes');   // supersedes the held one
      ctx.metric(1, { 'rollout/reward': 0 });
      expect(messages(events)).toEqual(['progress 0 update 4/4', 'progress 1 rollouts 8/32 episodes', 'metric']);
      closeStageContext(ctx);
      expect(events).toHaveLength(3);
    });
    it('lets a held event out when the interval ends, or at the stage\'s end', async () => {
      const { ctx, events } = context();
      ctx.progress(0, 16, 'a');
      ctx.progress(1, 16, 'b');
      expect(messages(events)).toEqual(['progress 0 a']);
      await new Promise((r) => setTimeout(r, 400));
      expect(messages(events)).toEqual(['progress 0 a', 'progress 1 b']);
      ctx.progress(2, 16, 'c');
      closeStageContext(ctx);
      expect(messages(events)).toEqual(['progress 0 a', 'progress 1 b', 'progress 2 c']);
      await new Promise((r) => setTimeout(r, 400));
      expect(events).toHaveLength(3);   // the timer was cleared: nothing twice
    });
  });
});
