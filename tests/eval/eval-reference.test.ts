// The eval stage's chance and oracle rows (core/eval/evaluate.ts evalReferenceRows): on the run's own eval puzzles
// (seeds evalStart…) and protocol (its rollout limits), for every registered env with a solver, so the final Pass@k of
// any run is read beside them.
import { describe, expect, it } from 'vitest';
import { evalReferenceRows } from '../../core/eval/evaluate.js';
import { referenceRows, protocolOf } from '../../core/eval/reference.js';
import { RunConfigSchema } from '../../core/api/run-config.js';
import { presetConfig } from '../../core/train/presets.js';

function config(env: string, size: 'smoke' | 'quick', evalStart?: number) {
  const input = presetConfig('spa', size, { env: { id: env, options: {} } });
  return RunConfigSchema.parse({ ...input, ...(evalStart !== undefined ? { seeds: { ...(input.seeds ?? {}), evalStart } } : {}) });
}

describe('eval stage reference rows', () => {
  it('FrozenLake quick: exactly the study rows on the eval seeds and the run protocol (one action a turn, 10 turns)', () => {
    const c = config('frozenlake', 'quick');
    const { rows, error } = evalReferenceRows(c, 8, [1, 4]);
    expect(error).toBeNull();
    const seeds = Array.from({ length: 8 }, (_, i) => c.seeds.evalStart + i);
    const expected = referenceRows({ envId: 'frozenlake', envOptions: c.env.options ?? {}, protocol: protocolOf('frozenlake', c.stages.rollout ?? {}), seeds, ks: [1, 4] });
    expect(rows.map((r) => [r.kind, r.passAt])).toEqual(expected.map((r) => [r.kind, r.passAt]));
    expect(protocolOf('frozenlake', c.stages.rollout ?? {})).toEqual({ maxTurns: 10, maxActionsPerTurn: 1, maxActionsPerGame: 10 });
    const [chance, oracle] = rows;
    expect(chance!.passAt['1']).toBeLessThan(oracle!.passAt['1']!);
    expect(chance!.puzzles).toBe(8);
  });

  it('moves with the eval seeds (other puzzles, other rows)', () => {
    const a = evalReferenceRows(config('frozenlake', 'quick', 1_000_000), 6, [1]).rows[0]!.perPuzzle;
    const b = evalReferenceRows(config('frozenlake', 'quick', 2_000_000), 6, [1]).rows[0]!.perPuzzle;
    expect(a).not.toEqual(b);
  });

  it('KeyDoor, the plug-in env: a chance row well under an oracle row on the same puzzles', () => {
    const { rows, error } = evalReferenceRows(config('keydoor', 'smoke'), 4, [1, 2]);
    expect(error).toBeNull();
    const [chance, oracle] = rows;
    expect(chance!.kind).toBe('chance');
    expect(oracle!.kind).toBe('oracle');
    expect(oracle!.passAt['1']).toBeGreaterThan(chance!.passAt['1']! + 0.2);
    expect(chance!.passAt['2']).toBeGreaterThanOrEqual(chance!.passAt['1']!);
  });
});
