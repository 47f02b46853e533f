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
