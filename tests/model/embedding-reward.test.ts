// RWML's embedding reward (core/train/rwml.ts embeddingRewards) on the real all-MiniLM-L6-v2 (core/model/embedding.ts) and
// TextWorld's own state texts: the true next state scores 1 (cosine 1), the state of a different room scores lower than a
// near copy, an empty prediction is 0 without being embedded, and the threshold binarises. Skipped, with the reason printed,
// without the model in the cache (.ci/install-envs.sh); TextWorld states are used when TextWorld runs here, written-out
// TextWorld replies otherwise.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { defaultEmbeddingModelDir, loadSentenceEmbedder, type SentenceEmbedder } from '../../core/model/embedding.js';
import { embeddingRewards } from '../../core/train/rwml.js';
import { createEnv, describeEnv } from '../../core/envs/index.js';

const MODEL = defaultEmbeddingModelDir();
const haveModel = existsSync(join(MODEL, 'model.safetensors'));
if (!haveModel) console.warn(`*** embedding reward tests skipped: no model at ${MODEL}; run .ci/install-envs.sh ***`);

/** Three consecutive TextWorld states (coin-medium, seed 1: start, after go south, after go east), or written-out ones. */
function states(): [string, string, string] {
  if (!describeEnv('textworld').docs.summary.startsWith('Unavailable')) {
    const env = createEnv('textworld', { level: 'coin-medium' });
    const s0 = env.reset({ seed: 1 }).observation as string;
    const s1 = env.step('go south').observation as string;
    const s2 = env.step('go east').observation as string;
    return [s0, s1, s2];
  }
  return [
    '-= Cookhouse =-\nYou\'ve just sauntered into a cookhouse.\n\nAdmissible commands: go south, inventory, look',
    '-= Spare Room =-\nYou arrive in a spare room. An ordinary one.\n\nThere is an unblocked exit to the east.\n\nAdmissible commands: go east, go north, inventory, look',
    '-= Studio =-\nI am required to announce that you are now in the studio.\n\nAdmissible commands: go north, go west, inventory, look',
  ];
}

describe.skipIf(!haveModel)('RWML embedding reward on all-MiniLM-L6-v2', () => {
  let embedder: SentenceEmbedder;
  let calls: string[][];
  const embed = async (texts: string[]) => { calls.push(texts); return embedder.embed(texts); };
  beforeAll(async () => { embedder = await loadSentenceEmbedder(MODEL); }, 300_000);
  afterAll(() => embedder?.dispose());

  it('scores the true next state 1, a near copy above a different room, an empty prediction 0', async () => {
    calls = [];
    const [, truth, other] = states();
    const nearCopy = truth.replace(/Admissible commands: .*$/, 'Admissible commands: go east, look');
    const { rewards, similarities } = await embeddingRewards(embed, [truth, nearCopy, other, '  '], [truth, truth, truth, truth], 0.9);
    expect(similarities[0]).toBeCloseTo(1, 5);
    expect(similarities[1]!).toBeGreaterThan(similarities[2]!);
    expect(similarities[2]!).toBeLessThan(0.9);
    expect(similarities[3]).toBe(0);
    expect(rewards[0]).toBe(1);
    expect(rewards[2]).toBe(0);
    expect(rewards[3]).toBe(0);
    expect(calls).toHaveLength(1);
    expect([...calls[0]!].sort()).toEqual([truth, nearCopy, other].sort());   // each distinct text once; the empty one not at all
  }, 300_000);

  it('binarises at the threshold', async () => {
    calls = [];
    const [start, truth] = states();
    const { similarities } = await embeddingRewards(embed, [start], [truth], 0);
    const s = similarities[0]!;
    expect((await embeddingRewards(embed, [start], [truth], s - 1e-6)).rewards).toEqual([1]);
    expect((await embeddingRewards(embed, [start], [truth], s + 1e-3)).rewards).toEqual([0]);
    await expect(embeddingRewards(embed, ['a'], [], 0.5)).rejects.toThrow(/1 predictions but 0 true states/);
  }, 300_000);
});
