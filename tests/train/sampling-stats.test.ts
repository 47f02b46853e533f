// samplingStats scores only the prefix carriers (an episode's last turn stands for the turns whose tokens start it) and
// gives every turn the numbers a pass over that turn alone would give (core/train/ppo.ts).
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import {
  decodeFloats, encodeFloats, journalledSamplingStats, prefixCarriers, samplingStats, type JournalledRowStats, type TurnSample,
} from '../../core/train/ppo.js';
import type { ModelRuntime } from '../../core/train/runtime.js';
import { openBatchJournal } from '../../core/train/episode-journal.js';
import { appendJsonl, readJsonl as readJsonlFile } from '../../core/storage/jsonl.js';
import { tempProject } from './helpers.js';

/** A causal stand-in: each position's numbers depend on the ids up to it only; it records the rows it was asked about. */
function causalModel(seen: number[][], scores: Array<number[] | undefined> = []) {
  const prefixStat = (ids: number[], t: number, salt: number): number => ids.slice(0, t + 1).reduce((a, x, j) => a + x * (j + salt), 0) / 100;
  return {
    async tokenStats(rows: Array<{ ids: number[]; score?: number[] }>, withValues: boolean) {
      seen.push(...rows.map((r) => r.ids));
      scores.push(...rows.map((r) => r.score));
      return rows.map((r) => ({
        logprobs: r.ids.map((_, t) => -prefixStat(r.ids, t, 1)),
        entropies: r.ids.map((_, t) => prefixStat(r.ids, t, 2)),
        ...(withValues ? { values: r.ids.map((_, t) => prefixStat(r.ids, t, 3)) } : {}),
      }));
    },
  } as unknown as ModelRuntime;
}

const sample = (episode: number, turn: number, ids: number[], responseStart: number): TurnSample => ({ episode, turn, ids, responseStart });

describe('samplingStats over prefix carriers', () => {
  // episode 0: each turn's row starts with the previous one (history kept whole); episode 1: the second turn's history was
  // cut (its row does not start with the first turn's), so both are scored; episode 2: one turn
  const samples = [
    sample(0, 0, [1, 2, 3, 4], 2), sample(0, 1, [1, 2, 3, 4, 5, 6, 7], 5), sample(0, 2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 8),
    sample(1, 0, [9, 8, 7], 1), sample(1, 1, [7, 6, 5, 4], 3), sample(2, 0, [5, 5, 5, 5, 5], 4),
  ];

  it('finds the carriers: a chain of prefixes goes to its last turn; a cut history is its own carrier', () => {
    expect(prefixCarriers(samples)).toEqual([2, 2, 2, 3, 4, 5]);
    // the order of the samples does not matter
    const shuffled = [samples[2]!, samples[0]!, samples[1]!];
    expect(prefixCarriers(shuffled)).toEqual([0, 0, 0]);
  });

  it('each carrier is scored on the replies of the turns it carries (a backend may skip the prompts)', async () => {
    const scores: Array<number[] | undefined> = [];
    await samplingStats(causalModel([], scores), samples, { batchSize: 8 });
    expect(scores).toEqual([
      [0, 0, 1, 1, 0, 1, 1, 0, 1, 1],   // episode 0's three replies at 2-3, 5-6 and 8-9
      [0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0, 1],
    ]);
  });

  it('every turn gets what scoring it alone gives; only 4 of 6 rows are scored, reference and values included', async () => {
    const seen: number[][] = [], alone: number[][] = [];
    const model = causalModel(seen);
    const got = await samplingStats(model, samples, { reference: causalModel([]), batchSize: 2 });
    const direct = await Promise.all(samples.map((s) => causalModel(alone).tokenStats([s], true)));
    expect(seen).toEqual([samples[2]!.ids, samples[3]!.ids, samples[4]!.ids, samples[5]!.ids]);
    samples.forEach((s, i) => {
      expect(got.logprobs[i]).toEqual(direct[i]![0]!.logprobs);
      expect(got.entropies[i]).toEqual(direct[i]![0]!.entropies);
      expect(got.values[i]).toEqual(direct[i]![0]!.values);
      expect(got.refLogprobs![i]).toEqual(direct[i]![0]!.logprobs);
      expect(got.logprobs[i]!.length).toBe(s.ids.length);
    });
  });
});

describe('the stats journal (an RL step\'s old log-probs kept across a stop)', () => {
  const samples = [sample(0, 0, [1, 2, 3], 1), sample(1, 0, [4, 5, 6, 7], 2), sample(2, 0, [8, 9], 1), sample(3, 0, [3, 3, 3], 2)];
  // numbers JSON cannot hold as they are: -0, NaN, +-Infinity, and a double that needs all 17 digits
  const odd = [-0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.1 + 0.2, -1.0000000000000002];
  function oddModel(calls: { n: number }) {
    return {
      async tokenStats(rows: Array<{ ids: number[] }>) {
        calls.n += rows.length;
        return rows.map((r) => ({ logprobs: r.ids.map((x, t) => odd[(x + t) % odd.length]!), entropies: r.ids.map((x) => x / 3), values: null }));
      },
    } as unknown as ModelRuntime;
  }
  const context = (runDir: string) => ({
    runDir, stage: 'rl', log: () => undefined,
    readJsonl: <T>(rel: string) => readJsonlFile<T>(join(runDir, rel)).rows,
    appendJsonl: (rel: string, rows: unknown[], opts?: { sync?: boolean }) => { appendJsonl(join(runDir, rel), rows, opts); },
  });

  it('encodeFloats / decodeFloats keep every double bit for bit through JSON', () => {
    const back = decodeFloats(JSON.parse(JSON.stringify(encodeFloats(odd))) as Array<number | string>);
    odd.forEach((x, i) => expect(Object.is(back[i], x), `${x}`).toBe(true));
    expect(() => decodeFloats(['1.5'])).toThrow(/not an encoded float/);
  });

  it('a pass stopped after its first batch keeps it; the resumed pass scores only the rest and gives the same numbers', async () => {
    const runDir = tempProject('spa-stats-journal-');
    const full = await samplingStats(oddModel({ n: 0 }), samples, { batchSize: 2 });
    let batches = 0;
    const first = await journalledSamplingStats(oddModel({ n: 0 }), samples, {
      batchSize: 2, journal: openBatchJournal<JournalledRowStats>(context(runDir), 'old-logprobs-000000', { k: 1 }), stopped: () => batches++ >= 1,
    });
    expect(first).toBeNull();
    const calls = { n: 0 };
    const journal = openBatchJournal<JournalledRowStats>(context(runDir), 'old-logprobs-000000', { k: 1 });
    expect(journal.restored).toBe(1);
    const resumed = (await journalledSamplingStats(oddModel(calls), samples, { batchSize: 2, journal }))!;
    expect(calls.n).toBe(2);   // the second batch only
    for (const key of ['logprobs', 'entropies', 'values'] as const) {
      resumed[key].forEach((row, i) => row.forEach((x, t) => expect(Object.is(x, full[key][i]![t]), `${key}[${i}][${t}]`).toBe(true)));
    }
    // another identity (other weights or rows): the journal is not used
    expect(openBatchJournal<JournalledRowStats>(context(runDir), 'old-logprobs-000000', { k: 2 }).restored).toBe(0);
  });
});

