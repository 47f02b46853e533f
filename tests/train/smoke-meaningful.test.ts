// Smoke size is what a new user tries the UI with: its self-play must keep rows (a dataset, SFT on
// real data, self-play traces with boards), not be 100% format errors.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { readJsonl, runPreset, tempProject } from './helpers.js';

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
  }, 60_000);
});
