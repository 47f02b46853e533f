// A stop in the middle of SFT or RWML keeps the steps already done: the stage saves its state
// (SFT: at a stop mid-epoch; RWML: every 10 steps and at a stop) and the resumed run continues
// from there instead of from step 0, with no step trained twice.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunConfigInput } from '../../core/api/run-config.js';
import { readJsonl, runPreset, tempProject } from './helpers.js';

type Point = { stage: string; step: number; values: Record<string, number> };
const steps = (runDir: string, stage: string, metric: string) =>
  (readJsonl(join(runDir, 'metrics.jsonl')) as Point[]).filter((m) => m.stage === stage && metric in m.values).map((m) => m.step);

async function stopAndResume(preset: string, overrides: RunConfigInput, stage: string, metric: string, stopAt: number) {
  const project = tempProject();
  const controller = new AbortController();
  const first = await runPreset(project, preset, 'r', overrides, {
    signal: controller.signal,
    // after the metric of step `stopAt` (progress events are throttled; metrics are not)
    onEvent: (e) => { if (e.type === 'metric' && e.point.stage === stage && e.point.step === stopAt && metric in e.point.values) controller.abort(); },
  });
  expect(first.outcome.status).toBe('stopped');
  const state = JSON.parse(readFileSync(join(first.runDir, 'stages', stage, 'state.json'), 'utf8')) as Record<string, unknown>;
  const second = await runPreset(project, preset, 'r', overrides);
  expect(second.outcome.status).toBe('completed');
  return { state, second };
}

describe('in-stage resume', () => {
  it('SFT stopped mid-epoch resumes at the next batch of the same epoch', async () => {
    const { state, second } = await stopAndResume('sft-only', { stages: { plan: { order: ['selfplay', 'sft'] }, sft: { batchSize: 1 } } }, 'sft', 'losses/sft', 1);
    expect(state).toMatchObject({ epoch: 0, batch: 2, step: 2 });
    expect(second.events.some((e) => e.type === 'log' && /sft: resuming in epoch 1 after batch 2/.test(e.message))).toBe(true);
    const trained = steps(second.runDir, 'sft', 'losses/sft');
    expect(trained.length).toBeGreaterThan(3);
    expect(trained).toEqual(trained.map((_, i) => i));                 // 0, 1, 2, … once each
    expect(existsSync(join(second.runDir, 'checkpoints', 'sft-epoch-1', 'model.safetensors'))).toBe(true);
  }, 120_000);

  it('RWML stopped after a step resumes at the next step', async () => {
    const { state, second } = await stopAndResume('rwml-rl', { stages: { plan: { order: ['rwml'] }, rwml: { steps: 3 } } }, 'rwml', 'rwml/predictionReward', 1);
    expect(state).toMatchObject({ nextStep: 1 });
    expect(second.events.some((e) => e.type === 'log' && /rwml: resuming at step 1/.test(e.message))).toBe(true);
    expect(steps(second.runDir, 'rwml', 'rwml/predictionReward')).toEqual([1, 2, 3]);
  }, 120_000);
});

describe('self-play resume', () => {
  it('a stop keeps the finished rollout batches; the resumed stage plays the rest and gives the same games as an uninterrupted run', async () => {
    const overrides: RunConfigInput = { backend: 'cpu', stages: { plan: { order: ['selfplay'] }, selfplay: { games: 12, policy: 'model' }, rollout: { batchSize: 4 } } };
    const whole = await runPreset(tempProject(), 'sft-only', 'w', overrides);
    expect(whole.outcome.status).toBe('completed');
    const project = tempProject();
    const controller = new AbortController();
    // the first progress event comes after the first batch of 4 games: stop there (the second batch is cut short)
    const first = await runPreset(project, 'sft-only', 'r', overrides, { signal: controller.signal, onEvent: (e) => { if (e.type === 'progress' && e.stage === 'selfplay') controller.abort(); } });
    expect(first.outcome.status).toBe('stopped');
    expect(JSON.parse(readFileSync(join(first.runDir, 'stages', 'selfplay', 'state.json'), 'utf8'))).toMatchObject({ done: 4 });
    const second = await runPreset(project, 'sft-only', 'r', overrides);
    expect(second.outcome.status).toBe('completed');
    expect(second.events.some((e) => e.type === 'log' && /self-play: resuming after 4 of 12 games/.test(e.message))).toBe(true);
    const games = (dir: string) => (readJsonl(join(dir, 'rollouts', 'selfplay.jsonl')) as Array<{ id: string; seed: number; turns: Array<{ response: string }> }>)
      .map((e) => ({ id: e.id, seed: e.seed, responses: e.turns.map((t) => t.response) }));
    expect(games(second.runDir)).toHaveLength(12);
    expect(games(second.runDir)).toEqual(games(whole.runDir));
    expect(readFileSync(join(second.runDir, 'datasets', 'sft-train.jsonl'), 'utf8')).toBe(readFileSync(join(whole.runDir, 'datasets', 'sft-train.jsonl'), 'utf8'));
  }, 120_000);
});
