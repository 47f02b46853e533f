// Chat formatting with exact token spans, so losses can be masked by role (SFT trains on the
// assistant's tokens only) and by sub-span (the "mask state spans" ablation drops the
// <observation> and <prediction> contents from the loss).
//
// A Hugging Face folder's own chat template (tokenizer_config.json "chat_template" or chat_template.jinja)
// is rendered with @huggingface/jinja exactly as transformers' apply_chat_template renders it (same
// variables: messages, add_generation_prompt, the special tokens as strings; trim_blocks and
// lstrip_blocks). Dates never come from the clock: strftime_now formats the chat date, by default 26 Jul 2024 (what
// transformers 4.40, the product's reference, renders for Llama 3.x: it has no strftime_now, so those templates fall back
// to that date), or the run's `model.chat.date`, which also sets `date_string`. To find each message's exact token range, the template is also rendered with a
// unique placeholder in place of each content: the text around the placeholders is the template's own
// markup, and the real rendering must equal that markup with each content inserted verbatim (or trimmed,
// as Llama 3's `| trim`); a template that rewrites contents in other ways is refused with a clear error.
//
// Layout (`model.chat.layout`, setChatSettings): 'auto' (default) renders the folder's template, except a template that
// rewrites assistant turns around `</think>` (Qwen3's: it drops earlier turns' reasoning and rebuilds the last one as
// `<think>\n…\n</think>\n\n…`), which gets the built-in ChatML below with every turn verbatim: verl's Qwen3 multi-turn
// layout (its qwen3_acc_thinking template: the official one with assistant turns written `<|im_start|>assistant\n` + content,
// so the history only grows and training rows hold what the policy generated). 'template' always renders the folder's
// template (a Qwen3 one then refuses replies with `</think>`); 'chatml' always uses the built-in ChatML.
//
// Without a folder template (our character tokenizer, or a folder that has none) one of two built-in
// layouts is used (the tokenizer's `chatStyle` picks one; both are also stored as the Jinja
// chat_template in tokenizer_config.json, so Hugging Face's apply_chat_template gives the same text):
//   qwen:    <|im_start|>system\n{content}<|im_end|>\n<|im_start|>user\n{content}<|im_end|>\n
//            <|im_start|>assistant\n{content}<|im_end|>\n            (Qwen2 / Qwen2.5 instruct)
//   compact: <|system|>{content}<|im_end|><|user|>{content}<|im_end|><|assistant|>{content}<|im_end|>
// No default system message is inserted (Qwen2.5's own template adds one when none is given).
//
// Each piece (opening marker, content, closing marker) is tokenized on its own and the ids are
// concatenated, so every message's content occupies an exact token range. With the character
// tokenizer this equals tokenizing the whole text. With BPE it can differ from tokenizing the
// whole text at once only where a content starts or ends with whitespace that would merge with
// the neighbouring marker's newline; the model then sees a valid, slightly different segmentation.
import { Environment, Interpreter, Template } from '@huggingface/jinja';
import type { ChatStyle, TokenOffset, Tokenizer } from './tokenizer-common.js';
import { CHAT_TEMPLATE_LIMITS, renderBounded } from './chat-bounded.js';

export interface ChatMessage {
  role: string;      // "system" | "user" | "assistant" (qwen also accepts any other role name)
  content: string;
}

/** Token range of one message: [start, end) is the content; `closeStart` is its end-of-message token (`<|im_end|>`). */
export interface ChatSpan {
  role: string;
  messageIndex: number;
  start: number;
  end: number;
  /** Index of the message's `<|im_end|>` token (= end). */
  closeStart: number;
  /** Index after all closing tokens (qwen: `<|im_end|>` and `\n`; compact: `<|im_end|>`). */
  closeEnd: number;
  /**
   * Index of the end-of-turn token in the closing tokens [closeStart, closeEnd): the first one that is the tokenizer's EOS or
   * a stop id, or a known end-of-turn token (<|im_end|>, <|eot_id|>, <|EOT|>, </s>, <|end|>, <end_of_turn>, <|endoftext|>);
   * -1 when the closing markup has none. A separator before it (Llama-2-chat's space, DeepSeek-Coder's newline) is not it.
   */
  endOfTurn: number;
  /** Characters of a generation prefix tokenized on its own at the start of this (assistant) content, 0 if none. */
  prefixLength: number;
}

export interface FormattedChat {
  ids: number[];
  text: string;
  spans: ChatSpan[];
  style: ChatStyle;
  /** The folder's own chat template laid the chat out (style is then unused). */
  template: boolean;
  /** Where generated tokens begin (ids.length) when a generation prompt was added. */
  generationStart?: number;
  /** Token range of the forced generation prefix (e.g. `<think>`) inside the prompt. */
  prefixSpan?: { start: number; end: number };
}

export interface FormatChatOptions {
  /** Append the opening of an assistant message so the model writes the reply next. */
  addGenerationPrompt?: boolean;
  /**
   * Text forced at the start of every reply (e.g. "<think>"). With addGenerationPrompt it is
   * appended after the generation prompt. Assistant messages that start with it have it
   * tokenized on its own, apart from the rest of the content, exactly as generation saw it
   * (with BPE, "<think><observation>" encoded whole can merge "><" into one token, so training
   * ids would otherwise differ from what the model was conditioned on when it generated).
   * Pass the same prefix when formatting SFT rows as when generating.
   */
  generationPrefix?: string;
  /** Use this built-in layout instead of the tokenizer's chat template or chat style. */
  style?: ChatStyle;
}

export class ChatFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChatFormatError';
  }
}

const COMPACT_ROLES = ['system', 'user', 'assistant'];

/** Tokens that end a turn in the chat templates of common model families, besides the tokenizer's EOS and stop ids. */
export const END_OF_TURN_TOKENS = ['<|im_end|>', '<|eot_id|>', '<|EOT|>', '</s>', '<|end|>', '<end_of_turn>', '<|endoftext|>'] as const;

/** Ids that end a turn for this tokenizer: EOS, its stop ids, and END_OF_TURN_TOKENS it has. */
export function endOfTurnIds(tokenizer: Tokenizer): Set<number> {
  const ids = new Set<number>([tokenizer.eosTokenId, ...tokenizer.stopTokenIds]);
  for (const token of END_OF_TURN_TOKENS) {
    const id = tokenizer.tokenToId(token);
    if (id !== undefined) ids.add(id);
  }
  return ids;
}

/** The first end-of-turn token in ids[from, to), -1 if none. */
function findEndOfTurn(ids: readonly number[], from: number, to: number, endIds: ReadonlySet<number>): number {
  for (let i = from; i < to; i++) if (endIds.has(ids[i]!)) return i;
  return -1;
}

function requireToken(tokenizer: Tokenizer, token: string, style: ChatStyle): number {
  const id = tokenizer.tokenToId(token);
  if (id === undefined) {
    throw new ChatFormatError(
      `chat style "${style}" needs the token ${token}, which this ${tokenizer.kind} tokenizer does not have; use a tokenizer built for this style ` +
        `(the character tokenizer has all of them; HF models need Qwen's <|im_start|>/<|im_end|>)`,
    );
  }
  return id;
}

/** Opening and closing pieces of one message as [text, ids]. */
function markers(tokenizer: Tokenizer, style: ChatStyle, role: string): { open: [string, number[]]; close: [string, number[]] } {
  const imEnd = requireToken(tokenizer, '<|im_end|>', style);
  if (style === 'compact') {
    if (!COMPACT_ROLES.includes(role)) {
      throw new ChatFormatError(`compact chat style: unknown role ${JSON.stringify(role)}; expected one of ${COMPACT_ROLES.join(', ')}`);
    }
    const token = `<|${role}|>`;
    return { open: [token, [requireToken(tokenizer, token, style)]], close: ['<|im_end|>', [imEnd]] };
  }
  const imStart = requireToken(tokenizer, '<|im_start|>', style);
  const head = `${role}\n`;
  return { open: [`<|im_start|>${head}`, [imStart, ...tokenizer.encode(head)]], close: ['<|im_end|>\n', [imEnd, ...tokenizer.encode('\n')]] };
}

/** Formats messages into ids and text with each message's content token span. */
export function formatChat(messages: readonly ChatMessage[], tokenizer: Tokenizer, options: FormatChatOptions = {}): FormattedChat {
  messages.forEach((message, messageIndex) => {
    if (typeof message?.role !== 'string' || typeof message.content !== 'string') {
      throw new ChatFormatError(`formatChat: message ${messageIndex} must be { role: string, content: string }, got ${JSON.stringify(message)?.slice(0, 120)}`);
    }
  });
  let style = options.style ?? tokenizer.chatStyle;
  if (tokenizer.chatTemplate !== undefined && options.style === undefined) {
    if (templateLayout(tokenizer) === 'template') return formatWithTemplate(messages, tokenizer, options);
    style = 'qwen';
  }
  const ids: number[] = [];
  let text = '';
  const spans: ChatSpan[] = [];
  messages.forEach((message, messageIndex) => {
    const { open, close } = markers(tokenizer, style, message.role);
    text += open[0];
    ids.push(...open[1]);
    const start = ids.length;
    const prefix = message.role === 'assistant' ? options.generationPrefix : undefined;
    let prefixLength = 0;
    if (prefix && message.content.startsWith(prefix)) {
      prefixLength = prefix.length;
      ids.push(...tokenizer.encode(prefix), ...tokenizer.encode(message.content.slice(prefixLength)));
    } else {
      ids.push(...tokenizer.encode(message.content));
    }
    text += message.content;
    const end = ids.length;
    text += close[0];
    ids.push(...close[1]);
    spans.push({ role: message.role, messageIndex, start, end, closeStart: end, closeEnd: ids.length, endOfTurn: end, prefixLength });
  });
  const result: FormattedChat = { ids, text, spans, style, template: false };
  if (options.addGenerationPrompt) {
    const { open } = markers(tokenizer, style, 'assistant');
    text += open[0];
    ids.push(...open[1]);
    if (options.generationPrefix) {
      const start = ids.length;
      ids.push(...tokenizer.encode(options.generationPrefix));
      text += options.generationPrefix;
      result.prefixSpan = { start, end: ids.length };
    }
    result.text = text;
    result.generationStart = ids.length;
  } else {
    result.text = text;
  }
  return result;
}

/** How folder chats are laid out and dated (RunConfig model.chat; a run sets it when it chooses its backend). */
export interface ChatSettings {
  /**
   * 'auto': the folder's template, except one that rewrites assistant turns around `</think>` (Qwen3's), which gets ChatML with
   * every turn verbatim (verl's Qwen3 multi-turn layout); 'template': always the folder's template; 'chatml': always ChatML.
   */
  layout: 'auto' | 'template' | 'chatml';
  /** The date templates print ("Today Date" of Llama 3.x), 'YYYY-MM-DD'; null: 2024-07-26, transformers 4.40's rendering. */
  date: string | null;
}

/** transformers 4.40 has no strftime_now: Llama 3.x templates then print their fallback, 26 Jul 2024. */
export const DEFAULT_CHAT_DATE = '2024-07-26';
const DEFAULT_CHAT_SETTINGS: ChatSettings = { layout: 'auto', date: null };
let chatSettingsNow: ChatSettings = { ...DEFAULT_CHAT_SETTINGS };

/** The chat settings in force (a copy). */
export function chatSettings(): ChatSettings { return { ...chatSettingsNow }; }

/**
 * Set the chat layout and date for what follows in this process (unset fields: the defaults); returns the settings in force.
 * Throws on a layout other than auto/template/chatml or a date that is not a real 'YYYY-MM-DD' day.
 */
export function setChatSettings(settings: Partial<ChatSettings> | undefined): ChatSettings {
  const next: ChatSettings = { ...DEFAULT_CHAT_SETTINGS, ...(settings ?? {}) };
  if (!['auto', 'template', 'chatml'].includes(next.layout))
    throw new ChatFormatError(`model.chat.layout: expected auto, template or chatml, got ${JSON.stringify(next.layout)}`);
  if (next.date !== null) chatDate(next.date);
  chatSettingsNow = next;
  return chatSettings();
}

function chatDate(text: string): Date {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const date = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
  if (!date || date.toISOString().slice(0, 10) !== text)
    throw new ChatFormatError(`model.chat.date: expected a day as 'YYYY-MM-DD' (e.g. '2024-07-26'), got ${JSON.stringify(text)}`);
  return date;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Python's strftime on a day (UTC, English names, midnight): %Y %y %m %d %-d %b %B %a %A %H %M %S %j %%; other codes stay as written. */
export function strftimeDay(date: Date, format: string): string {
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return format.replace(/%-?[a-zA-Z%]/g, (code) => {
    switch (code) {
      case '%Y': return String(date.getUTCFullYear());
      case '%y': return pad(date.getUTCFullYear() % 100);
      case '%m': return pad(date.getUTCMonth() + 1);
      case '%d': return pad(date.getUTCDate());
      case '%-d': return String(date.getUTCDate());
      case '%b': return MONTHS[date.getUTCMonth()]!.slice(0, 3);
      case '%B': return MONTHS[date.getUTCMonth()]!;
      case '%a': return WEEKDAYS[date.getUTCDay()]!.slice(0, 3);
      case '%A': return WEEKDAYS[date.getUTCDay()]!;
      case '%H': case '%M': case '%S': return '00';
      case '%j': return pad(Math.floor((date.getTime() - Date.UTC(date.getUTCFullYear(), 0, 1)) / 86_400_000) + 1, 3);
      case '%%': return '%';
      default: return code;
    }
  });
}

/** A template that rewrites assistant turns around `</think>` (Qwen3's reasoning_content split). */
export function rewritesThinking(source: string): boolean {
  return /reasoning_content/.test(source) || /split\(\s*['"]<\/think>['"]\s*\)/.test(source);
}

/** Which layout formatChat uses for this tokenizer's folder template under the settings in force ('template' or the built-in ChatML). */
export function templateLayout(tokenizer: Tokenizer): 'template' | 'chatml' {
  const { layout } = chatSettingsNow;
  if (tokenizer.chatTemplate === undefined || layout === 'chatml') return 'chatml';
  if (layout === 'template') return 'template';
  return rewritesThinking(tokenizer.chatTemplate) ? 'chatml' : 'template';
}

const templateCache = new Map<string, Template>();

/** Python's range() for templates. */
function pythonRange(start: number, stop?: number, step = 1): number[] {
  const [from, to] = stop === undefined ? [0, start] : [start, stop];
  if (step === 0) throw new Error('range() step must not be zero');
  const items = Math.ceil((to - from) / step);
  if (items > CHAT_TEMPLATE_LIMITS.maxRangeItems) {   // range(10**9) allocated until V8 aborted (issue 37 N1)
    throw new Error(`range() of ${items} items: more than the ${CHAT_TEMPLATE_LIMITS.maxRangeItems} a chat template may loop over (CHAT_TEMPLATE_LIMITS)`);
  }
  const out: number[] = [];
  for (let i = from; step > 0 ? i < to : i > to; i += step) out.push(i);
  return out;
}

/**
 * Template.render with the renderer's globals, except strftime_now, which formats `date` instead of reading the clock
 * (Template.render declares its own strftime_now, which a context variable cannot replace).
 */
function renderTemplate(template: Template, items: Record<string, unknown>, date: Date): string {
  const env = new Environment();
  const globals: Record<string, unknown> = {
    false: false, true: true, none: null, False: false, True: true, None: null,
    raise_exception: (message: unknown) => { throw new Error(String(message)); },
    range: pythonRange,
    strftime_now: (format: unknown) => strftimeDay(date, String(format)),
  };
  for (const [key, value] of Object.entries({ ...globals, ...items })) env.set(key, value);
  return new Interpreter(env).run(template.parsed).value as string;
}

/** A template's source parsed once (per thread). */
function parsedTemplate(source: string): Template {
  let template = templateCache.get(source);
  if (!template) {
    template = new Template(source);
    templateCache.set(source, template);
  }
  return template;
}

/** Renders a chat template's source with `items` on the day `date` ('YYYY-MM-DD'), on this thread: the render worker's body (chat-worker.ts). */
export function renderTemplateText(source: string, items: Record<string, unknown>, date: string): string {
  return renderTemplate(parsedTemplate(source), items, chatDate(date));
}

/**
 * Renders the tokenizer's chat template as transformers' apply_chat_template does (text only), in the render worker
 * with time, memory and output limits (chat-bounded.ts, CHAT_TEMPLATE_LIMITS): a template over them is a ChatFormatError.
 */
export function renderChatTemplate(messages: readonly ChatMessage[], tokenizer: Tokenizer, addGenerationPrompt: boolean): string {
  const source = tokenizer.chatTemplate;
  if (source === undefined) throw new ChatFormatError(`this ${tokenizer.kind} tokenizer has no chat template`);
  if (source.length > CHAT_TEMPLATE_LIMITS.maxTemplateChars) {
    throw new ChatFormatError(`the model folder's chat template is ${source.length} characters, more than the ${CHAT_TEMPLATE_LIMITS.maxTemplateChars} ` +
      'a chat template may have (CHAT_TEMPLATE_LIMITS; real ones are a few KB)');
  }
  let template = templateCache.get(source);
  if (!template) {
    try {
      template = new Template(source);
    } catch (err) {
      throw new ChatFormatError(`the model folder's chat template (tokenizer_config.json "chat_template") does not parse: ${(err as Error).message}`);
    }
    templateCache.set(source, template);
  }
  try {
    const day = chatSettingsNow.date ?? DEFAULT_CHAT_DATE;
    const date = chatDate(day);
    const items = {
      ...tokenizer.chatTemplateContext,
      ...(chatSettingsNow.date !== null ? { date_string: strftimeDay(date, '%d %b %Y') } : {}),
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      add_generation_prompt: addGenerationPrompt,
    };
    return renderBounded(source, items, day, () => renderTemplate(template, items, date));
  } catch (err) {
    if (err instanceof ChatFormatError) throw err;
    throw new ChatFormatError(`the model folder's chat template failed to render ${messages.length} messages: ${(err as Error).message}`);
  }
}

/** Placeholder for message i's content while finding the template's own markup (private-use characters). */
const placeholder = (i: number): string => `\uE000${i}\uE001`;

/** formatChat through the folder's chat template (see the header comment). */
function formatWithTemplate(messages: readonly ChatMessage[], tokenizer: Tokenizer, options: FormatChatOptions): FormattedChat {
  const marked = messages.map((m, i) => ({ role: m.role, content: placeholder(i) }));
  const skeleton = renderChatTemplate(marked, tokenizer, false);
  // markup[i] is the text before content i; markup[n] is the text after the last content.
  const markup: string[] = [];
  let from = 0;
  for (let i = 0; i < messages.length; i++) {
    const at = skeleton.indexOf(placeholder(i), from);
    if (at < 0 || skeleton.indexOf(placeholder(i), at + 1) >= 0) {
      throw new ChatFormatError(
        `the model folder's chat template does not write message ${i}'s content (${messages[i].role}) exactly once, in order; ` +
          'its token spans cannot be found (use a template that writes every message, or set model.chat.layout to "chatml")',
      );
    }
    markup.push(skeleton.slice(from, at));
    from = at + placeholder(i).length;
  }
  markup.push(skeleton.slice(from));
  const real = renderChatTemplate(messages, tokenizer, false);
  const assemble = (contents: readonly string[]) => markup.map((m, i) => m + (contents[i] ?? '')).join('');
  let contents = messages.map((m) => m.content);
  if (assemble(contents) !== real) {
    contents = messages.map((m) => m.content.trim());
    if (assemble(contents) !== real) {
      throw new ChatFormatError(
        "the model folder's chat template changes message contents in a way other than trimming whitespace (e.g. it strips " +
          'earlier <think> reasoning); the workbench cannot map its token spans (set the run\'s model.chat.layout to "chatml" to use ChatML)',
      );
    }
  }
  // Where each message's closing markup ends: the end of the chat rendered up to and including it
  // (when the template renders prefixes consistently; otherwise all markup up to the next content is its close).
  const closeLength: number[] = [];
  for (let i = 0; i < messages.length; i++) {
    const between = markup[i + 1];
    const upTo = i === messages.length - 1 ? skeleton : renderChatTemplate(marked.slice(0, i + 1), tokenizer, false);
    const contentEnd = skeleton.indexOf(placeholder(i)) + placeholder(i).length;
    const n = upTo.length - contentEnd;
    closeLength.push(skeleton.startsWith(upTo) && n >= 0 && n <= between.length ? n : between.length);
  }
  const ids: number[] = [];
  const spans: ChatSpan[] = [];
  const endIds = endOfTurnIds(tokenizer);
  ids.push(...tokenizer.encode(markup[0]));
  messages.forEach((message, messageIndex) => {
    const content = contents[messageIndex];
    const start = ids.length;
    const prefix = message.role === 'assistant' ? options.generationPrefix : undefined;
    let prefixLength = 0;
    if (prefix && content.startsWith(prefix)) {
      prefixLength = prefix.length;
      ids.push(...tokenizer.encode(prefix), ...tokenizer.encode(content.slice(prefixLength)));
    } else {
      ids.push(...tokenizer.encode(content));
    }
    const end = ids.length;
    const after = markup[messageIndex + 1];
    const close = after.slice(0, closeLength[messageIndex]);
    ids.push(...tokenizer.encode(close));
    const closeEnd = ids.length;
    ids.push(...tokenizer.encode(after.slice(close.length)));
    const endOfTurn = findEndOfTurn(ids, end, closeEnd, endIds);
    spans.push({ role: message.role, messageIndex, start, end, closeStart: end, closeEnd, endOfTurn, prefixLength });
  });
  const result: FormattedChat = { ids, text: real, spans, style: tokenizer.chatStyle, template: true };
  if (options.addGenerationPrompt) {
    const withPrompt = renderChatTemplate(marked, tokenizer, true);
    if (!withPrompt.startsWith(skeleton)) {
      throw new ChatFormatError("the model folder's chat template changes earlier text when add_generation_prompt is set; the prompt cannot be built");
    }
    const generationPrompt = withPrompt.slice(skeleton.length);
    ids.push(...tokenizer.encode(generationPrompt));
    result.text = real + generationPrompt;
    if (options.generationPrefix) {
      const start = ids.length;
      ids.push(...tokenizer.encode(options.generationPrefix));
      result.text += options.generationPrefix;
      result.prefixSpan = { start, end: ids.length };
    }
    result.generationStart = ids.length;
  }
  return result;
}

export interface RoleMaskOptions {
  /**
   * Also mark each selected message's end-of-turn token (ChatSpan.endOfTurn: `<|im_end|>`, `<|eot_id|>`, `</s>`…) so the model learns to stop.
   * Default true.
   */
  includeEnd?: boolean;
}

/**
 * Per-token 0/1 mask (aligned with `chat.ids`): 1 on the content tokens of messages whose role
 * is in `roles`. For a next-token loss, target position i (predicted from position i-1) is
 * trained when mask[i] is 1.
 */
export function roleMask(chat: FormattedChat, roles: string | readonly string[], options: RoleMaskOptions = {}): number[] {
  const wanted = new Set(typeof roles === 'string' ? [roles] : roles);
  const includeEnd = options.includeEnd ?? true;
  const mask = new Array<number>(chat.ids.length).fill(0);
  for (const span of chat.spans) {
    if (!wanted.has(span.role)) continue;
    for (let i = span.start; i < span.end; i++) mask[i] = 1;
    if (includeEnd && span.endOfTurn >= 0) mask[span.endOfTurn] = 1;
  }
  return mask;
}

export interface TokenRange {
  start: number;
  end: number;
  /** The character range starts and ends exactly on token boundaries. */
  exact: boolean;
}

export interface SubSpanOptions {
  /**
   * How tokens that straddle a range boundary are treated (only possible with BPE):
   * `outer` (default) includes every token that overlaps the range (the mask covers at least
   * the range: right for masking state text out of a loss); `inner` keeps only tokens wholly
   * inside it (never touches text outside the range).
   */
  mode?: 'outer' | 'inner';
}

/**
 * Token index ranges (in `chat.ids`) of character ranges [start, end) inside one message's
 * content. Exact with the character tokenizer; with BPE see `mode` and `exact`.
 */
export function messageTokenRanges(
  chat: FormattedChat, tokenizer: Tokenizer, messageIndex: number, messages: readonly ChatMessage[],
  charRanges: readonly [number, number][], options: SubSpanOptions = {},
): TokenRange[] {
  const span = chat.spans[messageIndex];
  const message = messages[messageIndex];
  if (!span || !message) {
    throw new ChatFormatError(`messageTokenRanges: message ${messageIndex} does not exist (the chat has ${chat.spans.length} messages)`);
  }
  const { ids, offsets } = contentOffsets(tokenizer, message.content, span);
  if (ids.length !== span.end - span.start || ids.some((id, k) => id !== chat.ids[span.start + k])) {
    throw new ChatFormatError(
      `messageTokenRanges: message ${messageIndex} does not match the formatted chat (pass the same messages and tokenizer used for formatChat)`,
    );
  }
  return charRanges.map(([from, to]) => {
    if (!(Number.isInteger(from) && Number.isInteger(to) && from >= 0 && from <= to && to <= message.content.length)) {
      throw new ChatFormatError(
        `messageTokenRanges: character range [${from}, ${to}) is not inside message ${messageIndex} (length ${message.content.length})`,
      );
    }
    const local = tokenRangeOf(offsets, from, to, options.mode ?? 'outer');
    return { start: span.start + local.start, end: span.start + local.end, exact: local.exact };
  });
}

/** Ids and character offsets of a message's content, split after the generation prefix as formatChat did. */
function contentOffsets(tokenizer: Tokenizer, content: string, span: ChatSpan): { ids: number[]; offsets: TokenOffset[] } {
  const cut = span.prefixLength;
  if (cut === 0) return tokenizer.encodeWithOffsets(content);
  const head = tokenizer.encodeWithOffsets(content.slice(0, cut));
  const tail = tokenizer.encodeWithOffsets(content.slice(cut));
  return { ids: [...head.ids, ...tail.ids], offsets: [...head.offsets, ...tail.offsets.map(([a, b]) => [a + cut, b + cut] as TokenOffset)] };
}

function tokenRangeOf(offsets: readonly TokenOffset[], from: number, to: number, mode: 'outer' | 'inner'): TokenRange {
  let start = -1;
  let end = -1;
  for (let k = 0; k < offsets.length; k++) {
    const [a, b] = offsets[k];
    const inside = mode === 'inner' ? a >= from && b <= to && b > a : a < to && b > from;
    if (inside) {
      if (start < 0) start = k;
      end = k + 1;
    }
  }
  if (start < 0) {
    // Empty range (or no whole token inside it): an empty token range at the first token at/after `from`.
    const at = offsets.findIndex(([a]) => a >= from);
    const k = at < 0 ? offsets.length : at;
    return { start: k, end: k, exact: from === to };
  }
  const exact = offsets[start][0] === from && offsets[end - 1][1] === to;
  return { start, end, exact };
}

/**
 * Character ranges of the contents of every `<tag>…</tag>` in `text` (between the tags,
 * excluding them), e.g. findTagContents(reply, "observation").
 */
export function findTagContents(text: string, tag: string): [number, number][] {
  const open = `<${tag}>`;
  const close = `</${tag}>`;
  const ranges: [number, number][] = [];
  let from = 0;
  while (true) {
    const a = text.indexOf(open, from);
    if (a < 0) break;
    const b = text.indexOf(close, a + open.length);
    if (b < 0) break;
    ranges.push([a + open.length, b]);
    from = b + close.length;
  }
  return ranges;
}

/** Sets mask[i] = 0 for i in each range (returns the same array). */
export function clearRanges(mask: number[], ranges: readonly { start: number; end: number }[]): number[] {
  for (const r of ranges) for (let i = r.start; i < r.end; i++) mask[i] = 0;
  return mask;
}
