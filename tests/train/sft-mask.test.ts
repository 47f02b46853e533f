import { describe, expect, it } from 'vitest';
import { buildCharTokenizer } from '../../core/model/tokenizer.js';
import { formatChat } from '../../core/model/chat.js';
import { sftLossMask } from '../../core/train/sft-mask.js';

const tokenizer = buildCharTokenizer();
const reply = '<think><observation>P_O</observation> go right <prediction>_PO</prediction></think><answer>Right</answer>';
const messages = [
  { role: 'system', content: 'sys' },
  { role: 'user', content: 'Turn 1: P_O' },
  { role: 'assistant', content: '<think><observation>X</observation> a <prediction>Y</prediction></think><answer>Up</answer>' },
  { role: 'user', content: 'Reward: 0' },
  { role: 'assistant', content: reply },
];

function maskedText(mask: number[], ids: number[]): string {
  return tokenizer.decode(ids.filter((_, i) => mask[i] === 1));
}

describe('SFT loss mask', () => {
  const chat = formatChat(messages, tokenizer);
  it('paper mode covers exactly the last assistant turn and its end token', () => {
    const mask = sftLossMask(chat, messages, tokenizer, { maskStateSpans: false });
    expect(maskedText(mask, chat.ids)).toBe(reply + '<|im_end|>');
    // nothing from the prompt, the earlier assistant turn or the role markers
    expect(mask.slice(0, chat.spans[4]!.start).every((m) => m === 0)).toBe(true);
  });
  it('mask-state-spans removes exactly the observation and prediction contents', () => {
    const mask = sftLossMask(chat, messages, tokenizer, { maskStateSpans: true });
    expect(maskedText(mask, chat.ids)).toBe('<think><observation></observation> go right <prediction></prediction></think><answer>Right</answer><|im_end|>');
    const paper = sftLossMask(chat, messages, tokenizer, { maskStateSpans: false });
    const removed = paper.reduce((a, m, i) => a + (m === 1 && mask[i] === 0 ? 1 : 0), 0);
    expect(removed).toBe('P_O'.length + '_PO'.length);
  });
  it('a drill row (statesOnly) trains exactly the state contents that mask-state-spans removes', () => {
    const mask = sftLossMask(chat, messages, tokenizer, { maskStateSpans: false, statesOnly: true });
    expect(maskedText(mask, chat.ids)).toBe('P_O_PO');
    const masked = sftLossMask(chat, messages, tokenizer, { maskStateSpans: true });
    const paper = sftLossMask(chat, messages, tokenizer, { maskStateSpans: false });
    expect(paper.map((m, i) => m - masked[i]!)).toEqual(mask);
    expect(() => sftLossMask(chat, messages, tokenizer, { maskStateSpans: true, statesOnly: true })).toThrow(/nothing to train/);
  });
  it('refuses a row without an assistant turn', () => {
    const only = messages.slice(0, 2);
    expect(() => sftLossMask(formatChat(only, tokenizer), only, tokenizer, { maskStateSpans: false })).toThrow(/assistant/);
  });
});
