import { describe, expect, it } from 'vitest';
import { FrozenLakeEnv, hasPath, solveFrozenLake } from '../../core/envs/frozen-lake.js';
import { Rng } from '../../core/util/rng.js';

const MAP = ['SFFF', 'FHFH', 'FFFH', 'HFFG']; // Gymnasium's 4x4 map

describe('FrozenLake transitions (Gymnasium semantics)', () => {
  it('non-slippery: moves, edges stay put, hole ends with 0, goal ends with 1', () => {
    const env = new FrozenLakeEnv({ map: MAP, isSlippery: false });
    env.reset({ seed: 0 });
    expect(env.gridText()).toBe('P___\n_O_O\n___O\nO__G');
    const up = env.step('Up');
    expect(up.info.actionIsEffective).toBe(false);          // off the top edge: stays
    expect(up.reward).toBe(0);
    expect(env.step('Left').info.actionIsEffective).toBe(false);
    expect(env.step('Right').observation).toBe('_P__\n_O_O\n___O\nO__G');
    const hole = env.step('Down');
    expect(hole).toMatchObject({ reward: 0, terminated: true, truncated: false });
    expect(hole.info.success).toBe(false);
    expect(env.gridText()).toBe('____\n_X_O\n___O\nO__G');
    expect(() => env.step('Up')).toThrow(/terminated.*reset/);

    env.reset();
    const plan = ['Down', 'Down', 'Right', 'Right', 'Down', 'Right'];
    const results = plan.map((a) => env.step(a));
    expect(results.slice(0, 5).every((r) => r.reward === 0 && !r.terminated)).toBe(true);
    expect(results[5]).toMatchObject({ reward: 1, terminated: true });
    expect(results[5].info.success).toBe(true);
    expect(env.gridText()).toBe('____\n_O_O\n___O\nO__√');
  });

  it('slippery outcomes follow the env RNG exactly: intended w.p. successRate, each side w.p. (1−successRate)/2', () => {
    const actions = ['Left', 'Down', 'Right', 'Up'];
    for (const successRate of [1 / 3, 0.8]) {
      const env = new FrozenLakeEnv({ map: ['FFF', 'FSF', 'FFG'].map((r) => r), successRate, maxSteps: null });
      for (let trial = 0; trial < 200; trial++) {
        env.reset({ seed: trial });
        const intended = trial % 4;
        // predict with an independent copy of the RNG state
        const rng = Rng.fromState(env.getState().rng);
        const u = rng.next();
        const expected = u < successRate ? intended : u < successRate + (1 - successRate) / 2 ? (intended + 3) % 4 : (intended + 1) % 4;
        const r = env.step(actions[intended]);
        expect(r.info.movedDirection).toBe(actions[expected]);
        expect(r.info.slipped).toBe(expected !== intended);
      }
    }
  });

  it('slip frequencies are about 1/3 each by default, and perpendicular only', () => {
    const env = new FrozenLakeEnv({ map: ['FFF', 'FSF', 'FFG'], maxSteps: null });
    env.reset({ seed: 11 });
    const counts: Record<string, number> = {};
    for (let i = 0; i < 3000; i++) {
      const r = env.step('Down');
      counts[r.info.movedDirection as string] = (counts[r.info.movedDirection as string] ?? 0) + 1;
      // put the player back in the centre, keeping the advanced RNG state
      env.setState({ ...env.getState(), player: 4, terminated: false, truncated: false });
    }
    expect(Object.keys(counts).sort()).toEqual(['Down', 'Left', 'Right']);
    for (const k of ['Down', 'Left', 'Right']) expect(Math.abs(counts[k] - 1000)).toBeLessThan(120);
  });

  it('successRate 1 never slips; successRate 0 always slips', () => {
    const sure = new FrozenLakeEnv({ map: MAP, successRate: 1 });
    sure.reset({ seed: 3 });
    expect(sure.step('Right').info.slipped).toBe(false);
    const never = new FrozenLakeEnv({ map: ['FFF', 'FSF', 'FFG'], successRate: 0, maxSteps: null });
    for (let s = 0; s < 20; s++) { never.reset({ seed: s }); expect(never.step('Up').info.slipped).toBe(true); }
  });

  it('truncates after maxSteps', () => {
    const env = new FrozenLakeEnv({ map: MAP, isSlippery: false, maxSteps: 2 });
    env.reset();
    env.step('Up');
    const r = env.step('Up');
    expect(r.truncated).toBe(true);
    expect(r.terminated).toBe(false);
  });
});

describe('FrozenLake generation', () => {
  for (const size of [4, 6, 8]) {
    it(`${size}x${size}: always a path, start (0,0), goal at the far corner, seed-reproducible`, () => {
      for (let seed = 0; seed < 30; seed++) {
        const env = new FrozenLakeEnv({ size });
        env.reset({ seed });
        const map = env.currentMap();
        expect(hasPath(map)).toBe(true);
        expect(map[0][0]).toBe('S');
        expect(map[size - 1][size - 1]).toBe('G');
        const again = new FrozenLakeEnv({ size });
        again.reset({ seed });
        expect(again.currentMap()).toEqual(map);
      }
    });
  }

  it('hole density follows p', () => {
    const env = new FrozenLakeEnv({ size: 8, p: 0.8 });
    let holes = 0;
    let cells = 0;
    for (let seed = 0; seed < 50; seed++) {
      env.reset({ seed });
      const map = env.currentMap().join('');
      holes += [...map].filter((c) => c === 'H').length;
      cells += map.length - 2;
    }
    // resampling until a path exists lowers the hole rate slightly below 0.2
    expect(holes / cells).toBeGreaterThan(0.1);
    expect(holes / cells).toBeLessThan(0.22);
  });

  it('RAGEN variant: random start and goal, still with a path', () => {
    const starts = new Set<string>();
    for (let seed = 0; seed < 30; seed++) {
      const env = new FrozenLakeEnv({ size: 5, randomStartGoal: true });
      env.reset({ seed });
      const map = env.currentMap();
      expect(hasPath(map)).toBe(true);
      expect(map.join('').split('S')).toHaveLength(2);
      expect(map.join('').split('G')).toHaveLength(2);
      starts.add(env.playerPosition().join(','));
    }
    expect(starts.size).toBeGreaterThan(5);
  });

  it('explicit maps are validated', () => {
    expect(() => new FrozenLakeEnv({ map: ['SFF', 'FG'] })).toThrow(/row 2: ragged map/);
    expect(() => new FrozenLakeEnv({ map: ['FFF', 'FFG'] })).toThrow(/exactly one S/);
    expect(() => new FrozenLakeEnv({ map: 'SF\nFG' }).reset()).not.toThrow();
  });
});

describe('FrozenLake progressReward (potential-based shaping on the shortest path to the goal)', () => {
  it('the path length it scores (solveFrozenLake): BFS over non-hole tiles to the goal, -1 on holes', () => {
    const lengths = Array.from({ length: 16 }, (_, i) => solveFrozenLake(MAP, [Math.floor(i / 4), i % 4])?.length ?? -1);
    expect(lengths).toEqual([6, 5, 4, 5, 5, -1, 3, -1, 4, 3, 2, -1, -1, 2, 1, 0]);
  });
  it('+c nearer, -c farther or into a hole, 0 against an edge; the goal still gives 1 (+c); success unchanged', () => {
    const env = new FrozenLakeEnv({ map: MAP, isSlippery: false, progressReward: 0.1 });
    env.reset({ seed: 0 });
    expect(env.step('Up').reward).toBe(0);                      // edge: nothing moved
    expect(env.step('Right').reward).toBeCloseTo(0.1);          // 6 -> 5
    expect(env.step('Left').reward).toBeCloseTo(-0.1);          // 5 -> 6
    const rewards = ['Down', 'Down', 'Right', 'Right', 'Down', 'Right'].map((a) => env.step(a));
    expect(rewards.map((r) => r.reward)).toEqual([0.1, 0.1, 0.1, 0.1, 0.1, 1.1].map((x) => expect.closeTo(x, 9)));
    expect(rewards[5].info.success).toBe(true);
    env.reset();
    expect(env.step('Right').reward).toBeCloseTo(0.1);
    const fall = env.step('Down');                              // into the hole at (1,1)
    expect(fall.reward).toBeCloseTo(-0.1);
    expect(fall.terminated).toBe(true);
    expect(fall.info.success).toBe(false);
    // the default is the sparse reward
    const sparse = new FrozenLakeEnv({ map: MAP, isSlippery: false });
    sparse.reset({ seed: 0 });
    expect(sparse.step('Right').reward).toBe(0);
    expect(() => new FrozenLakeEnv({ progressReward: -1 })).toThrow(/progressReward/);
  });
});
