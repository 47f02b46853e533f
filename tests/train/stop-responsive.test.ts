// A stop must take effect at the next turn/step boundary even though generation and training
// are synchronous work between microtask-only awaits: the rollout loop gives the event loop one
// macrotask turn per generated turn (core/train/breathe.ts), so a timer or an IPC "stop" that
// aborts the signal is seen mid-stage, and the unfinished batch is dropped, not half-recorded.
import { describe, expect, it } from 'vitest';
import type { EpisodeRecord, TurnRecord } from '../../core/api/records.js';
import { groupSpecs, playEpisodes, type SessionLike } from '../../core/train/rollout.js';

function busy(ms: number): void { const end = Date.now() + ms; while (Date.now() < end) { /* model work */ } }

class CountingSession implements SessionLike {
  turns = 0;
  messages() { return [{ role: 'user' as const, content: 'go' }]; }
  generationPrefix() { return ''; }
  applyResponse(): TurnRecord { this.turns++; return {} as TurnRecord; }
  get done() { return this.turns >= 5; }
}

describe('stop responsiveness of rollouts', () => {
  it('an abort raised by a timer during synchronous generation stops the rollout within one turn', async () => {
    const controller = new AbortController();
    let generateCalls = 0;
    const deps = {
      createSession: () => new CountingSession(),
      finish: (s: CountingSession) => ({ numTurns: s.turns } as unknown as EpisodeRecord),
      signal: controller.signal,
      policy: {
        encodePrompt: () => [1, 2, 3],
        // resolves as a microtask after 15 ms of blocking work, like TF.js wasm generation
        generate: async (prompts: number[][]) => { generateCalls++; busy(15); return prompts.map(() => ({ ids: [4], text: 'x', logprobs: [0] })); },
      },
    };
    setTimeout(() => controller.abort(), 40);
    // 4 batches × 5 turns = 20 generate calls if the abort were never seen
    const results = await playEpisodes(groupSpecs('t', 0, 0, 4, 2), { batchSize: 2 } as never, 0, deps);
    expect(generateCalls).toBeLessThan(10);
    expect(generateCalls).toBeGreaterThan(0);
    // the batch the stop interrupted is dropped: every returned episode was played to the end
    for (const r of results) expect(r.record.numTurns).toBe(5);
    expect(results.length).toBeLessThan(8);
  });
});
