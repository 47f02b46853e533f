// SFT loss masks over a formatted chat (core/model/chat.ts). The loss covers the model's own
// turn only — the content of the trained assistant message and its end-of-turn token (ChatSpan.endOfTurn: the template's
// EOS / <|im_end|> / <|eot_id|> / <|EOT|> / </s>, never a separator written before it) — never the
// system, user or environment text. Two modes:
//   paper           the true-state spans (observation and prediction contents) are trained on
//                   (the paper's version: the model learns to write the true states)
//   maskStateSpans  those contents are excluded (the paper's "state spans masked" ablation);
//                   the tags themselves, the reasoning and the answer stay in the loss. The
//                   released code comes close to it by another road: it swaps the states for
//                   placeholder tokens and masks the token after each placeholder (off by one),
//                   adds a double <think> and keeps no state text in the history.
// Drill rows (selfplay.drills) train the state contents only (`statesOnly`): they teach the world
// model, while the plan and answer, the policy's part, come from the policy's own turns alone.
// The lookahead reply's candidates (landing cells or grids, reply-format.ts lookaheadLine / lookaheadGrids) are predictions too: they
// count as a state span (trained with statesOnly, dropped with maskStateSpans).
// Masks are aligned with chat.ids: mask[i] = 1 means token i is a target with loss.
import { clearRanges, findTagContents, messageTokenRanges, roleMask } from '../model/chat.js';
import type { ChatMessage, FormattedChat } from '../model/chat.js';
import type { Tokenizer } from '../model/tokenizer.js';
import { isLookaheadLine } from '../prompts/reply-format.js';

export const STATE_TAGS = ['observation', 'prediction'] as const;

export interface SftMaskOptions {
  maskStateSpans: boolean;          // ablation: drop the observation/prediction contents from the loss
  statesOnly?: boolean;             // drill rows: only the observation/prediction contents (the tokens maskStateSpans drops)
  messageIndexes?: number[];        // assistant messages to train (default: the last assistant message)
}

export function sftLossMask(chat: FormattedChat, messages: readonly ChatMessage[], tokenizer: Tokenizer, options: SftMaskOptions): number[] {
  const assistantIndexes = messages.map((m, i) => (m.role === 'assistant' ? i : -1)).filter((i) => i >= 0);
  if (assistantIndexes.length === 0)
    throw new Error("sftLossMask: expected at least one assistant message to train on; received none (a row must end with the model's turn)");
  const targets = options.messageIndexes ?? [assistantIndexes[assistantIndexes.length - 1]!];
  const mask = new Array<number>(chat.ids.length).fill(0);
  for (const index of targets) {
    if (messages[index]?.role !== 'assistant')
      throw new Error(`sftLossMask: message ${index} is not an assistant message (role ${messages[index]?.role ?? 'missing'})`);
    const span = chat.spans[index]!;
    const stateRanges = () => {
      const content = messages[index]!.content;
      const line = lookaheadLineRange(content);
      const ranges = [...STATE_TAGS.flatMap((tag) => findTagContents(content, tag)), ...(line ? [line] : [])];
      return messageTokenRanges(chat, tokenizer, index, messages, ranges, { mode: 'outer' });
    };
    if (options.statesOnly) {
      if (options.maskStateSpans) throw new Error('sftLossMask: statesOnly and maskStateSpans together leave nothing to train');
      for (const r of stateRanges()) for (let i = r.start; i < r.end && i < mask.length; i++) mask[i] = 1;
      continue;
    }
    // content + the end-of-turn token (<|im_end|>, <|eot_id|>, </s>, <|EOT|>…), not a separator the template writes before it
    for (let i = span.start; i < span.end && i < mask.length; i++) mask[i] = 1;
    if (span.endOfTurn >= 0 && span.endOfTurn < mask.length) mask[span.endOfTurn] = 1;
    if (options.maskStateSpans) clearRanges(mask, stateRanges());
  }
  return mask;
}

/** All assistant turns (used by bootstrap pretraining, where every model turn is trained). */
export function assistantMask(chat: FormattedChat): number[] {
  return roleMask(chat, 'assistant', { includeEnd: true });
}

/**
 * The character range of the lookahead reply's candidates (reply-format.ts isLookaheadLine): the text between
 * "</observation>" and the plan "I will try", less the newlines around it, when it has the candidate line's shape; null
 * otherwise (the paper's order, where the plan follows the observation directly, or other reasoning text).
 */
export function lookaheadLineRange(content: string): [number, number] | null {
  const close = '</observation>';
  const a = content.indexOf(close);
  if (a < 0) return null;
  const b = content.indexOf('I will try', a + close.length);
  if (b < 0) return null;
  let from = a + close.length, to = b;
  while (from < to && /\s/.test(content[from]!)) from++;
  while (to > from && /\s/.test(content[to - 1]!)) to--;
  return to > from && isLookaheadLine(content.slice(from, to)) ? [from, to] : null;
}
