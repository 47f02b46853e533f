// The eval stage compares the world model with the run's base on the same puzzles and sampling
// seeds (stages.eval.worldModelTurns): when the evaluated model is the base itself, the two rows
// are identical; a plain-format run has no such comparison.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runPreset, tempProject } from './helpers.js';

const plan = (extra: Record<string, unknown> = {}) => ({ env: { id: 'frozenlake' }, stages: { plan: { order: ['bootstrap', 'eval'] }, bootstrap: { steps: 2, cache: false, gateTurns: 0, shipped: false }, eval: { worldModelTurns: 3, ...extra } } });

describe('eval: world model beside the base', () => {
  it('writes both rows on the same eval puzzles; identical when the model is the base; none for the plain format', async () => {
    const project = tempProject();
    const run = await runPreset(project, 'state-estimation-rl', 'wm', plan());
    expect(run.outcome.status).toBe('completed');
    const final = JSON.parse(readFileSync(join(run.runDir, 'eval', 'final.json'), 'utf8')) as { worldModelVersusBase?: { model: Record<string, number>; base: Record<string, number>; template: string } };
    const v = final.worldModelVersusBase!;
    expect(v.model.turns).toBe(3);
    expect(v.model.seedStart).toBe(3_000_000);
    expect(v.base).toEqual(v.model);
    expect(v.template).toBe('tiny-spa');
    expect(run.events.some((e) => e.type === 'log' && /world model on the first turns of 3 eval puzzles/.test(e.message))).toBe(true);
    expect(run.events.some((e) => e.type === 'metric' && 'eval/wmCheck/basePredictionExact' in e.point.values)).toBe(true);
    const plain = await runPreset(project, 'vanilla-rl', 'plain', plan());
    expect(plain.outcome.status).toBe('completed');
    expect(JSON.parse(readFileSync(join(plain.runDir, 'eval', 'final.json'), 'utf8')).worldModelVersusBase).toBeUndefined();
  }, 240_000);
});
