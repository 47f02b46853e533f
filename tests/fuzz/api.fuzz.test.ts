// Fuzz: malformed input to every API method must end in a named error (or a result), never a
// crash, an unnamed TypeError/RangeError, a hang, or a write outside the project. Bounded: a few
// hundred requests, seconds of CPU. Larger runs and the figures: `node bin/run-ts.mjs bench/reliability.ts`.
import { describe, expect, it } from 'vitest';
import { runApiFuzz } from './api-fuzz.js';

describe('API fuzz', () => {
  it('every method answers malformed input with a named error, no hang, nothing written outside', async () => {
    const r = await runApiFuzz({ seed: 1, perMethod: 12, hangMs: 30_000 });
    expect(r.tally.unnamed).toEqual([]);
    expect(r.tally.hangs).toEqual([]);
    expect(r.outside).toEqual([]);
    expect(r.tally.sent).toBeGreaterThanOrEqual(r.methods * 12);
    expect(r.tally.namedErrors).toBeGreaterThan(r.tally.sent / 2);
  }, 240_000);
});
