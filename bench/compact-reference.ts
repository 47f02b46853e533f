// Chance and oracle rows (core/eval/reference.ts) for the compact protocol (one action per turn, 10 turns, 10 actions per
// game) on the eval puzzles of quick (8) and standard (128), FrozenLake success 0.8 and deterministic, random start/goal.
//   npx tsx bench/compact-reference.ts
import { referenceRows } from '../core/eval/reference.js';

const protocol = { maxTurns: 10, maxActionsPerTurn: 1, maxActionsPerGame: 10 };
const out: Record<string, unknown> = {};
for (const [name, options] of [['fl08', { randomStartGoal: true, successRate: 0.8 }], ['fldet', { randomStartGoal: true, isSlippery: false }]] as const) {
  for (const [size, n, ks] of [['quick', 8, [1, 4]], ['standard', 128, [1, 8]]] as const) {
    const seeds = Array.from({ length: n }, (_, i) => 3_000_000 + i);
    const rows = referenceRows({ envId: 'frozenlake', envOptions: { ...options }, seeds, protocol, ks: [...ks] });
    out[`${name}/${size}`] = Object.fromEntries(rows.map((r) => [r.kind, r.passAt]));
  }
}
process.stdout.write(`${JSON.stringify({ protocol, rows: out }, null, 1)}\n`);
