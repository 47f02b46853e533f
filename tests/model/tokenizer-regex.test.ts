// Issue 37 item 5, N11 of the fault retest (../shared/reference/reliability-retest-2.md HT6): a tokenizer.json whose
// Split pre-tokenizer regex is `(a+)+$` hung `model generate` on "aaaa…ab" (JavaScript regexes backtrack and cannot be
// interrupted). Such regexes are refused when the tokenizer loads (tokenizer-common.ts unsafeRegexReason, the
// star-height rule); the pre-tokenizers of released tokenizers still load.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importGguf } from '../../core/model/gguf.js';
import { loadTokenizer, TokenizerError } from '../../core/model/tokenizer.js';
import { unsafeRegexReason } from '../../core/model/tokenizer-common.js';
import { tinyGguf } from './gguf-writer.js';

// released pre-tokenizer patterns (tokenizer.json "pre_tokenizer" Split regexes)
const RELEASED: Record<string, string> = {
  gpt2: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
  llama3: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  qwen2: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  o200k: "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|" +
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  deepseek: "[\\r\\n]|\\s?[A-Za-zµÀ-ÖØ-öø-ƺ]+|\\s?[!-/:-~！-／：-～‘-‟　-。]+|\\s+$|[一-龥ࠀ-一가-퟿]+|\\p{N}",
  digits: '\\p{N}{1,3}',
  classes: '[()+*]+|\\[\\]|\\(x\\)',
};

describe('unsafeRegexReason (the star-height rule)', () => {
  it('passes the released pre-tokenizer regexes', () => {
    for (const [name, pattern] of Object.entries(RELEASED)) expect(unsafeRegexReason(pattern), name).toBe(null);
  });
  it('refuses a repeated group that repeats or alternates inside', () => {
    for (const pattern of ['(a+)+$', '(a*)*b', '(a|a)*', '(a|ab)+c', '((ab)*)+', '(?:\\s+\\S)+', '(x{2,})+', '((a|b)c){2,}']) {
      expect(unsafeRegexReason(pattern), pattern).toMatch(/exponential time/);
    }
    expect(unsafeRegexReason('(a+)?b')).toBe(null);          // ? does not repeat
    expect(unsafeRegexReason('(ab){1}c')).toBe(null);
  });
});

let root = '';
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'tok-regex-'));
  writeFileSync(join(root, 'tiny.gguf'), tinyGguf());
  await importGguf(join(root, 'tiny.gguf'), join(root, 'base'));
});
afterAll(() => { if (root) rmSync(root, { recursive: true, force: true }); });

describe('a crafted tokenizer.json (N11)', () => {
  it('a Split pre-tokenizer (a+)+$ is refused at load naming the key; the released Llama 3 split loads', async () => {
    const load = async (regex: string, name: string) => {
      const dir = join(root, name);
      cpSync(join(root, 'base'), dir, { recursive: true });
      const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')) as Record<string, unknown>;
      json.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] };
      writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(json));
      const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
      writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ ...config, eos_token: 'Z' }));
      return loadTokenizer(dir);
    };
    const err = await load('(a+)+$', 'redos').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TokenizerError);
    expect((err as Error).message).toMatch(/key "pre_tokenizer\.pretokenizers\[0\]\.pattern\.Regex" "\(a\+\)\+\$": the group \(a\+\) is repeated by "\+"/);
    const ok = await load(RELEASED.llama3!, 'llama3');
    expect(ok.encode('ABC').length).toBeGreaterThan(0);
  });
});
