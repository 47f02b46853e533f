// Chance and oracle reference rows (core/eval/reference.ts): FrozenLake exact values checked by
// hand-sized cases and against a Monte Carlo of the env itself; Sokoban's oracle from BFS.
import { describe, expect, it } from 'vitest';
import { createEnv } from '../../core/envs/index.js';
import { Rng } from '../../core/util/rng.js';
import { passAtFromProbabilities, referenceRows } from '../../core/eval/reference.js';

const protocol = { maxTurns: 3, maxActionsPerTurn: 5, maxActionsPerGame: 10 };

describe('reference rows', () => {
  it('FrozenLake, one-step corridor: exact chance and oracle by hand', () => {
    // S G on a 1x2 strip is not allowed (size ≥ 2); 2x2 map: start top-left, goal top-right, holes below
    const rows = referenceRows({ envId: 'frozenlake', envOptions: { map: ['SG', 'HH'], isSlippery: false }, protocol: { maxTurns: 1, maxActionsPerTurn: 1, maxActionsPerGame: 1 }, seeds: [0], ks: [1, 2] });
    expect(rows[1]!.perPuzzle[0]).toBe(1);          // Right
    expect(rows[0]!.perPuzzle[0]).toBeCloseTo(0.25); // 1 of 4 actions
    expect(rows[0]!.passAt['2']).toBeCloseTo(1 - 0.75 ** 2);
  });

  it('FrozenLake slippery: the exact chance equals a Monte Carlo of the env; the oracle is above it and below 1', () => {
    const options = { randomStartGoal: true, successRate: 0.8 };
    const seeds = [11, 12];
    const [chance, oracle] = referenceRows({ envId: 'frozenlake', envOptions: options, protocol, seeds, ks: [1] });
    seeds.forEach((seed, i) => {
      const env = createEnv('frozenlake', options);
      env.reset({ seed });
      const saved = env.getState();
      const rng = new Rng(5);
      let wins = 0;
      const n = 4000;
      for (let r = 0; r < n; r++) {
        env.setState(saved);
        let left = 10, done = false;
        for (let t = 0; t < 3 && !done && left > 0; t++) {
          const count = 1 + rng.int(Math.min(5, left));
          for (let a = 0; a < count && !done; a++) { const s = env.step(['Left', 'Down', 'Right', 'Up'][rng.int(4)]!); left--; if (s.info.success) wins++; done = s.terminated || s.truncated; }
        }
      }
      expect(Math.abs(wins / n - chance!.perPuzzle[i]!)).toBeLessThan(0.03);
      expect(oracle!.perPuzzle[i]!).toBeGreaterThanOrEqual(chance!.perPuzzle[i]!);
    });
  });

  it('Sokoban: the oracle solves a puzzle exactly when BFS fits the action budget', () => {
    const [, oracle] = referenceRows({ envId: 'sokoban', envOptions: {}, protocol, seeds: [3_000_000, 3_000_001], ks: [1], monteCarlo: 200 });
    expect(oracle!.perPuzzle.every((p) => p === 0 || p === 1)).toBe(true);
    const tight = referenceRows({ envId: 'sokoban', envOptions: {}, protocol: { maxTurns: 1, maxActionsPerTurn: 1, maxActionsPerGame: 1 }, seeds: [3_000_000, 3_000_001], ks: [1], monteCarlo: 200 });
    expect(tight[1]!.passAt['1']).toBeLessThanOrEqual(oracle!.passAt['1']!);
    expect(passAtFromProbabilities([0.5, 0], [1, 2])).toEqual({ 1: 0.25, 2: 0.375 });
  });
});
