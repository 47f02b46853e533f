// probe.turn (issue 12, item 12) through the dispatcher, computed in a child process on a real
// smoke checkpoint: the model's own turn against the true state, the prediction for an action we
// choose against the true next state (the env stepped on its own), stepping on with that action,
// a saved episode as the starting point, and clear errors for bad input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkbenchClient } from '../../core/api/contract.js';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { WorkbenchError } from '../../core/api/errors.js';
import { createEnv } from '../../core/envs/index.js';
import { runPreset } from '../train/helpers.js';
import { isolateHome, tempDir } from './helpers.js';
import { playEpisode, writeEpisodes } from './episode-fixtures.js';

async function rejection(p: Promise<unknown>): Promise<WorkbenchError> {
  try { await p; } catch (err) { return err as WorkbenchError; }
  throw new Error('expected a rejection');
}

let d: Dispatcher;
let api: WorkbenchClient;
let runId: string;

beforeAll(async () => {
  isolateHome();
  d = createDispatcher({ host: 'in-process' });
  api = createInProcessClient(d);
  const project = tempDir('spa-wb-probe-');
  await api.projects.create({ path: project });
  const run = await api.runs.create({ preset: 'spa', size: 'smoke', config: { env: { id: 'sokoban' } } });
  runId = run.id;
  // a checkpoint is all this file needs: no gate (50 held-out turns at the smoke size; issue 37 item 7)
  const r = await runPreset(project, 'spa', runId, { env: { id: 'sokoban' }, stages: { plan: { order: ['bootstrap'] }, bootstrap: { gateTurns: 0 } } } as never);
  expect(r.outcome).toEqual({ status: 'completed' });
}, 180_000);

afterAll(async () => { await d.dispose({ kill: true }); });

describe('probe.turn', () => {
  it('the model writes its turn; its prediction for our action is scored against the env stepped with that action; stepping on applies it', async () => {
    const info = await api.runs.get({ runId });
    const env = createEnv('sokoban', info.config.env.options);
    env.reset({ seed: 7 });
    const before = env.board();
    const action = env.legalActions()[0]!;
    const r = await api.probe.turn({ runId, seed: 7, actions: [action.toLowerCase()] });
    expect(r.checkpoint).toBe('bootstrap');
    expect(r.turnIndex).toBe(0);
    expect(r.turn.stateBefore.board).toEqual(before);
    expect(r.messages[0]!.role).toBe('system');
    expect(r.turn.response.startsWith('<think>')).toBe(true);
    expect(r.actionGiven).not.toBeNull();
    expect(r.actionGiven!.actions).toEqual([action]);            // canonical spelling
    env.step(action);
    expect(r.actionGiven!.trueNext.board).toEqual(env.board());
    expect(r.actionGiven!.text).toContain(`I will try ${action}.`);
    expect(r.actionGiven!.score).not.toBeNull();
    // step on with our action: the next turn starts from the state after it
    const next = await api.probe.turn({ runId, seed: 7, history: [r.actionGiven!.stepResponse] });
    expect(next.turnIndex).toBe(1);
    expect(next.turn.stateBefore.board).toEqual(env.board());
    expect(next.messages.filter((m) => m.role === 'assistant')).toHaveLength(1);
  }, 180_000);

  it('a saved episode: its seed and the responses before the turn', async () => {
    const info = await api.runs.get({ runId });
    writeEpisodes(info.dir, 'probe-fixture', [playEpisode({ seed: 11, id: 'fixture-e1', runId, stage: 'eval', step: 0, group: 0, sample: 0, rngSeed: 3 })]);
    const episode = await api.rollouts.get({ runId, id: 'fixture-e1' });
    expect(episode.turns.length).toBeGreaterThanOrEqual(2);
    const r = await api.probe.turn({ runId, episodeId: episode.id, turn: 1 });
    expect(r.seed).toBe(episode.seed);
    expect(r.history).toEqual([episode.turns[0]!.response]);
    expect(r.turn.stateBefore.board).toEqual(episode.turns[1]!.stateBefore.board);
  }, 180_000);

  it('bad input: an illegal action, both seed and episode, an unknown checkpoint', async () => {
    const illegal = await rejection(api.probe.turn({ runId, seed: 1, actions: ['Jump'] }));
    expect(illegal.name).toBe('ValidationError');
    expect(illegal.message).toMatch(/"Jump" is not a legal action here; legal: /);
    const both = await rejection(api.probe.turn({ runId, seed: 1, episodeId: 'x' }));
    expect(both.name).toBe('ValidationError');
    const ckpt = await rejection(api.probe.turn({ runId, seed: 1, checkpoint: 'nope' }));
    expect(ckpt.name).toBe('NotFound');
  }, 120_000);
});
