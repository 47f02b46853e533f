import { describe, expect, it } from 'vitest';
import { grpoAdvantages, filterGroupsBySpread } from '../../core/train/groups.js';
import { splitByGame } from '../../core/train/split.js';

describe('group advantages and filtering', () => {
  it('GRPO advantages are group-normalised (hand-computed)', () => {
    const adv = grpoAdvantages([1, 0, 0, 0, 5, 5], [0, 0, 0, 0, 1, 1], { eps: 0 });
    // group 0: mean 0.25, unbiased std = sqrt((0.5625 + 3·0.0625)/3) = 0.5
    expect(adv[0]).toBeCloseTo(1.5, 12);
    expect(adv[1]).toBeCloseTo(-0.5, 12);
    expect(Number.isNaN(adv[4]!) || adv[4] === 0).toBe(true);
    const adv2 = grpoAdvantages([1, 0, 5, 5], [0, 0, 1, 1]);
    expect(adv2[2]).toBe(0);
    expect(grpoAdvantages([1, 0], [0, 0], { normalizeStd: false })).toEqual([0.5, -0.5]);
  });

  it('keeps the top fraction of groups by reward spread', () => {
    const rewards = [1, 1, 0, 1, 0, 0, 0.5, 0.6];
    const groups = [0, 0, 1, 1, 2, 2, 3, 3];
    const r = filterGroupsBySpread(rewards, groups, 0.5);
    expect(r.keptGroups).toEqual([1, 3]);
    expect(r.droppedGroups.sort()).toEqual([0, 2]);
    expect(filterGroupsBySpread(rewards, groups, 0.01).keptGroups).toEqual([1]);
    expect(() => filterGroupsBySpread(rewards, groups, 0)).toThrow(/keepFraction/);
  });
});

describe('split by game', () => {
  it('never puts one game on both sides', () => {
    const rows = Array.from({ length: 200 }, (_, i) => ({ game: `g${i % 23}`, turn: Math.floor(i / 23) }));
    const { train, val, valGames } = splitByGame(rows, (r) => r.game, 0.2, 3);
    const trainGames = new Set(train.map((r) => r.game));
    for (const r of val) expect(trainGames.has(r.game)).toBe(false);
    expect(train.length + val.length).toBe(200);
    expect(valGames.length).toBe(Math.round(23 * 0.2));
    expect(splitByGame(rows, (r) => r.game, 0.2, 3).valGames).toEqual(valGames);
  });
});
