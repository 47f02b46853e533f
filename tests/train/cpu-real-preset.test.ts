// Issue 35 item 3: the cpu-real size (a small pretrained model folder on a CPU, LoRA, compact format). Its self-play, SFT,
// LoRA and memory settings are the ones docs/results/smollm2-wm/wm-config.json ran SmolLM2-135M with (the README says so,
// and the study v4 registration relies on it); its RL and eval are study v4's registered budget; it refuses a run without
// a model folder, naming what to set. The template is the coordinate line for every arm (study v4's amendment of
// 2026-11-29 evening).
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveRunConfig } from '../../core/engine/config.js';
import { listPresets } from '../../core/engine/presets.js';
import { PRESET_SIZES } from '../../core/api/run-config.js';

const wm = JSON.parse(readFileSync(new URL('../../docs/results/smollm2-wm/wm-config.json', import.meta.url), 'utf8')) as {
  template: unknown; backend: string;
  model: { lora: unknown; memory: Record<string, unknown> };
  stages: { selfplay: unknown; sft: unknown; rollout: Record<string, unknown> };
};

/** A folder that looks like an imported model (config.json only: resolving a config does not load the weights). */
function fakeFolder(): { dir: string; done: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'cpu-real-'));
  const dir = join(root, 'smollm2');
  mkdirSync(dir);
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'llama', hidden_size: 576, num_hidden_layers: 30, vocab_size: 49152 }));
  return { dir, done: () => rmSync(root, { recursive: true, force: true }) };
}

describe('size cpu-real', () => {
  it('is a preset size, offered by every method preset that takes the default sizes', () => {
    expect(PRESET_SIZES).toContain('cpu-real');
    for (const id of ['vanilla-rl', 'spa', 'spa-mask-state-spans', 'sft-only']) {
      expect(listPresets().find((p) => p.id === id)!.sizes, id).toContain('cpu-real');
    }
  });

  it('refuses a run without a model folder, naming model.path', () => {
    const r = resolveRunConfig({ preset: 'spa', size: 'cpu-real', set: { 'env.id': 'frozenlake' } });
    expect(r.ok).toBe(false);
    const issue = r.issues.find((i) => i.path === 'model.path');
    expect(issue?.message).toMatch(/cpu-real .*set model\.path/);
    const tiny = resolveRunConfig({ preset: 'spa', size: 'cpu-real', set: { 'env.id': 'frozenlake', 'model.source': 'preset', 'model.path': '/x' } });
    expect(tiny.issues.map((i) => i.path)).toContain('model.path');
  });

  it("runs SmolLM2's world-model SFT exactly as docs/results/smollm2-wm/wm-config.json did", () => {
    const f = fakeFolder();
    try {
      const r = resolveRunConfig({ preset: 'sft-only', size: 'cpu-real', set: { 'env.id': 'frozenlake', 'env.options.isSlippery': false, 'model.path': f.dir } });
      expect(r.issues).toEqual([]);
      const c = r.config!;
      expect(r.stages).toEqual(['selfplay', 'sft', 'eval']);   // a model folder: no bootstrap
      expect(c.backend).toBe(wm.backend);
      expect(c.template).toEqual(wm.template);
      expect(c.model.source).toBe('hf-folder');
      expect(c.model.lora).toEqual(wm.model.lora);
      expect(c.model.memory).toMatchObject(wm.model.memory);
      expect(c.stages.selfplay).toMatchObject(wm.stages.selfplay as Record<string, unknown>);
      expect(c.stages.sft).toMatchObject(wm.stages.sft as Record<string, unknown>);
      // the rollout shape, less generation settings that SFT does not read: the batch (32 in the preset: one RL step's
      // episodes in one batch) and the reply cap (288 in the preset: the longest world-model reply of the SFT rows, 275)
      const { batchSize: _b, maxNewTokens: _n, ...shape } = wm.stages.rollout;
      expect(c.stages.rollout).toMatchObject(shape);
      expect(c.env.options).toMatchObject({ randomStartGoal: true, isSlippery: false });
    } finally {
      f.done();
    }
  });

  it("has study v4's registered RL budget and eval (docs/results/study-v4/README.md)", () => {
    const f = fakeFolder();
    try {
      for (const [preset, template, plan] of [
        ['vanilla-rl', 'tiny-compact-coordinates-plain', ['rl', 'eval']],
        ['spa', 'tiny-compact-coordinates', ['selfplay', 'sft', 'rl', 'eval']],
        ['spa-mask-state-spans', 'tiny-compact-coordinates', ['selfplay', 'sft', 'rl', 'eval']],
      ] as const) {
        const r = resolveRunConfig({ preset, size: 'cpu-real', set: { 'env.id': 'frozenlake', 'model.path': f.dir } });
        expect(r.issues, preset).toEqual([]);
        const c = r.config!;
        expect(r.stages, preset).toEqual(plan);
        expect(c.template.preset, preset).toBe(template);
        const rl = c.stages.rl;
        expect(rl.algorithm).toBe('grpo');
        // study v4 as amended on 2026-11-29 (evening): 512 episodes, a reply cap per format (the plain reply is ~20 tokens,
        // the world-model reply on the coordinate line up to 275)
        expect(rl.steps * rl.groups * rl.groupSize, `${preset}: RL episodes`).toBe(512);
        expect([rl.lr, rl.passAtKEvery, rl.passAtKPuzzles]).toEqual([5e-5, 16, 16]);
        // one row per episode, 8 episodes a minibatch: 4 updates a step (study v4's amendment of 2026-11-30 21:15)
        expect([rl.updateRows, rl.miniBatchSize, (rl.groups * rl.groupSize) / rl.miniBatchSize]).toEqual(['episode', 8, 4]);
        expect(c.stages.rollout.maxNewTokens, preset).toBe(preset === 'vanilla-rl' ? 48 : 288);
        expect([c.stages.eval.puzzles, c.stages.eval.samples, c.stages.eval.k, c.stages.eval.worldModelTurns]).toEqual([64, 4, [1, 4], 64]);
        expect(c.stages.sft.maskStateSpans, preset).toBe(preset === 'spa-mask-state-spans');
      }
    } finally {
      f.done();
    }
  });
});
