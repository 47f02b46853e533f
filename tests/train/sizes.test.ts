// The preset sizes: `standard` (the study size) exists for every method preset, shares quick's
// model, rollout shape and bootstrap (so one shipped base serves both), and evaluates as the
// pre-registered design says (128 puzzles × 8 samples, Pass@1 and Pass@8).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunConfigSchema } from '../../core/api/run-config.js';
import { PRESET_DEFINITIONS, presetConfig, SIZES } from '../../core/train/presets.js';
import { bootstrapTemplates } from '../../core/train/bootstrap.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import { baseDescriptor, descriptorKey } from '../../core/train/shipped-base.js';
import { getPreset } from '../../core/engine/presets.js';

function resolved(preset: string, size: 'quick' | 'standard') {
  return RunConfigSchema.parse(presetConfig(preset, size, { env: { id: 'frozenlake' } }));
}
function key(preset: string, size: 'quick' | 'standard'): string {
  const config = resolved(preset, size);
  return descriptorKey(baseDescriptor(config, bootstrapTemplates(config).templates.map((t) => (typeof t === 'string' ? builtinTemplate(t) : t))));
}

describe('sizes', () => {
  it('standard is a size of every method preset, registered for runs and studies', () => {
    expect(SIZES).toContain('standard');
    for (const def of PRESET_DEFINITIONS) {
      const config = resolved(def.id, 'standard');
      expect(config.size).toBe('standard');
      expect(getPreset(def.id)!.sizes).toContain('standard');
    }
  });
  it('quick and standard share one base: the study arms of both sizes match the same descriptor', () => {
    const keys = new Set(['vanilla-rl', 'state-estimation-rl', 'spa', 'spa-mask-state-spans'].flatMap((p) => [key(p, 'quick'), key(p, 'standard')]));
    expect(keys.size).toBe(1);
  });
  it('standard trains PPO with a separate critic (the shared trunk wore the world-model format away); study v2 pins its registered trunk', () => {
    for (const def of PRESET_DEFINITIONS) expect(resolved(def.id, 'standard').model.criticMode).toBe('separate');
    expect(resolved('spa', 'quick').model.criticMode).toBe('shared-trunk'); // 2 RL steps: far below the ~15 steps the drift took
    const runSh = readFileSync(join(__dirname, '../../docs/results/spa-cpu-v2/run.sh'), 'utf8');
    expect(runSh).toMatch(/^SET\+=\(--set model\.criticMode=shared-trunk\)$/m);
  });
  it('standard evaluates as the design says and trains more than quick', () => {
    const q = resolved('spa', 'quick'), s = resolved('spa', 'standard');
    const evalS = s.stages.eval;
    expect([evalS.puzzles, evalS.samples, evalS.k]).toEqual([128, 8, [1, 8]]);
    expect(s.stages.rollout).toMatchObject({ maxTurns: 10, maxActionsPerTurn: 1 }); // study v2's protocol (its chance/oracle rows)
    expect(s.stages.selfplay.games).toBeGreaterThan(q.stages.selfplay.games);
    expect(s.stages.rl.steps * s.stages.rl.groups * s.stages.rl.groupSize)
      .toBeGreaterThan(q.stages.rl.steps * q.stages.rl.groups * q.stages.rl.groupSize);
  });
});

describe('spa-drills (SPA + one-action drills)', () => {
  it('sets its drills per size, and is not offered at the paper size', () => {
    const quick = RunConfigSchema.parse(presetConfig('spa-drills', 'quick', { env: { id: 'frozenlake' } }));
    expect(quick.stages.selfplay).toMatchObject({ drills: 24000, alignPlan: true });
    expect(quick.stages.sft).toMatchObject({ epochs: 1, batchSize: 32 });
    expect(quick.template.preset).toBe('tiny-compact');          // the size's template, so the shipped base serves it
    expect(key('spa-drills', 'quick')).toBe(key('spa', 'quick'));
    expect(RunConfigSchema.parse(presetConfig('spa-drills', 'smoke')).stages.selfplay.drills).toBe(8);
    expect(resolved('spa', 'quick').stages.selfplay.drills).toBe(8000);   // the compact quick SPA has 8,000 (issue 23)
    expect(RunConfigSchema.parse(presetConfig('spa', 'paper')).stages.selfplay.drills).toBe(0);   // the paper's SPA has none
    expect(() => presetConfig('spa-drills', 'paper')).toThrow(/no size "paper"; it is offered at quick, smoke, standard/);
    expect(getPreset('spa-drills')!.sizes).not.toContain('paper');
  });
});
