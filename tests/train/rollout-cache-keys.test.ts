// The rollout loop gives each generated row its episode's id as a cache key (the torch worker keeps that episode's keys and
// values for its next turn: tests/torch/prefix_cache_check.py): the same key at every turn of an episode, only the rows
// generated in the call (a finished episode or a scripted reply is not in it), different keys for different episodes.
import { describe, expect, it } from 'vitest';
import type { EpisodeRecord, TurnRecord } from '../../core/api/records.js';
import { groupSpecs, playEpisodes, type SessionLike } from '../../core/train/rollout.js';

class Session implements SessionLike {
  turns = 0;
  constructor(readonly length: number) {}
  messages() { return [{ role: 'user' as const, content: 'go' }]; }
  generationPrefix() { return ''; }
  applyResponse(): TurnRecord { this.turns++; return {} as TurnRecord; }
  get done() { return this.turns >= this.length; }
}

describe('rollout cache keys', () => {
  it('one key per generated row, the episode id, stable across its turns', async () => {
    const calls: Array<string[] | undefined> = [];
    const specs = groupSpecs('rl-000003', 2_000_000, 0, 2, 2);   // 4 episodes: 2 puzzles × 2 samples
    const lengths = new Map(specs.map((s, i) => [s.id, 2 + i]));   // episodes of 2, 3, 4 and 5 turns
    const deps = {
      createSession: (spec: { id: string }) => new Session(lengths.get(spec.id)!),
      finish: (s: Session) => ({ numTurns: s.turns } as unknown as EpisodeRecord),
      // the second episode's first turn is scripted (a forced reply), so it is not generated
      writeResponse: (_s: Session, spec: { id: string }, turn: number) => (spec.id === specs[1]!.id && turn === 0 ? 'scripted' : null),
      policy: {
        encodePrompt: () => [1, 2, 3],
        generate: async (prompts: number[][], opts: { cacheKeys?: string[] }) => {
          calls.push(opts.cacheKeys);
          return prompts.map(() => ({ ids: [4], text: 'x', logprobs: [0] }));
        },
      },
    };
    await playEpisodes(specs, { batchSize: 4 } as never, 0, deps);
    const ids = specs.map((s) => s.id);
    expect(new Set(ids).size).toBe(4);
    expect(calls).toEqual([
      [ids[0], ids[2], ids[3]],                 // turn 0: the scripted row is not generated
      [ids[0], ids[1], ids[2], ids[3]],
      [ids[1], ids[2], ids[3]],                 // the 2-turn episode has ended
      [ids[2], ids[3]],
      [ids[3]],
    ]);
  });
});
