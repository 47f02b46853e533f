// Every method preset's smoke size runs end to end and leaves a complete run folder.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PRESET_DEFINITIONS } from '../../core/train/presets.js';
import { readJsonl, runPreset, tempProject } from './helpers.js';

const project = tempProject();

describe('every preset (smoke size) runs end to end', () => {
  for (const def of PRESET_DEFINITIONS) {
    it(`${def.id}`, async () => {
      const env = def.id === 'spa' ? 'sokoban' : def.id === 'vanilla-rl' ? 'sudoku' : 'frozenlake';
      // the bootstrap gate on 5 held-out turns, not the smoke size's 50: the same gate code, a tenth of its generations
      // (every uncached bootstrap of this file ran it; the gate's record is checked in tests/train/bootstrap-resume.test.ts)
      const { outcome, runDir, stages } = await runPreset(project, def.id, def.id, { env: { id: env }, stages: { bootstrap: { gateTurns: 5 } } });
      expect(outcome).toEqual({ status: 'completed' });
      for (const stage of stages) expect(existsSync(join(runDir, 'stages', stage, 'done.json')), `stage ${stage} done`).toBe(true);
      expect(stages[0]).toBe('bootstrap');
      expect(stages[stages.length - 1]).toBe('eval');
      const metrics = readJsonl(join(runDir, 'metrics.jsonl')) as Array<{ stage: string; values: Record<string, number> }>;
      expect(metrics.length).toBeGreaterThan(0);
      const index = readJsonl(join(runDir, 'rollouts', 'index.jsonl')) as Array<{ stage: string }>;
      expect(index.some((e) => e.stage === 'eval')).toBe(true);
      const evalResult = JSON.parse(readFileSync(join(runDir, 'eval', 'final.json'), 'utf8')) as { passAtK: Record<string, { mean: number; low: number; high: number }>; episodes: number };
      expect(Object.keys(evalResult.passAtK).sort()).toEqual(['1', '2']);
      expect(evalResult.episodes).toBe(4);
      if (stages.includes('rl')) {
        const names = new Set(metrics.filter((m) => m.stage === 'rl').flatMap((m) => Object.keys(m.values)));
        for (const name of ['losses/policy', 'losses/entropy', 'losses/approxKl', 'losses/clipFrac', 'rollout/reward', 'rollout/success', 'rollout/responseLength', 'rollout/invalidActionRate', 'rl/passAt1']) expect(names.has(name), name).toBe(true);
        if (def.method !== 'rwml-rl') expect(names.has('losses/value')).toBe(true);
        expect(existsSync(join(runDir, 'eval', 'rl-step-000000.json'))).toBe(true);
      }
      if (stages.includes('selfplay')) {
        expect(existsSync(join(runDir, 'datasets', 'filter-report.json'))).toBe(true);
        expect(existsSync(join(runDir, 'datasets', 'sft-stats.json'))).toBe(true);
      }
      if (def.id === 'spa-random-action') {
        // random well-formed turns always pass the filter: SFT must really train and report perplexity
        expect(readJsonl(join(runDir, 'datasets', 'sft-train.jsonl')).length).toBeGreaterThan(0);
        const ppl = JSON.parse(readFileSync(join(runDir, 'eval', 'sft-state-perplexity.json'), 'utf8')) as { after: { perplexity: number } };
        expect(ppl.after.perplexity).toBeGreaterThan(1);
        expect(existsSync(join(runDir, 'checkpoints', 'sft-epoch-1', 'model.safetensors'))).toBe(true);
      }
      if (stages.includes('sft')) expect(existsSync(join(runDir, 'eval', 'sft-state-perplexity.json')) || readJsonl(join(runDir, 'datasets', 'sft-train.jsonl')).length === 0).toBe(true);
    }, 120_000);
  }
});
