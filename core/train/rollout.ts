// Rollouts: batched multi-turn episodes over many environments at once. Episodes come in groups
// that share a puzzle seed (group g, sample s). Every turn, the still-running episodes' prompts
// are tokenized (rollout.history 'text') or continued from the last prompt and its sampled ids
// ('tokens'), truncated to the context budget (oldest turns dropped first), generated together
// in one batch, and applied to their sessions (core/prompts: parse, execute actions, reward).
// Returns EpisodeRecords (written by the stages with ctx.episode) plus, per turn, the token ids
// and sampling log-probabilities that RL needs.
import type { EpisodeRecord, TurnRecord } from '../api/records.js';
import type { RolloutSection } from '../api/run-config.js';
import type { ChatMessage } from '../model/chat.js';
import { breathe } from './breathe.js';
import type { BatchJournal } from './episode-journal.js';

/** What a rollout needs from an episode session (core/prompts/session.ts). */
export interface SessionLike {
  messages(): ChatMessage[];
  generationPrefix(): string;
  applyResponse(text: string, tokens?: { prompt: number; response: number }): TurnRecord;
  readonly done: boolean;
}

/** A batched text policy: the model (generate with a KV cache) or a random writer. */
export interface TextPolicy {
  /** Encode a chat for generation; returns the prompt ids (already truncated to the budget). */
  encodePrompt(messages: ChatMessage[], prefix: string, maxPromptTokens: number): number[];
  /**
   * rollout.history 'tokens': the next prompt continuing `history` (the last prompt and its sampled ids) token for token
   * (ModelRuntime.continuePrompt), null when it does not fit. A policy without it encodes every prompt from text.
   */
  continuePrompt?(history: readonly number[], messages: ChatMessage[], prefix: string, maxPromptTokens: number): number[] | null;
  generate(
    prompts: number[][],
    opts: { maxNewTokens: number; temperature: number; topP: number; topK: number; seed: number; cacheKeys?: string[] },
  ): Promise<Array<{ ids: number[]; text: string; logprobs: number[] }>>;
}

export interface TurnTokens { promptIds: number[]; responseIds: number[]; logprobs: number[] }

export interface EpisodeSpec {
  seed: number;       // puzzle seed (shared by the group)
  group: number;
  sample: number;
  id: string;         // episode id, unique in the run
}

export interface RolloutResult {
  spec: EpisodeSpec;
  record: EpisodeRecord;
  tokens: TurnTokens[]; // one per turn, aligned with record.turns
}

export interface RolloutDeps<S extends SessionLike> {
  createSession(spec: EpisodeSpec): S;
  finish(session: S, spec: EpisodeSpec): EpisodeRecord;
  policy: TextPolicy;
  /** Optional override per turn (random-action self-play): returns the response text without the model. */
  writeResponse?: (session: S, spec: EpisodeSpec, turn: number) => string | null;
  signal?: AbortSignal;
  /** After each batch: the episodes finished so far (those restored from the journal included) and the total. */
  onBatch?: (done: number, total: number) => void;
  /** Finished batches kept across a stop (core/train/episode-journal.ts): a batch found there is not played again. */
  journal?: BatchJournal;
}

/** Play the given episodes in batches of `limits.batchSize`; `seed` fixes the sampling. */
export async function playEpisodes<S extends SessionLike>(
  specs: EpisodeSpec[],
  limits: RolloutSection,
  seed: number,
  deps: RolloutDeps<S>,
): Promise<RolloutResult[]> {
  const results: RolloutResult[] = [];
  for (let start = 0; start < specs.length; start += limits.batchSize) {
    if (deps.signal?.aborted) break;
    const batch = specs.slice(start, start + limits.batchSize);
    const kept = deps.journal?.load(start);
    if (kept && kept.length === batch.length && kept.every((r, i) => r.spec.id === batch[i]!.id)) {
      results.push(...kept);   // finished by an earlier attempt from the same model and settings: the same seed gives the same batch
    } else {
      const played = await playBatch(batch, limits, seed + start * 7919, deps);
      if (played.length === batch.length) { deps.journal?.save(start, played); results.push(...played); }
      if (deps.signal?.aborted) break;
    }
    deps.onBatch?.(Math.min(specs.length, start + limits.batchSize), specs.length);
  }
  return results;
}

async function playBatch<S extends SessionLike>(specs: EpisodeSpec[], limits: RolloutSection, seed: number, deps: RolloutDeps<S>): Promise<RolloutResult[]> {
  const sessions = specs.map((spec) => deps.createSession(spec));
  const tokens: TurnTokens[][] = specs.map(() => []);
  const maxPrompt = Math.max(16, limits.maxContextTokens - limits.maxNewTokens);
  const maxTurns = limits.maxTurns ?? 50; // the session enforces the env's budget; this is a safety cap
  // rollout.history 'tokens': each episode's last prompt and sampled ids, continued token for token at its next turn (null:
  // the next prompt is encoded from the chat's text, after a written reply or when the history outgrew the budget)
  const continuing = limits.history === 'tokens' && deps.policy.continuePrompt !== undefined;
  const histories: Array<number[] | null> = specs.map(() => null);
  for (let turn = 0; turn < maxTurns; turn++) {
    const active = sessions.map((s, i) => (s.done ? -1 : i)).filter((i) => i >= 0);
    if (active.length === 0) break;
    await breathe();
    if (deps.signal?.aborted) return []; // stopped: an unfinished batch is dropped, never recorded half-played
    const written = new Map<number, string>();
    if (deps.writeResponse) {
      for (const i of active) {
        const text = deps.writeResponse(sessions[i]!, specs[i]!, turn);
        if (text !== null) written.set(i, text);
      }
    }
    const toGenerate = active.filter((i) => !written.has(i));
    const prompts = active.map((i) => {
      const session = sessions[i]!, history = histories[i];
      const continued = history ? deps.policy.continuePrompt!(history, session.messages(), session.generationPrefix(), maxPrompt) : null;
      return continued ?? deps.policy.encodePrompt(session.messages(), session.generationPrefix(), maxPrompt);
    });
    const promptOf = new Map(active.map((i, k) => [i, prompts[k]!]));
    const generated = toGenerate.length === 0 ? [] : await deps.policy.generate(toGenerate.map((i) => promptOf.get(i)!), {
      maxNewTokens: limits.maxNewTokens, temperature: limits.temperature, topP: limits.topP, topK: limits.topK, seed: seed + turn * 104_729,
      cacheKeys: toGenerate.map((i) => specs[i]!.id),   // each episode's history is computed once, not again at every turn
    });
    const outputs = new Map(toGenerate.map((i, k) => [i, generated[k]!]));
    for (const i of active) {
      const session = sessions[i]!;
      const prefix = session.generationPrefix();
      const out = outputs.get(i);
      const text = out ? prefix + out.text : written.get(i)!;
      const promptIds = promptOf.get(i)!;
      session.applyResponse(text, { prompt: promptIds.length, response: out ? out.ids.length : text.length });
      tokens[i]!.push({ promptIds, responseIds: out?.ids ?? [], logprobs: out?.logprobs ?? [] });
      histories[i] = continuing && out ? [...promptIds, ...out.ids] : null;
    }
  }
  return specs.map((spec, i) => ({ spec, record: deps.finish(sessions[i]!, spec), tokens: tokens[i]! }));
}

/** Episode specs: `groups` puzzles from `seedStart`, `groupSize` samples each. */
export function groupSpecs(prefix: string, seedStart: number, firstGroup: number, groups: number, groupSize: number): EpisodeSpec[] {
  const specs: EpisodeSpec[] = [];
  for (let g = 0; g < groups; g++) {
    const seed = seedStart + firstGroup + g;
    for (let s = 0; s < groupSize; s++)
      specs.push({ seed, group: firstGroup + g, sample: s, id: `${prefix}-g${String(firstGroup + g).padStart(4, '0')}-s${s}` });
  }
  return specs;
}

/**
 * Later turns (turn >= 1 after a generated turn) whose prompt does not start with the previous turn's prompt and sampled ids:
 * a history re-tokenized to other ids (rollout.history 'text') or cut to the context budget. Such a turn starts a new update
 * row under rl.updateRows 'episode' and a new prefix in the generation cache. `pairs`: the later turns counted.
 */
export function chainBreaks(results: ReadonlyArray<Pick<RolloutResult, 'tokens'>>): { breaks: number; pairs: number } {
  let breaks = 0, pairs = 0;
  for (const r of results) {
    for (let t = 1; t < r.tokens.length; t++) {
      const before = r.tokens[t - 1]!, now = r.tokens[t]!.promptIds;
      if (before.responseIds.length === 0) continue;   // a written reply (random writer): no sampled ids to continue
      pairs++;
      const n = before.promptIds.length, m = before.responseIds.length;
      let continues = now.length >= n + m;
      for (let j = 0; continues && j < n + m; j++) continues = now[j] === (j < n ? before.promptIds[j] : before.responseIds[j - n]);
      if (!continues) breaks++;
    }
  }
  return { breaks, pairs };
}

/** Rollout statistics for metrics (names in docs/metrics.md); `rollout/chainBreaks` when the results carry token ids. */
export function rolloutMetrics(results: ReadonlyArray<Pick<RolloutResult, 'record'> & Partial<Pick<RolloutResult, 'tokens'>>>): Record<string, number> {
  const eps = results.map((r) => r.record);
  const turns = eps.flatMap((e) => e.turns);
  const mean = (xs: number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, c) => a + c, 0) / xs.length);
  const responseLengths = results.flatMap((r) => r.record.turns.map((t) => t.tokens.response));
  return {
    'rollout/reward': mean(eps.map((e) => e.totalReward)),
    'rollout/success': mean(eps.map((e) => (e.success ? 1 : 0))),
    'rollout/responseLength': mean(responseLengths),
    'rollout/turns': mean(eps.map((e) => e.numTurns)),
    'rollout/actions': mean(eps.map((e) => e.numActions)),
    'rollout/invalidActionRate': mean(turns.map((t) => (t.flags.invalidAction ? 1 : 0))),
    'rollout/formatErrorRate': mean(turns.map((t) => (t.flags.formatError ? 1 : 0))),
    ...chainBreakShare(results),
  };
}

function chainBreakShare(results: ReadonlyArray<Partial<Pick<RolloutResult, 'tokens'>>>): Record<string, number> {
  if (!results.every((r) => r.tokens !== undefined)) return {};
  const { breaks, pairs } = chainBreaks(results as ReadonlyArray<Pick<RolloutResult, 'tokens'>>);
  return pairs > 0 ? { 'rollout/chainBreaks': breaks / pairs } : {};
}
