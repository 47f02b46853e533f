// The eval stage compares the world model with the run's base on the same puzzles and sampling
// seeds (stages.eval.worldModelTurns): when the evaluated model is the base itself, the two rows
// are identical; a plain-format run has no such comparison. A run that starts from a checkpoint with no
// bootstrap of its own compares with that checkpoint. `probe --check` (probeCheck) runs the same check on
// any checkpoint after the fact and gets the eval's numbers.
import { describe, expect, it } from 'vitest';
import { probeCheck } from '../../core/eval/world-model-probe.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { runPreset, tempProject } from './helpers.js';
import { memorySettings, setMemorySettings } from '../../core/model/memory.js';

const plan = (extra: Record<string, unknown> = {}) => ({ env: { id: 'frozenlake' }, stages: { plan: { order: ['bootstrap', 'eval'] }, bootstrap: { steps: 2, cache: false, gateTurns: 0, shipped: false }, eval: { worldModelTurns: 3, ...extra } } });

describe('eval: world model beside the base', () => {
  it('writes both rows on the same eval puzzles; identical when the model is the base; none for the plain format', async () => {
    const project = tempProject();
    // a non-default model.memory setting: the probe must compute with the run's settings, not whatever the process had
    const run = await runPreset(project, 'state-estimation-rl', 'wm', { ...plan(), model: { memory: { generationRows: 5 } } } as never);
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

    // after the fact, on the same checkpoint: the eval's rows, from the same puzzles and sampling seeds
    for (const r of [run, plain]) writeFileSync(join(r.runDir, 'run.json'), JSON.stringify({ id: basename(r.runDir), config: r.config }));   // what the engine's host writes
    setMemorySettings(undefined);
    const check = await probeCheck({ project, runId: 'wm' });
    expect(memorySettings().generationRows).toBe(5);              // the run's model.memory, as its eval had it
    expect(check.checkpoint).toBe('bootstrap');
    expect(check.turns).toBe(3);                                  // the run's stages.eval.worldModelTurns
    expect(check.versusBase.model).toEqual(v.model);
    expect(check.versusBase.base).toEqual(v.base);
    expect(check.lines[0]).toMatch(/first turns of 3 eval puzzles \(seeds 3000000…\)/);
    await expect(probeCheck({ project, runId: 'plain' })).rejects.toThrow(/not in the world-model format/);
    await expect(probeCheck({ project, runId: 'wm', base: join(project, 'nowhere') })).rejects.toThrow(/not a model folder/);
    await expect(probeCheck({ project, runId: 'wm', turns: 0 })).rejects.toThrow(/turns: expected an integer ≥ 1/);

    // a run that starts from that checkpoint with no bootstrap of its own: its base is the checkpoint it started from
    const baseDir = join(run.runDir, 'checkpoints', 'bootstrap');
    const child = await runPreset(project, 'state-estimation-rl', 'child', {
      ...plan(), model: { source: 'checkpoint', path: baseDir }, stages: { ...plan().stages, plan: { order: ['eval'] } },
    } as never);
    expect(child.outcome.status).toBe('completed');
    const childFinal = JSON.parse(readFileSync(join(child.runDir, 'eval', 'final.json'), 'utf8')) as { worldModelVersusBase?: { baseCheckpoint: string; model: unknown } };
    expect(childFinal.worldModelVersusBase?.baseCheckpoint).toBe(baseDir);
    expect(childFinal.worldModelVersusBase?.model).toEqual(v.model);
  }, 300_000);
});
