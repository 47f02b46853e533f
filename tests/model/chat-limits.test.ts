// Issue 37 item 5, N1 of the fault retest (../shared/reference/reliability-retest-2.md H-T1..H-T6): a model folder's
// chat template renders in a worker with time, memory and output limits (core/model/chat-bounded.ts), so
// `range(10**9)` (a V8 out-of-memory abort before), nested loops (a hang before), 5 MB of output and a 2 MB template
// are each a named ChatFormatError, and the process carries on. The folder is the tiny llama of tests/model/gguf-writer.ts
// with tokenizer_config.json's chat_template set per case. The time limit is lowered to 3 s here (default 10 s).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importGguf } from '../../core/model/gguf.js';
import { loadTokenizer } from '../../core/model/tokenizer.js';
import { ChatFormatError, formatChat } from '../../core/model/chat.js';
import { CHAT_TEMPLATE_LIMITS, chatRenderMode, stopChatRenderWorker } from '../../core/model/chat-bounded.js';
import { tinyGguf } from './gguf-writer.js';

let root = '';
let base = '';
const timeoutMs = CHAT_TEMPLATE_LIMITS.timeoutMs;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'chat-limits-'));
  writeFileSync(join(root, 'tiny.gguf'), tinyGguf());
  base = join(root, 'base');
  await importGguf(join(root, 'tiny.gguf'), base);
  CHAT_TEMPLATE_LIMITS.timeoutMs = 3000;   // a trivial render takes well under a millisecond; 3 s leaves room for a loaded CI machine
});
afterAll(() => {
  CHAT_TEMPLATE_LIMITS.timeoutMs = timeoutMs;
  stopChatRenderWorker();
  if (root) rmSync(root, { recursive: true, force: true });
});

let n = 0;
async function tokenizerWith(template: string) {
  const dir = join(root, `case-${++n}`);
  cpSync(base, dir, { recursive: true });
  const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ ...config, eos_token: 'Z', chat_template: template }));
  return loadTokenizer(dir);
}
const chat = [{ role: 'user', content: 'ABC' }];

describe('chat templates render within limits (N1)', () => {
  it('a normal template renders in the worker', async () => {
    const tokenizer = await tokenizerWith("{% for m in messages %}[{{ m['role'] }}]{{ m['content'] }}{% endfor %}");
    expect(formatChat(chat, tokenizer).text).toBe('[user]ABC');
    expect(chatRenderMode()).toEqual({ mode: 'worker', reason: null });
  });

  const cases: [string, string, RegExp][] = [
    ['range(10**9) (a V8 out-of-memory abort before)', '{% for i in range(1000000000) %}{% endfor %}{{ messages[0].content }}',
      /range\(\) of 1000000000 items: more than the 1000000 a chat template may loop over/],
    ['two nested range(100000) loops (a hang before)', '{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}',
      /did not finish within 3 s or needed more than its 256 MB heap/],
    ['1000 copies of 5000 characters (5 MB of output)', `{% for i in range(1000) %}{{ "${'x'.repeat(5000)}" }}{% endfor %}`,
      /wrote 5000000 characters, more than the 4000000 a chat may have/],
    ['a 2 MB template', `{{ "${'y'.repeat(2_000_000)}" }}`, /chat template is 2000008 characters, more than the 1000000/],
  ];
  for (const [what, template, message] of cases) {
    it(`${what}: a named ChatFormatError, and the next render works`, async () => {
      const tokenizer = await tokenizerWith(template);
      const started = Date.now();
      const err = (() => { try { formatChat(chat, tokenizer); return null; } catch (e) { return e; } })();
      expect(err).toBeInstanceOf(ChatFormatError);
      expect((err as Error).message).toMatch(message);
      expect(Date.now() - started).toBeLessThan(30_000);   // a bound, not a timing: the cases ran for minutes or forever before
      const ok = await tokenizerWith('{{ messages[0].content }}!');
      expect(formatChat(chat, ok).text).toBe('ABC!');
    }, 180_000);
  }
});
