import { describe, expect, it } from 'vitest';
import { SokobanEnv } from '../../core/envs/sokoban.js';
import { levelToXsb, parseSokobanGrid, parseXsb } from '../../core/envs/sokoban-level.js';
import { solveSokoban } from '../../core/envs/sokoban-solver.js';

function play(level: string, actions: string[]) {
  const env = new SokobanEnv({ level });
  env.reset({ seed: 0 });
  return { env, results: actions.map((a) => env.step(a)) };
}

describe('Sokoban transitions (hand-worked, gym-sokoban rewards)', () => {
  it('walking into a wall: −0.1, nothing moves', () => {
    const { env, results } = play('#####\n#@$.#\n#####', ['Up']);
    expect(results[0].reward).toBeCloseTo(-0.1);
    expect(results[0].info.actionIsEffective).toBe(false);
    expect(env.gridText()).toBe('#####\n#PXO#\n#####');
  });

  it('pushing a box into a wall does not move it or the player', () => {
    const { env, results } = play('#####\n# @$#\n#.  #\n#####', ['Right']);
    expect(results[0].reward).toBeCloseTo(-0.1);
    expect(results[0].info.actionIsEffective).toBe(false);
    expect(env.gridText()).toBe('#####\n#_PX#\n#O__#\n#####');
  });

  it('two boxes in a row cannot be pushed', () => {
    const { env, results } = play('######\n#@$$ #\n#..  #\n######', ['Right']);
    expect(results[0].info.actionIsEffective).toBe(false);
    expect(env.gridText()).toBe('######\n#PXX_#\n#OO__#\n######');
  });

  it('box onto a target (+1), off it (−1), and solving (+10)', () => {
    // two boxes so that one box on a target does not end the episode
    const level = '#######\n#@$. .#\n#   $ #\n#######';
    const { env, results } = play(level, ['Right', 'Right', 'Down', 'Right', 'Up']);
    // 1: push box onto target (0.9); 2: push it off again (−1.1)
    expect(results[0].reward).toBeCloseTo(0.9);
    expect(results[0].info.boxesOnTarget).toBe(1);
    expect(results[1].reward).toBeCloseTo(-1.1);
    expect(results[1].info.boxesOnTarget).toBe(0);
    expect((results[1].observation as string).split('\n')[1]).toBe('#__SXO#'); // player now stands on the target
    // Down (walk), Right (push the lower box along the floor: no target change), Up (box above, wall beyond: blocked)
    expect(results[2].reward).toBeCloseTo(-0.1);
    expect(results[3].reward).toBeCloseTo(-0.1);
    expect(results[3].info.actionIsEffective).toBe(true);
    expect(results[4].info.actionIsEffective).toBe(false);
    expect(env.gridText()).toBe('#######\n#__OXO#\n#___PX#\n#######');
    const solved = play('#####\n#@$.#\n#####', ['Right']);
    expect(solved.results[0].reward).toBeCloseTo(10.9);
    expect(solved.results[0].terminated).toBe(true);
    expect(solved.results[0].truncated).toBe(false);
    expect(solved.results[0].info.success).toBe(true);
    expect(solved.env.gridText()).toBe('#####\n#_P√#\n#####');
    expect(() => solved.env.step('Left')).toThrow(/terminated.*reset/);
  });

  it('player on a target renders S; boxes are never pulled', () => {
    const { env } = play('#####\n#.@$#\n#####', ['Left', 'Right']);
    expect(env.gridText()).toBe('#####\n#OPX#\n#####');
    env.step('Left');
    expect(env.gridText()).toBe('#####\n#S_X#\n#####');
  });

  it('unknown action: not valid, no reward, no change; case-insensitive names accepted', () => {
    const { env } = play('#####\n#@$.#\n#####', []);
    const r = env.step('jump');
    expect(r.info.actionIsValid).toBe(false);
    expect(r.reward).toBe(0);
    expect(env.step('rIGHT ').terminated).toBe(true);
  });

  it('truncates after maxSteps', () => {
    const env = new SokobanEnv({ level: '######\n#@ $.#\n######', maxSteps: 2 });
    env.reset();
    expect(env.step('Left').truncated).toBe(false);
    const r = env.step('Left');
    expect(r.truncated).toBe(true);
    expect(r.terminated).toBe(false);
    expect(() => env.step('Right')).toThrow(/truncated/);
  });
});

describe('Sokoban generation and solver', () => {
  const configs = [
    { width: 6, height: 6, numBoxes: 1 },
    { width: 6, height: 6, numBoxes: 2 },
    { width: 8, height: 8, numBoxes: 2 },
    { width: 10, height: 10, numBoxes: 2 },
    { width: 10, height: 10, numBoxes: 3 },
  ];
  for (const config of configs) {
    it(`${config.width}x${config.height} with ${config.numBoxes} box(es): solvable and seed-reproducible`, () => {
      for (let seed = 0; seed < 6; seed++) {
        const env = new SokobanEnv(config);
        env.reset({ seed });
        const again = new SokobanEnv(config);
        again.reset({ seed });
        expect(again.gridText()).toBe(env.gridText());
        const grid = env.gridText();
        expect(grid.split('\n')).toHaveLength(config.height);
        expect([...grid].filter((ch) => ch === 'X' || ch === '√')).toHaveLength(config.numBoxes);
        const solution = solveSokoban(env.currentLevel());
        expect(solution.solved).toBe(true);
        expect(solution.length).toBeGreaterThan(0); // reverse play never starts solved
        let last;
        for (const a of solution.actions) last = env.step(a);
        expect(last!.terminated).toBe(true);
        expect(last!.info.success).toBe(true);
      }
      const other = new SokobanEnv(config);
      const grids = new Set([0, 1, 2, 3].map((seed) => { other.reset({ seed }); return other.gridText(); }));
      expect(grids.size).toBeGreaterThan(1);
    });
  }

  it('BFS finds the optimal length on a hand-made level', () => {
    // player must walk around the box to push it left twice onto the target: 1 down, 3 right... hand count
    const level = parseXsb('#######\n#.$ @ #\n#     #\n#######');
    const s = solveSokoban(level);
    // Left (player to (1,3)), Left (push box (1,2) -> (1,1)) = 2 moves
    expect(s.solved).toBe(true);
    expect(s.actions).toEqual(['Left', 'Left']);
    const harder = parseXsb('######\n#.   #\n# $  #\n#  @ #\n######');
    // box (2,2) must go to (1,1): push up from (3,2) then left from (1,3): Left, Up [push to (1,2)], Right, Up, Left [push to (1,1)] = 5
    const h = solveSokoban(harder);
    expect(h.length).toBe(5);
    const stuck = parseXsb('#####\n#$ .#\n#@  #\n#####');
    expect(solveSokoban(stuck).solved).toBe(false);
  });

  it('difficulty buckets by optimal length', () => {
    const env = new SokobanEnv({ width: 6, height: 6, numBoxes: 2, minOptimalLength: 8, maxOptimalLength: 12 });
    for (let seed = 0; seed < 4; seed++) {
      env.reset({ seed });
      const length = solveSokoban(env.currentLevel()).length;
      expect(length).toBeGreaterThanOrEqual(8);
      expect(length).toBeLessThanOrEqual(12);
      expect(env.generatedOptimalLength()).toBe(length);
    }
    expect(() => new SokobanEnv({ minOptimalLength: 9, maxOptimalLength: 3 })).toThrow(/minOptimalLength <= maxOptimalLength/);
    expect(() => new SokobanEnv({ minOptimalLength: 400, maxGenerationAttempts: 3 }).reset({ seed: 1 })).toThrow(/difficulty bucket not reached/);
  });
});

describe('XSB import/export', () => {
  const classic = [
    '    #####',
    '    #   #',
    '    #$  #',
    '  ###  $##',
    '  #  $ $ #',
    '### # ## #   ######',
    '#   # ## #####  ..#',
    '# $  $          ..#',
    '##### ### #@##  ..#',
    '    #     #########',
    '    #######',
  ].join('\n');

  it('round trip: env → XSB → env gives the same state', () => {
    const env = new SokobanEnv({ width: 8, height: 8, numBoxes: 2 });
    env.reset({ seed: 3 });
    const copy = new SokobanEnv({ level: env.toXsb() });
    copy.reset();
    expect(copy.gridText()).toBe(env.gridText());
    expect(parseXsb(levelToXsb(env.currentLevel()))).toEqual(env.currentLevel());
  });

  it('a classic level parses; outside cells become walls; export → parse is stable', () => {
    const level = parseXsb(`; Level 1\n\n${classic}\n`);
    expect(level.width).toBe(19);
    expect(level.height).toBe(11);
    expect(level.boxes).toHaveLength(6);
    expect(level.targets.filter(Boolean)).toHaveLength(6);
    expect(level.walls[0]).toBe(true); // the space at (0,0) lies outside the walls
    const exported = levelToXsb(level);
    expect(parseXsb(exported)).toEqual(level);
    // interior lines keep their layout
    expect(exported.split('\n')[7]).toBe('# $  $          ..#');
  });

  it('collections: pick a level by index; symbols +, * and _ grids', () => {
    const text = '; one\n#####\n#@$.#\n#####\n\n; two\n######\n#+*$ #\n######\n';
    expect(parseXsb(text, 1).player).toBe(7);
    expect(parseXsb(text, 0).player).toBe(6);
    expect(() => parseXsb(text, 2)).toThrow(/level index out of range.*0\.\.1/);
    const grid = parseSokobanGrid('#####\n#S√X#\n#___#\n#####');
    expect(levelToXsb(grid)).toBe('#####\n#+*$#\n#   #\n#####');
  });

  it('bad XSB fails with line and column', () => {
    expect(() => parseXsb('#####\n#@$.#\n#####\n#@  #\n#####')).toThrow(/exactly one @/);
    expect(() => parseXsb('#####\n#@$.x\n#####')).toThrow(/wrong number of players|unexpected character/);
    expect(() => parseXsb('#####\n#@$$.#\n######')).toThrow(/as many targets as boxes/);
  });

  it('an open level (the player can reach the edge) is refused; line numbers count from the top of the text', () => {
    expect(() => parseXsb('; Level 1\n\n#####\n#@$.\n#####')).toThrow(/line 4 column 5: level is not closed/);
    expect(() => parseXsb('#####\n#@$. \n#####')).toThrow(/line 2 column 5: level is not closed/);
    expect(() => parseXsb('#####\n#@$.#\n# X #\n#####')).toThrow(/line 3 column 3: unexpected character/);
    // ragged rows that stay enclosed are fine (the classic level above has them too)
    expect(parseXsb('####\n#@$.##\n#    #\n######').width).toBe(6);
  });
});
