// Shared tokenizer types: the one interface both tokenizers implement, and their error type.
// (Split from tokenizer.ts so the implementations can import it without an import cycle.)
import { FileTooLargeError, NotRegularFileError, readRegularText } from '../util/regular-file.js';

/**
 * How chat messages are laid out (core/model/chat.ts):
 * - `qwen`:    `<|im_start|>role\ncontent<|im_end|>\n` (Qwen2/Qwen2.5 instruct models)
 * - `compact`: `<|role|>content<|im_end|>` with one special token per role (tiny char models)
 */
export type ChatStyle = 'qwen' | 'compact';

/** A token's character range [start, end) in the text it was encoded from (UTF-16 units). */
export type TokenOffset = [number, number];

export interface Tokenizer {
  /** `char` (our character-level tokenizer) or `hf` (a Hugging Face tokenizer.json). */
  readonly kind: 'char' | 'hf';
  /** Number of ids the model's embedding must cover (max id + 1). */
  readonly vocabSize: number;
  /** End of a reply: generation stops here (Qwen instruct and our char tokenizer: `<|im_end|>`). */
  readonly eosTokenId: number;
  /** Padding id (never a target: losses mask it). */
  readonly padTokenId: number;
  readonly bosTokenId?: number;
  /** Every id that ends generation (eos plus e.g. `<|endoftext|>`). */
  readonly stopTokenIds: number[];
  /** Special tokens by content, e.g. { "<|im_end|>": 3 }. */
  readonly specialTokens: Record<string, number>;
  /** The chat layout this tokenizer's models are trained on (used when there is no chatTemplate). */
  readonly chatStyle: ChatStyle;
  /**
   * The folder's own Jinja chat template (tokenizer_config.json "chat_template" or chat_template.jinja),
   * rendered by core/model/chat.ts as transformers' apply_chat_template does. Absent for our character tokenizer.
   */
  readonly chatTemplate?: string;
  /** Variables the chat template sees besides messages (bos_token, eos_token, ... as strings). */
  readonly chatTemplateContext?: Record<string, unknown>;
  /** Text → ids. Special-token strings in the text become their single ids; no BOS/EOS is added. */
  encode(text: string): number[];
  /** Ids → text. Special tokens are kept unless skipSpecialTokens. */
  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean }): string;
  /** Ids plus each token's character range in `text` (see tokenizer-hf.ts for how BPE tokens that split a character are handled). */
  encodeWithOffsets(text: string): { ids: number[]; offsets: TokenOffset[] };
  /** Id of one token string (a special token or a vocabulary entry), undefined if absent. */
  tokenToId(token: string): number | undefined;
  idToToken(id: number): string | undefined;
  /** Writes tokenizer.json and tokenizer_config.json into `dir` (which must exist). */
  save(dir: string): Promise<void>;
}

export class TokenizerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenizerError';
  }
}

/**
 * Size limits of a tokenizer's files (bytes), checked before they are read. Real tokenizer.json files
 * are 2-35 MB (Gemma's 256k vocabulary is the largest seen); tokenizer_config.json a few hundred KB;
 * a chat template a few KB (core/model/chat.ts bounds its rendering too).
 */
export const TOKENIZER_MAX_BYTES = { tokenizerJson: 256 * 1024 ** 2, json: 16 * 1024 ** 2, chatTemplate: 1024 ** 2 } as const;

/**
 * A tokenizer file as text: a regular file only (a FIFO or device is refused unopened:
 * core/util/regular-file.ts), at most `maxBytes`, a byte-order mark dropped. Errors name the file.
 */
export async function readTokenizerText(path: string, what: string, maxBytes: number): Promise<string> {
  try {
    return await readRegularText(path, { maxBytes, what });
  } catch (err) {
    if (err instanceof NotRegularFileError || err instanceof FileTooLargeError) throw new TokenizerError(err.message);
    const code = (err as NodeJS.ErrnoException).code;
    throw new TokenizerError(`${path}: cannot read ${what} (${code ?? (err as Error).message})`);
  }
}

/** Reads and parses a JSON file (a regular file of at most `maxBytes`), with errors that name the file. */
export async function readJsonFile(path: string, what: string, maxBytes: number = TOKENIZER_MAX_BYTES.json): Promise<unknown> {
  const text = await readTokenizerText(path, what, maxBytes);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new TokenizerError(`${path}: ${what} is not valid JSON (${(err as Error).message})`);
  }
}

/**
 * Jinja chat templates stored in tokenizer_config.json, so Hugging Face's apply_chat_template
 * produces exactly the text core/model/chat.ts formats (tests/model/io-tokenizer.test.ts checks it).
 * Unlike Qwen2.5's own template, no default system message is inserted.
 */
export const CHAT_TEMPLATES: Record<ChatStyle, string> = {
  qwen:
    "{%- for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{%- endfor %}" +
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}",
  compact:
    "{%- for message in messages %}{{ '<|' + message['role'] + '|>' + message['content'] + '<|im_end|>' }}{%- endfor %}" +
    "{%- if add_generation_prompt %}{{ '<|assistant|>' }}{%- endif %}",
};

/**
 * Why a tokenizer.json regex (a Split pre-tokenizer's or a Replace normalizer's `{"Regex": …}`) could make
 * encoding take exponential time on some input, or null when it cannot. JavaScript's regex engine backtracks and a
 * running match cannot be interrupted, so `(a+)+$` hung `model generate` on "aaaa…ab" (issue 37 N11). The rule is
 * the classic star-height check: a group repeated by `*`, `+` or `{n,}` / `{n,m}` (m > 1) must not itself hold a
 * repeated part or an alternation. Character classes are single atoms; `?` and `{0,1}` do not repeat. Every
 * pre-tokenizer of the released tokenizers (GPT-2, Llama 3, Qwen2, SmolLM, DeepSeek, o200k) passes.
 */
export function unsafeRegexReason(pattern: string): string | null {
  // per open group: whether its content so far repeats something or alternates
  const stack: { repeats: boolean; alternates: boolean; start: number }[] = [{ repeats: false, alternates: false, start: 0 }];
  let last: { repeats: boolean; alternates: boolean; start: number } | null = null;   // the atom just closed, if a group
  let i = 0;
  const quantifierAt = (at: number): { repeats: boolean; length: number } | null => {
    const c = pattern[at];
    if (c === '*' || c === '+') return { repeats: true, length: pattern[at + 1] === '?' || pattern[at + 1] === '+' ? 2 : 1 };
    if (c === '?') return { repeats: false, length: 1 };
    if (c === '{') {
      const m = /^\{(\d*)(,(\d*))?\}\??/.exec(pattern.slice(at));
      if (!m) return null;
      const max = m[2] === undefined ? Number(m[1]) : m[3] === '' ? Infinity : Number(m[3]);
      return { repeats: max > 1, length: m[0].length };
    }
    return null;
  };
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === '\\') { last = null; i += 2; }
    else if (c === '[') {
      i++;
      if (pattern[i] === '^') i++;
      if (pattern[i] === ']') i++;
      while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1;
      last = null; i++;
    } else if (c === '(') { stack.push({ repeats: false, alternates: false, start: i }); last = null; i++; }
    else if (c === ')') {
      const group = stack.length > 1 ? stack.pop()! : null;
      last = group; i++;
      if (group) {
        const parent = stack[stack.length - 1]!;
        parent.repeats ||= group.repeats;
        parent.alternates ||= group.alternates;
      }
    } else if (c === '|') { stack[stack.length - 1]!.alternates = true; last = null; i++; }
    else {
      const q = quantifierAt(i);
      if (q) {
        if (q.repeats) {
          if (last && (last.repeats || last.alternates)) {
            const group = pattern.slice(last.start, i);
            return `the group ${group.length > 40 ? `${group.slice(0, 40)}…` : group} is repeated by "${pattern.slice(i, i + q.length)}" and itself ` +
              `${last.repeats ? 'repeats a part' : 'has alternatives'}: matching can take exponential time (catastrophic backtracking)`;
          }
          stack[stack.length - 1]!.repeats = true;
        }
        last = null; i += q.length;
      } else { last = null; i++; }
    }
  }
  return null;
}
