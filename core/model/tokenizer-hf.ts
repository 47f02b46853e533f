// Hugging Face tokenizer.json (pretrained models such as Qwen2.5) through @huggingface/transformers,
// built straight from the JSON we read and validate ourselves: it never touches the network.
//
// Token offsets (for masking sub-spans of a message): for byte-level BPE (Qwen, GPT-2 style)
// each token's bytes are known exactly, so offsets are exact except where one token boundary
// falls inside a multi-byte character (e.g. `√` split across two tokens): then both tokens are
// given that whole character, i.e. ranges are widened, never narrowed ("conservative"). For
// other tokenizers offsets come from decoding growing prefixes (exact when decode inverts encode).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TokenizerError, unsafeRegexReason } from './tokenizer-common.js';
import type { ChatStyle, TokenOffset, Tokenizer } from './tokenizer-common.js';

/** The part of transformers.js' PreTrainedTokenizer we use. */
interface HfPreTrainedTokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
  decode(ids: number[], options?: { skip_special_tokens?: boolean; clean_up_tokenization_spaces?: boolean }): string;
}

/** GPT-2's byte ↔ unicode table used by ByteLevel pre-tokenizers: unicode char → byte. */
function byteLevelDecoderTable(): Map<string, number> {
  const bytes: number[] = [];
  for (let b = 33; b <= 126; b++) bytes.push(b);
  for (let b = 161; b <= 172; b++) bytes.push(b);
  for (let b = 174; b <= 255; b++) bytes.push(b);
  const chars = [...bytes];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bytes.includes(b)) { bytes.push(b); chars.push(256 + n); n++; }
  }
  return new Map(bytes.map((b, i) => [String.fromCodePoint(chars[i]), b]));
}

function usesByteLevel(json: Record<string, unknown>): boolean {
  const decoder = json.decoder as { type?: string; decoders?: { type?: string }[] } | null | undefined;
  if (!decoder) return false;
  if (decoder.type === 'ByteLevel') return true;
  return decoder.type === 'Sequence' && (decoder.decoders ?? []).some((d) => d.type === 'ByteLevel');
}

function tokenFromConfig(config: Record<string, unknown>, key: string): string | undefined {
  const v = config[key];
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string') return (v as { content: string }).content;
  return undefined;
}

/** What a model folder adds to tokenizer.json + tokenizer_config.json (core/model/tokenizer.ts reads them). */
export interface HfTokenizerExtras {
  /** chat_template.jinja (overrides tokenizer_config.json's "chat_template", as in transformers). */
  chatTemplate?: string;
  /** generation_config.json "eos_token_id" (every one ends generation). */
  generationEosIds?: number[];
}

/**
 * tokenizer_config.json "chat_template": a string, or a list of named templates (the one named
 * "default" is the chat template, as in transformers); absent = none (the built-in ChatML layout is used).
 */
function chatTemplateOf(config: Record<string, unknown>, source: string): string | undefined {
  const t = config.chat_template;
  if (t === undefined || t === null) return undefined;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const named = t.find((x) => (x as { name?: unknown })?.name === 'default') as { template?: unknown } | undefined;
    if (named && typeof named.template === 'string') return named.template;
    throw new TokenizerError(`${source}: key "chat_template" is a list of named templates without one named "default"`);
  }
  throw new TokenizerError(`${source}: key "chat_template" must be a string (a Jinja template), got ${typeof t}`);
}

/**
 * Refuses a tokenizer.json whose regexes (Split pre-tokenizers, Replace normalizers and decoders: `{"Regex": …}`) could
 * backtrack for ever on some text (tokenizer-common.ts unsafeRegexReason), naming the key. The vocabulary and added
 * tokens are not walked (no regexes there; they are the bulk of the file).
 */
function checkRegexes(root: Record<string, unknown>, source: string): void {
  const walk = (value: unknown, where: string, depth: number): void => {
    if (value === null || typeof value !== 'object' || depth > 32) return;
    if (Array.isArray(value)) { value.forEach((v, i) => walk(v, `${where}[${i}]`, depth + 1)); return; }
    for (const [key, v] of Object.entries(value)) {
      if (key === 'Regex' && typeof v === 'string') {
        const reason = unsafeRegexReason(v);
        if (reason) throw new TokenizerError(`${source}: key "${where}.Regex" ${JSON.stringify(v)}: ${reason}; this tokenizer is refused`);
      } else walk(v, where ? `${where}.${key}` : key, depth + 1);
    }
  };
  for (const [key, value] of Object.entries(root)) if (key !== 'model' && key !== 'added_tokens') walk(value, key, 0);
}

export class HfTokenizer implements Tokenizer {
  readonly kind = 'hf' as const;
  readonly vocabSize: number;
  readonly eosTokenId: number;
  readonly padTokenId: number;
  readonly bosTokenId?: number;
  readonly stopTokenIds: number[];
  readonly specialTokens: Record<string, number>;
  readonly chatStyle: ChatStyle = 'qwen';
  readonly chatTemplate?: string;
  readonly chatTemplateContext: Record<string, unknown>;
  private readonly idsByToken = new Map<string, number>();
  private readonly tokensById: string[] = [];
  private readonly addedIds = new Set<number>();
  private readonly byteLevel: boolean;
  private byteTable?: Map<string, number>;

  private constructor(
    private readonly hf: HfPreTrainedTokenizer,
    private readonly json: Record<string, unknown>,
    private readonly config: Record<string, unknown>,
    source: string,
    extras: HfTokenizerExtras = {},
  ) {
    const model = json.model as { vocab?: unknown };
    const vocab = model.vocab;
    if (vocab && typeof vocab === 'object' && !Array.isArray(vocab)) {
      for (const [t, id] of Object.entries(vocab as Record<string, number>)) { this.idsByToken.set(t, id); this.tokensById[id] = t; }
    } else if (Array.isArray(vocab)) {                                   // Unigram: [[piece, score], ...]
      vocab.forEach((entry, id) => { const t = String((entry as unknown[])[0]); this.idsByToken.set(t, id); this.tokensById[id] = t; });
    }
    const special: Record<string, number> = {};
    for (const t of (json.added_tokens ?? []) as { id: number; content: string; special?: boolean }[]) {
      this.idsByToken.set(t.content, t.id);
      this.tokensById[t.id] = t.content;
      this.addedIds.add(t.id);
      if (t.special) special[t.content] = t.id;
    }
    this.specialTokens = special;
    this.vocabSize = this.tokensById.length;
    const idOf = (key: string): number | undefined => {
      const token = tokenFromConfig(config, key);
      return token === undefined ? undefined : this.idsByToken.get(token);
    };
    const imEnd = this.idsByToken.get('<|im_end|>');
    const endOfText = this.idsByToken.get('<|endoftext|>');
    const eos = idOf('eos_token') ?? imEnd ?? endOfText;
    if (eos === undefined) {
      throw new TokenizerError(
        `${source}: no end-of-sequence token: tokenizer_config.json has no "eos_token" found in the vocabulary, and neither <|im_end|> nor ` +
          `<|endoftext|> exists; add "eos_token" to tokenizer_config.json`,
      );
    }
    this.eosTokenId = eos;
    this.padTokenId = idOf('pad_token') ?? endOfText ?? eos;
    this.bosTokenId = idOf('bos_token');
    // generation_config.json's eos_token_id (one id or a list: Llama 3 ends turns with <|eot_id|> and text with <|end_of_text|>)
    // also ends generation, as in transformers' generate().
    const generationEos = (extras.generationEosIds ?? []).filter((id) => this.tokensById[id] !== undefined);
    this.stopTokenIds = [...new Set([
      eos, ...(imEnd !== undefined ? [imEnd] : []), ...(endOfText !== undefined ? [endOfText] : []), ...generationEos,
    ])];
    this.byteLevel = usesByteLevel(json);
    this.chatTemplate = extras.chatTemplate ?? chatTemplateOf(config, source);
    // What transformers' apply_chat_template passes besides messages: the special tokens map, as strings.
    const context: Record<string, unknown> = {};
    for (const key of ['bos_token', 'eos_token', 'unk_token', 'pad_token', 'sep_token', 'cls_token', 'mask_token']) {
      const token = tokenFromConfig(config, key);
      if (token !== undefined) context[key] = token;
    }
    const additional = config.additional_special_tokens;
    if (Array.isArray(additional)) {
      context.additional_special_tokens = additional.map((t) => (typeof t === 'string' ? t : (t as { content?: string })?.content)).filter(Boolean);
    }
    this.chatTemplateContext = context;
  }

  /** Builds the tokenizer from parsed tokenizer.json and tokenizer_config.json objects. */
  static async fromJson(json: unknown, config: Record<string, unknown>, source: string, extras: HfTokenizerExtras = {}): Promise<HfTokenizer> {
    if (json === null || typeof json !== 'object' || Array.isArray(json)) {
      throw new TokenizerError(`${source}: expected a tokenizer.json object, got ${JSON.stringify(json)?.slice(0, 80)}`);
    }
    const root = json as Record<string, unknown>;
    const model = root.model as Record<string, unknown> | undefined;
    if (!model || typeof model !== 'object')
      throw new TokenizerError(`${source}: key "model" is missing or not an object; this is not a Hugging Face tokenizers file`);
    if (!model.vocab) throw new TokenizerError(`${source}: key "model.vocab" is missing`);
    if (root.added_tokens !== undefined && !Array.isArray(root.added_tokens)) {
      throw new TokenizerError(`${source}: key "added_tokens" must be an array, got ${typeof root.added_tokens}`);
    }
    checkRegexes(root, source);
    // Fill keys the transformers.js constructor insists on (they are optional in the format).
    const full = { normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null, added_tokens: [], ...root };
    const transformers = await import('@huggingface/transformers');
    transformers.env.allowRemoteModels = false;                       // never fetch anything
    const className = typeof config.tokenizer_class === 'string' ? config.tokenizer_class.replace(/Fast$/, '') : 'PreTrainedTokenizer';
    const Ctor = ((transformers as unknown as Record<string, unknown>)[className] ?? transformers.PreTrainedTokenizer) as
      new (json: unknown, config: unknown) => HfPreTrainedTokenizer;
    let hf: HfPreTrainedTokenizer;
    try {
      hf = new Ctor(full, config);
    } catch (err) {
      throw new TokenizerError(`${source}: @huggingface/transformers could not build the tokenizer (${(err as Error).message})`);
    }
    return new HfTokenizer(hf, root, config, source, extras);
  }

  encode(text: string): number[] {
    return this.hf.encode(text, { add_special_tokens: false });
  }

  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}): string {
    for (let k = 0; k < ids.length; k++) {
      if (!Number.isInteger(ids[k]) || ids[k] < 0)
        throw new TokenizerError(`tokenizer: id ${ids[k]} at position ${k} is not a token id (expected an integer >= 0)`);
    }
    // transformers.js refuses an empty id list: an empty run (no ids, or unused ids at either end) is ''
    const decodeKnown = (part: number[]): string =>
      part.length === 0 ? '' : this.hf.decode(part, { skip_special_tokens: options.skipSpecialTokens ?? false, clean_up_tokenization_spaces: false });
    if (ids.every((id) => this.tokensById[id] !== undefined)) return decodeKnown([...ids]);
    // Ids past the tokenizer's vocabulary (Qwen2.5's embedding has ~270 padding rows beyond it)
    // are shown as <|unused:ID|> (or dropped with skipSpecialTokens) instead of failing.
    let out = '';
    let run: number[] = [];
    for (const id of ids) {
      if (this.tokensById[id] !== undefined) { run.push(id); continue; }
      out += decodeKnown(run) + (options.skipSpecialTokens ? '' : `<|unused:${id}|>`);
      run = [];
    }
    return out + decodeKnown(run);
  }

  encodeWithOffsets(text: string): { ids: number[]; offsets: TokenOffset[] } {
    const ids = this.encode(text);
    return { ids, offsets: (this.byteLevel && this.byteOffsets(text, ids)) || this.prefixOffsets(text, ids) };
  }

  /** Exact offsets from each token's bytes (byte-level BPE); undefined if the bytes do not spell `text`. */
  private byteOffsets(text: string, ids: number[]): TokenOffset[] | undefined {
    this.byteTable ??= byteLevelDecoderTable();
    const encoder = new TextEncoder();
    // UTF-8 byte index → UTF-16 index of the character containing that byte.
    const charAtByte: number[] = [];
    let at = 0;
    for (const ch of text) {
      const n = encoder.encode(ch).length;
      for (let b = 0; b < n; b++) charAtByte.push(at);
      at += ch.length;
    }
    charAtByte.push(text.length);
    const offsets: TokenOffset[] = [];
    let byte = 0;
    const whole = encoder.encode(text);
    for (const id of ids) {
      const token = this.tokensById[id];
      let length: number;
      if (this.addedIds.has(id)) {
        length = encoder.encode(token).length;
      } else {
        length = 0;
        for (const ch of token) {
          const b = this.byteTable.get(ch);
          if (b === undefined || whole[byte + length] !== b) return undefined;
          length++;
        }
      }
      const start = charAtByte[byte];
      const endByte = byte + length;
      if (endByte > whole.length) return undefined;
      // A token that ends inside a multi-byte character is widened to the end of that character.
      let end = text.length;
      if (endByte < whole.length) {
        const next = charAtByte[endByte];                               // character holding the next byte
        const endsMidCharacter = endByte > 0 && charAtByte[endByte - 1] === next;
        end = endsMidCharacter ? next + String.fromCodePoint(text.codePointAt(next)!).length : next;
      }
      offsets.push([start, end]);
      byte = endByte;
    }
    return byte === whole.length ? offsets : undefined;
  }

  /** Offsets from decoding growing prefixes (any tokenizer; exact when decode(encode(t)) === t). */
  private prefixOffsets(text: string, ids: number[]): TokenOffset[] {
    const offsets: TokenOffset[] = [];
    let previous = 0;
    for (let k = 1; k <= ids.length; k++) {
      const prefix = this.decode(ids.slice(0, k));
      // Partial characters decode to U+FFFD: extend until the prefix matches the text.
      let end = Math.min(prefix.replace(/\uFFFD+$/, '').length, text.length);
      if (prefix.endsWith('\uFFFD')) end = Math.min(end + 1, text.length);
      end = Math.max(end, previous);
      offsets.push([previous, end]);
      previous = end;
    }
    return offsets;
  }

  tokenToId(token: string): number | undefined { return this.idsByToken.get(token); }
  idToToken(id: number): string | undefined { return this.tokensById[id]; }

  async save(dir: string): Promise<void> {
    await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(this.json));
    // a template read from chat_template.jinja is kept in the saved tokenizer_config.json
    const config = this.chatTemplate !== undefined && this.config.chat_template === undefined
      ? { ...this.config, chat_template: this.chatTemplate } : this.config;
    await writeFile(join(dir, 'tokenizer_config.json'), JSON.stringify(config, null, 2) + '\n');
  }
}
