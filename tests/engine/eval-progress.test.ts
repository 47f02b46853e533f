// Progress where a user waits: the eval stage reports its held-out games as they finish (count,
// total and a message), and the RL stage's Pass@k evaluation says which game it is at, keeping
// the step count; the bootstrap gate and the world-model check say that they run.
import { afterEach, describe, expect, it } from 'vitest';
import * as path from 'node:path';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { isolateHome, tempDir, waitFor } from '../api/helpers.js';

const open: Dispatcher[] = [];
afterEach(async () => { for (const d of open.splice(0)) await d.dispose({ kill: true }); });

describe('progress of evaluations', () => {
  it('eval counts its games; RL Pass@k names its game under the step count', async () => {
    isolateHome();
    const d = createDispatcher({ host: 'cli' });
    open.push(d);
    await d.api.projects.create({ path: path.join(tempDir(), 'proj') });
    const run = await d.api.runs.create({
      preset: 'vanilla-rl', size: 'smoke', start: true,
      set: { 'env.id': 'frozenlake', 'stages.plan.order': ['rl', 'eval'], 'stages.rl.steps': 1, 'stages.rl.passAtKEvery': 1, 'stages.rl.passAtKPuzzles': 2 },
    });
    const info = await waitFor('the run ends', async () => {
      const r = await d.api.runs.get({ runId: run.id });
      return ['completed', 'failed', 'stopped'].includes(r.status) ? r : null;
    }, 240_000, 250);
    expect(info.status, info.reason ?? '').toBe('completed');
    const { events } = await d.api.runs.events({ runId: run.id, types: ['progress'], limit: 10000 });
    const progress = events.filter((e): e is Extract<typeof e, { type: 'progress' }> => e.type === 'progress');
    const evalGames = progress.filter((e) => e.stage === 'eval' && /^eval: \d+\/\d+ games on held-out puzzles$/.test(e.message ?? ''));
    expect(evalGames.length).toBeGreaterThan(0);
    const last = evalGames[evalGames.length - 1]!;
    expect(last.done).toBe(last.total);                       // the last game is always reported
    expect(last.message).toBe(`eval: ${last.total}/${last.total} games on held-out puzzles`);
    const passAtK = progress.filter((e) => e.stage === 'rl' && /^RL Pass@k at step \d+: \d+\/\d+ held-out games$/.test(e.message ?? ''));
    expect(passAtK.length).toBeGreaterThan(0);
    for (const e of passAtK) expect(e.total).toBe(1);         // the stage's step count, not the games
  }, 300_000);
});
