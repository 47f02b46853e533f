// Credit where the decision is (issue 34 item 2): the turn-level advantage (Turn-PPO) gives every token of a turn the
// turn's GAE advantage on V(s_j), the value before the reply; hand-worked values, the per-turn reward placement, and the
// export's refusal of the two-level estimators that RAGEN's bi_level_gae cannot run (peers-check F-BILEVEL-TURNS: IndexError
// on a zero-reward episode, RAGEN@5eb79b8 ragen/trainer/core_algos.py:77-80).
import { describe, expect, it } from 'vitest';
import { episodeAdvantages } from '../../core/train/advantages.js';
import { turnLevelGae } from '../../core/train/gae.js';
import { hydraConfig } from '../../core/interop/export-bundle.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import type { RunConfig } from '../../core/api/run-config.js';
import { responseMask, stateSpanKeepMask, turnSamples } from '../../core/train/ppo.js';
import { assertRlSectionSupported } from '../../core/train/rl-algorithms.js';
import type { RolloutResult } from '../../core/train/rollout.js';

describe('turnLevelGae', () => {
  it('hand-worked: two turns, rewards [0, 1], V(s) = [0.5, 0.2], γ_turn 0.9, λ 1', () => {
    const out = turnLevelGae({ turnRewards: [0, 1], turnValues: [0.5, 0.2], turnGamma: 0.9, turnLambda: 1 });
    // A_1 = 1 − 0.2 = 0.8; δ_0 = 0 + 0.9·0.2 − 0.5 = −0.32; A_0 = −0.32 + 0.9·0.8 = 0.4
    expect(out.advantages[1]).toBeCloseTo(0.8, 12);
    expect(out.advantages[0]).toBeCloseTo(0.4, 12);
    expect(out.returns).toEqual([out.advantages[0]! + 0.5, out.advantages[1]! + 0.2]);
    expect(() => turnLevelGae({ turnRewards: [0], turnValues: [], turnGamma: 1, turnLambda: 1 })).toThrow(/one value per turn/);
  });

  it('λ 0: each turn is its own TD error', () => {
    const out = turnLevelGae({ turnRewards: [0.5, 0, 1], turnValues: [0.1, 0.4, 0.3], turnGamma: 1, turnLambda: 0 });
    expect(out.advantages.map((a) => +a.toFixed(12))).toEqual([0.8, -0.1, 0.7]);
  });
});

describe("episodeAdvantages 'turn-level'", () => {
  const opts = { gamma: 1, lambda: 1, turnGamma: 1 } as const;
  it('every token of a turn carries the turn advantage; the baseline is the first reply token\'s value V(s_j)', () => {
    // turn 0: tokens valued [0.3, 0.9, 0.9] (the later ones have read the action: a Q-like value); turn 1: [0.6, 1.0]
    const out = episodeAdvantages([[0.3, 0.9, 0.9], [0.6, 1.0]], [0, 1], { ...opts, placement: 'per-turn', advantage: 'turn-level' });
    // A_1 = 1 − 0.6 = 0.4; A_0 = 0 + 0.6 − 0.3 + A_1 = 0.7
    out.advantages[0]!.forEach((a) => expect(a).toBeCloseTo(0.7, 12));
    out.advantages[1]!.forEach((a) => expect(a).toBeCloseTo(0.4, 12));
    out.returns[0]!.forEach((r) => expect(r).toBeCloseTo(1.0, 12));
    // token GAE on the same numbers gives the first token 0.7 too, but the tokens after the decision r − V ≈ 0.1
    const token = episodeAdvantages([[0.3, 0.9, 0.9], [0.6, 1.0]], [0, 1], { ...opts, placement: 'per-turn', advantage: 'gae' });
    expect(token.advantages[0]![2]).toBeCloseTo(0.1, 12);
  });

  it('last-token placement puts the episode total on the last turn; a turn without tokens hands its reward back', () => {
    const out = episodeAdvantages([[0.2], [], [0.1, 0.1]], [0.5, 0.25, 1], { ...opts, placement: 'last-token', advantage: 'turn-level' });
    // turns with tokens: 0 and 2; rewards [0, 1.75] on them; A_2 = 1.75 − 0.1 = 1.65; A_0 = 0 + 0.1 − 0.2 + 1.65 = 1.55
    expect(out.advantages[0]![0]).toBeCloseTo(1.55, 12);
    expect(out.advantages[1]).toEqual([]);
    out.advantages[2]!.forEach((a) => expect(a).toBeCloseTo(1.65, 12));
  });
});

describe('turn-then-token keeps a zero-reward turn a turn (peers-check F-BILEVEL-TURNS minimal input)', () => {
  it('two one-token turns, values 0.5 and 0.2, rewards [0, 1], γ = λ = 1, γ_turn 0.95: [0.45, 0.8] (RAGEN merges the turns: [0.5, 0.8])', () => {
    const out = episodeAdvantages([[0.5], [0.2]], [0, 1], { gamma: 1, lambda: 1, turnGamma: 0.95, placement: 'per-turn', advantage: 'turn-then-token' });
    expect(out.advantages[0]![0]).toBeCloseTo(0.45, 12);
    expect(out.advantages[1]![0]).toBeCloseTo(0.8, 12);
  });
});

describe('the export refuses two-level advantages RAGEN cannot run (F-BILEVEL-TURNS)', () => {
  const config = (advantage: string) => ({
    env: { id: 'frozenlake', options: {} }, seeds: { base: 0, rlStart: 100, evalStart: 200, selfplayStart: 300 },
    stages: { rl: { advantage }, rollout: {}, eval: {}, sft: {} },
  }) as unknown as RunConfig;
  it.each(['turn-then-token', 'turn-level'])('%s: refused by name with the run\'s values; --values paper exports bi_level_gae False', (advantage) => {
    const template = builtinTemplate('spa');
    expect(() => hydraConfig(config(advantage), template, 'x', 'm')).toThrow(/rl\.advantage "turn-(then-token|level)" has no safe RAGEN counterpart.*IndexError/);
    expect(() => hydraConfig(config(advantage), template, 'x', 'm', 'paper')).not.toThrow();
    expect((hydraConfig(config('gae'), template, 'x', 'm').algorithm as { adv_estimator: string }).adv_estimator).toBe('gae');
  });
});

describe('rl.maskStateSpans: the policy loss leaves out the world-model contents', () => {
  const chars = (text: string) => [...text].map((c) => c.charCodeAt(0));
  const decode = (ids: number[]) => String.fromCharCode(...ids);
  it('zeros exactly the contents of <observation> and <prediction>, keeps tags, reasoning and the move', () => {
    const reply = '<observation>P_G</observation>I will try Right.<prediction>_PG</prediction><answer>Right</answer>';
    const keep = stateSpanKeepMask(chars(reply), decode);
    const dropped = [...reply].filter((_, i) => keep[i] === 0).join('');
    expect(dropped).toBe('P_G_PG');
    expect(keep.length).toBe(reply.length);
    expect(stateSpanKeepMask(chars('I will try Up.</think><answer>Up</answer>'), decode).every((k) => k === 1)).toBe(true);
  });
  it('an unclosed tag masks to the end of the reply; a token that straddles a content edge is left out', () => {
    const keep = stateSpanKeepMask(chars('ok<prediction>P_'), decode);
    expect(keep.slice(-2)).toEqual([0, 0]);
    expect(keep.slice(0, 14).every((k) => k === 1)).toBe(true);
    // two-character tokens: "n>" ends the open tag and starts nothing; ">P" straddles the edge
    const pieces = ['<prediction', '>P', '_G', '</prediction>'];
    const ids = pieces.map((_, i) => i);
    expect(stateSpanKeepMask(ids, (x) => x.map((i) => pieces[i]!).join(''))).toEqual([1, 0, 0, 1]);
  });
  it('turnSamples gives the samples that mask, and responseMask returns it', () => {
    const reply = chars('<prediction>AB</prediction>x');
    const result = { spec: {}, record: {}, tokens: [{ promptIds: [1, 2], responseIds: reply }] } as unknown as RolloutResult;
    const [sample] = turnSamples([result], () => true, { maskStateSpans: true, decode });
    expect(responseMask(sample!)).toEqual([0, 0, ...[...'<prediction>'].map(() => 1), 0, 0, ...[...'</prediction>x'].map(() => 1)]);
    expect(responseMask(turnSamples([result], () => true)[0]!).filter((m) => m === 1).length).toBe(reply.length);
    expect(() => turnSamples([result], () => true, { maskStateSpans: true })).toThrow(/needs the tokenizer's decode/);
  });
});

describe("rl.responseMask 'after-system' (SPA's released env-token mask) is refused by name", () => {
  it('throws naming the setting and the release file; reply passes', () => {
    expect(() => assertRlSectionSupported({ responseMask: 'after-system' })).toThrow(/rl\.responseMask "after-system" is not implemented.*config\/base\.yaml:16/);
    expect(() => assertRlSectionSupported({ responseMask: 'reply' })).not.toThrow();
  });
});
