// KeyDoor (core/envs/key-door.ts): hand-worked transitions (the key is picked up, the locked door blocks without it and
// opens with it), generated levels are solvable, seed-reproducible and need the key, the solver is optimal on a hand level,
// bad levels fail naming row and column, and its state text round-trips through the prompts code like every env.
import { describe, expect, it } from 'vitest';
import { createEnv, solveEnv, KeyDoorEnv } from '../../core/envs/index.js';
import { generateKeyDoorLevel, solveKeyDoor } from '../../core/envs/key-door.js';
import { getTemplatePreset, parseStateText, renderState, scoreWorldModel } from '../../core/prompts/index.js';
import { Rng } from '../../core/util/rng.js';

const LEVEL = [
  '######',
  '#PK#G#',
  '#__D_#',
  '######',
];

describe('KeyDoor dynamics', () => {
  it('blocks at the locked door without the key, picks the key up, opens the door with it, and pays 1 at the goal', () => {
    const env = new KeyDoorEnv({ map: LEVEL });
    env.reset({ seed: 0 });
    expect(env.gridText()).toBe(LEVEL.join('\n'));
    // Down, Right: next to the door; Right into the locked door: stays put.
    env.step('Down'); env.step('Right');
    const blocked = env.step('Right');
    expect(blocked.info.actionIsEffective).toBe(false);
    expect(env.gridText().split('\n')[2]).toBe('#_PD_#');
    // Fetch the key: Up onto K picks it up (it leaves the board).
    const pick = env.step('Up');
    expect(pick.info.event).toBe('picked up the key');
    expect(env.gridText().split('\n')[1]).toBe('#_P#G#');
    env.step('Down');
    const open = env.step('Right');
    expect(open.info.event).toBe('opened the door');
    expect(env.gridText().split('\n')[2]).toBe('#__P_#');
    env.step('Right');
    const last = env.step('Up');
    expect(last.reward).toBe(1);
    expect(last.terminated).toBe(true);
    expect(env.gridText().split('\n')[1]).toBe('#__#√#');
    expect(() => env.step('Up')).toThrow(/terminated/);
  });

  it('the same move into the same cell does different things depending on history (why a world model pays here)', () => {
    const a = new KeyDoorEnv({ map: ['######', '#_PDG#', '#K####', '######'] });
    a.reset({ seed: 0 });
    const before = a.gridText();
    a.step('Right');                 // locked: nothing happens
    expect(a.gridText()).toBe(before);
    a.step('Left'); a.step('Down');  // fetch the key
    a.step('Up'); a.step('Right');
    a.step('Right');                 // the same move now opens the door
    expect(a.gridText()).not.toContain('D');
    expect(a.gridText().split('\n')[1]).toBe('#__PG#');
  });

  it('solves a hand level optimally, including the detour for the key', () => {
    expect(solveKeyDoor(['######', '#__#G#', '#____#', '######'].map((r) => r), [1, 1], [2, 1], [2, 3], false))
      .toEqual(['Down', 'Right', 'Right', 'Right', 'Up']);
    const env = createEnv('keydoor', { map: LEVEL });
    env.reset({ seed: 0 });
    const plan = solveEnv(env)!;
    expect(plan.actions).toEqual(['Right', 'Down', 'Right', 'Right', 'Up']); // key, down, open the door, step, goal
    let reward = 0;
    for (const a of plan.actions) reward += env.step(a).reward;
    expect(reward).toBe(1);
  });

  it('generates solvable, seed-reproducible levels where the key matters', () => {
    for (let seed = 0; seed < 40; seed++) {
      for (const size of [5, 6, 8]) {
        const level = generateKeyDoorLevel(new Rng(seed), size, 0.2);
        expect(generateKeyDoorLevel(new Rng(seed), size, 0.2)).toEqual(level);
        const plan = solveKeyDoor(level.map, level.player, level.key, level.door, false);
        expect(plan, `seed ${seed} size ${size}:\n${level.map.join('\n')}`).not.toBeNull();
        // Without the key (none on the board) the goal is out of reach: the door is the only way through.
        expect(solveKeyDoor(level.map, level.player, null, level.door, false), `seed ${seed} size ${size}`).toBeNull();
      }
    }
  });

  it('fails on a bad level naming row and column', () => {
    expect(() => createEnv('keydoor', { map: ['#####', '#PKx#', '#D_G#', '#####'] })).toThrow(/row 2 column 4/);
    expect(() => createEnv('keydoor', { map: ['#####', '#P_G#', '#___#', '#####'] })).toThrow(/one player, one key, one door/);
    expect(() => createEnv('keydoor', { size: 3 })).toThrow(/size/);
  });

  it('round-trips its state text through every truthful preset after a key pick-up and a door opening', () => {
    const env = createEnv('keydoor', { map: LEVEL });
    env.reset({ seed: 0 });
    for (const a of ['Right', 'Down', 'Right']) env.step(a); // key picked up, door opened: player on the old door cell
    for (const name of ['raw-grid', 'spa', 'coordinates', 'grid-coordinates', 'relations', 'json']) {
      const template = getTemplatePreset(name);
      const text = renderState(template, env);
      expect(scoreWorldModel(parseStateText('keydoor', text, template, env.board()), env.board()).exact, `${name}:\n${text}`).toBe(true);
    }
    expect(renderState(getTemplatePreset('spa'), env)).toContain('Player (P) is at (2,3); goal (G) is at (1,4).');
  });
});
