// Generalised advantage estimation (Schulman et al. 2016) over token sequences where only the
// model's own tokens take part (mask = 1); environment/prompt tokens are skipped, so the value
// of the next *model* token bootstraps the current one. Three variants:
//   gaeReference      plain per-sequence loop (the readable definition; used by tests)
//   gae               batched single reverse pass over time, vectorised across rows (used in training)
//   turnThenTokenGae  two levels (RAGEN-style): turn-level GAE over turn rewards, then token-level
//                     GAE inside each turn whose last token targets the turn's return.
//   turnLevelGae      one level (Turn-PPO-style): GAE over turns on the value before each reply; every token of
//                     a turn gets its turn's advantage.

export interface GaeInput {
  rewards: number[][];   // [B][T] reward placed on tokens (usually the last model token of a turn/episode)
  values: number[][];    // [B][T] critic values
  mask: number[][];      // [B][T] 1 on model tokens, 0 elsewhere (prompt, env feedback, padding)
  gamma: number;         // discount per model token
  lambda: number;        // GAE lambda
}

export interface GaeOutput {
  advantages: number[][]; // [B][T], 0 where mask = 0
  returns: number[][];    // [B][T] advantages + values, 0 where mask = 0
}

function checkShapes(input: GaeInput, where: string): { rows: number; cols: number } {
  const rows = input.rewards.length;
  if (input.values.length !== rows || input.mask.length !== rows) {
    throw new Error(`${where}: expected rewards, values and mask with the same number of rows; received ${rows}, ${input.values.length}, ${input.mask.length}`);
  }
  const cols = rows > 0 ? (input.rewards[0]?.length ?? 0) : 0;
  for (let b = 0; b < rows; b++) {
    const r = input.rewards[b]!.length, v = input.values[b]!.length, m = input.mask[b]!.length;
    if (r !== cols || v !== cols || m !== cols) {
      throw new Error(`${where}: expected every row to have ${cols} columns; row ${b} has rewards ${r}, values ${v}, mask ${m}`);
    }
  }
  return { rows, cols };
}

/** Plain loop: for each row, walk the model tokens backwards. */
export function gaeReference(input: GaeInput): GaeOutput {
  const { rows, cols } = checkShapes(input, 'gaeReference');
  const advantages: number[][] = [];
  const returns: number[][] = [];
  for (let b = 0; b < rows; b++) {
    const positions: number[] = [];
    for (let t = 0; t < cols; t++) if (input.mask[b]![t]! > 0) positions.push(t);
    const adv = new Array<number>(cols).fill(0);
    const ret = new Array<number>(cols).fill(0);
    let nextAdvantage = 0;
    let nextValue = 0;
    // rewards on masked-out tokens are collected onto the previous model token
    for (let i = positions.length - 1; i >= 0; i--) {
      const t = positions[i]!;
      const end = i + 1 < positions.length ? positions[i + 1]! : cols;
      let reward = 0;
      for (let u = t; u < end; u++) reward += input.rewards[b]![u]!;
      const value = input.values[b]![t]!;
      const delta = reward + input.gamma * nextValue - value;
      nextAdvantage = delta + input.gamma * input.lambda * nextAdvantage;
      adv[t] = nextAdvantage;
      ret[t] = nextAdvantage + value;
      nextValue = value;
    }
    advantages.push(adv);
    returns.push(ret);
  }
  return { advantages, returns };
}

/** Batched reverse scan with carried state per row (typed arrays; no per-row index lists). */
export function gae(input: GaeInput): GaeOutput {
  const { rows, cols } = checkShapes(input, 'gae');
  const { gamma, lambda } = input;
  const nextValue = new Float64Array(rows);
  const nextAdvantage = new Float64Array(rows);
  const pendingReward = new Float64Array(rows); // rewards seen on masked-out tokens to the right
  const adv = Array.from({ length: rows }, () => new Float64Array(cols));
  const ret = Array.from({ length: rows }, () => new Float64Array(cols));
  for (let t = cols - 1; t >= 0; t--) {
    for (let b = 0; b < rows; b++) {
      const reward = input.rewards[b]![t]! + pendingReward[b]!;
      if (input.mask[b]![t]! > 0) {
        const value = input.values[b]![t]!;
        const delta = reward + gamma * nextValue[b]! - value;
        const a = delta + gamma * lambda * nextAdvantage[b]!;
        nextAdvantage[b] = a;
        nextValue[b] = value;
        pendingReward[b] = 0;
        adv[b]![t] = a;
        ret[b]![t] = a + value;
      } else {
        pendingReward[b] = reward;
      }
    }
  }
  return { advantages: adv.map((row) => Array.from(row)), returns: ret.map((row) => Array.from(row)) };
}

export interface TurnGaeInput {
  turnRewards: number[];       // reward of each turn
  tokenValues: number[][];     // [turn][token] critic values of the model tokens of each turn
  turnGamma: number;           // discount between turns (RAGEN: 0.95)
  turnLambda: number;          // lambda between turns
  tokenGamma: number;          // discount within a turn
  tokenLambda: number;         // lambda within a turn
}

/**
 * Two-level GAE for one episode. Turn value V_j = value at the last token of turn j.
 * Turn level: δ_j = r_j + γ_turn·V_{j+1} − V_j, A_j = δ_j + γ_turn·λ_turn·A_{j+1}, R_j = A_j + V_j.
 * Token level inside turn j: the last token has δ = R_j − V_last (so its advantage is A_j);
 * earlier tokens δ_t = γ_tok·V_{t+1} − V_t, A_t = δ_t + γ_tok·λ_tok·A_{t+1}.
 * Returns per-turn token advantages and returns (same shape as tokenValues).
 */
export function turnThenTokenGae(input: TurnGaeInput): { advantages: number[][]; returns: number[][]; turnAdvantages: number[]; turnReturns: number[] } {
  const turns = input.turnRewards.length;
  if (input.tokenValues.length !== turns) {
    throw new Error(`turnThenTokenGae: expected tokenValues for ${turns} turns, received ${input.tokenValues.length}`);
  }
  const turnValues = input.tokenValues.map((values, j) => {
    if (values.length === 0) throw new Error(`turnThenTokenGae: turn ${j} has no model tokens; drop empty turns first`);
    return values[values.length - 1]!;
  });
  const turnAdvantages = new Array<number>(turns).fill(0);
  const turnReturns = new Array<number>(turns).fill(0);
  let next = 0;
  for (let j = turns - 1; j >= 0; j--) {
    const nextValue = j + 1 < turns ? turnValues[j + 1]! : 0;
    const delta = input.turnRewards[j]! + input.turnGamma * nextValue - turnValues[j]!;
    next = delta + input.turnGamma * input.turnLambda * next;
    turnAdvantages[j] = next;
    turnReturns[j] = next + turnValues[j]!;
  }
  const advantages: number[][] = [];
  const returns: number[][] = [];
  for (let j = 0; j < turns; j++) {
    const values = input.tokenValues[j]!;
    const n = values.length;
    const adv = new Array<number>(n).fill(0);
    const ret = new Array<number>(n).fill(0);
    let carry = 0;
    for (let t = n - 1; t >= 0; t--) {
      const delta = t === n - 1 ? turnReturns[j]! - values[t]! : input.tokenGamma * values[t + 1]! - values[t]!;
      carry = delta + (t === n - 1 ? 0 : input.tokenGamma * input.tokenLambda * carry);
      adv[t] = carry;
      ret[t] = carry + values[t]!;
    }
    advantages.push(adv);
    returns.push(ret);
  }
  return { advantages, returns, turnAdvantages, turnReturns };
}

export interface TurnLevelGaeInput {
  turnRewards: number[];   // reward of each turn
  turnValues: number[];    // V(s_j): the critic's value of the state before turn j's reply (its first reply token's value)
  turnGamma: number;       // discount between turns
  turnLambda: number;      // lambda between turns
}

/**
 * Turn-level GAE (Turn-PPO's turn-level advantage): one MDP step per turn, the state s_j = the context before turn j's reply.
 * δ_j = r_j + γ·V(s_{j+1}) − V(s_j) (V after the last turn = 0), A_j = δ_j + γ·λ·A_{j+1}, R_j = A_j + V(s_j). The caller gives
 * every token of turn j the advantage A_j and the return R_j, so the token that picks the action carries A_j whatever its
 * place in the reply. Unlike turnThenTokenGae the baseline is V before the reply, not at its last token (which has read the
 * action and so is a Q(s, a) baseline: r − Q(s, a) averages 0 over actions and leaves the decision no signal).
 */
export function turnLevelGae(input: TurnLevelGaeInput): { advantages: number[]; returns: number[] } {
  const turns = input.turnRewards.length;
  if (input.turnValues.length !== turns) {
    throw new Error(`turnLevelGae: expected one value per turn (${turns}); received ${input.turnValues.length}`);
  }
  const advantages = new Array<number>(turns).fill(0);
  const returns = new Array<number>(turns).fill(0);
  let next = 0;
  for (let j = turns - 1; j >= 0; j--) {
    const nextValue = j + 1 < turns ? input.turnValues[j + 1]! : 0;
    const delta = input.turnRewards[j]! + input.turnGamma * nextValue - input.turnValues[j]!;
    next = delta + input.turnGamma * input.turnLambda * next;
    advantages[j] = next;
    returns[j] = next + input.turnValues[j]!;
  }
  return { advantages, returns };
}

/** Whiten advantages over masked positions (mean 0, std 1); returns a new array. */
export function whitenMasked(values: number[][], mask: number[][], eps = 1e-8): number[][] {
  let sum = 0, count = 0;
  for (let b = 0; b < values.length; b++) for (let t = 0; t < values[b]!.length; t++) if (mask[b]![t]! > 0) { sum += values[b]![t]!; count++; }
  if (count === 0) return values.map((row) => row.map(() => 0));
  const mean = sum / count;
  let sq = 0;
  for (let b = 0; b < values.length; b++) for (let t = 0; t < values[b]!.length; t++) if (mask[b]![t]! > 0) sq += (values[b]![t]! - mean) ** 2;
  const std = Math.sqrt(sq / count);
  return values.map((row, b) => row.map((v, t) => (mask[b]![t]! > 0 ? (v - mean) / (std + eps) : 0)));
}

/** Explained variance 1 − Var(returns − values)/Var(returns) over masked positions (CleanRL's charts/explainedVariance). */
export function explainedVariance(values: number[][], returns: number[][], mask: number[][]): number {
  const y: number[] = [], d: number[] = [];
  for (let b = 0; b < values.length; b++)
    for (let t = 0; t < values[b]!.length; t++)
      if (mask[b]![t]! > 0) {
        y.push(returns[b]![t]!);
        d.push(returns[b]![t]! - values[b]![t]!);
      }
  const variance = (xs: number[]): number => {
    if (xs.length === 0) return 0;
    const m = xs.reduce((a, c) => a + c, 0) / xs.length;
    return xs.reduce((a, c) => a + (c - m) ** 2, 0) / xs.length;
  };
  const vy = variance(y);
  return vy < 1e-12 ? Number.NaN : 1 - variance(d) / vy; // undefined when the returns do not vary
}
