import { describe, expect, it } from 'vitest';
import { checkEnv, createEnv, describeEnv, listEnvs } from '../../core/envs/index.js';
import type { Env } from '../../core/envs/types.js';

const VARIANTS: Record<string, Record<string, unknown>[]> = {
  sokoban: [{}, { width: 8, height: 8, numBoxes: 2 }],
  frozenlake: [{}, { size: 8, randomStartGoal: true }, { isSlippery: false }],
  sudoku: [{}, { size: 9, difficulty: 'easy' }],
};

describe('env checker over every registered env', () => {
  it('registers sokoban, frozenlake, sudoku and keydoor, then the Python envs (textworld built in)', () => {
    expect(listEnvs().slice(0, 4)).toEqual(['sokoban', 'frozenlake', 'sudoku', 'keydoor']);
    expect(listEnvs()).toContain('textworld');
  });

  for (const id of listEnvs()) {
    for (const options of VARIANTS[id] ?? [{}]) {
      it(`${id} ${JSON.stringify(options)} passes the checker`, () => {
        const seeds = id === 'sudoku' && options.size === 9 ? [0, 1, 2] : [0, 1, 2, 3, 4, 5];
        const report = checkEnv(() => createEnv(id, options), { seeds, maxSteps: 30 });
        expect(report.problems).toEqual([]);
        expect(report.stepsRun).toBeGreaterThan(0);
      });
    }
    it(`${id} is described in the same doc sections`, () => {
      const d = describeEnv(id);
      for (const section of ['summary', 'actions', 'observation', 'rewards', 'episodeEnd', 'arguments'] as const) {
        expect(d.docs[section].length).toBeGreaterThan(10);
      }
      expect(d.options.length).toBeGreaterThan(0);
      for (const o of d.options) expect(o.doc.length).toBeGreaterThan(5);
    });
  }

  it('the checker finds a broken env', () => {
    // An env whose reset ignores the seed (uses a counter) must be reported.
    let counter = 0;
    const make = (): Env => {
      const inner = createEnv('frozenlake');
      return new Proxy(inner, {
        get(target, prop, receiver) {
          if (prop === 'reset') return () => target.reset({ seed: counter++ });
          const value = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    };
    const report = checkEnv(make, { seeds: [0, 1, 2] });
    expect(report.ok).toBe(false);
    expect(report.problems.join('\n')).toMatch(/different/);
  });

  it('unknown env ids and options fail with a clear message', () => {
    expect(() => createEnv('chess')).toThrow(/unknown env.*expected one of sokoban, frozenlake, sudoku.*received "chess"/);
    expect(() => createEnv('sokoban', { widht: 8 })).toThrow(/unknown option "widht".*width/);
    expect(() => createEnv('sokoban', { width: 'big' })).toThrow(/option "width".*expected an integer in 5\.\.16.*received "big"/);
    expect(() => createEnv('frozenlake', { p: 2 })).toThrow(/option "p"/);
    expect(() => createEnv('sudoku', { size: 5 })).toThrow(/expected one of 4, 9/);
    expect(() => createEnv('frozenlake', { map: ['SFX', 'FFG'] })).toThrow(/row 1 column 3.*expected one of S F H G/);
  });
});
