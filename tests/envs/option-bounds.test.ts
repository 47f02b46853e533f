// D3: every numeric env option has an upper bound, and going past it (or sending megabytes of
// text) is a clear validation error before any generation work starts.
import { describe, expect, it } from 'vitest';
import { createEnv, describeEnv, listEnvs } from '../../core/envs/index.js';

describe('env option bounds (D3)', () => {
  for (const id of listEnvs()) {
    it(`${id}: every integer/number option has a finite max, and max + 1 is refused naming the option`, () => {
      const options = describeEnv(id).options;
      for (const o of options.filter((x) => x.type === 'integer' || x.type === 'number')) {
        expect(o.max, `${id}.${o.name}`).toBeTypeOf('number');
        expect(Number.isFinite(o.max), `${id}.${o.name}`).toBe(true);
        const over = o.type === 'integer' ? o.max! + 1 : o.max! * 2 + 1;
        expect(() => createEnv(id, { [o.name]: over }), `${id}.${o.name}`).toThrow(new RegExp(`option "${o.name}": invalid option value; expected an? (integer|number) in`));
      }
    });
  }

  it('the values measured to block the host for 38 s and 63 s are refused at once', () => {
    expect(() => createEnv('sokoban', { maxGenerationAttempts: 100_000 })).toThrow(/maxGenerationAttempts.*in 1\.\.1000/);
    expect(() => createEnv('sokoban', { maxExploredStates: 100_000_000 })).toThrow(/maxExploredStates.*in 100\.\.1000000/);
    expect(() => createEnv('sokoban', { numGenSteps: 1_000_000 })).toThrow(/numGenSteps.*in 1\.\.1000/);
  });

  it('text options are bounded too', () => {
    expect(() => createEnv('sokoban', { level: '#'.repeat(2_000_000) })).toThrow(/option "level": option value too long; expected at most 1000000 characters; received 2000000 characters/);
    expect(() => createEnv('frozen-lake', { map: Array.from({ length: 5000 }, () => 'SFFG') })).toThrow(/option "map": option value too long; expected at most 1000 rows/);
  });
});
