// The end-of-turn token of a folder's chat template is an SFT training target and the separator the template writes before
// it is not (issue 35 item 2), on the templates of Qwen2.5, Qwen3, Llama 3.x, SmolLM2, Llama-2-chat (reply, space, </s>)
// and DeepSeek-Coder (reply, newline, <|EOT|>). The rows' ids equal transformers' apply_chat_template on the same folders
// (Qwen3's in the layout the product renders it: verl's multi-turn template, tests/model/chat-qwen3.test.ts); and Llama 3.x
// prints transformers 4.40's date, never the clock's, unless the run sets one.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatChat, roleMask, setChatSettings, strftimeDay, ChatFormatError, type ChatMessage } from '../../core/model/chat.js';
import { loadTokenizer } from '../../core/model/tokenizer.js';
import { sftLossMask } from '../../core/train/sft-mask.js';
import { QWEN25_TEMPLATE } from '../fixtures/chat-templates.js';
import {
  DEEPSEEK_CODER_TEMPLATE, LLAMA2_CHAT_TEMPLATE, LLAMA32_TEMPLATE, QWEN3_ACC_THINKING_TEMPLATE, QWEN3_TEMPLATE, SMOLLM2_TEMPLATE,
} from './chat-family-templates.js';
import { skipWarning, transformersReference, writeChatFolder, type FolderSpec, type ReferenceCase } from './chat-folders.js';

const CHATML = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
interface Family extends FolderSpec { end: string; separator: string | null; trims: boolean; reference?: string }
const FAMILIES: Record<string, Family> = {
  qwen25: { template: QWEN25_TEMPLATE, specials: CHATML, config: { eos_token: '<|im_end|>', pad_token: '<|endoftext|>' }, end: '<|im_end|>', separator: null, trims: false },
  qwen3: {
    template: QWEN3_TEMPLATE, specials: [...CHATML, '<think>', '</think>'], config: { eos_token: '<|im_end|>', pad_token: '<|endoftext|>' },
    end: '<|im_end|>', separator: null, trims: false, reference: 'qwen3-verl',
  },
  llama3: {
    template: LLAMA32_TEMPLATE, specials: ['<|begin_of_text|>', '<|end_of_text|>', '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>'],
    config: { bos_token: '<|begin_of_text|>', eos_token: '<|eot_id|>' }, end: '<|eot_id|>', separator: null, trims: true,
  },
  smollm2: {
    template: SMOLLM2_TEMPLATE, specials: CHATML, config: { bos_token: '<|im_start|>', eos_token: '<|im_end|>', pad_token: '<|im_end|>' },
    end: '<|im_end|>', separator: null, trims: false,
  },
  llama2: { template: LLAMA2_CHAT_TEMPLATE, specials: ['<unk>', '<s>', '</s>'], config: { bos_token: '<s>', eos_token: '</s>', unk_token: '<unk>' },
    end: '</s>', separator: ' ', trims: true },
  deepseek: {
    template: DEEPSEEK_CODER_TEMPLATE, specials: ['<｜begin▁of▁sentence｜>', '<｜end▁of▁sentence｜>', '<|EOT|>'],
    config: { bos_token: '<｜begin▁of▁sentence｜>', eos_token: '<|EOT|>' }, end: '<|EOT|>', separator: '\n', trims: false,
  },
};

const REPLY = '<think><observation>_P_\n#G#</observation>I go down.<prediction>___\n#P#</prediction></think><answer>Down</answer>';
const ROW: ChatMessage[] = [
  { role: 'system', content: 'You solve grid puzzles.' }, { role: 'user', content: 'State:\n_P_\n#G#' },
  { role: 'assistant', content: '<think>first</think><answer>Left</answer>' }, { role: 'user', content: 'State:\nP__\n#G#' },
  { role: 'assistant', content: REPLY },
];

let root = '';
let reference: { text: string; ids: number[] }[] | null = null;
let skip = '';
const names = Object.keys(FAMILIES);
const refCases: ReferenceCase[] = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'chat-eot-'));
  for (const [name, f] of Object.entries(FAMILIES)) writeChatFolder(root, name, f);
  writeChatFolder(root, 'qwen3-verl', { ...FAMILIES.qwen3!, template: QWEN3_ACC_THINKING_TEMPLATE });
  for (const name of names) {
    const folder = join(root, FAMILIES[name]!.reference ?? name);
    refCases.push({ folder, messages: ROW, gen: false }, { folder, messages: ROW.slice(0, 4), gen: true });
  }
  const llama = join(root, 'llama3');
  refCases.push({ folder: llama, messages: ROW.slice(0, 2), gen: true }, { folder: llama, messages: ROW.slice(0, 2), gen: true, kwargs: { date_string: '03 Jan 2025' } });
  const r = transformersReference(root, refCases);
  if ('skip' in r) skip = r.skip;
  else reference = r.results;
}, 150_000);

afterAll(() => { if (root) rmSync(root, { recursive: true, force: true }); });
afterEach(() => { vi.useRealTimers(); setChatSettings(undefined); });

describe('SFT targets at the end of a turn', () => {
  it.each(names)('%s: the reply and its end-of-turn token are targets, the separator before it is not', async (name) => {
    const f = FAMILIES[name]!;
    const tokenizer = await loadTokenizer(join(root, name));
    const chat = formatChat(ROW, tokenizer, { generationPrefix: '<think>' });
    const span = chat.spans[4]!;
    expect(span.endOfTurn, 'an end-of-turn token after the reply').toBeGreaterThanOrEqual(span.end);
    expect(tokenizer.idToToken(chat.ids[span.endOfTurn]!)).toBe(f.end);
    const mask = sftLossMask(chat, ROW, tokenizer, { maskStateSpans: false });
    const targets = chat.ids.filter((_, i) => mask[i] === 1);
    expect(tokenizer.decode(targets), 'targets = the reply + its end-of-turn token').toBe((f.trims ? REPLY.trim() : REPLY) + f.end);
    expect(mask[span.endOfTurn]).toBe(1);
    for (let i = span.end; i < span.endOfTurn; i++) expect(mask[i], `separator token ${i}`).toBe(0);
    if (f.separator !== null) expect(tokenizer.decode(chat.ids.slice(span.end, span.endOfTurn))).toBe(f.separator);
    else expect(span.endOfTurn).toBe(span.end);
    // bootstrap's all-assistant mask ends each turn the same way
    const all = roleMask(chat, 'assistant');
    expect(all[span.endOfTurn]).toBe(1);
    expect(all[chat.spans[2]!.endOfTurn]).toBe(1);
    for (let i = chat.spans[2]!.end; i < chat.spans[2]!.endOfTurn; i++) expect(all[i]).toBe(0);
  });

  it.each(names)('%s: the row and the prompt render the ids transformers renders', async (name) => {
    if (skip) { skipWarning('chat rows vs transformers', skip); return; }
    const tokenizer = await loadTokenizer(join(root, name));
    const k = names.indexOf(name) * 2;
    const row = formatChat(ROW, tokenizer);
    expect(row.text).toBe(reference![k]!.text);
    expect(row.ids).toEqual(reference![k]!.ids);
    const prompt = formatChat(ROW.slice(0, 4), tokenizer, { addGenerationPrompt: true });
    expect(prompt.text).toBe(reference![k + 1]!.text);
    expect(prompt.ids).toEqual(reference![k + 1]!.ids);
  });
});

describe('Llama 3.x dates', () => {
  it("print transformers 4.40's 26 Jul 2024 whatever the clock says, or the run's model.chat.date", async () => {
    const tokenizer = await loadTokenizer(join(root, 'llama3'));
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2030-03-15T12:00:00Z'));
    const today = formatChat(ROW.slice(0, 2), tokenizer, { addGenerationPrompt: true });
    expect(today.text).toContain('Today Date: 26 Jul 2024\n');
    vi.setSystemTime(new Date('2030-03-16T12:00:00Z'));
    expect(formatChat(ROW.slice(0, 2), tokenizer, { addGenerationPrompt: true }).ids).toEqual(today.ids);
    setChatSettings({ date: '2025-01-03' });
    const dated = formatChat(ROW.slice(0, 2), tokenizer, { addGenerationPrompt: true });
    expect(dated.text).toContain('Today Date: 03 Jan 2025\n');
    if (skip) { skipWarning('Llama 3.x dates vs transformers', skip); return; }
    const n = names.length * 2;
    expect(today.text).toBe(reference![n]!.text);
    expect(today.ids).toEqual(reference![n]!.ids);
    expect(dated.text).toBe(reference![n + 1]!.text);
    expect(dated.ids).toEqual(reference![n + 1]!.ids);
  });

  it('refuses a date that is not a day, and formats days as Python does', () => {
    expect(() => setChatSettings({ date: '2025-02-30' })).toThrow(ChatFormatError);
    expect(() => setChatSettings({ date: '3 Jan 2025' })).toThrow(/model\.chat\.date: expected a day as 'YYYY-MM-DD'/);
    expect(() => setChatSettings({ layout: 'jinja' as never })).toThrow(/expected auto, template or chatml/);
    const d = new Date(Date.UTC(2024, 6, 26));
    expect(strftimeDay(d, '%d %b %Y')).toBe('26 Jul 2024');
    expect(strftimeDay(d, '%A %B %-d, %y (%j) %%')).toBe('Friday July 26, 24 (208) %');
  });
});
