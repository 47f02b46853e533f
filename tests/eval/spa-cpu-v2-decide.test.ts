// Study spa-cpu-v2's decision rule as code (docs/results/spa-cpu-v2/decide.mjs, DESIGN.md "Decision rule"): each branch on a
// hand-made table, and the refusal to decide while a seed or criterion 1 is missing.
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script of docs/results without type declarations
import { criterion1Verdict, decide } from '../../docs/results/spa-cpu-v2/decide.mjs';

type Iv = { mean: number; low: number; high: number };
const ARMS = ['vanilla-rl', 'state-estimation-rl', 'spa', 'spa-mask-state-spans'];
function table(pass1: Record<string, Iv>, diffs: Array<[string, string, Iv]>, completed = 3) {
  return {
    cells: ARMS.map((m) => ({ method: m, completed, passAt: { 1: pass1[m] } })),
    references: [{ kind: 'chance', perPuzzle: [0.2, 0.25, 0.25, 0.3] }],   // chance 25%
    differences: diffs.map(([a, b, diff]) => ({ a, b, k: 1, diff })),
  };
}
const iv = (mean: number, half: number): Iv => ({ mean, low: mean - half, high: mean + half });
const learned = { 'vanilla-rl': iv(0.45, 0.05), 'state-estimation-rl': iv(0.4, 0.05), spa: iv(0.55, 0.05), 'spa-mask-state-spans': iv(0.42, 0.05) };

describe('spa-cpu-v2 decision rule', () => {
  it('evidence for SPA: both differences large enough with intervals above 0 (either orientation of the stored pair)', () => {
    const t = table(learned, [['state-estimation-rl', 'spa', iv(-0.15, 0.04)], ['spa', 'spa-mask-state-spans', iv(0.13, 0.04)]]);
    const r = decide(t, 'met');
    expect(r.verdict).toBe('evidence for SPA');
    expect(r.text).toContain('SPA − state estimation: +15.0 points [+11.0, +19.0]');
    expect(r.text).toContain('**Criterion 2 met**');
  });
  it('refutation needs criterion 1 met, RL learning and a small, tight SPA − SPA-masked', () => {
    const diffs: Array<[string, string, Iv]> = [['spa', 'state-estimation-rl', iv(0.02, 0.03)], ['spa', 'spa-mask-state-spans', iv(0.01, 0.05)]];
    expect(decide(table(learned, diffs), 'met').verdict).toBe('refutation at this scale');
    expect(decide(table(learned, diffs), 'not met').verdict).toBe('no decision');
    expect(decide(table(learned, diffs), 'not met').text).toContain('inconclusive about SPA');
    const wide: Array<[string, string, Iv]> = [diffs[0]!, ['spa', 'spa-mask-state-spans', iv(0.01, 0.09)]];
    expect(decide(table(learned, wide), 'met').verdict).toBe('no decision');
  });
  it('criterion 2: vanilla and state-estimation both holding chance make criterion 3 uninformative; below chance is distinguishable', () => {
    const atChance = { ...learned, 'vanilla-rl': iv(0.24, 0.04), 'state-estimation-rl': iv(0.26, 0.04) };
    const diffs: Array<[string, string, Iv]> = [['spa', 'state-estimation-rl', iv(0.0, 0.02)], ['spa', 'spa-mask-state-spans', iv(0.0, 0.02)]];
    const r = decide(table(atChance, diffs), 'met');
    expect(r.verdict).toBe('no decision');   // the refutation needs RL to learn
    expect(r.text).toContain('criterion 3 is uninformative');
    const below = decide(table({ ...atChance, 'state-estimation-rl': iv(0.014, 0.009) }, diffs), 'met');
    expect(below.text).toContain('| state-estimation-rl | 1.4% [0.5%, 2.3%] | below chance |');
    expect(below.verdict).toBe('refutation at this scale');
  });
  it('nothing is decided while a seed or criterion 1 is missing; criterion 1 is read from criterion1.md', () => {
    const diffs: Array<[string, string, Iv]> = [['spa', 'state-estimation-rl', iv(0.2, 0.02)], ['spa', 'spa-mask-state-spans', iv(0.2, 0.02)]];
    expect(decide(table(learned, diffs, 2), 'met').verdict).toBe('pending');
    expect(decide(table(learned, diffs), 'pending').verdict).toBe('pending');
    expect(criterion1Verdict('x\n**Criterion 1 met:** the world model was learned')).toBe('met');
    expect(criterion1Verdict('**Criterion 1 not met:** the study is inconclusive')).toBe('not met');
    expect(criterion1Verdict('**Not decided yet:** the rule is applied when all 3 seeds')).toBe('pending');
  });
});
