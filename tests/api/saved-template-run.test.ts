// A template saved in the project (templates.save) runs: runs.create pins it as the run's
// template.json and every stage (bootstrap, self-play, RL, eval) plays with it. Before, the
// pipeline resolved the name as a preset only and the run failed with "unknown template preset".
import { afterAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { isolateHome, tempDir } from './helpers.js';

isolateHome();
const open: Dispatcher[] = [];
afterAll(async () => { for (const d of open) await d.dispose({ kill: true }).catch(() => undefined); });

describe('a run on a saved template', () => {
  it('plays every stage with the saved text, pinned in the run folder', async () => {
    const d = createDispatcher({ host: 'in-process' });
    open.push(d);
    const api = createInProcessClient(d);
    const dir = path.join(tempDir(), 'p');
    await api.projects.create({ path: dir });
    const base = await api.templates.get({ name: 'tiny-spa' });
    const marker = 'Moves you may make: {{ actions_text }}.';
    expect(base.source).toContain('Actions: {{ actions_text }}.');
    const saved = await api.templates.save({ name: 'careful-spa', source: base.source.replace('Actions: {{ actions_text }}.', marker) });
    const run = await api.runs.create({ preset: 'sft-only', size: 'smoke', config: { env: { id: 'frozenlake', options: {} }, template: { preset: 'careful-spa', responseFormat: 'world-model' }, stages: { bootstrap: { games: 3 } } } }); // 3 games: the bootstrap reaches the run's own template (the third)
    expect(run.templateHash).toBe(saved.version.hash);
    const pinned = JSON.parse(fs.readFileSync(path.join(run.dir, 'template.json'), 'utf8')) as { parts: { instruction: string } };
    expect(pinned.parts.instruction).toBe(marker);
    await api.runs.start({ runId: run.id });
    await d.waitForRun(run.id);
    const done = await api.runs.get({ runId: run.id });
    expect(done.reason).toBeNull();
    expect(done.status).toBe('completed');
    // self-play and eval episodes were played with the saved template's instruction line
    for (const stage of ['selfplay', 'eval']) {
      const page = await api.rollouts.query({ runId: run.id, stage, offset: 0, limit: 1 });
      expect(page.total, stage).toBeGreaterThan(0);
      const episode = await api.rollouts.get({ runId: run.id, id: page.episodes[0]!.id });
      expect(episode.turns[0]!.prompt, stage).toMatch(/^Moves you may make: Left, Down, Right, Up\./);
    }
  }, 120_000);
});
