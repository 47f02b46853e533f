// `list` and `show` give a running run's time so far, not the "0s" of its finished attempts.
import { describe, expect, it } from 'vitest';
import { runTimeMs } from '../../core/cli/core-commands.js';

describe('run time in list/show', () => {
  const now = 1_000_000_000;
  it('counts a running attempt from its start, on top of the finished attempts', () => {
    expect(runTimeMs({ status: 'running', durationMs: 0, startedAt: now - 90_000, finishedAt: null }, now)).toBe(90_000);
    expect(runTimeMs({ status: 'running', durationMs: 60_000, startedAt: now - 30_000, finishedAt: now - 100_000 }, now)).toBe(90_000);
  });
  it('uses the summed time of a finished run, or its start and end when that is not in yet', () => {
    expect(runTimeMs({ status: 'completed', durationMs: 42_000, startedAt: now - 90_000, finishedAt: now }, now)).toBe(42_000);
    expect(runTimeMs({ status: 'completed', durationMs: 0, startedAt: now - 90_000, finishedAt: now - 30_000 }, now)).toBe(60_000);
    expect(runTimeMs({ status: 'created', durationMs: 0, startedAt: null, finishedAt: null }, now)).toBe(0);
  });
});
