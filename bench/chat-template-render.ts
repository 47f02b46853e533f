// Issue 37 N1: what rendering a folder's chat template in the bounded worker (core/model/chat-bounded.ts) costs per
// formatChat call, next to the first call (worker start). A SmolLM2-style ChatML template, a 4-message chat;
// formatChat renders it n + 2 times (markup skeleton, per-message prefixes, the real text).
// Usage: node bin/run-ts.mjs bench/chat-template-render.ts [calls]; prints one JSON line.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importGguf } from '../core/model/gguf.js';
import { loadTokenizer } from '../core/model/tokenizer.js';
import { formatChat } from '../core/model/chat.js';
import { T, tinyGguf } from '../tests/model/gguf-writer.js';

const calls = Number(process.argv[2] ?? 500);
const TEMPLATE = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}" +
  "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
const dir = mkdtempSync(join(tmpdir(), 'chat-bench-'));
try {
  writeFileSync(join(dir, 'm.gguf'), tinyGguf({ metadata: { 'tokenizer.chat_template': { type: T.STRING, value: TEMPLATE } } }));
  await importGguf(join(dir, 'm.gguf'), join(dir, 'm'));
  const configPath = join(dir, 'm', 'tokenizer_config.json');
  writeFileSync(configPath, JSON.stringify({ ...JSON.parse(readFileSync(configPath, 'utf8')), eos_token: 'Z' }));
  const tokenizer = await loadTokenizer(join(dir, 'm'));
  const chat = [{ role: 'system', content: 'ABC' }, { role: 'user', content: 'DEF' }, { role: 'assistant', content: 'GHI' }, { role: 'user', content: 'JKL' }];
  let t = performance.now();
  formatChat(chat, tokenizer);
  const firstMs = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < calls; i++) formatChat(chat, tokenizer);
  const perCallMs = (performance.now() - t) / calls;
  console.log(JSON.stringify({ calls, firstCallMs: Number(firstMs.toFixed(1)), perFormatChatMs: Number(perCallMs.toFixed(3)), node: process.version }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
