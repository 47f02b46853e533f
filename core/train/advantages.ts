// From an episode's per-turn values and rewards to per-token advantages and returns.
// The episode's model tokens (all turns' responses, in order) form one sequence; environment and
// prompt text between turns is not part of it, so GAE bootstraps across turns through the next
// model token (the "loss on model tokens only" rule, applied to the advantages too).
// Three estimators: 'gae' (token GAE over the episode's model tokens), 'turn-then-token' (two-level, RAGEN's bi-level GAE
// with every turn kept), 'turn-level' (Turn-PPO: turn GAE on the value before each reply, broadcast to the turn's tokens).
import { gae, turnLevelGae, turnThenTokenGae } from './gae.js';

export interface EpisodeAdvantageOptions {
  placement: 'last-token' | 'per-turn'; // episode reward on the very last model token, or each turn's on its own last token
  advantage: 'gae' | 'turn-then-token' | 'turn-level';
  gamma: number;
  lambda: number;
  turnGamma: number;
}

/** turnValues[j] = critic values of turn j's response tokens; turnRewards[j] = reward of turn j. */
export function episodeAdvantages(
  turnValues: number[][],
  turnRewards: number[],
  opts: EpisodeAdvantageOptions,
): { advantages: number[][]; returns: number[][] } {
  if (turnValues.length !== turnRewards.length) {
    throw new Error(`episodeAdvantages: expected one reward per turn; received ${turnValues.length} turns and ${turnRewards.length} rewards`);
  }
  const keep = turnValues.map((v) => v.length > 0);
  // rewards of turns without tokens move to the previous turn that has tokens (or the next)
  const rewards = [...turnRewards];
  for (let j = 0; j < rewards.length; j++) {
    if (keep[j]) continue;
    let target = -1;
    for (let p = j - 1; p >= 0; p--)
      if (keep[p]) {
        target = p;
        break;
      }
    if (target < 0)
      for (let q = j + 1; q < rewards.length; q++)
        if (keep[q]) {
          target = q;
          break;
        }
    if (target >= 0) rewards[target]! += rewards[j]!;
    rewards[j] = 0;
  }
  const total = rewards.reduce((a, c) => a + c, 0);
  const active = turnValues.map((_, j) => j).filter((j) => keep[j]);
  const empty = { advantages: turnValues.map((v) => v.map(() => 0)), returns: turnValues.map((v) => v.map(() => 0)) };
  if (active.length === 0) return empty;

  if (opts.advantage === 'turn-level') {
    // one step per turn: V(s_j) = the value of turn j's first reply token (the state before the reply, transformer.ts)
    const levelRewards = active.map((j) => (opts.placement === 'per-turn' ? rewards[j]! : 0));
    if (opts.placement === 'last-token') levelRewards[levelRewards.length - 1] = total;
    const out = turnLevelGae({
      turnRewards: levelRewards, turnValues: active.map((j) => turnValues[j]![0]!), turnGamma: opts.turnGamma, turnLambda: opts.lambda,
    });
    active.forEach((j, k) => {
      empty.advantages[j] = turnValues[j]!.map(() => out.advantages[k]!);
      empty.returns[j] = turnValues[j]!.map(() => out.returns[k]!);
    });
    return empty;
  }

  if (opts.advantage === 'turn-then-token') {
    const turnRewards2 = active.map((j) => (opts.placement === 'per-turn' ? rewards[j]! : 0));
    if (opts.placement === 'last-token') turnRewards2[turnRewards2.length - 1] = total;
    const out = turnThenTokenGae({
      turnRewards: turnRewards2,
      tokenValues: active.map((j) => turnValues[j]!),
      turnGamma: opts.turnGamma,
      turnLambda: opts.lambda,
      tokenGamma: opts.gamma,
      tokenLambda: opts.lambda,
    });
    active.forEach((j, k) => {
      empty.advantages[j] = out.advantages[k]!;
      empty.returns[j] = out.returns[k]!;
    });
    return empty;
  }

  const values: number[] = [], tokenRewards: number[] = [];
  const owner: Array<[number, number]> = [];
  for (const j of active) {
    const v = turnValues[j]!;
    v.forEach((value, t) => {
      values.push(value);
      const isLast = t === v.length - 1;
      tokenRewards.push(opts.placement === 'per-turn' && isLast ? rewards[j]! : 0);
      owner.push([j, t]);
    });
  }
  if (opts.placement === 'last-token') tokenRewards[tokenRewards.length - 1] = total;
  const out = gae({ rewards: [tokenRewards], values: [values], mask: [values.map(() => 1)], gamma: opts.gamma, lambda: opts.lambda });
  owner.forEach(([j, t], i) => {
    empty.advantages[j]![t] = out.advantages[0]![i]!;
    empty.returns[j]![t] = out.returns[0]![i]!;
  });
  return empty;
}
