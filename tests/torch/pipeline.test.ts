// Smoke runs on the torch backend, end to end through the engine: SFT that really trains and PPO
// on a shared trunk with the value view's own AdamW (spa-random-action), PPO with a separate critic
// (vanilla-rl, criticMode separate); each stage's checkpoint records the backend. (GRPO: the same
// trainStep, covered in errors.test.ts and parity.test.ts; every method on torch: the CLI check in docs/compute.md.)
// A run stopped on wasm resumes on torch; a torch request without torch fails the run with the reason.
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
  // FrozenLake's 4x4 lake for the SPA run (Sokoban's 6x6 rows are longer; Sokoban runs the pipeline in tests/train/pipeline-smoke)
  // and the bootstrap gate on 5 held-out turns, not 50: on torch every generated token is a round trip to the worker
  const cases: Array<[string, Record<string, unknown>]> = [
    ['spa-random-action', { env: { id: 'frozenlake' } }],
    ['vanilla-rl', { env: { id: 'sudoku' }, model: { source: 'preset', preset: 'tiny', criticMode: 'separate' } }],
  ];
  for (const [preset, overrides] of cases) {
    it(preset, async () => {
      const { outcome, runDir, stages, events } = await runPreset(project, preset, `torch-${preset}`,
        { ...overrides, backend: 'torch', stages: { bootstrap: { gateTurns: 5 } } });
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

  it('a run stopped in RL on wasm resumes on torch from its checkpoint and AdamW state, and finishes', async () => {
    const controller = new AbortController();
    const over = { env: { id: 'frozenlake' }, stages: { rl: { steps: 2, passAtKEvery: 0 } } };
    const first = await runPreset(project, 'vanilla-rl', 'cross-backend', { ...over, backend: 'wasm' }, {
      signal: controller.signal,
      // Stop on step 1's metrics, emitted before its state is saved: progress events are throttled (250 ms), so "done 1"
      // can be dropped and the Stop land in step 2's update or not at all (CI, 2026-12-01)
      onEvent: (e) => { if (e.type === 'metric' && e.point.stage === 'rl' && e.point.step === 1) controller.abort(); },
    });
    expect(first.outcome.status).toBe('stopped');
    const latest = join(first.runDir, 'checkpoints', 'rl-latest');
    expect(manifestCompute(first.runDir, 'rl-latest').backend).toBe('wasm');
    expect((JSON.parse(readFileSync(join(latest, 'manifest.json'), 'utf8')) as { optimizerStep: number }).optimizerStep).toBeGreaterThan(0);
    const second = await runPreset(project, 'vanilla-rl', 'cross-backend', { ...over, backend: 'torch' });
    expect(second.outcome).toEqual({ status: 'completed' });
    expect(second.events.some((e) => e.type === 'log' && /resuming at step 1 .*AdamW moments restored/.test(e.message))).toBe(true);
    expect(manifestCompute(second.runDir, 'rl-2').backend).toBe('torch');
    const rlSteps = (readJsonl(join(second.runDir, 'metrics.jsonl')) as Array<{ stage: string; step: number; values: Record<string, number> }>)
      .filter((m) => m.stage === 'rl' && 'rollout/reward' in m.values).map((m) => m.step);
    expect(rlSteps).toEqual([1, 2]);
  }, 180_000);

  it('a torch run without torch fails with the reason', async () => {
    process.env.SPA_PYTHON = '/nonexistent/python3';
    const { outcome } = await runPreset(project, 'vanilla-rl', 'torch-missing', { env: { id: 'sudoku' }, backend: 'torch' });
    expect(outcome.status).toBe('failed');
    expect(JSON.stringify(outcome)).toMatch(/Backend 'torch' was requested .* not available: .*\/nonexistent\/python3: not found/);
  }, 180_000);
});
