// Smoke size is what a new user tries the UI with: its self-play must keep rows (a dataset, SFT on
// real data, self-play traces with boards), not be 100% format errors.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { readJsonl, runPreset, tempProject } from './helpers.js';
import type { EpisodeRecord } from '../../core/api/records.js';
import { actionFrames } from '../../core/host/action-frames.js';
import { readSamples } from '../../core/host/run-samples.js';
import { episodeFrames } from '../../renderer/src/boards/replay-frames.js';

describe('smoke presets', () => {
  it('spa at smoke size: self-play keeps well-formed turns, with parsed states beside the truth', async () => {
    const r = await runPreset(tempProject(), 'spa', 'smoke-data', { stages: { plan: { order: ['selfplay'] } } });
    expect(r.outcome.status).toBe('completed');
    const rows = readJsonl(join(r.runDir, 'datasets', 'sft-train.jsonl')).length + readJsonl(join(r.runDir, 'datasets', 'sft-val.jsonl')).length;
    expect(rows).toBeGreaterThan(3);
    const episodes = readJsonl(join(r.runDir, 'rollouts', 'selfplay.jsonl')) as Array<{ turns: Array<{ parsed: { formatError: boolean; observation: string | null } }> }>;
    const turns = episodes.flatMap((e) => e.turns);
    expect(turns.length).toBeGreaterThan(3);
    expect(turns.every((t) => !t.parsed.formatError && t.parsed.observation)).toBe(true);
  }, 180_000);

  it('a multi-action turn replays as one frame per action (rollouts.actionFrames), ending on the recorded state', async () => {
    const r = await runPreset(tempProject(), 'spa', 'frames', { stages: { plan: { order: ['selfplay'] }, selfplay: { games: 6 } } });
    const episodes = readJsonl(join(r.runDir, 'rollouts', 'selfplay.jsonl')) as EpisodeRecord[];
    let multi = 0;
    for (const ep of episodes) {
      const { turns } = actionFrames(ep);
      for (const [i, t] of turns.entries()) {
        const turn = ep.turns[i]!;
        expect(t.boards, `${ep.id} turn ${t.turn}`).not.toBeNull();
        expect(t.boards!.length).toBe(turn.actionsExecuted.length);
        if (t.boards!.length) expect(t.boards!.at(-1)!.cells).toEqual(turn.stateAfter.board.cells);
        if (turn.actionsExecuted.length > 1) multi++;
      }
      const frames = episodeFrames(ep, turns);
      expect(frames.length).toBe(1 + ep.turns.reduce((n, t) => n + Math.max(1, t.actionsExecuted.length), 0));
      expect(frames.map((f) => f.index)).toEqual(frames.map((_, i) => i));
    }
    expect(multi).toBeGreaterThan(0);
    // a record that no longer replays (here: a wrong seed) gets no intermediate boards, not wrong ones
    const ep = episodes.find((e) => e.turns.some((t) => t.actionsExecuted.length > 1))!;
    expect(actionFrames({ ...ep, seed: ep.seed + 1 }).turns.every((t) => t.boards === null)).toBe(true);
  }, 180_000);

  it('SFT writes sample generations beside the target format while it trains (samples/sft.jsonl, runs.samples)', async () => {
    const r = await runPreset(tempProject(), 'sft-only', 'samples', { stages: { plan: { order: ['selfplay', 'sft'] }, sft: { batchSize: 1 } } });
    expect(r.outcome.status).toBe('completed');
    const { samples, total } = readSamples(r.runDir, { offset: 0, limit: 50 });
    expect(total).toBeGreaterThanOrEqual(2);
    expect(samples.length).toBe(total);
    const steps = samples.map((s) => s.step);
    expect(steps).toEqual([...steps].sort((a, b) => b - a));                  // newest first
    for (const s of samples) {
      expect(s.stage).toBe('sft');
      expect(s.target).toMatch(/^<think><observation>/);                       // the corrected reply it learns
      expect(s.generated.startsWith('<think>')).toBe(true);
      expect(s.prompt.length).toBeGreaterThan(0);
      expect(typeof s.wellFormed).toBe('boolean');
    }
  }, 180_000);
});
