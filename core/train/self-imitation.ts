// Self-imitation in the RL stage (rl.selfImitation): a buffer of the policy's own distinct won turns, replayed as labels after
// each RL step's update. Source: Oh et al. 2018, "Self-Imitation Learning" (ICML; the agent imitates its own past good
// decisions); the buffer of *distinct* wins, the whole reply in the loss with the decision token weighted, and the plan
// filter are ours, measured on curve (a) (bench/results/rl-curves/README.md, session 4; /work notes h16): a buffer of every
// win made the moves that already win crowd out the rest, the move token alone wrecked the reply's format, and a won reply
// whose plan named another move taught the plan to stop carrying the decision.
import type { RlSection } from '../api/run-config.js';
import type { TurnRecord } from '../api/records.js';
import type { RolloutResult } from './rollout.js';
import type { TrainRow } from './runtime.js';
import { decisionTokenMask, stateSpanKeepMask } from './ppo.js';
import { createRng } from '../util/rng.js';

export type SelfImitationSettings = RlSection['selfImitation'];

/**
 * One replayed turn: the prompt and the generated reply, as token ids, and its replay priority: gamma^(turns after it in its
 * won episode), the discounted return of a win worth 1 (1 for the winning turn; absent in older states = 1).
 */
export interface SelfImitationEntry { promptIds: number[]; responseIds: number[]; priority?: number }

/** The product's plan sentence (core/prompts/session.ts: the self-play and SFT rows write "I will try A."). */
const PLAN = /I will try ([^.<\n]*)\./;

/**
 * Why a turn of a won episode is left out of the buffer under `filter`, or null when it goes in.
 * - 'won': every turn of a won episode (Oh et al.'s buffer keeps every transition of a good return).
 * - 'well-formed': the reply passes the run's format check, its answer names at least one legal move, and the states it
 *   wrote are exact where the eval scored them (an SPA reply's <observation>/<prediction>), so the buffer never teaches a
 *   wrong state.
 * - 'plan': well-formed, and the reply states its plan as the product's rows do ("I will try A." in the reasoning) with A the
 *   moves of its answer (case and spaces ignored); a reply without that sentence is left out.
 * - 'plan-only': as 'plan' without the check of the written states: a world-model reply whose prediction is wrong still goes
 *   in (for comparing arms whose world models differ: the replay then selects on the decision, not on the states).
 */
export function selfImitationLeftOut(turn: Pick<TurnRecord, 'parsed' | 'flags' | 'wm'>, filter: SelfImitationSettings['filter']): string | null {
  if (filter === 'won') return null;
  const p = turn.parsed;
  if (turn.flags.formatError || p.formatError) return 'format error';
  if (p.answer === null || p.actions.length === 0) return 'no legal move in the answer';
  if (filter !== 'plan-only') {
    if (turn.wm.observation && !turn.wm.observation.exact) return 'observation not exact';
    if (turn.wm.prediction && !turn.wm.prediction.exact) return 'prediction not exact';
  }
  if (filter === 'well-formed') return null;
  const plan = PLAN.exec(p.reasoning ?? '');
  if (!plan) return 'no plan sentence';
  const norm = (s: string) => s.toLowerCase().replace(/\s+/g, '');
  return norm(plan[1]!) === norm(p.answer) ? null : 'plan names another move';
}

/** The buffer: distinct (prompt, reply) turns in insertion order; at capacity the oldest entry leaves. */
export class SelfImitationBuffer {
  private readonly entries = new Map<string, Required<SelfImitationEntry>>();

  constructor(readonly capacity: number, initial: SelfImitationEntry[] = []) {
    if (!(Number.isInteger(capacity) && capacity > 0)) throw new Error(`SelfImitationBuffer: capacity must be a positive whole number; received ${capacity}`);
    for (const e of initial) this.add(e);
  }

  get size(): number { return this.entries.size; }

  /** Adds the turn unless the same (prompt, reply) is already in (then it keeps the larger priority); returns whether it was new. */
  add(entry: SelfImitationEntry): boolean {
    const key = `${entry.promptIds.join(',')}|${entry.responseIds.join(',')}`;
    const priority = entry.priority ?? 1;
    const known = this.entries.get(key);
    if (known) {
      known.priority = Math.max(known.priority, priority);
      return false;
    }
    this.entries.set(key, { promptIds: [...entry.promptIds], responseIds: [...entry.responseIds], priority });
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    return true;
  }

  /**
   * The turns of the won episodes (record.success) that pass `filter` (selfImitationLeftOut), turn k of an episode of T turns
   * with priority gamma^(T-1-k) (gamma 1: every turn 1, as without). With source 'rewarded-turns': instead every turn of any
   * episode whose own reward (TurnRecord.reward: the env's reward after penalties) is above 0, priority 1. Returns how many went in (new), were already there,
   * and were left out, by reason.
   */
  addWins(
    results: ReadonlyArray<Pick<RolloutResult, 'record' | 'tokens'>>, filter: SelfImitationSettings['filter'], gamma = 1,
    source: SelfImitationSettings['source'] = 'won-episodes',
  ): { added: number; known: number; leftOut: Record<string, number> } {
    const out = { added: 0, known: 0, leftOut: {} as Record<string, number> };
    for (const r of results) {
      if (source === 'won-episodes' && !r.record.success) continue;
      const last = r.tokens.length - 1;
      r.tokens.forEach((t, k) => {
        const turn = r.record.turns[k];
        if (!turn || t.responseIds.length === 0) return;
        if (source === 'rewarded-turns' && !(turn.reward > 0)) return;
        const why = selfImitationLeftOut(turn, filter);
        if (why) { out.leftOut[why] = (out.leftOut[why] ?? 0) + 1; return; }
        const priority = source === 'won-episodes' ? gamma ** (last - k) : 1;
        if (this.add({ promptIds: t.promptIds, responseIds: t.responseIds, priority })) out.added++;
        else out.known++;
      });
    }
    return out;
  }

  /**
   * `count` entries drawn with replacement, each with probability proportional to its priority (uniform when every priority
   * is 1; Oh et al.'s prioritized replay, with the discounted return as the priority); deterministic in `seed`; empty when
   * the buffer is.
   */
  sample(count: number, seed: number): SelfImitationEntry[] {
    const all = [...this.entries.values()];
    if (all.length === 0) return [];
    const next = createRng(seed);
    const cumulative: number[] = [];
    let total = 0;
    for (const e of all) { total += e.priority; cumulative.push(total); }
    return Array.from({ length: count }, () => {
      const u = next() * total;
      let lo = 0, hi = all.length - 1;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (cumulative[mid]! > u) hi = mid; else lo = mid + 1; }
      return all[lo]!;
    });
  }

  /** The entries, oldest first (the stage state keeps them for an exact resume). */
  toJSON(): SelfImitationEntry[] { return [...this.entries.values()]; }
}

/**
 * The update rows of replayed turns: the reply tokens in the loss (less the state contents with `maskStateSpans`), each with
 * "advantage" 1 and the decision token (ppo.ts decisionTokenMask) `moveWeight`; old log-probs are filled by the caller with
 * the current ones, so the clipped surrogate at ratio 1 has the gradient of the weighted cross-entropy
 * -sum_t w_t log p(y_t) / (loss tokens). Shapes: each row's arrays have ids.length entries.
 */
export function selfImitationRows(
  entries: SelfImitationEntry[], decode: (ids: number[]) => string, opts: { moveWeight: number; maskStateSpans: boolean },
): TrainRow[] {
  return entries.map(({ promptIds, responseIds }) => {
    const decision = decisionTokenMask(responseIds, decode);
    const keep = opts.maskStateSpans ? stateSpanKeepMask(responseIds, decode) : responseIds.map(() => 1);
    const lossMask = [...promptIds.map(() => 0), ...keep];
    const advantages = [...promptIds.map(() => 0), ...responseIds.map((_, k) => (decision[k] ? opts.moveWeight : 1))];
    return { ids: [...promptIds, ...responseIds], arrays: { lossMask, advantages } };
  });
}

/** What one RL step's self-imitation needs of the policy (a ModelRuntime; a fake in tests). */
export interface SelfImitationPolicy {
  tokenStats(rows: TrainRow[], withValues: boolean): Promise<Array<{ logprobs: number[] }>>;
  trainStep(lossName: string, rows: TrainRow[], params: Record<string, unknown>, lr: number, gradClip: number): Promise<Record<string, number>>;
  tokenizer: { decode(ids: number[]): string };
}

/**
 * `settings.steps` optimizer steps (none while the buffer holds fewer than `settings.minBuffer` turns) on `settings.batch`
 * turns drawn from the buffer (seeded by `seed`), each the GRPO loss
 * at ratio 1 on selfImitationRows (no entropy bonus, no KL). `lossParams` are the stage's (its clip bounds are inert at ratio
 * 1). Returns the steps taken and `crossEntropy`: the replayed tokens' weighted mean NLL before each step,
 * sum_t w_t (-log p(y_t)) / sum_t w_t over the loss tokens (nats), averaged over the steps (NaN when no step ran).
 */
export async function selfImitationSteps(
  policy: SelfImitationPolicy, buffer: SelfImitationBuffer, settings: SelfImitationSettings,
  opts: { lr: number; gradClip: number; maskStateSpans: boolean; lossParams: Record<string, unknown>; seed: number; stopped?: () => boolean },
): Promise<{ crossEntropy: number; steps: number }> {
  const losses: number[] = [];
  const ready = buffer.size > 0 && buffer.size >= settings.minBuffer;
  for (let k = 0; ready && k < settings.steps; k++) {
    if (opts.stopped?.()) break;
    const rows = selfImitationRows(buffer.sample(Math.min(settings.batch, buffer.size), opts.seed * 31 + k),
      (ids) => policy.tokenizer.decode(ids), { moveWeight: settings.moveWeight, maskStateSpans: opts.maskStateSpans });
    const current = await policy.tokenStats(rows, false);
    let nll = 0, weight = 0;
    rows.forEach((r, i) => {
      const lp = current[i]!.logprobs;
      r.arrays.oldLogprobs = lp;
      r.arrays.lossMask!.forEach((m, t) => { if (m) { nll -= r.arrays.advantages![t]! * lp[t]!; weight += r.arrays.advantages![t]!; } });
    });
    await policy.trainStep('grpo', rows, { ...opts.lossParams, entropyCoef: 0, klCoef: 0 }, opts.lr, opts.gradClip);
    losses.push(weight > 0 ? nll / weight : Number.NaN);
  }
  return { crossEntropy: losses.length ? losses.reduce((a, b) => a + b, 0) / losses.length : Number.NaN, steps: losses.length };
}
