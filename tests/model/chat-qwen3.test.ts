// Qwen3 folders in SPA (issue 35 item 2): Qwen3's chat template rewrites assistant turns around `</think>` (earlier turns lose
// their reasoning, the last is rebuilt as <think>\n…\n</think>\n\n…), so the product lays Qwen3 chats out as verl does for
// multi-turn training (its qwen3_acc_thinking template: every turn '<|im_start|>assistant\n' + content, verbatim). A 3-turn
// episode's rows and prompts equal transformers' apply_chat_template with that template; against Qwen3's own template the
// prompts differ exactly where Qwen3 drops earlier reasoning and nowhere else; `model.chat.layout: template` keeps the refusal.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatChat, setChatSettings, templateLayout, type ChatMessage } from '../../core/model/chat.js';
import { loadTokenizer } from '../../core/model/tokenizer.js';
import { sftLossMask } from '../../core/train/sft-mask.js';
import { QWEN3_ACC_THINKING_TEMPLATE, QWEN3_TEMPLATE } from './chat-family-templates.js';
import { skipWarning, transformersReference, writeChatFolder, type ReferenceCase } from './chat-folders.js';

const SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<think>', '</think>'];
const CONFIG = { eos_token: '<|im_end|>', pad_token: '<|endoftext|>' };
const reply = (obs: string, action: string, next: string) =>
  `<think><observation>${obs}</observation>I move ${action}.<prediction>${next}</prediction></think><answer>${action}</answer>`;
const EPISODE: ChatMessage[] = [
  { role: 'system', content: 'You are solving FrozenLake. Reply <think>…</think><answer>action</answer>.' },
  { role: 'user', content: 'Turn 1. State:\nP_O\n__G' },
  { role: 'assistant', content: reply('P_O\n__G', 'Down', '__O\nP_G') },
  { role: 'user', content: 'Turn 2. State:\n__O\nP_G' },
  { role: 'assistant', content: reply('__O\nP_G', 'Right', '__O\n_PG') },
  { role: 'user', content: 'Turn 3. State:\n__O\n_PG' },
  { role: 'assistant', content: reply('__O\n_PG', 'Right', '__O\n__P') },
];
const USER_TURNS = [1, 3, 5];
/** What Qwen3's own template keeps of an assistant turn before the last query: the text after </think>, newlines stripped on the left. */
const withoutReasoning = (messages: ChatMessage[]) => messages.map((m) => (m.role === 'assistant' ? { ...m, content: m.content.split('</think>').at(-1)!.replace(/^\n+/, '') } : m));

let root = '';
let official = '';
let verl = '';
let reference: { text: string; ids: number[] }[] | null = null;
let skip = '';

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'chat-qwen3-'));
  official = writeChatFolder(root, 'qwen3', { template: QWEN3_TEMPLATE, specials: SPECIALS, config: CONFIG });
  verl = writeChatFolder(root, 'qwen3-verl', { template: QWEN3_ACC_THINKING_TEMPLATE, specials: SPECIALS, config: CONFIG });
  const cases: ReferenceCase[] = [{ folder: verl, messages: EPISODE, gen: false }];
  for (const u of USER_TURNS) cases.push({ folder: verl, messages: EPISODE.slice(0, u + 1), gen: true });
  for (const u of USER_TURNS) cases.push({ folder: official, messages: EPISODE.slice(0, u + 1), gen: true });
  const r = transformersReference(root, cases);
  if ('skip' in r) skip = r.skip;
  else reference = r.results;
}, 150_000);
afterAll(() => { if (root) rmSync(root, { recursive: true, force: true }); });
afterEach(() => setChatSettings(undefined));

describe('a Qwen3 folder', () => {
  it("renders a 3-turn episode as verl's multi-turn Qwen3 template does (every token), and trains the last reply and its <|im_end|>", async () => {
    const tokenizer = await loadTokenizer(official);
    expect(tokenizer.chatTemplate).toBe(QWEN3_TEMPLATE);
    expect(templateLayout(tokenizer)).toBe('chatml');
    const row = formatChat(EPISODE, tokenizer, { generationPrefix: '<think>' });
    expect(row.template).toBe(false);
    expect(row.text).toContain(EPISODE[2]!.content);   // earlier reasoning stays in the history
    const mask = sftLossMask(row, EPISODE, tokenizer, { maskStateSpans: false });
    expect(tokenizer.decode(row.ids.filter((_, i) => mask[i] === 1))).toBe(`${EPISODE[6]!.content}<|im_end|>`);
    if (skip) { skipWarning('Qwen3 layout vs transformers', skip); return; }
    expect(row.text).toBe(reference![0]!.text);
    expect(formatChat(EPISODE, tokenizer).ids).toEqual(reference![0]!.ids);
    USER_TURNS.forEach((u, k) => {
      const prompt = formatChat(EPISODE.slice(0, u + 1), tokenizer, { addGenerationPrompt: true });
      expect(prompt.text, `turn ${k + 1} prompt`).toBe(reference![1 + k]!.text);
      expect(prompt.ids, `turn ${k + 1} prompt`).toEqual(reference![1 + k]!.ids);
    });
  });

  it("differs from Qwen3's own template only where it drops earlier turns' reasoning", async () => {
    if (skip) { skipWarning('Qwen3 official template vs transformers', skip); return; }
    const tokenizer = await loadTokenizer(official);
    USER_TURNS.forEach((u, k) => {
      const messages = EPISODE.slice(0, u + 1);
      const ours = formatChat(messages, tokenizer, { addGenerationPrompt: true });
      const theirs = reference![1 + USER_TURNS.length + k]!;
      if (k === 0) expect(ours.ids, 'the first prompt: no history, the same tokens').toEqual(theirs.ids);
      else expect(ours.ids, `turn ${k + 1}`).not.toEqual(theirs.ids);
      // the same renderer with the history stripped as Qwen3 strips it gives Qwen3's tokens exactly
      expect(formatChat(withoutReasoning(messages), tokenizer, { addGenerationPrompt: true }).ids, `turn ${k + 1}`).toEqual(theirs.ids);
    });
  });

  it("renders through its own template on request (model.chat.layout: template), which cannot map a reply with </think>", async () => {
    const tokenizer = await loadTokenizer(official);
    setChatSettings({ layout: 'template' });
    expect(templateLayout(tokenizer)).toBe('template');
    expect(() => formatChat(EPISODE, tokenizer)).toThrow(/changes message contents/);
    // a prompt without a reply renders through it (no assistant turn to rewrite)
    expect(formatChat(EPISODE.slice(0, 2), tokenizer, { addGenerationPrompt: true }).template).toBe(true);
    setChatSettings({ layout: 'chatml' });
    const verlTokenizer = await loadTokenizer(verl);
    expect(formatChat(EPISODE, verlTokenizer).template).toBe(false);
    setChatSettings({ layout: 'auto' });
    expect(formatChat(EPISODE, verlTokenizer).template).toBe(true);   // a template that keeps turns verbatim is rendered as it is
  });
});
