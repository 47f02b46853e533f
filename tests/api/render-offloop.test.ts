// D3: envs.render and templates.preview run in a worker thread with a time budget: a request
// whose options make generation slow neither freezes the host (other calls and timers go on)
// nor runs unbounded (it is stopped with a Timeout error, and the next request works).
import { afterEach, describe, expect, it } from 'vitest';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { RenderPool } from '../../core/host/render-pool.js';
import { getTemplatePreset } from '../../core/prompts/index.js';
import { isolateHome } from './helpers.js';

const dispatchers: Dispatcher[] = [];
afterEach(async () => { for (const d of dispatchers.splice(0)) await d.dispose(); });

// within the option bounds, yet seconds to minutes of generation: an unreachable difficulty bucket on the largest map
const SLOW = { width: 16, height: 16, numBoxes: 4, minOptimalLength: 900, maxGenerationAttempts: 1000 };

describe('envs.render off the event loop (D3)', () => {
  it('a slow render does not block the host and is stopped at its budget with a Timeout error', async () => {
    isolateHome();
    const d = createDispatcher({ host: 'in-process', renderTimeoutMs: 3_000 });
    dispatchers.push(d);
    const api = createInProcessClient(d);
    const order: string[] = [];
    const slow = api.envs.render({ env: { id: 'sokoban', options: SLOW }, seed: 1 }).then(
      () => order.push('render resolved'), (e: { name: string; message: string }) => { order.push(`render ${e.name}`); return e; });
    await new Promise((r) => setTimeout(r, 50));
    order.push('timer fired');
    expect((await api.projects.info({})).project).toBeNull();
    order.push('other call answered');
    const err = await slow;
    expect(order).toEqual(['timer fired', 'other call answered', 'render Timeout']);
    expect((err as { message: string }).message).toMatch(/took longer than 3 s and were stopped/);
    // the next request gets a fresh worker; its cold start is not part of the budget (RENDER_WORKER_START_MS)
    const ok = await api.envs.render({ env: { id: 'sokoban', options: {} }, seed: 2 });
    expect(ok.gridText.length).toBeGreaterThan(0);
    const preview = await api.templates.preview({ name: 'spa', env: { id: 'frozen-lake', options: {} }, seed: 1 });
    expect(preview.ok).toBe(true);
    // bad input is still a named validation error from the worker
    await expect(api.envs.render({ env: { id: 'sokoban', options: { width: 99 } }, seed: 1 })).rejects.toMatchObject({ name: 'ValidationError' });
  });

  // fresh-clone CI, 2026-11-30: the worker's cold start (over 3 s at load ~9) counted against a request's budget, so a
  // render of milliseconds timed out twice in a row. The budget starts once the worker has loaded.
  it('a worker that takes longer to start than the budget still answers: the budget counts the request, not the start', async () => {
    const pool = new RenderPool(1_000, () => undefined, new URL('./fixtures/slow-start-render-worker.mjs', import.meta.url));
    try {
      const job = { template: getTemplatePreset('spa'), env: { id: 'frozenlake', options: {} }, seed: 3, responseFormat: 'world-model' as const };
      const t0 = Date.now();
      const puzzle = await pool.render(job);
      expect(Date.now() - t0).toBeGreaterThan(1_000);   // the start alone passed the budget
      expect(puzzle.gridText.length).toBeGreaterThan(0);
      expect((await pool.render({ ...job, seed: 4 })).gridText.length).toBeGreaterThan(0);   // the started worker serves the next
    } finally {
      pool.dispose();
    }
  });
});
