// rollouts.actionFrames replays an episode in the env the run played it in. A FrozenLake run from a preset plays with
// randomStartGoal and successRate 0.8 (core/train/presets.ts PRESET_ENV_OPTIONS); the episode record's envConfig keeps
// only per-reset options, so the replay built a default lake (start and goal in the corners), was out of sync from the
// first board and gave no per-action frames: the views e2e replay showed 2 frames where the run executed 3 actions.
// The handler now builds the env with the run's config.env.options under the episode's envConfig.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkbenchClient } from '../../core/api/contract.js';
import type { EpisodeRecord } from '../../core/api/records.js';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { episodeFrames } from '../../renderer/src/boards/replay-frames.js';
import { runPreset, tempProject } from '../train/helpers.js';
import { isolateHome, tempDir } from './helpers.js';
import { writeEpisodes } from './episode-fixtures.js';

let d: Dispatcher;
let api: WorkbenchClient;
let runId: string;
let episodes: EpisodeRecord[];
let options: Record<string, unknown>;

beforeAll(async () => {
  isolateHome();
  d = createDispatcher({ host: 'in-process' });
  api = createInProcessClient(d);
  await api.projects.create({ path: tempDir('spa-wb-frames-') });
  const run = await api.runs.create({ preset: 'spa', size: 'smoke', config: { env: { id: 'frozenlake' } } });
  runId = run.id;
  options = (await api.runs.get({ runId })).config.env.options;
  // the episodes of a self-play stage with this run's env (random well-formed turns: several actions per turn)
  const played = await runPreset(tempProject(), 'spa', 'lake', { env: { id: 'frozenlake' }, stages: { plan: { order: ['selfplay'] }, selfplay: { games: 8 } } });
  expect(played.outcome).toEqual({ status: 'completed' });
  expect(played.config.env.options).toEqual(options);
  episodes = readFileSync(join(played.runDir, 'rollouts', 'selfplay.jsonl'), 'utf8').split('\n').filter(Boolean)
    .map((l) => ({ ...(JSON.parse(l) as EpisodeRecord), runId }));
  writeEpisodes(run.dir, 'selfplay', episodes);
}, 180_000);

afterAll(async () => { await d.dispose({ kill: true }); });

describe('rollouts.actionFrames on a FrozenLake preset run', () => {
  it('the run plays a non-default lake that the episode record alone does not describe', () => {
    expect(options).toMatchObject({ randomStartGoal: true, successRate: 0.8 });
    for (const ep of episodes) expect(ep.envConfig).not.toHaveProperty('randomStartGoal');
  });

  it('every turn replays in sync, one frame per executed action, ending on the recorded state (slips included)', async () => {
    let multi = 0;
    let slipped = 0;
    for (const ep of episodes) {
      const { turns } = await api.rollouts.actionFrames({ runId, id: ep.id });
      expect(turns).toHaveLength(ep.turns.length);
      for (const [i, t] of turns.entries()) {
        const turn = ep.turns[i]!;
        expect(t.boards, `${ep.id} turn ${t.turn}`).not.toBeNull();
        expect(t.boards!.length).toBe(turn.actionsExecuted.length);
        if (t.boards!.length) expect(t.boards!.at(-1)!.cells, `${ep.id} turn ${t.turn}`).toEqual(turn.stateAfter.board.cells);
        if (turn.actionsExecuted.length > 1) multi++;
        if (turn.slip) slipped++;
      }
      // what the replay view counts: 1 + one frame per executed action (at least one per turn)
      expect(episodeFrames(ep, turns).length).toBe(1 + ep.turns.reduce((n, t) => n + Math.max(1, t.actionsExecuted.length), 0));
    }
    expect(multi).toBeGreaterThan(0);
    expect(slipped).toBeGreaterThan(0);   // successRate 0.8: the replay reproduces the env's slips too
  });
});
