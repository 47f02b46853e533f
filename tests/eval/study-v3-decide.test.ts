// Study v3's decision rule as code (docs/results/study-v3/decide.mjs, DESIGN.md "Decision rule"): the gate on hand-made
// world-model checks, each branch of criterion 3 on a hand-made table, and the refusal to decide while a cell is missing.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script of docs/results without type declarations
import { decide, gate, readChecks, readFormatErrors } from '../../docs/results/study-v3/decide.mjs';

type Iv = { mean: number; low: number; high: number };
const ARMS = ['vanilla-rl', 'state-estimation-rl', 'spa', 'spa-mask-state-spans'];
const iv = (mean: number, half: number): Iv => ({ mean, low: mean - half, high: mean + half });
function table(pass1: Record<string, Iv>, diffs: Array<[string, string, Iv]>, completed = 3) {
  return {
    cells: ARMS.map((m) => ({ method: m, completed, puzzles: 128, passAt: { 1: pass1[m], 8: iv(pass1[m]!.mean + 0.1, 0.05) } })),
    references: [{ kind: 'chance', perPuzzle: [0.2, 0.25, 0.25, 0.3] }, { kind: 'oracle', perPuzzle: [1, 1, 1, 1] }],   // chance 25%
    differences: diffs.map(([a, b, diff]) => ({ a, b, k: 1, diff })),
  };
}
const learned = { 'vanilla-rl': iv(0.6, 0.05), 'state-estimation-rl': iv(0.35, 0.05), spa: iv(0.5, 0.05), 'spa-mask-state-spans': iv(0.4, 0.05) };
const vanillaDiff: [string, string, Iv] = ['vanilla-rl', 'spa', iv(0.1, 0.05)];
const check = (given: number, obs: number, base = { given: 0, obs: 1 }) => ({
  versusBase: {
    model: { observationExact: obs, conditioned: { exactChanged: given, changedTurns: 50 } },
    base: { observationExact: base.obs, conditioned: { exactChanged: base.given, changedTurns: 50 } },
  },
});
const masked = [check(0, 0), check(0.02, 0), check(0, 0)];

describe('study v3 decision rule', () => {
  it('criterion 1: the mean over 3 seeds against the lake\'s thresholds; a missing check leaves it pending', () => {
    const spa = [check(0.98, 0.83), check(0.7, 0.97), check(0.5, 0.95)];   // given 72.7%, observation 91.7%
    const met = gate({ spa, 'spa-mask-state-spans': masked }, 'fldet');
    expect(met.verdict).toBe('met');
    expect(met.text).toContain('**72.7%**');
    const lowObs = gate({ spa: [check(0.98, 0.83), check(0.7, 0.85), check(0.6, 0.95)], 'spa-mask-state-spans': masked }, 'fldet');
    expect(lowObs.verdict).toBe('not met');
    expect(lowObs.text).toContain("SPA's observation exact 87.7% < 90.0%");
    const lowGiven = [check(0.55, 0.95), check(0.55, 0.95), check(0.55, 0.95)];
    expect(gate({ spa: lowGiven, 'spa-mask-state-spans': masked }, 'fldet').verdict).toBe('not met');
    expect(gate({ spa: lowGiven, 'spa-mask-state-spans': masked }, 'fl08').verdict).toBe('met');   // fl08's line is 0.5
    const leaky = [check(0.4, 0), check(0.4, 0), check(0.4, 0)];
    expect(gate({ spa, 'spa-mask-state-spans': leaky }, 'fldet').text).toContain("SPA-masked's prediction given the action 40.0% > 30.0%");
    const pending = gate({ spa: [spa[0], undefined, spa[2]], 'spa-mask-state-spans': masked }, 'fldet');
    expect(pending.verdict).toBe('pending');
    expect(pending.text).toContain('spa seed 1');
    expect(() => gate({ spa, 'spa-mask-state-spans': masked }, 'fl05')).toThrow(/unknown lake/);
  });
  it('evidence for SPA needs both gaps with intervals above 0 and SPA above chance (either stored orientation)', () => {
    const t = table(learned, [['state-estimation-rl', 'spa', iv(-0.15, 0.04)], ['spa', 'spa-mask-state-spans', iv(0.1, 0.04)], vanillaDiff]);
    const r = decide(t, 'met');
    expect(r.verdict).toBe('evidence for SPA');
    expect(r.text).toContain('SPA − state-estimation RL: +15.0 points [+11.0, +19.0]');
    expect(r.text).toContain('SPA − vanilla RL -10.0 points [-15.0, -5.0]');
    const atChance = decide(table({ ...learned, spa: iv(0.3, 0.07) }, [['spa', 'state-estimation-rl', iv(0.15, 0.04)],
      ['spa', 'spa-mask-state-spans', iv(0.1, 0.04)], vanillaDiff]), 'met');
    expect(atChance.verdict).toBe('no decision');
    expect(atChance.text).toContain('SPA above chance: no (at chance)');
  });
  it('evidence against: SPA − SPA-masked entirely below +5 with SPA or SPA-masked above chance; otherwise uninformative', () => {
    const diffs: Array<[string, string, Iv]> = [['spa', 'state-estimation-rl', iv(0.0, 0.03)], ['spa', 'spa-mask-state-spans', iv(0.0, 0.04)], vanillaDiff];
    expect(decide(table(learned, diffs), 'met').verdict).toBe('evidence against a world-model effect at this scale');
    const wide: Array<[string, string, Iv]> = [diffs[0]!, ['spa', 'spa-mask-state-spans', iv(0.02, 0.05)], vanillaDiff];
    expect(decide(table(learned, wide), 'met').verdict).toBe('no decision');
    const none = { ...learned, 'state-estimation-rl': iv(0.25, 0.05), spa: iv(0.2, 0.06), 'spa-mask-state-spans': iv(0.21, 0.06) };
    const r = decide(table(none, diffs), 'met');
    expect(r.verdict).toBe('uninformative');
    expect(r.text).toContain('| spa | 20.0% [14.0%, 26.0%] | +10.0 | – | at chance |');
  });
  it('criterion 1 not met: inconclusive about SPA, numbers still reported; a gap made by an arm below chance is named', () => {
    const diffs: Array<[string, string, Iv]> = [['spa', 'state-estimation-rl', iv(0.2, 0.03)], ['spa', 'spa-mask-state-spans', iv(0.2, 0.04)], vanillaDiff];
    const r = decide(table(learned, diffs), 'not met', { spa: 0.046 });
    expect(r.verdict).toBe('inconclusive about SPA');
    expect(r.text).toContain('| spa | 50.0% [45.0%, 55.0%] | +10.0 | 4.6% | above chance |');
    const collapsed = { ...learned, spa: iv(0.27, 0.05), 'spa-mask-state-spans': iv(0.05, 0.02) };
    expect(decide(table(collapsed, diffs), 'met').text).toContain('comes from an arm below chance');
  });
  it('nothing is decided while a seed or criterion 1 is missing', () => {
    const diffs: Array<[string, string, Iv]> = [['spa', 'state-estimation-rl', iv(0.2, 0.02)], ['spa', 'spa-mask-state-spans', iv(0.2, 0.02)], vanillaDiff];
    expect(decide(table(learned, diffs, 2), 'met').verdict).toBe('pending');
    expect(decide(table(learned, diffs), 'pending').verdict).toBe('pending');
  });
  it('reads the checks and the format errors from a records folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'v3-decide-'));
    mkdirSync(join(dir, 'wm-check')); mkdirSync(join(dir, 'runs'));
    writeFileSync(join(dir, 'wm-check', 'spa-s1-sft.json'), JSON.stringify(check(0.9, 1)));
    writeFileSync(join(dir, 'runs', 'spa-frozenlake-s0.json'), JSON.stringify({ method: 'spa', eval: { formatErrorRate: 0.02 } }));
    writeFileSync(join(dir, 'runs', 'spa-frozenlake-s1.json'), JSON.stringify({ method: 'spa', eval: { formatErrorRate: 0.04 } }));
    const checks = readChecks(dir, 'spa');
    expect(checks[0]).toBeUndefined();
    expect(checks[1].versusBase.model.conditioned.exactChanged).toBe(0.9);
    expect(readFormatErrors(dir).spa).toBeCloseTo(0.03, 10);
  });
});
