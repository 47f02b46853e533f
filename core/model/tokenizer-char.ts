// Character-level tokenizer for tiny models trained from scratch: one id per Unicode code point
// of the environments' vocabulary (printable ASCII, newline, tab and the board symbols such as
// `√`), plus special tokens and, optionally, one token per frequent tag (`<think>`, `</answer>`...).
//
// Saved as a Hugging Face tokenizer.json: a BPE model with an empty merge list (so every
// character is its own token), no normalizer or pre-tokenizer, a Fuse decoder (tokens are
// concatenated without spaces), and the special and tag tokens as added_tokens. transformers
// (PreTrainedTokenizerFast), tokenizers and transformers.js load it and give the same ids.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CHAT_TEMPLATES, TokenizerError } from './tokenizer-common.js';
import type { ChatStyle, TokenOffset, Tokenizer } from './tokenizer-common.js';

/** Special tokens, ids 0.. in this order. `<|im_end|>` ends a reply (eos); roles have one token each for the compact chat style. */
export const CHAR_SPECIAL_TOKENS = [
  '<|pad|>', '<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|unk|>', '<|system|>', '<|user|>', '<|assistant|>',
] as const;

/** Tags of the SPA response format that get a single token each (not special: they are normal output). */
export const DEFAULT_TAG_TOKENS = [
  '<think>', '</think>', '<observation>', '</observation>', '<prediction>', '</prediction>', '<answer>', '</answer>',
];

function printableAscii(): string {
  let s = '';
  for (let c = 32; c < 127; c++) s += String.fromCharCode(c);
  return s;
}

/**
 * Characters the templates and prompts can produce: newline, tab, printable ASCII, the board
 * symbols (√ box/player on target), and a few typographic characters templates may use.
 */
export const DEFAULT_CHARSET = '\n\t' + printableAscii() + '√×→←↑↓·…–—“”‘’';

export interface CharTokenizerOptions {
  /** The base character set (default DEFAULT_CHARSET). */
  chars?: string;
  /** Extra characters appended to the vocabulary (deduplicated). */
  extraChars?: string;
  /** Texts whose characters are all added (e.g. rendered prompts of every env), deduplicated. */
  texts?: readonly string[];
  /** Tags encoded as single tokens (default DEFAULT_TAG_TOKENS; [] for none). */
  tagTokens?: readonly string[];
  /** Chat layout for models using this tokenizer (default `compact`). */
  chatStyle?: ChatStyle;
  /** Stored as model_max_length in tokenizer_config.json (default 32768). */
  modelMaxLength?: number;
}

/** Builds the character tokenizer: specials, then tags, then characters in first-seen order. */
export function buildCharTokenizer(options: CharTokenizerOptions = {}): CharTokenizer {
  const tags = [...(options.tagTokens ?? DEFAULT_TAG_TOKENS)];
  const tokens: string[] = [...CHAR_SPECIAL_TOKENS, ...tags];
  const seen = new Set(tokens);
  const addChars = (text: string): void => {
    for (const ch of text) {
      if (!seen.has(ch)) { seen.add(ch); tokens.push(ch); }
    }
  };
  addChars(options.chars ?? DEFAULT_CHARSET);
  addChars(options.extraChars ?? '');
  for (const text of options.texts ?? []) {
    // Special and tag strings inside the texts are tokens already; add only the other characters.
    addChars(splitAddedTokens(text, [...CHAR_SPECIAL_TOKENS, ...tags]).filter((p) => !p.added).map((p) => p.text).join(''));
  }
  return new CharTokenizer(tokens, CHAR_SPECIAL_TOKENS.length, options.chatStyle ?? 'compact', options.modelMaxLength ?? 32768);
}

/** Splits text on added tokens, leftmost-longest (as Hugging Face tokenizers do). */
function splitAddedTokens(text: string, added: readonly string[]): { text: string; added: boolean }[] {
  const parts: { text: string; added: boolean }[] = [];
  const sorted = [...added].sort((a, b) => b.length - a.length);
  let plainStart = 0;
  let i = 0;
  while (i < text.length) {
    const hit = text[i] === '<' ? sorted.find((t) => text.startsWith(t, i)) : undefined;
    if (hit) {
      if (plainStart < i) parts.push({ text: text.slice(plainStart, i), added: false });
      parts.push({ text: hit, added: true });
      i += hit.length;
      plainStart = i;
    } else {
      i++;
    }
  }
  if (plainStart < text.length) parts.push({ text: text.slice(plainStart), added: false });
  return parts;
}

export class CharTokenizer implements Tokenizer {
  readonly kind = 'char' as const;
  readonly vocabSize: number;
  readonly eosTokenId: number;
  readonly padTokenId: number;
  readonly bosTokenId = undefined;
  readonly unkTokenId: number;
  readonly stopTokenIds: number[];
  readonly specialTokens: Record<string, number>;
  /** Tag tokens (single ids, not special). */
  readonly tagTokens: string[];
  private readonly ids = new Map<string, number>();
  /** Added tokens (special + tags) grouped by their first character, longest first. */
  private readonly addedByFirst = new Map<string, string[]>();

  /**
   * @param tokens      id → token string; the first `specialCount` are special tokens
   *                    (must include every entry of CHAR_SPECIAL_TOKENS), then tags (multi-character
   *                    tokens), then single characters.
   */
  constructor(readonly tokens: readonly string[], readonly specialCount: number, readonly chatStyle: ChatStyle, readonly modelMaxLength: number) {
    tokens.forEach((t, id) => {
      if (this.ids.has(t)) throw new TokenizerError(`character tokenizer: token ${JSON.stringify(t)} appears twice (ids ${this.ids.get(t)} and ${id})`);
      this.ids.set(t, id);
    });
    for (const s of CHAR_SPECIAL_TOKENS) {
      if (!this.ids.has(s)) throw new TokenizerError(`character tokenizer: special token ${s} is missing from the vocabulary`);
    }
    this.vocabSize = tokens.length;
    this.padTokenId = this.ids.get('<|pad|>')!;
    this.eosTokenId = this.ids.get('<|im_end|>')!;
    this.unkTokenId = this.ids.get('<|unk|>')!;
    this.stopTokenIds = [this.eosTokenId, this.ids.get('<|endoftext|>')!];
    this.specialTokens = Object.fromEntries(tokens.slice(0, specialCount).map((t, id) => [t, id]));
    this.tagTokens = tokens.slice(specialCount).filter((t) => [...t].length > 1);
    for (const t of [...tokens.slice(0, specialCount), ...this.tagTokens]) {
      const list = this.addedByFirst.get(t[0]) ?? [];
      list.push(t);
      list.sort((a, b) => b.length - a.length);
      this.addedByFirst.set(t[0], list);
    }
  }

  encode(text: string): number[] {
    return this.encodeWithOffsets(text).ids;
  }

  encodeWithOffsets(text: string): { ids: number[]; offsets: TokenOffset[] } {
    const ids: number[] = [];
    const offsets: TokenOffset[] = [];
    let i = 0;
    while (i < text.length) {
      const candidates = this.addedByFirst.get(text[i]);
      const hit = candidates?.find((t) => text.startsWith(t, i));
      if (hit) {
        ids.push(this.ids.get(hit)!);
        offsets.push([i, i + hit.length]);
        i += hit.length;
        continue;
      }
      const cp = text.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      ids.push(this.ids.get(ch) ?? this.unkTokenId);
      offsets.push([i, i + ch.length]);
      i += ch.length;
    }
    return { ids, offsets };
  }

  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}): string {
    let out = '';
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k];
      if (!Number.isInteger(id) || id < 0)
        throw new TokenizerError(`character tokenizer: id ${id} at position ${k} is not a token id (expected an integer >= 0)`);
      const token = this.tokens[id];
      if (options.skipSpecialTokens && (id < this.specialCount || token === undefined)) continue;
      // An id past the vocabulary (a model whose vocab_size was rounded up sampled a padding row) is shown, not fatal.
      out += token ?? `<|unused:${id}|>`;
    }
    return out;
  }

  tokenToId(token: string): number | undefined { return this.ids.get(token); }
  idToToken(id: number): string | undefined { return this.tokens[id]; }

  /** The tokenizer.json object (Hugging Face `tokenizers` format). */
  toJson(): Record<string, unknown> {
    const added = [...this.tokens.slice(0, this.specialCount), ...this.tagTokens].map((content) => ({
      id: this.ids.get(content)!,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: this.ids.get(content)! < this.specialCount,
    }));
    return {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: added,
      normalizer: null,
      pre_tokenizer: null,
      post_processor: null,
      decoder: { type: 'Fuse' },
      model: {
        type: 'BPE',
        dropout: null,
        unk_token: '<|unk|>',
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: false,
        byte_fallback: false,
        ignore_merges: false,
        vocab: Object.fromEntries(this.tokens.map((t, id) => [t, id])),
        merges: [],
      },
    };
  }

  /** The tokenizer_config.json object (transformers loads it as PreTrainedTokenizerFast). */
  configJson(): Record<string, unknown> {
    const decoder: Record<string, unknown> = {};
    for (const entry of this.toJson().added_tokens as { id: number; content: string; special: boolean }[]) {
      decoder[String(entry.id)] = { content: entry.content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: entry.special };
    }
    return {
      tokenizer_class: 'PreTrainedTokenizerFast',
      added_tokens_decoder: decoder,
      bos_token: null,
      eos_token: '<|im_end|>',
      pad_token: '<|pad|>',
      unk_token: '<|unk|>',
      additional_special_tokens: this.tokens.slice(0, this.specialCount).filter((t) => !['<|im_end|>', '<|pad|>', '<|unk|>'].includes(t)),
      clean_up_tokenization_spaces: false,
      model_max_length: this.modelMaxLength,
      chat_template: CHAT_TEMPLATES[this.chatStyle],
      spa_workbench: { kind: 'char', chatStyle: this.chatStyle, version: 1 },
    };
  }

  async save(dir: string): Promise<void> {
    await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(this.toJson(), null, 2) + '\n');
    await writeFile(join(dir, 'tokenizer_config.json'), JSON.stringify(this.configJson(), null, 2) + '\n');
  }

  /** Rebuilds the tokenizer from its tokenizer.json and tokenizer_config.json objects. */
  static fromJson(json: unknown, config: Record<string, unknown>, source: string): CharTokenizer {
    const bad = (key: string, expected: string, got: unknown): never => {
      throw new TokenizerError(
        `${source}: key "${key}": expected ${expected}, got ${JSON.stringify(got)?.slice(0, 120)} (tokenizer_config.json marks this as a ` +
          `spa-workbench character tokenizer; re-create it with \`spa-workbench model init\` if it was edited)`,
      );
    };
    if (json === null || typeof json !== 'object') bad('(root)', 'an object', json);
    const root = json as Record<string, unknown>;
    const model = root.model as Record<string, unknown> | undefined;
    if (!model || model.type !== 'BPE') bad('model.type', '"BPE"', model?.type);
    if (!Array.isArray(model!.merges) || model!.merges.length !== 0) bad('model.merges', 'an empty array (character level)', model!.merges);
    const vocab = model!.vocab;
    if (!vocab || typeof vocab !== 'object' || Array.isArray(vocab)) bad('model.vocab', 'an object of token → id', vocab);
    const tokens: string[] = [];
    for (const [token, id] of Object.entries(vocab as Record<string, unknown>)) {
      if (!Number.isInteger(id) || (id as number) < 0) bad(`model.vocab.${token}`, 'a non-negative integer id', id);
      if (tokens[id as number] !== undefined) bad(`model.vocab.${token}`, `a unique id (${id} is also "${tokens[id as number]}")`, id);
      tokens[id as number] = token;
    }
    for (let id = 0; id < tokens.length; id++) if (tokens[id] === undefined) bad('model.vocab', `contiguous ids 0..${tokens.length - 1}`, `a gap at ${id}`);
    const added = root.added_tokens;
    if (!Array.isArray(added)) bad('added_tokens', 'an array', added);
    const specialCount = (added as { special?: boolean }[]).filter((t) => t.special).length;
    for (let id = 0; id < specialCount; id++) {
      if (!(added as { id: number; special: boolean }[]).some((t) => t.id === id && t.special))
        bad('added_tokens', `special tokens at ids 0..${specialCount - 1}`, `no special token at ${id}`);
    }
    const marker = config.spa_workbench as { chatStyle?: string } | undefined;
    const chatStyle = marker?.chatStyle ?? 'compact';
    if (chatStyle !== 'compact' && chatStyle !== 'qwen') bad('spa_workbench.chatStyle', '"compact" or "qwen"', chatStyle);
    const maxLength = typeof config.model_max_length === 'number' ? config.model_max_length : 32768;
    return new CharTokenizer(tokens, specialCount, chatStyle as ChatStyle, maxLength);
  }
}
