// Both cores on the wasm default in the pipeline (issue 13 item 5): a run with `workers: 1` goes
// through the pipeline's worker module (core/train/dp-worker-entry.ts, which registers the PPO /
// GRPO losses in the worker), says so in its compute line and checkpoints, and completes every
// stage; the self-play samples (split across the threads) are those of a one-thread run.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dpWorkerEntry } from '../../core/train/runtime.js';
import { runPreset, tempProject } from './helpers.js';

function logs(events: Array<{ type: string }>): string[] {
  return events.filter((e) => e.type === 'log').map((e) => (e as unknown as { message: string }).message);
}

describe('wasm data-parallel workers in a run', () => {
  it('finds the pipeline worker module from the checkout', () => {
    expect(dpWorkerEntry()).toMatch(/core\/train\/dp-worker-entry\.ts$/);
  });

  it('a smoke SPA run with one worker completes and logs 2 threads; workers 0 logs one thread', async () => {
    const saved = process.env.SPA_WASM_WORKERS;
    delete process.env.SPA_WASM_WORKERS;
    try {
      const project = tempProject('spa-wasm-workers-');
      const two = await runPreset(project, 'spa', 'two-threads', { env: { id: 'frozenlake' }, workers: 1 });
      expect(two.outcome).toEqual({ status: 'completed' });
      expect(logs(two.events).some((m) => /^Compute backend: TF\.js wasm .*, 2 threads \(1 data-parallel worker\)/.test(m)), logs(two.events).join('\n')).toBe(true);
      const manifest = JSON.parse(readFileSync(join(two.runDir, 'checkpoints', 'bootstrap', 'manifest.json'), 'utf8')) as { extra?: { compute?: { device?: string } } };
      expect(manifest.extra?.compute?.device).toMatch(/2 threads/);

      const one = await runPreset(project, 'spa', 'one-thread', { env: { id: 'frozenlake' }, workers: 0 });
      expect(one.outcome).toEqual({ status: 'completed' });
      expect(logs(one.events).some((m) => /, 1 thread \(0 data-parallel workers\)/.test(m))).toBe(true);
    } finally {
      if (saved === undefined) delete process.env.SPA_WASM_WORKERS; else process.env.SPA_WASM_WORKERS = saved;
    }
  });
});
