// Tokenizers: character tokenizer round trip, its tokenizer.json loading in Hugging Face's
// transformers.js (remote loading off), the chat template agreeing with formatChat, and the
// byte-level BPE tokenizer of the parity fixture (Qwen2 format) through HfTokenizer.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { buildCharTokenizer, CharTokenizer, loadTokenizer, HfTokenizer } from '../../core/model/tokenizer.js';
import { formatChat } from '../../core/model/chat.js';

const SAMPLE = 'Turn 1:\nState:\n#####\n#_P√#\n#_XO#\nPlayer (P) is at (1,2); box (X) is at (2,2).\n' +
  '<think><observation>#_P√#</observation> push down <prediction>#__S#</prediction></think><answer>Down || Left</answer>';
const FIXTURE = join(import.meta.dirname, '../fixtures/model/parity/qwen2-f32');
// Hugging Face's Rust `tokenizers` (what Python transformers uses), when /usr/bin/python3 has it
// (SPA_PYTHONPATH may point at a folder holding it, e.g. pip install --target).
const PY_ENV = { ...process.env, PYTHONPATH: process.env.SPA_PYTHONPATH ?? process.env.PYTHONPATH ?? '' };
const hasPyTokenizers = spawnSync('/usr/bin/python3', ['-c', 'import tokenizers'], { stdio: 'ignore', env: PY_ENV }).status === 0;

describe('character tokenizer', () => {
  const tok = buildCharTokenizer();

  it('encodes one id per character, tags and specials as single ids, and decodes back exactly', () => {
    const ids = tok.encode(SAMPLE);
    expect(tok.decode(ids)).toBe(SAMPLE);
    const tagCount = 8;                                            // <think> ... </answer> in SAMPLE
    const tagChars = '<think></think><observation></observation><prediction></prediction><answer></answer>'.length;
    expect(ids.length).toBe([...SAMPLE].length - tagChars + tagCount);
    expect(tok.encode('√')).toEqual([tok.tokenToId('√')]);
    expect(tok.encode('<|im_end|>')).toEqual([tok.eosTokenId]);
    expect(tok.encode('<answer>')).toEqual([tok.tokenToId('<answer>')]);
    expect(tok.encode('<answe')).toHaveLength(6);                  // a broken tag is plain characters
    expect(tok.specialTokens['<|pad|>']).toBe(tok.padTokenId);
    expect(tok.stopTokenIds).toContain(tok.tokenToId('<|endoftext|>'));
    expect(tok.decode([tok.padTokenId, ...tok.encode('ab'), tok.eosTokenId], { skipSpecialTokens: true })).toBe('ab');
  });

  it('maps unknown characters to <|unk|> and reports out-of-vocabulary ids clearly', () => {
    expect(tok.encode('a😀b')).toEqual([tok.tokenToId('a'), tok.unkTokenId, tok.tokenToId('b')]);
    expect(tok.encodeWithOffsets('a😀b').offsets).toEqual([[0, 1], [1, 3], [3, 4]]);
    expect(tok.decode([tok.tokenToId('a')!, tok.vocabSize + 5])).toBe(`a<|unused:${tok.vocabSize + 5}|>`);
    expect(tok.decode([tok.tokenToId('a')!, tok.vocabSize + 5], { skipSpecialTokens: true })).toBe('a');
    expect(() => tok.decode([1, -2])).toThrow(/id -2 at position 1 is not a token id/);
  });

  it('adds the characters of given texts and keeps ids stable', () => {
    const more = buildCharTokenizer({ texts: ['Ωmega <answer>'] });
    expect(more.tokenToId('Ω')).toBe(tok.vocabSize);
    expect(more.tokenToId('a')).toBe(tok.tokenToId('a'));
    expect(more.vocabSize).toBe(tok.vocabSize + 1);
  });

  it('saves and loads back through loadTokenizer with identical ids', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tok-'));
    await tok.save(dir);
    const back = await loadTokenizer(dir);
    expect(back).toBeInstanceOf(CharTokenizer);
    expect(back.encode(SAMPLE)).toEqual(tok.encode(SAMPLE));
    expect(back.vocabSize).toBe(tok.vocabSize);
    expect(back.chatStyle).toBe('compact');
  });

  it('loads in Hugging Face transformers.js (AutoTokenizer, local files only) with the same ids, decode and chat template', async () => {
    const root = mkdtempSync(join(tmpdir(), 'hf-'));
    const dir = join(root, 'char-model');
    mkdirSync(dir);
    await tok.save(dir);
    const { AutoTokenizer, env } = await import('@huggingface/transformers');
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = root + '/';
    const hf = await AutoTokenizer.from_pretrained(basename(dir), { local_files_only: true });
    const hfIds = hf.encode(SAMPLE, { add_special_tokens: false });
    expect(hfIds).toEqual(tok.encode(SAMPLE));
    expect(hf.decode(hfIds)).toBe(SAMPLE);
    expect(hf.eos_token_id).toBe(tok.eosTokenId);
    expect(hf.pad_token_id).toBe(tok.padTokenId);
    const messages = [
      { role: 'system', content: 'You solve puzzles.' },
      { role: 'user', content: 'State:\n#_P√#' },
      { role: 'assistant', content: '<think>hm</think><answer>Up</answer>' },
      { role: 'user', content: 'Reward: 0.1' },
    ];
    const text = hf.apply_chat_template(messages, { tokenize: false, add_generation_prompt: true }) as string;
    expect(text).toBe(formatChat(messages, tok, { addGenerationPrompt: true }).text);
    // The same for the Qwen layout stored by a char tokenizer built with chatStyle "qwen".
    const qwenTok = buildCharTokenizer({ chatStyle: 'qwen' });
    const qdir = join(root, 'char-qwen');
    mkdirSync(qdir);
    await qwenTok.save(qdir);
    const hfQ = await AutoTokenizer.from_pretrained(basename(qdir), { local_files_only: true });
    const qtext = hfQ.apply_chat_template(messages, { tokenize: false, add_generation_prompt: false }) as string;
    expect(qtext).toBe(formatChat(messages, qwenTok).text);
    expect(hfQ.encode(qtext, { add_special_tokens: false })).toEqual(formatChat(messages, qwenTok).ids);
  });

  it('rejects an edited tokenizer.json with an error naming the file and key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tok-'));
    await tok.save(dir);
    const json = tok.toJson() as { model: { merges: string[] } };
    json.model.merges = ['a b'];
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(json));
    await expect(loadTokenizer(dir)).rejects.toThrow(/tokenizer\.json: key "model\.merges": expected an empty array/);
    writeFileSync(join(dir, 'tokenizer.json'), '{ nope');
    await expect(loadTokenizer(dir)).rejects.toThrow(/tokenizer\.json: tokenizer\.json is not valid JSON/);
    await expect(loadTokenizer(join(dir, 'missing'))).rejects.toThrow(/missing\/tokenizer\.json: missing tokenizer\.json/);
  });
});

describe.skipIf(!hasPyTokenizers)('Hugging Face tokenizers (Rust, via Python)', () => {
  it('loads our char tokenizer.json and the Qwen2-format BPE fixture with the same ids and text as here', async () => {
    const root = mkdtempSync(join(tmpdir(), 'pytok-'));
    const tok = buildCharTokenizer();
    await tok.save(root);
    const bpe = await loadTokenizer(FIXTURE);
    const texts = [SAMPLE, 'a\tb <|im_start|>user\nx<|im_end|>\n😀 √√ the box is at (1,2)'];
    const script = `
import json, sys
from tokenizers import Tokenizer
out = {}
for name, path in [("char", sys.argv[1]), ("bpe", sys.argv[2])]:
    t = Tokenizer.from_file(path)
    out[name] = [t.encode(s, add_special_tokens=False).ids for s in json.loads(sys.argv[3])]
    out[name + "_text"] = [t.decode(ids, skip_special_tokens=False) for ids in out[name]]
print(json.dumps(out))`;
    const run = spawnSync('/usr/bin/python3', ['-c', script, join(root, 'tokenizer.json'), join(FIXTURE, 'tokenizer.json'), JSON.stringify(texts)], { env: PY_ENV, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const py = JSON.parse(run.stdout) as Record<string, unknown[]>;
    expect(py.char).toEqual(texts.map((t) => tok.encode(t)));
    expect(py.bpe).toEqual(texts.map((t) => bpe.encode(t)));
    expect(py.char_text).toEqual(texts.map((t) => tok.decode(tok.encode(t))));
    expect(py.bpe_text).toEqual(texts);
    expect(readFileSync(join(root, 'tokenizer.json'), 'utf8')).toContain('"Fuse"');
  });
});

describe('Hugging Face tokenizer (byte-level BPE in Qwen2 format)', () => {
  it('encodes with merges, round-trips text, and knows the chat specials', async () => {
    const tok = await loadTokenizer(FIXTURE);
    expect(tok).toBeInstanceOf(HfTokenizer);
    expect(tok.kind).toBe('hf');
    const text = 'the box is at (1,2) √ <|im_end|>\nanswer';
    const ids = tok.encode(text);
    expect(tok.decode(ids)).toBe(text);
    expect(ids).toContain(tok.tokenToId('Ġbox'));
    expect(ids).toContain(tok.tokenToId('<|im_end|>'));
    expect(tok.eosTokenId).toBe(tok.tokenToId('<|im_end|>'));
    expect(tok.padTokenId).toBe(tok.tokenToId('<|endoftext|>'));
    expect(tok.vocabSize).toBe(283);
    expect(tok.decode([...tok.encode('the'), 290, ...tok.encode(' box')])).toBe('the<|unused:290|> box');
    // empty, and unused ids at either end (a generation that stops at once, a sampled padding row)
    expect(tok.decode([])).toBe('');
    expect(tok.decode([290])).toBe('<|unused:290|>');
    expect(tok.decode([...tok.encode('the'), 290])).toBe('the<|unused:290|>');
    expect(tok.decode([290, ...tok.encode('the')], { skipSpecialTokens: true })).toBe('the');
    expect(() => tok.decode([1.5])).toThrow(/id 1\.5 at position 0 is not a token id/);
  });

  it('gives exact byte-level offsets, widening tokens that split a character', async () => {
    const tok = await loadTokenizer(FIXTURE);
    const text = 'box √ at';
    const { ids, offsets } = tok.encodeWithOffsets(text);
    const pieces = ids.map((id) => tok.idToToken(id));
    // " √" is [Ġâ, Īļ]: both tokens cover the whole √ (index 4).
    const k = pieces.indexOf('Ġâ');
    expect(k).toBeGreaterThan(0);
    expect(pieces[k + 1]).toBe('Īļ');
    expect(offsets[k]).toEqual([3, 5]);
    expect(offsets[k + 1]).toEqual([4, 5]);
    expect(pieces.slice(0, 2)).toEqual(['b', 'ox']);                      // no "Ġ" at the start: "o x" merges only
    expect(offsets.slice(0, 2)).toEqual([[0, 1], [1, 3]]);
    expect(offsets[offsets.length - 1][1]).toBe(text.length);
  });

  it('reports a tokenizer.json that is not a tokenizers file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tok-'));
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify({ version: '1.0' }));
    await expect(loadTokenizer(dir)).rejects.toThrow(/tokenizer\.json: key "model" is missing/);
    expect(dirname(FIXTURE)).toMatch(/parity$/);
  });
});
