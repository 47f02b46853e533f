// Chat formatting: exact token spans per message, role masks, and sub-span token ranges for
// the "mask state spans" ablation (exact with the char tokenizer, conservative with BPE).
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { buildCharTokenizer, loadTokenizer } from '../../core/model/tokenizer.js';
import { clearRanges, findTagContents, formatChat, messageTokenRanges, roleMask, type ChatMessage } from '../../core/model/chat.js';

const REPLY = '<think><observation>#_P√#\n#_XO#</observation> I push the box. <prediction>#__S#\n#_√O#</prediction></think><answer>Down || Left</answer>';
const MESSAGES: ChatMessage[] = [
  { role: 'system', content: 'You are a Sokoban solver.' },
  { role: 'user', content: 'Turn 1:\nState:\n#_P√#\n#_XO#\nYou have 10 actions left.' },
  { role: 'assistant', content: REPLY },
  { role: 'user', content: 'Reward: -0.1' },
  { role: 'assistant', content: '<think>x</think><answer>Up</answer>' },
];

describe('formatChat', () => {
  for (const style of ['compact', 'qwen'] as const) {
    it(`${style}: every span decodes to exactly its message, and the ids equal encoding the whole text`, () => {
      const tok = buildCharTokenizer({ chatStyle: style });
      const chat = formatChat(MESSAGES, tok);
      expect(chat.style).toBe(style);
      expect(chat.spans).toHaveLength(MESSAGES.length);
      chat.spans.forEach((span, i) => {
        expect(span.role).toBe(MESSAGES[i].role);
        expect(tok.decode(chat.ids.slice(span.start, span.end))).toBe(MESSAGES[i].content);
        expect(chat.ids[span.closeStart]).toBe(tok.eosTokenId);
      });
      expect(tok.encode(chat.text)).toEqual(chat.ids);
      expect(tok.decode(chat.ids)).toBe(chat.text);
      if (style === 'qwen') expect(chat.text.startsWith('<|im_start|>system\nYou are')).toBe(true);
      else expect(chat.text.startsWith('<|system|>You are')).toBe(true);
    });
  }

  it('adds the generation prompt and a forced prefix', () => {
    const tok = buildCharTokenizer();
    const chat = formatChat(MESSAGES.slice(0, 2), tok, { addGenerationPrompt: true, generationPrefix: '<think>' });
    expect(chat.text.endsWith('<|im_end|><|assistant|><think>')).toBe(true);
    expect(chat.generationStart).toBe(chat.ids.length);
    expect(chat.prefixSpan).toEqual({ start: chat.ids.length - 1, end: chat.ids.length });
    expect(() => formatChat([{ role: 'tool', content: 'x' }], tok)).toThrow(/compact chat style: unknown role "tool"/);
    expect(() => formatChat([{ role: 'user' } as ChatMessage], tok)).toThrow(/message 0 must be \{ role: string, content: string \}/);
  });

  it('roleMask marks exactly the assistant content plus its <|im_end|>', () => {
    const tok = buildCharTokenizer({ chatStyle: 'qwen' });
    const chat = formatChat(MESSAGES, tok);
    const mask = roleMask(chat, 'assistant');
    const marked = chat.ids.filter((_, i) => mask[i] === 1);
    expect(tok.decode(marked)).toBe(`${MESSAGES[2].content}<|im_end|>${MESSAGES[4].content}<|im_end|>`);
    const noEnd = roleMask(chat, ['assistant'], { includeEnd: false });
    expect(tok.decode(chat.ids.filter((_, i) => noEnd[i] === 1))).toBe(MESSAGES[2].content + MESSAGES[4].content);
    expect(roleMask(chat, 'user').reduce((a, b) => a + b, 0)).toBe(tok.encode(MESSAGES[1].content + MESSAGES[3].content).length + 2);
  });

  it('sub-span token ranges are exact with the char tokenizer (mask state spans)', () => {
    const tok = buildCharTokenizer();
    const chat = formatChat(MESSAGES, tok);
    const ranges = [...findTagContents(REPLY, 'observation'), ...findTagContents(REPLY, 'prediction')];
    expect(ranges.map(([a, b]) => REPLY.slice(a, b))).toEqual(['#_P√#\n#_XO#', '#__S#\n#_√O#']);
    const tokenRanges = messageTokenRanges(chat, tok, 2, MESSAGES, ranges);
    expect(tokenRanges.every((r) => r.exact)).toBe(true);
    expect(tokenRanges.map((r) => tok.decode(chat.ids.slice(r.start, r.end)))).toEqual(['#_P√#\n#_XO#', '#__S#\n#_√O#']);
    const mask = clearRanges(roleMask(chat, 'assistant'), tokenRanges);
    const kept = tok.decode(chat.ids.filter((_, i) => mask[i] === 1));
    expect(kept.startsWith('<think><observation></observation> I push the box. <prediction></prediction></think>')).toBe(true);
    expect(() => messageTokenRanges(chat, tok, 2, MESSAGES, [[5, 1000]])).toThrow(/character range \[5, 1000\) is not inside message 2/);
    expect(() => messageTokenRanges(chat, tok, 1, MESSAGES.slice(1), [[0, 1]])).toThrow(/does not match the formatted chat/);
  });

  it('with BPE, a generation prefix is tokenized apart in replies, matching what generation saw', async () => {
    const tok = await loadTokenizer(join(import.meta.dirname, '../fixtures/model/parity/qwen2-f32'));
    const reply = '<think><observation>#_P</observation></think><answer>Up</answer>';
    const messages: ChatMessage[] = [{ role: 'user', content: 'go' }, { role: 'assistant', content: reply }];
    const prompt = formatChat(messages.slice(0, 1), tok, { addGenerationPrompt: true, generationPrefix: '<think>' });
    const plain = formatChat(messages, tok);
    const split = formatChat(messages, tok, { generationPrefix: '<think>' });
    expect(split.text).toBe(plain.text);
    // Whole, "><" is one token; split, the training row starts with exactly the prompt's ids.
    expect(plain.ids.slice(0, prompt.ids.length)).not.toEqual(prompt.ids);
    expect(split.ids.slice(0, prompt.ids.length)).toEqual(prompt.ids);
    expect(split.spans[1].prefixLength).toBe('<think>'.length);
    expect(tok.decode(split.ids.slice(split.spans[1].start, split.spans[1].end))).toBe(reply);
    const [obs] = messageTokenRanges(split, tok, 1, messages, findTagContents(reply, 'observation'));
    expect(tok.decode(split.ids.slice(obs.start, obs.end))).toBe('#_P');
  });

  it('with byte-level BPE, outer ranges cover the text and inner ranges stay inside it', async () => {
    const tok = await loadTokenizer(join(import.meta.dirname, '../fixtures/model/parity/qwen2-f32'));
    const messages: ChatMessage[] = [{ role: 'user', content: 'go' }, { role: 'assistant', content: 'the box √ <answer>Up</answer>' }];
    const chat = formatChat(messages, tok);
    expect(tok.decode(chat.ids.slice(chat.spans[1].start, chat.spans[1].end))).toBe(messages[1].content);
    expect(chat.text).toBe('<|im_start|>user\ngo<|im_end|>\n<|im_start|>assistant\nthe box √ <answer>Up</answer><|im_end|>\n');
    // "box √" starts inside the token "Ġbox" ("the| box") and "√" is split across [Ġâ, Īļ].
    const content = messages[1].content;
    const from = content.indexOf('box');
    const to = content.indexOf('√') + 1;
    const [outer] = messageTokenRanges(chat, tok, 1, messages, [[from, to]], { mode: 'outer' });
    const [inner] = messageTokenRanges(chat, tok, 1, messages, [[from, to]], { mode: 'inner' });
    expect(outer.exact).toBe(false);
    expect(tok.decode(chat.ids.slice(outer.start, outer.end))).toContain('box √');
    expect(inner.end - inner.start).toBeLessThan(outer.end - outer.start);
    expect('box √').toContain(tok.decode(chat.ids.slice(inner.start, inner.end)).trim());
  });
});
