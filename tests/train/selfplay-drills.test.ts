// selfplay.drills: one-turn, one-action games of the random-action generator on fresh self-play
// seeds, added to the SFT train rows (marked `drill`; validation stays the policy's own games).
// Each drill row's prediction is the true state after its one action (ground-truth replacement),
// its plan is its answer, and its seeds do not overlap the policy's games.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatasetStatsSchema } from '../../core/api/contract.js';
import { readJsonl, runPreset, tempProject } from './helpers.js';
import { runTemplate, sessionFactory } from '../../core/train/episodes.js';
import { DRILL_SEED_OFFSET } from '../../core/train/selfplay.js';
import { RunConfigSchema } from '../../core/api/run-config.js';

type Row = { id: string; seed: number; turn: number; drill?: boolean; messages: Array<{ role: string; content: string }> };
const DETERMINISTIC = { env: { id: 'frozenlake', options: { isSlippery: false } } };

describe('self-play drills', () => {
  it('adds one-action rows whose prediction is the true next state, on their own seeds', async () => {
    const project = tempProject();
    const { outcome, runDir, config } = await runPreset(project, 'spa', 'drills', {
      ...DETERMINISTIC,
      stages: {
        plan: { order: ['bootstrap', 'selfplay'] },
        bootstrap: { steps: 1, cache: false, gateTurns: 0, shipped: false },
        selfplay: { games: 4, drills: 40, valFraction: 0.5 },
      },
    });
    expect(outcome.status).toBe('completed');
    const rows = readJsonl(join(runDir, 'datasets', 'sft-train.jsonl')) as Row[];
    const drills = rows.filter((r) => r.id.startsWith('drill-'));
    expect(drills).toHaveLength(40);
    expect(drills.every((r) => r.drill === true)).toBe(true);           // marked: SFT trains their state contents only
    expect(rows.filter((r) => r.drill).length).toBe(40);
    const val = readJsonl(join(runDir, 'datasets', 'sft-val.jsonl')) as Row[];
    expect(val.length).toBeGreaterThan(0);                               // validation = the policy's own games only
    expect(val.some((r) => r.id.startsWith('drill-') || r.drill)).toBe(false);
    expect(rows.length - drills.length).toBeGreaterThan(0);        // the policy's games are still there
    const start = config.seeds.selfplayStart + DRILL_SEED_OFFSET;
    expect(new Set(drills.map((r) => r.seed))).toEqual(new Set(Array.from({ length: 40 }, (_, i) => start + i)));
    const make = sessionFactory(config, runTemplate(config, runDir), config.stages.rollout);
    let changed = 0;
    for (const row of drills) {
      const reply = row.messages[row.messages.length - 1]!.content;
      const answer = /<answer>(.*)<\/answer>/.exec(reply)![1]!;
      expect(answer.split('||')).toHaveLength(1);
      expect(reply).toContain(`I will try ${answer.trim()}.`);
      const session = make({ seed: row.seed, group: 0, sample: 0, id: row.id });
      expect(row.messages.filter((m) => m.role === 'assistant')).toHaveLength(1);
      expect(reply).toContain(`<observation>\n${session.stateText()}\n</observation>`);
      const next = session.simulate([answer.trim()]).text;
      expect(reply).toContain(`<prediction>\n${next}\n</prediction>`);
      if (next !== session.stateText()) changed++;
    }
    expect(changed).toBeGreaterThan(10);
    const stats = DatasetStatsSchema.parse(JSON.parse(readFileSync(join(runDir, 'datasets', 'sft-stats.json'), 'utf8')));
    expect(stats.drills).toBe(40);
    expect(stats.train).toBe(rows.length);
  }, 120_000);

  it('is off by default and refuses a negative count', () => {
    const base = RunConfigSchema.parse({});
    expect(base.stages.selfplay.drills).toBe(0);
    expect(() => RunConfigSchema.parse({ stages: { selfplay: { drills: -1 } } })).toThrow(/drills/);
  });
});
