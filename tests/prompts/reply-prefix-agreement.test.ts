// Issue 36 / review 4a: the reply's generation prefix is defined once (core/prompts/reply-format.ts), and an SFT row agrees
// with generation: tokenised by SFT (formatTrainingChat), a reply the session produced starts with exactly the ids the model
// was conditioned on when it generated that reply (the prompt plus the forced prefix). With a BPE tokenizer (Qwen2's), a prefix
// that drifted between SFT and the session (e.g. "<think>" + newline on one side) changes the segmentation and fails here.
import { describe, expect, it } from 'vitest';
import { formatChat } from '../../core/model/chat.js';
import { loadTokenizer } from '../../core/model/tokenizer.js';
import { createEnv } from '../../core/envs/index.js';
import { EpisodeSession, randomWellFormedResponse } from '../../core/prompts/session.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import { GENERATION_PREFIX } from '../../core/prompts/reply-format.js';
import { formatTrainingChat, GENERATION_PREFIX as SFT_PREFIX } from '../../core/train/sft.js';
import { Rng } from '../../core/util/rng.js';

const QWEN2_TOKENIZER = 'tests/fixtures/model/parity/qwen2-f32';

describe('the reply prefix: one definition, SFT rows agree with generation', () => {
  it('SFT and the session use the reply format\'s prefix', () => {
    const session = new EpisodeSession(createEnv('frozenlake', {}), builtinTemplate('spa', 'world-model'), { seed: 1 });
    expect(session.generationPrefix()).toBe(GENERATION_PREFIX);
    expect(SFT_PREFIX).toBe(GENERATION_PREFIX);
  });

  for (const [env, format, template] of [['frozenlake', 'world-model', 'spa'], ['sokoban', 'world-model', 'tiny-compact'], ['sokoban', 'plain', 'vanilla']] as const) {
    it(`${env} ${template} (${format}): the SFT row's ids start with the ids generation saw`, async () => {
      const tokenizer = await loadTokenizer(QWEN2_TOKENIZER);
      const session = new EpisodeSession(createEnv(env, {}), builtinTemplate(template, format), { seed: 3 });
      const messages = session.messages();
      const reply = randomWellFormedResponse(session, new Rng(7));   // a whole reply, the forced prefix included
      expect(reply.startsWith(session.generationPrefix())).toBe(true);
      const generation = formatChat(messages, tokenizer, { addGenerationPrompt: true, generationPrefix: session.generationPrefix() });
      const sft = formatTrainingChat({ tokenizer }, [...messages, { role: 'assistant', content: reply }]);
      expect(sft.ids.length).toBeGreaterThan(generation.ids.length);
      expect(sft.ids.slice(0, generation.ids.length)).toEqual(generation.ids);
      // and the row's text continues with the reply after the prefix, as the model would have written it
      expect(sft.text.startsWith(generation.text)).toBe(true);
      expect(sft.text.slice(generation.text.length).startsWith(reply.slice(session.generationPrefix().length))).toBe(true);
    });
  }
});
