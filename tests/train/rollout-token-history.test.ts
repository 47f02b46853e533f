// rollout.history 'tokens' (token in, token out, as verl's agent loop): a later turn's prompt is the last prompt and the ids
// the model sampled, then the template's tokens after the reply (ModelRuntime.continuePrompt). Where the sampled ids are the
// text's own encoding it equals the prompt re-rendered from text ('text', the release's way), on the templates of Qwen2.5,
// SmolLM2, Llama 3.x and DeepSeek-Coder, stopped on the end-of-turn token or cut at the token limit; where a reply's text
// re-tokenizes to other ids (a BPE merge the sampler did not take) only 'tokens' keeps the episode one chain of prefixes,
// so its turns train as one row (rl.updateRows 'episode') and the prefix cache reuses every turn.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatChat, type ChatMessage } from '../../core/model/chat.js';
import { RuntimeBase } from '../../core/model/runtime.js';
import { loadTokenizer } from '../../core/model/tokenizer.js';
import type { Tokenizer } from '../../core/model/tokenizer.js';
import { RolloutSectionSchema } from '../../core/api/run-config.js';
import { chainBreaks, playEpisodes, rolloutMetrics, type SessionLike, type TextPolicy } from '../../core/train/rollout.js';
import { prefixCarriers, turnSamples } from '../../core/train/ppo.js';
import type { TurnRecord } from '../../core/api/records.js';
import { QWEN25_TEMPLATE } from '../fixtures/chat-templates.js';
import { DEEPSEEK_CODER_TEMPLATE, LLAMA32_TEMPLATE, SMOLLM2_TEMPLATE } from '../model/chat-family-templates.js';
import { byteLevelTokenizerJson, writeChatFolder, type FolderSpec } from '../model/chat-folders.js';
import { tinyConfig } from '../model/helpers.js';

class Runtime extends RuntimeBase {}

const CHATML = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
const FAMILIES: Record<string, FolderSpec> = {
  qwen25: { template: QWEN25_TEMPLATE, specials: CHATML, config: { eos_token: '<|im_end|>', pad_token: '<|endoftext|>' } },
  smollm2: { template: SMOLLM2_TEMPLATE, specials: CHATML, config: { bos_token: '<|im_start|>', eos_token: '<|im_end|>', pad_token: '<|im_end|>' } },
  llama3: {
    template: LLAMA32_TEMPLATE, specials: ['<|begin_of_text|>', '<|end_of_text|>', '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>'],
    config: { bos_token: '<|begin_of_text|>', eos_token: '<|eot_id|>' },
  },
  deepseek: {
    template: DEEPSEEK_CODER_TEMPLATE, specials: ['<｜begin▁of▁sentence｜>', '<｜end▁of▁sentence｜>', '<|EOT|>'],
    config: { bos_token: '<｜begin▁of▁sentence｜>', eos_token: '<|EOT|>' },
  },
};
const PREFIX = '<think>';
const REPLY = '<think>the goal is below</think><answer>Left</answer>';
const TURN0: ChatMessage[] = [{ role: 'system', content: 'You solve grid puzzles.' }, { role: 'user', content: 'State:\n_P_\n#G#' }];
const TURN1: ChatMessage[] = [...TURN0, { role: 'assistant', content: REPLY }, { role: 'user', content: 'State:\nP__\n#G#' }];

let root = '';
const runtimes = new Map<string, Runtime>();
const runtime = (name: string): Runtime => runtimes.get(name)!;

/** SmolLM2's layout with one BPE merge, "L" + "e" → "Le": the text "Left" encodes as [Le, f, t], a sampler may write [L, e, f, t]. */
function writeMergeFolder(dir: string): void {
  const json = byteLevelTokenizerJson(CHATML) as { model: { vocab: Record<string, number>; merges: string[] } };
  json.model.vocab.Le = 256 + CHATML.length;
  json.model.merges = ['L e'];
  writeChatFolder(root, 'merge', FAMILIES.smollm2!);
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(json));
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'token-history-'));
  for (const [name, spec] of Object.entries(FAMILIES)) writeChatFolder(root, name, spec);
  writeMergeFolder(join(root, 'merge'));
  for (const name of [...Object.keys(FAMILIES), 'merge']) {
    const tokenizer: Tokenizer = await loadTokenizer(join(root, name));
    runtimes.set(name, new Runtime(tinyConfig({ vocab_size: tokenizer.vocabSize, max_position_embeddings: 4096 }), tokenizer));
  }
}, 60_000);

afterAll(() => { if (root) rmSync(root, { recursive: true, force: true }); });

describe('ModelRuntime.continuePrompt', () => {
  it.each(Object.keys(FAMILIES))('%s: the sampled ids, then the template from the reply\'s end-of-turn on (the text render where they agree)', (name) => {
    const rt = runtime(name);
    const p0 = rt.encodePrompt(TURN0, PREFIX, 4096);
    const text1 = rt.encodePrompt(TURN1, PREFIX, 4096);
    const chat = formatChat(TURN1, rt.tokenizer, { addGenerationPrompt: true, generationPrefix: PREFIX });
    expect(chat.ids).toEqual(text1);
    const reply = chat.spans.filter((s) => s.role === 'assistant').at(-1)!;
    expect(reply.endOfTurn).toBeGreaterThanOrEqual(reply.end);
    // the reply as the model would write it after turn 0's prompt: the reply's content ids (its text's own encoding)
    const content = chat.ids.slice(reply.start + rt.tokenizer.encode(PREFIX).length, reply.end);
    // stopped on the end-of-turn token (after any separator the template writes before it: DeepSeek-Coder's newline)
    const stopped = [...p0, ...content, ...chat.ids.slice(reply.end, reply.endOfTurn + 1)];
    expect(rt.continuePrompt(stopped, TURN1, PREFIX, 4096)).toEqual([...stopped, ...text1.slice(reply.endOfTurn + 1)]);
    // cut at the token limit: the template's closing markup from its first token on (separator, end-of-turn, ...)
    const cut = [...p0, ...content];
    expect(rt.continuePrompt(cut, TURN1, PREFIX, 4096)).toEqual([...cut, ...text1.slice(reply.end)]);
    // where turn 0's prompt is the start of turn 1's text render (every family here but DeepSeek-Coder, whose generation
    // prompt "### Response:" lacks the newline its rendered replies get), token history and text render are the same ids
    const agree = text1.slice(0, p0.length).every((id, i) => id === p0[i]);
    expect(agree).toBe(name !== 'deepseek');
    if (agree) {
      expect(rt.continuePrompt(stopped, TURN1, PREFIX, 4096)).toEqual(text1);
      expect(rt.continuePrompt(cut, TURN1, PREFIX, 4096)).toEqual(text1);
    }
  });

  it('keeps the ids the model sampled where the reply\'s text re-tokenizes to others', () => {
    const rt = runtime('merge');
    const tok = rt.tokenizer;
    const [L, e, Le] = [tok.encode('L')[0]!, tok.encode('e')[0]!, tok.tokenToId('Le')!];
    expect(tok.encode('Left')[0], 'the folder merges L+e').toBe(Le);
    const p0 = rt.encodePrompt(TURN0, PREFIX, 4096);
    const body = REPLY.slice(PREFIX.length);
    const at = body.indexOf('Left');
    const sampled = [...tok.encode(body.slice(0, at)), L, e, ...tok.encode(body.slice(at + 2)), tok.tokenToId('<|im_end|>')!];
    expect(tok.decode(sampled.slice(0, -1))).toBe(body);
    const history = [...p0, ...sampled];
    const text1 = rt.encodePrompt(TURN1, PREFIX, 4096);
    expect(text1.slice(0, history.length), 'the text render re-tokenizes the reply').not.toEqual(history);
    const tokens1 = rt.continuePrompt(history, TURN1, PREFIX, 4096)!;
    expect(tokens1.slice(0, history.length)).toEqual(history);
    // what follows is the text render's own tail: "\n", the next user message, the assistant opening and <think>
    const tail = tokens1.slice(history.length);
    expect(text1.slice(text1.length - tail.length)).toEqual(tail);
    expect(tok.decode(tail)).toBe('\n<|im_start|>user\nState:\nP__\n#G#<|im_end|>\n<|im_start|>assistant\n<think>');
    expect(rt.continuePrompt(history, TURN1, PREFIX, tokens1.length)).toEqual(tokens1);
    expect(rt.continuePrompt(history, TURN1, PREFIX, tokens1.length - 1), 'past the budget: null (the caller renders text)').toBeNull();
    expect(rt.continuePrompt(history, TURN0, PREFIX, 4096), 'no reply in the chat').toBeNull();
  });
});

/** A three-turn episode whose session keeps the chat as text (core/prompts/session.ts does the same). */
class Session implements SessionLike {
  readonly replies: string[] = [];
  messages(): ChatMessage[] {
    const out: ChatMessage[] = [TURN0[0]!];
    for (let t = 0; t <= this.replies.length; t++) {
      out.push({ role: 'user', content: `State ${t}:\nP__\n#G#` });
      if (t < this.replies.length) out.push({ role: 'assistant', content: this.replies[t]! });
    }
    return out;
  }
  generationPrefix(): string { return PREFIX; }
  applyResponse(text: string): TurnRecord { this.replies.push(text); return {} as TurnRecord; }
  get done(): boolean { return this.replies.length >= 3; }
}

/** The merge folder's policy: every reply is "…Left…" written as [L, e] (never the merged token) and stopped on <|im_end|>. */
function mergePolicy(prompts: number[][]): TextPolicy {
  const rt = runtime('merge'), tok = rt.tokenizer;
  const body = REPLY.slice(PREFIX.length), at = body.indexOf('Left');
  const ids = [...tok.encode(body.slice(0, at)), tok.encode('L')[0]!, tok.encode('e')[0]!, ...tok.encode(body.slice(at + 2)), tok.tokenToId('<|im_end|>')!];
  return {
    encodePrompt: (m, p, n) => rt.encodePrompt(m, p, n),
    continuePrompt: (h, m, p, n) => rt.continuePrompt(h, m, p, n),
    generate: async (batch) => { prompts.push(...batch); return batch.map(() => ({ ids: [...ids], text: body, logprobs: ids.map(() => -1) })); },
  };
}

const EMPTY_RECORD = { turns: [], totalReward: 0, success: false, numTurns: 0, numActions: 0 } as never;

async function play(history: 'text' | 'tokens', maxContextTokens = 4096) {
  const prompts: number[][] = [];
  const limits = RolloutSectionSchema.parse({ maxNewTokens: 64, maxContextTokens, batchSize: 2, history });
  const specs = [0, 1].map((k) => ({ seed: 1, group: 0, sample: k, id: `e${k}` }));
  const results = await playEpisodes(specs, limits, 7, {
    createSession: () => new Session(), finish: () => ({}) as never, policy: mergePolicy(prompts),
  });
  return { results, prompts };
}

describe('rollout.history', () => {
  it("defaults to 'text' (the release's way) and rejects other values", () => {
    expect(RolloutSectionSchema.parse({}).history).toBe('text');
    expect(() => RolloutSectionSchema.parse({ history: 'ids' })).toThrow(/history/);
  });

  it("'tokens' keeps each episode one chain of prefixes (one update row); 'text' breaks it at every re-tokenized reply", async () => {
    for (const mode of ['tokens', 'text'] as const) {
      const { results } = await play(mode);
      expect(results.map((r) => r.tokens.length)).toEqual([3, 3]);
      // rollout/chainBreaks: every later turn of 'text' re-tokenized "Left", none of 'tokens'
      expect(chainBreaks(results)).toEqual({ breaks: mode === 'tokens' ? 0 : 4, pairs: 4 });
      expect(rolloutMetrics(results.map((r) => ({ ...r, record: EMPTY_RECORD })))['rollout/chainBreaks']).toBe(mode === 'tokens' ? 0 : 1);
      const samples = turnSamples(results, () => true);
      const carriers = new Set(prefixCarriers(samples));
      expect(carriers.size, `${mode}: rows after merging chains`).toBe(mode === 'tokens' ? 2 : 6);
      for (const r of results) {
        for (let t = 1; t < r.tokens.length; t++) {
          const before = [...r.tokens[t - 1]!.promptIds, ...r.tokens[t - 1]!.responseIds];
          const extends_ = r.tokens[t]!.promptIds.slice(0, before.length).every((id, j) => id === before[j]);
          expect(extends_, `${mode} turn ${t}`).toBe(mode === 'tokens');
        }
      }
    }
  });

  it('rollout/chainBreaks counts only turns after a generated reply, and is absent without token ids', () => {
    const turn = (promptIds: number[], responseIds: number[]) => ({ promptIds, responseIds, logprobs: responseIds.map(() => 0) });
    const written = { tokens: [turn([1, 2], []), turn([9, 9], [3])] };          // a written first reply: nothing to continue
    const cut = { tokens: [turn([1, 2], [3]), turn([1, 2, 3, 4], [5]), turn([2, 3, 4, 5, 6], [7])] };   // the last one cut
    expect(chainBreaks([written, cut])).toEqual({ breaks: 1, pairs: 2 });
    expect(rolloutMetrics([{ record: EMPTY_RECORD, ...cut }])['rollout/chainBreaks']).toBe(0.5);
    expect(rolloutMetrics([{ record: EMPTY_RECORD }])).not.toHaveProperty('rollout/chainBreaks');
    expect(rolloutMetrics([{ record: EMPTY_RECORD, ...written }])).not.toHaveProperty('rollout/chainBreaks');
  });

  it("'tokens' falls back to the text render (oldest turns dropped) when the history outgrows the budget", async () => {
    const full = await play('tokens');
    const lengths = full.results[0]!.tokens.map((t) => t.promptIds.length);
    // a budget that holds turn 1's continued prompt but not turn 2's: turn 2 is rendered from text, truncated
    const budget = lengths[1]! + 64 + 8;
    const { results } = await play('tokens', budget + 64);
    const tokens = results[0]!.tokens;
    expect(tokens[1]!.promptIds).toEqual(full.results[0]!.tokens[1]!.promptIds);
    expect(tokens[1]!.promptIds.slice(0, lengths[0]!)).toEqual(tokens[0]!.promptIds);   // turn 1 continued turn 0's ids
    expect(tokens[1]!.promptIds.slice(lengths[0]!, lengths[0]! + tokens[0]!.responseIds.length)).toEqual(tokens[0]!.responseIds);
    const rt = runtime('merge');
    const s = new Session();
    s.replies.push(REPLY, REPLY);
    expect(tokens[2]!.promptIds).toEqual(rt.encodePrompt(s.messages(), PREFIX, budget));
    expect(tokens[2]!.promptIds.length).toBeLessThan(lengths[2]!);
  });
});
