// State perplexity: how surprised the model is by the true state text. For each row (a chat
// ending with an assistant turn whose <observation>/<prediction> contain state text), the mean
// negative log-likelihood of the state-content tokens given everything before them; perplexity =
// exp(mean NLL over all those tokens). Used by SFT (before/after) and core/eval/template-perplexity.ts.
// maskedNll is the one masked negative-log-likelihood loop: this file, SFT's validation loss and the
// eval stage's per-template perplexity all sum through it.
import { GENERATION_PREFIX } from '../prompts/reply-format.js';
import { findTagContents, formatChat, messageTokenRanges, type ChatMessage } from '../model/chat.js';
import type { ModelRuntime } from './runtime.js';

/**
 * The summed negative log-likelihood of the chosen tokens: for each row, -logprob of ids[p] given ids[0..p) at every p in
 * `positions` (ascending), rows scored `batchSize` at a time. tokens = the number of positions summed. One loop for all callers.
 */
export async function maskedNll(
  runtime: Pick<ModelRuntime, 'tokenStats'>,
  rows: ReadonlyArray<{ ids: number[]; positions: readonly number[] }>,
  batchSize: number,
): Promise<{ nll: number; tokens: number }> {
  let nll = 0, tokens = 0;
  for (let i = 0; i < rows.length; i += batchSize) {
    const batch = rows.slice(i, i + batchSize);
    const stats = await runtime.tokenStats(batch.map((r) => ({ ids: r.ids })), false);
    batch.forEach((row, b) => {
      for (const p of row.positions) { nll -= stats[b]!.logprobs[p]!; tokens++; }
    });
  }
  return { nll, tokens };
}

export interface PerplexityResult { perplexity: number; meanNll: number; tokens: number; rows: number }

export async function statePerplexity(
  runtime: ModelRuntime,
  rows: Array<{ messages: ChatMessage[] }>,
  maxLength: number,
  batchSize = 8,
): Promise<PerplexityResult> {
  const prepared: Array<{ ids: number[]; positions: number[] }> = [];
  for (const row of rows) {
    const { messages } = runtime.formatForTraining(row.messages, maxLength);
    const chat = formatChat(messages, runtime.tokenizer, { generationPrefix: GENERATION_PREFIX }); // as generation tokenised it (audit B9)
    const last = messages.length - 1;
    if (messages[last]?.role !== 'assistant') continue;
    const content = messages[last]!.content;
    const ranges = [...findTagContents(content, 'observation'), ...findTagContents(content, 'prediction')];
    const tokenRanges = messageTokenRanges(chat, runtime.tokenizer, last, messages, ranges, { mode: 'inner' });
    const positions = tokenRanges.flatMap((r) => Array.from({ length: r.end - r.start }, (_, k) => r.start + k));
    if (positions.length === 0 || chat.ids.length > runtime.maxContext) continue;
    prepared.push({ ids: chat.ids, positions });
  }
  const { nll, tokens } = await maskedNll(runtime, prepared, batchSize);
  const meanNll = tokens === 0 ? Number.NaN : nll / tokens;
  return { perplexity: Math.exp(meanNll), meanNll, tokens, rows: prepared.length };
}
