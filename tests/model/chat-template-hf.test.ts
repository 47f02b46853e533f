// The folder's own chat template (issue 20 item 1): formatChat renders it with @huggingface/jinja and
// the text and ids equal Hugging Face transformers' apply_chat_template on the same folder, for a
// Qwen2.5-style template (default system prompt), SmolLM2's ChatML (from its GGUF) and Llama 3's
// (bos_token, `| trim`, <|eot_id|>). The reference is transformers in SPA_TEST_HF_PYTHON, else
// /usr/bin/python3 (.ci/run installs it there); skipped loudly only when it cannot import transformers.
// The folders share a byte-level BPE tokenizer with no merges, so whole-text and piecewise tokenisation agree.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatChat, roleMask, ChatFormatError, type ChatMessage } from '../../core/model/chat.js';
import { loadTokenizer } from '../../core/model/tokenizer.js';
import { QWEN25_TEMPLATE } from '../fixtures/chat-templates.js';
import { byteLevelTokenizerJson } from './chat-folders.js';

const python = process.env.SPA_TEST_HF_PYTHON ?? '/usr/bin/python3';

export const SMOLLM2_TEMPLATE =
  "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant " +
  "named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + " +
  "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
export const LLAMA3_TEMPLATE =
  "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + " +
  "'<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}" +
  "{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";

const SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|begin_of_text|>', '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>'];

const FOLDERS: Record<string, { template: string; config: Record<string, unknown>; generation?: Record<string, unknown> }> = {
  qwen25: { template: QWEN25_TEMPLATE, config: { eos_token: '<|im_end|>', pad_token: '<|endoftext|>', bos_token: null } },
  smollm2: { template: SMOLLM2_TEMPLATE, config: { bos_token: '<|im_start|>', eos_token: '<|im_end|>', pad_token: '<|im_end|>', unk_token: '<|endoftext|>' } },
  llama3: {
    template: LLAMA3_TEMPLATE, config: { bos_token: '<|begin_of_text|>', eos_token: '<|eot_id|>' },
    generation: { bos_token_id: 259, eos_token_id: [256, 262] },                        // <|endoftext|> and <|eot_id|>
  },
};

const CASES: { messages: ChatMessage[]; gen: boolean }[] = [
  { messages: [{ role: 'user', content: 'What is the capital of France?' }], gen: true },
  { messages: [{ role: 'system', content: 'You solve grid puzzles.' }, { role: 'user', content: 'State:\n_P_\n#X#' }], gen: true },
  {
    messages: [
      { role: 'system', content: 'sys' }, { role: 'user', content: 'turn 1' },
      { role: 'assistant', content: '<think><observation>_P_</observation></think><answer>Up</answer>' }, { role: 'user', content: ' padded \n' },
    ],
    gen: true,
  },
  { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'héllo √ 2' }], gen: false },
];

let root = '';
let reference: Record<string, { text: string; ids: number[] }[]> | null = null;
let skip = '';

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'chat-template-'));
  const json = JSON.stringify(byteLevelTokenizerJson(SPECIALS));
  for (const [name, f] of Object.entries(FOLDERS)) {
    const dir = join(root, name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'tokenizer.json'), json);
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ ...f.config, chat_template: f.template, tokenizer_class: 'PreTrainedTokenizerFast' }));
    if (f.generation) writeFileSync(join(dir, 'generation_config.json'), JSON.stringify(f.generation));
  }
  writeFileSync(join(root, 'cases.json'), JSON.stringify({ folders: Object.keys(FOLDERS), cases: CASES }));
  const script = `
import json, sys
try:
    import jinja2
    from transformers import AutoTokenizer
except Exception as e:
    print(json.dumps({"skip": "transformers cannot be imported (%s)" % e})); sys.exit(0)
root = sys.argv[1]
spec = json.load(open(root + "/cases.json"))
out = {}
for name in spec["folders"]:
    tok = AutoTokenizer.from_pretrained(root + "/" + name)
    out[name] = [{"text": tok.apply_chat_template(c["messages"], tokenize=False, add_generation_prompt=c["gen"]),
                  "ids": tok.apply_chat_template(c["messages"], tokenize=True, add_generation_prompt=c["gen"])} for c in spec["cases"]]
print(json.dumps({"results": out}))
`;
  if (!existsSync(python) && python.startsWith('/')) { skip = `${python} not found`; return; }
  const run = spawnSync(python, ['-c', script, root], { encoding: 'utf8', timeout: 120_000 });
  if (run.status !== 0) throw new Error(`transformers reference failed: ${run.stderr}`);
  const out = JSON.parse(run.stdout.trim().split('\n').pop()!) as { skip?: string; results?: typeof reference };
  if (out.skip) skip = out.skip;
  else reference = out.results!;
}, 150_000);

afterAll(() => { if (root) rmSync(root, { recursive: true, force: true }); });

describe('folder chat templates', () => {
  it('render the same text and ids as transformers apply_chat_template (Qwen2.5-style, SmolLM2, Llama 3)', async () => {
    if (skip) {
      console.warn(`\n*** SKIPPED chat template vs transformers: ${skip}. Install them: ${python} -m pip install --break-system-packages 'transformers==4.40.2' 'jinja2>=3.1' ***\n`);
      return;
    }
    for (const name of Object.keys(FOLDERS)) {
      const tokenizer = await loadTokenizer(join(root, name));
      expect(tokenizer.chatTemplate, name).toBe(FOLDERS[name]!.template);
      CASES.forEach((c, k) => {
        const chat = formatChat(c.messages, tokenizer, { addGenerationPrompt: c.gen });
        expect(chat.template).toBe(true);
        expect(chat.text, `${name} case ${k}`).toBe(reference![name]![k]!.text);
        expect(chat.ids, `${name} case ${k}`).toEqual(reference![name]![k]!.ids);
        if (c.gen) expect(chat.generationStart).toBe(chat.ids.length);
      });
    }
    // the default system prompts of the Qwen2.5 and SmolLM2 templates are there; Llama 3 starts with its BOS and trims contents
    expect(reference!.qwen25![0]!.text).toContain('You are Qwen, created by Alibaba Cloud.');
    expect(reference!.smollm2![0]!.text).toContain('You are a helpful AI assistant named SmolLM');
    expect(reference!.llama3![2]!.text).toContain('<|end_header_id|>\n\npadded<|eot_id|>');
  });
});

describe('token spans through a folder template', () => {
  it('each content and its end-of-turn token are where roleMask expects them', async () => {
    for (const [name, endToken] of [['smollm2', '<|im_end|>'], ['llama3', '<|eot_id|>'], ['qwen25', '<|im_end|>']] as const) {
      const tokenizer = await loadTokenizer(join(root, name));
      const messages = CASES[2]!.messages;
      const chat = formatChat(messages, tokenizer, { generationPrefix: '<think>' });
      chat.spans.forEach((span, i) => {
        const want = name === 'llama3' ? messages[i]!.content.trim() : messages[i]!.content;
        expect(tokenizer.decode(chat.ids.slice(span.start, span.end)), `${name} message ${i}`).toBe(want);
        expect(tokenizer.idToToken(chat.ids[span.closeStart]!), `${name} message ${i} end`).toBe(endToken);
      });
      expect(chat.spans[2]!.prefixLength).toBe('<think>'.length);
      const mask = roleMask(chat, 'assistant');
      expect(tokenizer.decode(chat.ids.filter((_, i) => mask[i] === 1))).toBe(messages[2]!.content + endToken);
      // the built-in ChatML layout is still there on request
      expect(formatChat(messages, tokenizer, { style: 'qwen' }).template).toBe(false);
    }
  });

  it('generation_config.json eos ids end generation; a template that rewrites contents is refused by name', async () => {
    const llama = await loadTokenizer(join(root, 'llama3'));
    expect(llama.eosTokenId).toBe(262);
    expect(llama.stopTokenIds).toEqual(expect.arrayContaining([256, 262]));
    const dir = join(root, 'rewrite');
    mkdirSync(dir);
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(byteLevelTokenizerJson(SPECIALS)));
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({
      eos_token: '<|im_end|>', chat_template: "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content | upper }}<|im_end|>\n{% endfor %}",
    }));
    const rewrite = await loadTokenizer(dir);
    expect(() => formatChat([{ role: 'user', content: 'abc' }], rewrite)).toThrow(ChatFormatError);
    expect(() => formatChat([{ role: 'user', content: 'abc' }], rewrite)).toThrow(/changes message contents/);
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ eos_token: '<|im_end|>', chat_template: '{% for m in messages %}' }));
    const broken = await loadTokenizer(dir);
    expect(() => formatChat([{ role: 'user', content: 'abc' }], broken)).toThrow(/chat template .*does not parse|failed to render/);
  });
});
