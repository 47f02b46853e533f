// Stand-in model folders for chat-template tests: a byte-level BPE tokenizer with no merges (whole-text and piecewise
// tokenisation agree, so ids compare exactly with transformers') plus the chat template and special tokens of a model
// family, and transformers' apply_chat_template on them as the reference (SPA_TEST_HF_PYTHON, else /usr/bin/python3).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage } from '../../core/model/chat.js';

export const referencePython = process.env.SPA_TEST_HF_PYTHON ?? '/usr/bin/python3';

/** GPT-2 style byte-level BPE over the 256 byte symbols (no merges) plus `specials` as added tokens (ids 256, 257, …). */
export function byteLevelTokenizerJson(specials: readonly string[], special: (token: string) => boolean = () => true): Record<string, unknown> {
  const bytes: number[] = [];
  for (let b = 33; b <= 126; b++) bytes.push(b);
  for (let b = 161; b <= 172; b++) bytes.push(b);
  for (let b = 174; b <= 255; b++) bytes.push(b);
  const chars = [...bytes];
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bytes.includes(b)) { bytes.push(b); chars.push(256 + n); n++; }
  const vocab: Record<string, number> = {};
  chars.forEach((c, i) => { vocab[String.fromCodePoint(c)] = i; });
  const added = specials.map((content, k) => ({
    id: 256 + k, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: special(content),
  }));
  for (const a of added) vocab[a.content] = a.id;
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: added, normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab, merges: [] },
  };
}

export interface FolderSpec {
  template: string;
  specials: string[];
  /** tokenizer_config.json fields besides the template (bos_token, eos_token, pad_token…). */
  config: Record<string, unknown>;
  generation?: Record<string, unknown>;
}

/** Writes `root/<name>/` (tokenizer.json, tokenizer_config.json, generation_config.json when given). */
export function writeChatFolder(root: string, name: string, spec: FolderSpec): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(byteLevelTokenizerJson(spec.specials)));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ ...spec.config, chat_template: spec.template, tokenizer_class: 'PreTrainedTokenizerFast' }));
  if (spec.generation) writeFileSync(join(dir, 'generation_config.json'), JSON.stringify(spec.generation));
  return dir;
}

export interface ReferenceCase { folder: string; messages: ChatMessage[]; gen: boolean; kwargs?: Record<string, unknown> }

/**
 * transformers' apply_chat_template (text and ids) on each case; `{ skip }` when transformers or jinja2 cannot be imported.
 * Throws when the script fails otherwise.
 */
export function transformersReference(root: string, cases: readonly ReferenceCase[]): { skip: string } | { results: { text: string; ids: number[] }[] } {
  if (!existsSync(referencePython) && referencePython.startsWith('/')) return { skip: `${referencePython} not found` };
  const file = join(root, `reference-cases-${Date.now().toString(36)}.json`);
  writeFileSync(file, JSON.stringify(cases));
  const script = `
import json, sys
try:
    import jinja2
    from transformers import AutoTokenizer
except Exception as e:
    print(json.dumps({"skip": "transformers cannot be imported (%s)" % e})); sys.exit(0)
cases = json.load(open(sys.argv[1]))
toks, out = {}, []
for c in cases:
    tok = toks.get(c["folder"]) or AutoTokenizer.from_pretrained(c["folder"])
    toks[c["folder"]] = tok
    kw = c.get("kwargs") or {}
    out.append({"text": tok.apply_chat_template(c["messages"], tokenize=False, add_generation_prompt=c["gen"], **kw),
                "ids": tok.apply_chat_template(c["messages"], tokenize=True, add_generation_prompt=c["gen"], **kw)})
print(json.dumps({"results": out}))
`;
  const run = spawnSync(referencePython, ['-c', script, file], { encoding: 'utf8', timeout: 120_000 });
  if (run.status !== 0) throw new Error(`transformers reference failed: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as { skip: string } | { results: { text: string; ids: number[] }[] };
}

export function skipWarning(what: string, why: string): void {
  console.warn(`\n*** SKIPPED ${what}: ${why}. Install them: ${referencePython} -m pip install --break-system-packages 'transformers==4.40.2' 'jinja2>=3.1' ***\n`);
}
