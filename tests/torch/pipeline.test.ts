// Smoke runs on the torch backend, end to end through the engine: SFT that really trains and PPO
// on a shared trunk with the value view's own AdamW (spa-random-action), PPO with a separate critic
// (vanilla-rl, criticMode separate); each stage's checkpoint records the backend. (GRPO: the same
// trainStep, covered in errors.test.ts and parity.test.ts; every method on torch: the CLI check in docs/compute.md.)
// A torch request without torch fails the run with the reason.
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonl, runPreset, tempProject } from '../train/helpers.js';
import { resetTorchProbe } from '../../core/model/torch/worker-client.js';

const project = tempProject('spa-torch-run-');
const savedPython = process.env.SPA_PYTHON;
afterEach(() => { if (savedPython === undefined) delete process.env.SPA_PYTHON; else process.env.SPA_PYTHON = savedPython; resetTorchProbe(); });

function manifestCompute(runDir: string, checkpoint: string): { backend: string; device: string } {
  return (JSON.parse(readFileSync(join(runDir, 'checkpoints', checkpoint, 'manifest.json'), 'utf8')) as { extra: { compute: { backend: string; device: string } } }).extra.compute;
}

describe('smoke runs on the torch backend', () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['spa-random-action', { env: { id: 'sokoban' } }],
    ['vanilla-rl', { env: { id: 'sudoku' }, model: { source: 'preset', preset: 'tiny', criticMode: 'separate' } }],
  ];
  for (const [preset, overrides] of cases) {
    it(preset, async () => {
      const { outcome, runDir, stages, events } = await runPreset(project, preset, `torch-${preset}`, { ...overrides, backend: 'torch' });
      expect(outcome).toEqual({ status: 'completed' });
      for (const stage of stages) expect(existsSync(join(runDir, 'stages', stage, 'done.json')), `stage ${stage} done`).toBe(true);
      // the backend line is logged once per engine process (here: the first run of this file)
      if (preset === cases[0]![0]) expect(JSON.stringify(events)).toMatch(/Compute backend: torch/);
      for (const checkpoint of ['bootstrap', 'rl-1']) expect(manifestCompute(runDir, checkpoint).backend, checkpoint).toBe('torch');
      const metrics = readJsonl(join(runDir, 'metrics.jsonl')) as Array<{ stage: string; values: Record<string, number> }>;
      const rl = metrics.filter((m) => m.stage === 'rl').flatMap((m) => Object.entries(m.values));
      expect(rl.some(([k, v]) => k === 'losses/policy' && Number.isFinite(v))).toBe(true);
      expect(rl.some(([k, v]) => k === 'losses/value' && Number.isFinite(v))).toBe(true);
      if (preset === 'spa-random-action') expect(existsSync(join(runDir, 'checkpoints', 'sft-epoch-1', 'model.safetensors'))).toBe(true);
    }, 180_000);
  }

  it('a torch run without torch fails with the reason', async () => {
    process.env.SPA_PYTHON = '/nonexistent/python3';
    const { outcome } = await runPreset(project, 'vanilla-rl', 'torch-missing', { env: { id: 'sudoku' }, backend: 'torch' });
    expect(outcome.status).toBe('failed');
    expect(JSON.stringify(outcome)).toMatch(/Backend 'torch' was requested .* not available: .*\/nonexistent\/python3: not found/);
  }, 60_000);
});
