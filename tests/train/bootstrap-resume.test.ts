// The bootstrap saves its state every saveEvery steps and a stopped bootstrap resumes there; the
// gate on held-out turns is printed and stored (bootstrap/gate.json) when it finishes.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runPreset, tempProject } from './helpers.js';

describe('bootstrap resume and gate', () => {
  it('resumes at the last saved step, then writes the gate', async () => {
    const project = tempProject();
    const controller = new AbortController();
    const over = { env: { id: 'frozenlake' }, stages: { bootstrap: { steps: 4, saveEvery: 2, cache: false, gateTurns: 2 } } };
    const first = await runPreset(project, 'vanilla-rl', 'boot', over, {
      signal: controller.signal,
      onEvent: (e) => { if (e.type === 'metric' && e.point.stage === 'bootstrap' && e.point.step === 2) controller.abort(); },
    });
    expect(first.outcome.status).toBe('stopped');
    const state = JSON.parse(readFileSync(join(first.runDir, 'stages', 'bootstrap', 'state.json'), 'utf8')) as { step: number };
    expect(state.step).toBe(2);
    const second = await runPreset(project, 'vanilla-rl', 'boot', over);
    expect(second.outcome.status).toBe('completed');
    expect(second.events.some((e) => e.type === 'log' && /bootstrap: resuming at step 2/.test(e.message))).toBe(true);
    expect(second.events.some((e) => e.type === 'log' && /bootstrap gate (PASSED|FAILED) on 2 held-out turns/.test(e.message))).toBe(true);
    const gate = JSON.parse(readFileSync(join(second.runDir, 'bootstrap', 'gate.json'), 'utf8')) as { turns: number; passed: boolean; observationExact: number };
    expect(gate.turns).toBe(2);
    expect(typeof gate.passed).toBe('boolean');
    expect(existsSync(join(second.runDir, 'eval', 'final.json'))).toBe(true);
  }, 180_000);
});
