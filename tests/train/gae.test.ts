import { describe, expect, it } from 'vitest';
import { gae, gaeReference, turnThenTokenGae, explainedVariance } from '../../core/train/gae.js';
import { createRng } from '../../core/util/rng.js';

describe('GAE', () => {
  it('matches a hand-computed case (γ=0.9, λ=0.8, env tokens skipped)', () => {
    // tokens: m m e m ; reward 1 on last token
    const out = gae({ rewards: [[0, 0, 0, 1]], values: [[0.5, 0.4, 9, 0.2]], mask: [[1, 1, 0, 1]], gamma: 0.9, lambda: 0.8 });
    const d3 = 1 - 0.2;                 // 0.8
    const d1 = 0 + 0.9 * 0.2 - 0.4;     // -0.22
    const a1 = d1 + 0.72 * d3;          // 0.356
    const d0 = 0.9 * 0.4 - 0.5;         // -0.14
    const a0 = d0 + 0.72 * a1;
    expect(out.advantages[0]![3]).toBeCloseTo(d3, 12);
    expect(out.advantages[0]![2]).toBe(0);
    expect(out.advantages[0]![1]).toBeCloseTo(a1, 12);
    expect(out.advantages[0]![0]).toBeCloseTo(a0, 12);
    expect(out.returns[0]![0]).toBeCloseTo(a0 + 0.5, 12);
  });

  it('fast batched GAE equals the plain loop on random inputs', () => {
    const rng = createRng(7);
    for (let trial = 0; trial < 20; trial++) {
      const rows = 1 + Math.floor(rng() * 5), cols = 1 + Math.floor(rng() * 30);
      const mk = (f: () => number): number[][] => Array.from({ length: rows }, () => Array.from({ length: cols }, f));
      const input = { rewards: mk(() => (rng() < 0.2 ? rng() * 2 - 1 : 0)), values: mk(() => rng()), mask: mk(() => (rng() < 0.7 ? 1 : 0)), gamma: rng(), lambda: rng() };
      const fast = gae(input), slow = gaeReference(input);
      for (let b = 0; b < rows; b++) for (let t = 0; t < cols; t++) {
        expect(fast.advantages[b]![t]).toBeCloseTo(slow.advantages[b]![t]!, 10);
        expect(fast.returns[b]![t]).toBeCloseTo(slow.returns[b]![t]!, 10);
      }
    }
  });

  it('rejects ragged input with a clear message', () => {
    expect(() => gae({ rewards: [[0, 1]], values: [[0]], mask: [[1, 1]], gamma: 1, lambda: 1 })).toThrow(/row 0 has rewards 2, values 1/);
  });

  it('turn-then-token GAE: last token of a turn carries the turn advantage', () => {
    const out = turnThenTokenGae({ turnRewards: [0, 1], tokenValues: [[0.1, 0.2], [0.3, 0.5]], turnGamma: 0.95, turnLambda: 1, tokenGamma: 1, tokenLambda: 1 });
    // turn 1: δ = 1 − 0.5 = 0.5; turn 0: δ = 0 + 0.95·0.5 − 0.2 = 0.275, A0 = 0.275 + 0.95·0.5 = 0.75
    expect(out.turnAdvantages[1]).toBeCloseTo(0.5, 12);
    expect(out.turnAdvantages[0]).toBeCloseTo(0.75, 12);
    expect(out.advantages[1]![1]).toBeCloseTo(0.5, 12);
    // token 0 of turn 1: δ = 0.5 − 0.3 = 0.2, A = 0.2 + 0.5 = 0.7 (γ=λ=1) = R_1 − V_0
    expect(out.advantages[1]![0]).toBeCloseTo(0.7, 12);
    // token 0 of turn 0 (γ=λ=1): A = R_0 − V = (0.75 + 0.2) − 0.1
    expect(out.advantages[0]![0]).toBeCloseTo(0.85, 12);
  });

  it('explained variance is 1 for perfect values and ≤ 0 for constant wrong ones', () => {
    const mask = [[1, 1, 1]];
    expect(explainedVariance([[1, 2, 3]], [[1, 2, 3]], mask)).toBeCloseTo(1, 12);
    expect(explainedVariance([[0, 0, 0]], [[1, 2, 3]], mask)).toBeCloseTo(0, 12);
  });
});

import { episodeAdvantages } from '../../core/train/advantages.js';

describe('episode advantages over turns', () => {
  it('last-token placement with γ=λ=1 gives R − V on every token', () => {
    const out = episodeAdvantages([[0.1, 0.2], [0.3]], [0.5, 1], { placement: 'last-token', advantage: 'gae', gamma: 1, lambda: 1, turnGamma: 1 });
    expect(out.advantages[0]![0]).toBeCloseTo(1.5 - 0.1, 12);
    expect(out.advantages[1]![0]).toBeCloseTo(1.5 - 0.3, 12);
    expect(out.returns[0]![1]).toBeCloseTo(1.5, 12);
  });
  it('per-turn placement with γ=0 only sees each token\'s own reward', () => {
    const out = episodeAdvantages([[0, 0], [0]], [0.5, 1], { placement: 'per-turn', advantage: 'gae', gamma: 0, lambda: 1, turnGamma: 1 });
    expect(out.advantages).toEqual([[0, 0.5], [1]]);
  });
  it('a turn without tokens passes its reward on', () => {
    const out = episodeAdvantages([[0], []], [0, 1], { placement: 'per-turn', advantage: 'gae', gamma: 1, lambda: 1, turnGamma: 1 });
    expect(out.advantages[0]![0]).toBeCloseTo(1, 12);
    expect(out.advantages[1]).toEqual([]);
  });
});
