// SFT resume bookkeeping (issue 37, N7; the reliability retest's R6): a run stopped in the middle of
// its second epoch and resumed gives the same numbers as an uninterrupted run, including the
// resumed epoch's sft/trainLossEpoch (it used to average only the batches after the resume:
// 4.4902 vs 4.5576 in R6) and the 'before' state perplexity (it used to be rewritten as null
// after any resume past epoch 1); and the stop's resume point sft-latest is removed when the stage
// completes (it used to stay on disk: 3.95 GB at 1.5B). TF.js wasm on one thread, 2 epochs of 1-row batches.
import { describe, expect, it } from 'vitest';
import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { RunConfigInput } from '../../core/api/run-config.js';
import type { SftState } from '../../core/train/sft.js';
import { runPreset, tempProject } from './helpers.js';
import { metricValues } from './rl-resume-helpers.js';

const OVERRIDES: RunConfigInput = {
  backend: 'wasm', workers: 0,   // one thread: the same sums in the same order in every run
  env: { id: 'frozenlake' },
  stages: { plan: { order: ['selfplay', 'sft'] }, sft: { epochs: 2, batchSize: 1 } },
};

function perplexityFile(runDir: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(runDir, 'eval', 'sft-state-perplexity.json'), 'utf8')) as Record<string, unknown>;
}

describe('SFT resume keeps the epoch loss and the before-perplexity, and removes sft-latest (N7)', () => {
  let wholeRun: ReturnType<typeof runPreset> | null = null;
  const uninterrupted = () => (wholeRun ??= runPreset(tempProject('spa-sft-resume-'), 'sft-only', 'w', OVERRIDES));

  it('a stop in the middle of epoch 2, then a resume, gives the uninterrupted run\'s numbers', async () => {
    const whole = await uninterrupted();
    expect(whole.outcome.status).toBe('completed');
    const project = tempProject('spa-sft-resume-');
    const controller = new AbortController();
    let epochEnd = -1;
    const first = await runPreset(project, 'sft-only', 'r', OVERRIDES, {
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type !== 'metric' || e.point.stage !== 'sft') return;
        if (e.point.values['sft/epoch'] === 1) epochEnd = e.point.step;
        // the second batch of epoch 2 is done: the stop lands before the third
        if (epochEnd >= 0 && e.point.step === epochEnd + 1 && 'losses/sft' in e.point.values) controller.abort();
      },
    });
    expect(first.outcome.status).toBe('stopped');
    const state = JSON.parse(readFileSync(join(first.runDir, 'stages', 'sft', 'state.json'), 'utf8')) as SftState;
    expect(state).toMatchObject({ epoch: 1, batch: 2 });
    expect(state.epochLosses).toHaveLength(2);
    expect(state.pplBefore?.perplexity).toBeGreaterThan(0);
    expect(existsSync(join(first.runDir, 'checkpoints', 'sft-latest', 'model.safetensors'))).toBe(true);

    const second = await runPreset(project, 'sft-only', 'r', OVERRIDES);
    expect(second.outcome.status).toBe('completed');
    expect(second.events.some((e) => e.type === 'log' && /sft: resuming in epoch 2 after batch 2/.test(e.message))).toBe(true);
    // the resumed epoch's loss averages all of its batches
    const a = metricValues(second.runDir);
    const b = metricValues(whole.runDir);
    const epochLoss = (m: Map<string, number>) => [...m].filter(([k]) => k.endsWith('/sft/trainLossEpoch')).map(([, v]) => v);
    expect(epochLoss(b)).toHaveLength(2);
    expect(epochLoss(a)).toEqual(epochLoss(b));
    // every SFT metric value equals the uninterrupted run's (the weights are exact; the bookkeeping is too)
    const sft = (m: Map<string, number>) => new Map([...m].filter(([k]) => k.startsWith('sft/')));
    expect(sft(a)).toEqual(sft(b));
    // the before-perplexity survives the resume
    expect(perplexityFile(second.runDir).before).not.toBeNull();
    expect(perplexityFile(second.runDir)).toEqual(perplexityFile(whole.runDir));
    // the stop's resume point is gone; the epochs' checkpoints stay
    expect(existsSync(join(second.runDir, 'checkpoints', 'sft-latest'))).toBe(false);
    expect(existsSync(join(second.runDir, 'checkpoints', 'sft-epoch-2', 'model.safetensors'))).toBe(true);
  }, 240_000);

  // model.memory.resumePointMinutes: a hard kill (no stop, nothing saved at the end) resumes from the last timed resume point.
  // The kill is the disk as it was when step 3 of epoch 2 was reported (copied then); the run itself goes on to the end.
  it('a timed resume point mid-epoch: the disk a kill leaves resumes to the uninterrupted run\'s numbers', async () => {
    const whole = await uninterrupted();
    const project = tempProject('spa-sft-timed-');
    const runDir = join(project, 'runs', 'k');
    const killed = join(tempProject('spa-sft-killed-'), 'k');
    let epochEnd = -1;
    let copied = false;
    const timed: RunConfigInput = { ...OVERRIDES, model: { memory: { resumePointMinutes: 1e-6 } } };   // ~0.06 ms: after every step
    const live = await runPreset(project, 'sft-only', 'k', timed, {
      onEvent: (e) => {
        if (e.type !== 'metric' || e.point.stage !== 'sft') return;
        if (e.point.values['sft/epoch'] === 1) epochEnd = e.point.step;
        if (!copied && epochEnd >= 0 && e.point.step === epochEnd + 2 && 'losses/sft' in e.point.values) {
          cpSync(runDir, killed, { recursive: true });
          copied = true;
        }
      },
    });
    expect(live.outcome.status).toBe('completed');
    expect(copied).toBe(true);
    // writing resume points changes no number
    const sft = (m: Map<string, number>) => new Map([...m].filter(([k]) => k.startsWith('sft/')));   // every SFT step's values
    expect(sft(metricValues(live.runDir))).toEqual(sft(metricValues(whole.runDir)));
    // the killed disk: its state is the timed resume point after batch 2 of epoch 2 (the kill came during batch 3)
    rmSync(runDir, { recursive: true, force: true });
    cpSync(killed, runDir, { recursive: true });
    const state = JSON.parse(readFileSync(join(runDir, 'stages', 'sft', 'state.json'), 'utf8')) as SftState;
    expect(state).toMatchObject({ epoch: 1, batch: 2 });
    expect(state.epochLosses).toHaveLength(2);
    const resumed = await runPreset(project, 'sft-only', 'k', timed);
    expect(resumed.outcome.status).toBe('completed');
    expect(resumed.events.some((e) => e.type === 'log' && /sft: resuming in epoch 2 after batch 2/.test(e.message))).toBe(true);
    expect(sft(metricValues(resumed.runDir))).toEqual(sft(metricValues(whole.runDir)));
    expect(perplexityFile(resumed.runDir)).toEqual(perplexityFile(whole.runDir));
    expect(existsSync(join(resumed.runDir, 'checkpoints', 'sft-latest'))).toBe(false);
  }, 240_000);
});
