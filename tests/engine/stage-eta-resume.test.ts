// A resumed stage's ETA is measured on the steps done in this attempt. Before the fix the host divided the time since
// the resume by ALL steps done (the first epoch's included): a SmolLM2 SFT at ~10 s/step resumed at 205/816 printed
// "ETA 2m28s" for 611 steps left (found on the smollm2-wm run, 2026-11-29).
import { describe, expect, it } from 'vitest';
import { StageEtaTracker } from '../../core/engine/run-eta.js';

describe('StageEtaTracker', () => {
  it('a fresh stage measures from its start', () => {
    const t = new StageEtaTracker();
    const start = 1_000_000;
    expect(t.eta('r', { stage: 'sft', time: start + 10_000, done: 1, total: 11 }, start)).toBeCloseTo(100, 6);
    expect(t.eta('r', { stage: 'sft', time: start + 20_000, done: 2, total: 11 }, start)).toBeCloseTo(90, 6);
  });

  it('a resumed stage measures the rate on the steps done since the resume', () => {
    const t = new StageEtaTracker();
    const resumedAt = 5_000_000;
    // first event of the attempt: 205/816 one step (10 s) after the resume; no rate of this attempt yet
    expect(t.eta('r', { stage: 'sft', time: resumedAt + 10_000, done: 205, total: 816 }, resumedAt)).toBeNull();
    // 10 more steps at 10 s each: 601 left at 10 s/step
    const eta = t.eta('r', { stage: 'sft', time: resumedAt + 110_000, done: 215, total: 816 }, resumedAt);
    expect(eta).toBeCloseTo(6010, 6);
  });

  it('a new attempt of the same stage starts a new measurement', () => {
    const t = new StageEtaTracker();
    expect(t.eta('r', { stage: 'rl', time: 10_000, done: 1, total: 5 }, 0 + 1)).not.toBeNull();
    const second = 1_000_000;
    expect(t.eta('r', { stage: 'rl', time: second + 1_000, done: 3, total: 5 }, second)).toBeNull();
    expect(t.eta('r', { stage: 'rl', time: second + 3_000, done: 4, total: 5 }, second)).toBeCloseTo(2, 6);
  });

  it('no ETA when the stage is done or its start is unknown', () => {
    const t = new StageEtaTracker();
    expect(t.eta('r', { stage: 'sft', time: 10, done: 5, total: 5 }, 1)).toBeNull();
    expect(t.eta('r', { stage: 'sft', time: 10, done: 1, total: 5 }, null)).toBeNull();
  });
});
