// Group statistics for episodes that share a puzzle seed: GRPO advantages and the reference
// pipeline's group filter (keep the groups whose rewards differ most).

/**
 * GRPO advantages: (r − mean of its group) / (std of its group + eps). With `normalizeStd` off,
 * only the mean is removed (Dr. GRPO). Groups of size 1 or with equal rewards give 0.
 */
export function grpoAdvantages(rewards: number[], groups: number[], opts: { normalizeStd?: boolean; eps?: number } = {}): number[] {
  if (rewards.length !== groups.length) {
    throw new Error(`grpoAdvantages: expected one group id per reward; received ${rewards.length} rewards and ${groups.length} group ids`);
  }
  const normalizeStd = opts.normalizeStd ?? true;
  const eps = opts.eps ?? 1e-6;
  const members = new Map<number, number[]>();
  groups.forEach((g, i) => { const list = members.get(g) ?? []; list.push(i); members.set(g, list); });
  const out = new Array<number>(rewards.length).fill(0);
  for (const idx of members.values()) {
    const values = idx.map((i) => rewards[i]!);
    const mean = values.reduce((a, c) => a + c, 0) / values.length;
    // unbiased std as in the GRPO reference (torch.std); 0 for one member
    const std = values.length > 1 ? Math.sqrt(values.reduce((a, c) => a + (c - mean) ** 2, 0) / (values.length - 1)) : 0;
    for (const i of idx) out[i] = normalizeStd ? (rewards[i]! - mean) / (std + eps) : rewards[i]! - mean;
  }
  return out;
}

export interface GroupFilterResult {
  keptGroups: number[];            // group ids kept, in descending order of spread
  droppedGroups: number[];
  spreads: Record<number, number>; // group id → reward std (population)
}

/**
 * Keep the `keepFraction` of groups with the largest reward spread (std of the group's total
 * rewards); at least one group is kept. keepFraction = 1 keeps everything.
 * Ties are broken by group id so that the result is deterministic.
 */
export function filterGroupsBySpread(rewards: number[], groups: number[], keepFraction: number): GroupFilterResult {
  if (!(keepFraction > 0 && keepFraction <= 1)) {
    throw new Error(`filterGroupsBySpread: expected keepFraction in (0, 1]; received ${keepFraction}`);
  }
  if (rewards.length !== groups.length) {
    throw new Error(`filterGroupsBySpread: expected one group id per reward; received ${rewards.length} and ${groups.length}`);
  }
  const members = new Map<number, number[]>();
  groups.forEach((g, i) => { const list = members.get(g) ?? []; list.push(rewards[i]!); members.set(g, list); });
  const spreads: Record<number, number> = {};
  for (const [g, values] of members) {
    const mean = values.reduce((a, c) => a + c, 0) / values.length;
    spreads[g] = Math.sqrt(values.reduce((a, c) => a + (c - mean) ** 2, 0) / values.length);
  }
  const order = [...members.keys()].sort((a, b) => (spreads[b]! - spreads[a]!) || a - b);
  const keep = Math.max(1, Math.ceil(order.length * keepFraction - 1e-9));
  return { keptGroups: order.slice(0, keep), droppedGroups: order.slice(keep), spreads };
}

/**
 * Within-group reward statistics of one RL step (issue 23 item 4, docs/results/rl-learns): the share of groups whose episodes all
 * got the same total reward (they carry no group-relative signal: GRPO gives them advantage 0), and the mean within-group
 * (population) std of the episode rewards. Over every group played, before the spread filter.
 */
export function groupRewardCharts(rewards: number[], groups: number[]): { 'charts/uniformRewardGroups': number; 'charts/groupRewardStd': number } {
  if (rewards.length !== groups.length) {
    throw new Error(`groupRewardCharts: expected one group id per reward; received ${rewards.length} rewards and ${groups.length} group ids`);
  }
  const spreads = Object.values(filterGroupsBySpread(rewards, groups, 1).spreads);
  if (spreads.length === 0) return { 'charts/uniformRewardGroups': 0, 'charts/groupRewardStd': 0 };
  return {
    'charts/uniformRewardGroups': spreads.filter((s) => s < 1e-12).length / spreads.length,
    'charts/groupRewardStd': spreads.reduce((a, c) => a + c, 0) / spreads.length,
  };
}
