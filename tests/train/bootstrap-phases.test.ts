// The bootstrap's extension phases (stages.bootstrap.extend): after its own steps, each phase trains
// warm from the last with a fresh AdamW, its own cosine schedule, batch size and copy-drill share,
// in one run that saves and resumes across the phase boundary. This is how the shipped FrozenLake
// base (900 + 3 × 400 steps) is expressed as one config, so quick and standard runs match it.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runPreset, tempProject } from './helpers.js';
import { BootstrapSectionSchema, RunConfigSchema } from '../../core/api/run-config.js';
import { bootstrapPhases, bootstrapTotalSteps, phaseAt } from '../../core/train/bootstrap.js';
import { baseDescriptor, descriptorKey } from '../../core/train/shipped-base.js';
import { mergeConfig, presetConfig } from '../../core/train/presets.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';

const PHASED = {
  env: { id: 'frozenlake' },
  stages: {
    plan: { order: ['bootstrap'] },
    bootstrap: { steps: 2, lr: 0.002, cache: false, gateTurns: 0, saveEvery: 0, shipped: false, extend: [{ steps: 3, batchSize: 3, lr: 0.01, copyDrills: 1 }] },
  },
};

describe('bootstrap extension phases', () => {
  it('lays out phases with inherited settings', () => {
    const section = BootstrapSectionSchema.parse({ steps: 900, batchSize: 8, lr: 3e-3, extend: [{ steps: 400, batchSize: 16, lr: 2e-3, copyDrills: 1 }, { steps: 100 }] });
    const phases = bootstrapPhases(section);
    expect(phases.map((p) => [p.start, p.end, p.batchSize, p.lr, p.copyDrills])).toEqual([
      [0, 900, 8, 3e-3, 0.2], [900, 1300, 16, 2e-3, 1], [1300, 1400, 8, 3e-3, 0.2],
    ]);
    expect(bootstrapTotalSteps(section)).toBe(1400);
    expect(phaseAt(phases, 899).index).toBe(0);
    expect(phaseAt(phases, 900).index).toBe(1);
    expect(phaseAt(phases, 5000).index).toBe(2);
    expect(() => BootstrapSectionSchema.parse({ extend: [{ steps: 0 }] })).toThrow();
    expect(() => BootstrapSectionSchema.parse({ extend: [{ steps: 5, games: 3 }] })).toThrow();
  });

  it('keeps the descriptor of a base without phases, and tells a phased base apart', () => {
    const describe = (extra: Record<string, unknown>) => {
      const config = RunConfigSchema.parse(mergeConfig(presetConfig('vanilla-rl', 'smoke', { env: { id: 'frozenlake' } }) as Record<string, unknown>, extra));
      return baseDescriptor(config, ['tiny-vanilla', 'tiny-spa'].map((t) => builtinTemplate(t)));
    };
    const plain = describe({});
    expect('extend' in plain.bootstrap).toBe(false);
    const phased = describe({ stages: { bootstrap: { extend: [{ steps: 4 }] } } });
    expect(phased.bootstrap.extend).toEqual([{ steps: 4 }]);
    expect(descriptorKey(phased)).not.toBe(descriptorKey(plain));
  });

  it('trains every phase with its own schedule and a fresh optimizer, and resumes at the boundary', async () => {
    const project = tempProject();
    const controller = new AbortController();
    const first = await runPreset(project, 'vanilla-rl', 'phased', PHASED, {
      signal: controller.signal,
      onEvent: (e) => { if (e.type === 'metric' && e.point.stage === 'bootstrap' && e.point.step === 2) controller.abort(); },
    });
    expect(first.outcome.status).toBe('stopped');
    const state = JSON.parse(readFileSync(join(first.runDir, 'stages', 'bootstrap', 'state.json'), 'utf8')) as { step: number };
    expect(state.step).toBe(2);

    const second = await runPreset(project, 'vanilla-rl', 'phased', PHASED);
    expect(second.outcome.status).toBe('completed');
    const logs = second.events.flatMap((e) => (e.type === 'log' ? [e.message] : []));
    expect(logs.some((l) => /bootstrap: resuming at step 2/.test(l))).toBe(true);
    expect(logs.some((l) => /phase 2\/2 \(steps 3–5, batch 3, lr 0\.01, copy drills 1\).* 2 copy drills/.test(l))).toBe(true);
    // the second phase's schedule restarts: its first step is its warmup's end (lr 0.01), not the first phase's cosine tail
    const lrAt = new Map<number, number>();
    for (const line of readFileSync(join(second.runDir, 'metrics.jsonl'), 'utf8').trim().split('\n')) {
      const p = JSON.parse(line) as { stage: string; step: number; values: Record<string, number> };
      if (p.stage === 'bootstrap' && 'charts/lr' in p.values) lrAt.set(p.step, p.values['charts/lr']!);
    }
    expect([...lrAt.keys()].sort()).toEqual([0, 1, 2, 3, 4]);
    expect(lrAt.get(0)).toBeCloseTo(0.002, 8);
    expect(lrAt.get(2)).toBeCloseTo(0.01, 8);
    expect(lrAt.get(4)!).toBeLessThan(0.0099);
    // the final checkpoint counts all 5 steps; its AdamW has taken only the last phase's 3 (fresh at the boundary)
    const manifest = JSON.parse(readFileSync(join(second.runDir, 'checkpoints', 'bootstrap', 'manifest.json'), 'utf8')) as {
      step: number; optimizerStep: number | null;
    };
    expect(manifest.step).toBe(5);
    expect(manifest.optimizerStep).toBe(3);

    // the same without a stop: the boundary itself restarts AdamW (not only a resume)
    const straight = await runPreset(tempProject(), 'vanilla-rl', 'phased', PHASED);
    expect(straight.outcome.status).toBe('completed');
    const m2 = JSON.parse(readFileSync(join(straight.runDir, 'checkpoints', 'bootstrap', 'manifest.json'), 'utf8')) as { step: number; optimizerStep: number };
    expect([m2.step, m2.optimizerStep]).toEqual([5, 3]);
  }, 180_000);
});
