// @vitest-environment jsdom
// A run page opened on a running run shows the running stage's last progress message ("RL step 2/16: update 3/4") from the
// run's stored progress, before the page's first live event; a live event then takes over.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { StageCard, stageLive } from '../../renderer/src/views/RunView.js';
import type { StageState } from '../../core/api/contract.js';

// uPlot (charts of the view) reads the pixel ratio through matchMedia when it loads; jsdom has none
vi.hoisted(() => {
  const w = globalThis as unknown as { matchMedia?: unknown };
  w.matchMedia ??= () => ({ matches: false, addEventListener() {}, removeEventListener() {}, addListener() {}, removeListener() {} });
});

afterEach(cleanup);

const rl: StageState = { name: 'rl', title: 'RL', status: 'running', startedAt: Date.now() - 60_000, finishedAt: null, reason: null, done: 1, total: 16 };
const stored = { stage: 'rl', done: 1, total: 16, etaSeconds: null, message: 'RL step 2/16: update 3/4' };

describe('the stage card\'s progress message', () => {
  it('comes from the run\'s stored progress until a live event arrives', () => {
    expect(stageLive({}, stored, 'rl')).toBe(stored);
    expect(stageLive({}, stored, 'sft')).toBeUndefined();
    expect(stageLive({}, null, 'rl')).toBeUndefined();
    const live = { done: 1, total: 16, etaSeconds: 60, message: 'RL step 2/16: update 4/4' };
    expect(stageLive({ rl: live }, stored, 'rl')).toBe(live);
  });

  it('is shown on a running stage\'s card', () => {
    render(<StageCard stage={rl} live={stageLive({}, stored, 'rl')} />);
    expect(screen.getByText('RL step 2/16: update 3/4')).toBeTruthy();
    expect(screen.getByTestId('stage-count').textContent).toBe('1/16');
  });
});
