// PPO with a critic (Schulman et al. 2017), as used by SPA / RAGEN on multi-turn episodes.
// This file turns one RL step's episodes into training rows: per assistant turn, the tokens the
// model saw and wrote, the mask of the model's own tokens, the old log-probabilities and values
// (recomputed under the current weights, temperature 1), and GAE advantages computed over the
// episode's model tokens (core/train/advantages.ts), whitened over the batch. The loss itself is
// the registered 'ppo' loss (core/train/losses.ts).
import type { RlSection } from '../api/run-config.js';
import { aggregationWeights, withAggregationWeights, type LossAggregation } from '../model/losses.js';
import { episodeAdvantages } from './advantages.js';
import { explainedVariance, whitenMasked } from './gae.js';
import { groupRewardCharts } from './groups.js';
import type { BatchJournal } from './episode-journal.js';
import type { RolloutResult } from './rollout.js';
import type { ModelRuntime, TrainRow } from './runtime.js';
import type { RlAlgorithm } from './rl-algorithms.js';

export interface TurnSample {
  episode: number; turn: number; ids: number[]; responseStart: number;
  /** The loss mask when it is not every response token (rl.maskStateSpans), aligned with ids. */
  lossMask?: number[];
  /** rl.entropyOn 'action': 1 at the token that chooses the move (decisionTokenMask), 0 elsewhere, aligned with ids. */
  entropyMask?: number[];
}

/** World-model state tags whose contents rl.maskStateSpans leaves out of the policy loss (as sft.maskStateSpans does in SFT). */
const STATE_SPAN_TAGS = ['observation', 'prediction'] as const;

/**
 * 1 for the response tokens the policy loss keeps, 0 for those inside an <observation> or <prediction> (contents only, the tags
 * stay), found on the decoded response: token k covers the characters its own decoding adds. A token that overlaps a state
 * content is left out. Returns all ones when the response has no state tag.
 */
export function stateSpanKeepMask(responseIds: number[], decode: (ids: number[]) => string): number[] {
  const pieces = responseIds.map((id) => decode([id]));
  const text = pieces.join('');
  const ranges: Array<[number, number]> = [];
  for (const tag of STATE_SPAN_TAGS) {
    const open = `<${tag}>`, close = `</${tag}>`;
    for (let from = 0; ;) {
      const a = text.indexOf(open, from);
      if (a < 0) break;
      const b = text.indexOf(close, a + open.length);
      const end = b < 0 ? text.length : b;             // an unclosed tag: its content runs to the end of the reply
      ranges.push([a + open.length, end]);
      if (b < 0) break;
      from = b + close.length;
    }
  }
  let at = 0;
  return pieces.map((piece) => {
    const [start, end] = [at, at + piece.length];
    at = end;
    return ranges.some(([a, b]) => start < b && end > a) ? 0 : 1;
  });
}

/** The plan's phrase before the move (the tiny templates' and the bootstrap's "I will try A."; core/prompts/session.ts). */
const PLAN_PHRASE = 'I will try ';
const ANSWER_OPEN = '<answer>';

/**
 * 1 at the token that chooses the move, 0 elsewhere (one per response token): the token whose decoding covers the first
 * character after the plan's "I will try " (the decision; the answer copies it), else after the first "<answer>"; when that
 * token is a space, the one with the first letter after it too (a reply that wrote a space where the move goes chose it there,
 * so that space is trained; found in a pilot where the bonus leaked mass into spaces that no advantage reached).
 * Found on the decoded response as stateSpanKeepMask does (token k covers the characters its own decoding adds). On the tiny
 * character-level base this is the move's first letter (L/D/R/U), the only reply token with entropy above ~0.05 nats; on a
 * sub-word tokenizer it is the token that starts the move word (e.g. " Up"). All zeros when the reply names no move.
 */
export function decisionTokenMask(responseIds: number[], decode: (ids: number[]) => string): number[] {
  const pieces = responseIds.map((id) => decode([id]));
  const text = pieces.join('');
  const plan = text.indexOf(PLAN_PHRASE);
  const answer = text.indexOf(ANSWER_OPEN);
  const at = plan >= 0 ? plan + PLAN_PHRASE.length : answer >= 0 ? answer + ANSWER_OPEN.length : -1;
  if (at < 0 || at >= text.length) return pieces.map(() => 0);
  let letter = at;
  while (letter < text.length && /\s/.test(text[letter]!)) letter++;
  let end = 0;
  return pieces.map((piece) => {
    const start = end;
    end += piece.length;
    return (start <= at && at < end) || (start <= letter && letter < end) ? 1 : 0;
  });
}

/** The episode each update row came from (set by buildPpoRows / buildGrpoRows): the "sequence" of rl.lossAggregation. */
const rowEpisode = new WeakMap<TrainRow, number>();

/**
 * The episode of each row (tagRowEpisodes, episodeRows), or a distinct negative number for a row that has none: the units
 * rl-stage.ts updateBatches shuffles and counts under rl.updateRows 'episode'.
 */
export function rowEpisodes(rows: readonly TrainRow[]): number[] {
  return rows.map((r, i) => rowEpisode.get(r) ?? -(i + 1));
}

/** The entropy mask of each update row whose sample has one (rl.entropyOn 'action'; set by tagRowEpisodes). */
const rowEntropyMask = new WeakMap<TrainRow, number[]>();

/** Record the episode (and the entropy mask, when the sample has one) of each row (rows[i] came from samples[i]); returns the rows. */
export function tagRowEpisodes(rows: TrainRow[], samples: TurnSample[]): TrainRow[] {
  rows.forEach((r, i) => {
    rowEpisode.set(r, samples[i]!.episode);
    const mask = samples[i]!.entropyMask;
    if (mask) rowEntropyMask.set(r, mask);
  });
  return rows;
}

/**
 * Per-token weights (batch array `entropyWeight`) that put one update's entropy bonus on the rows' entropy masks only
 * (rl.entropyOn 'action'). The trainers take each chunk's mean over its loss tokens and weigh chunks by their loss tokens, so
 * the loss's mean of entropy·weight over the N loss tokens of the update is Σ_t e_t·a_t·w_t / N_a: the aggregated entropy over
 * the N_a masked tokens (a = entropy mask ∧ loss mask; w = aggregationWeights over those masks, 1 for token-mean), whatever
 * the chunking. Rows without loss tokens in their mask get zeros; an update whose masks are all empty gets no bonus.
 */
export function entropyWeights(lossMasks: number[][], entropyMasks: number[][], sequenceOf: number[], mode: LossAggregation): number[][] {
  if (lossMasks.length !== entropyMasks.length) {
    throw new Error(`entropyWeights: expected one entropy mask per row; received ${lossMasks.length} loss masks and ${entropyMasks.length} entropy masks`);
  }
  const masks = entropyMasks.map((e, i): number[] => {
    const m = lossMasks[i]!;
    if (e.length !== m.length) throw new Error(`entropyWeights: row ${i}'s entropy mask has ${e.length} values for ${m.length} tokens`);
    return e.map((x, t) => (x > 0 && m[t]! > 0 ? 1 : 0));
  });
  const lossTokens = lossMasks.reduce((a, m) => a + m.reduce((b, x) => b + (x > 0 ? 1 : 0), 0), 0);
  const masked = masks.reduce((a, m) => a + m.reduce((b, x) => b + x, 0), 0);
  if (masked === 0) return masks;
  const agg = aggregationWeights(masks, sequenceOf, mode);
  return masks.map((m, i) => m.map((x, t) => (x * agg[i]![t]! * lossTokens) / masked));
}

/**
 * One update's rows with the aggregation weights of rl.lossAggregation (core/model/losses.ts aggregationWeights): the
 * sequences are the episodes, counted within this update's rows (RAGEN's rows are whole episodes; here an episode's turn
 * rows in one update form its sequence). Rows not built by buildPpoRows / buildGrpoRows count as their own sequence.
 */
export function aggregatedBatch(batch: TrainRow[], section: Pick<RlSection, 'lossAggregation'> & Partial<Pick<RlSection, 'entropyOn'>>): TrainRow[] {
  const mode = section.lossAggregation;
  let own = -1;
  const sequenceOf = batch.map((r) => rowEpisode.get(r) ?? own--);
  const rows = mode === 'token-mean' ? batch : withAggregationWeights(batch, sequenceOf, mode);
  if ((section.entropyOn ?? 'all') === 'all') return rows;
  const masks = batch.map((r, i) => {
    const m = rowEntropyMask.get(r);
    if (!m) throw new Error(`rl.entropyOn 'action': update row ${i} has no entropy mask (build the samples with turnSamples(..., { entropyOn: 'action' }))`);
    return m;
  });
  const lossMasks = batch.map((r, i) => {
    const m = r.arrays.lossMask;
    if (!m) throw new Error(`rl.entropyOn 'action': update row ${i} has no lossMask`);
    return m;
  });
  const weights = entropyWeights(lossMasks, masks, sequenceOf, mode);
  return rows.map((r, i) => ({ ...r, arrays: { ...r.arrays, entropyWeight: weights[i]! } }));
}

/**
 * The actor lr of RL step `step` (0-based) under rl.warmupSteps N: lr * step / N while step < N, then lr (verl's constant
 * schedule with warmup, verl/utils/torch_functional.py get_constant_schedule_with_warmup, one scheduler step per training step).
 * Throws on a negative or fractional step.
 */
export function warmedLr(section: Pick<RlSection, 'lr' | 'warmupSteps'>, step: number): number {
  if (!Number.isInteger(step) || step < 0) throw new Error(`warmedLr: the RL step must be a non-negative integer; received ${step}`);
  const n = section.warmupSteps ?? 0;
  return n > 0 && step < n ? (section.lr * step) / n : section.lr;
}

/**
 * Training sequences of the kept episodes' model-written turns. With `maskStateSpans` (rl.maskStateSpans) each sample's loss
 * mask leaves out the contents of its <observation>/<prediction> (stateSpanKeepMask, tokens decoded with `decode`), so the
 * policy loss is on the reasoning, the move and the tags: the RL counterpart of sft.maskStateSpans. With `entropyOn` 'action'
 * (rl.entropyOn) each sample carries the entropy mask of its decision token (decisionTokenMask), for aggregatedBatch; with
 * `lossOn` 'action' (rl.lossOn) that mask is its loss mask (the decision is not a state span, so maskStateSpans adds nothing) and a
 * turn that names no move is left out (it has no loss token; its episode still counts in its group's rewards).
 */
export function turnSamples(
  results: RolloutResult[], keep: (episode: number) => boolean,
  opts: { maskStateSpans?: boolean; entropyOn?: RlSection['entropyOn']; lossOn?: RlSection['lossOn']; decode?: (ids: number[]) => string } = {},
): TurnSample[] {
  const needsDecode = opts.lossOn === 'action' ? 'lossOn \'action\'' : opts.maskStateSpans ? 'maskStateSpans'
    : opts.entropyOn === 'action' ? 'entropyOn \'action\'' : '';
  if (needsDecode && !opts.decode) throw new Error(`turnSamples: ${needsDecode} needs the tokenizer's decode`);
  const out: TurnSample[] = [];
  results.forEach((r, e) => {
    if (!keep(e)) return;
    r.tokens.forEach((t, j) => {
      if (t.responseIds.length === 0) return;
      const sample: TurnSample = { episode: e, turn: j, ids: [...t.promptIds, ...t.responseIds], responseStart: t.promptIds.length };
      if (opts.maskStateSpans) sample.lossMask = [...t.promptIds.map(() => 0), ...stateSpanKeepMask(t.responseIds, opts.decode!)];
      const decision = opts.entropyOn === 'action' || opts.lossOn === 'action'
        ? [...t.promptIds.map(() => 0), ...decisionTokenMask(t.responseIds, opts.decode!)] : null;
      if (opts.entropyOn === 'action') sample.entropyMask = decision!;
      if (opts.lossOn === 'action') {
        sample.lossMask = decision!;
        if (!decision!.includes(1)) return;   // names no move: nothing to train (a chunk without loss tokens fails on torch)
      }
      out.push(sample);
    });
  });
  return out;
}

/** The sample's loss mask: its own (rl.maskStateSpans) or every response token. */
export function responseMask(sample: TurnSample): number[] {
  return sample.lossMask ?? sample.ids.map((_, i) => (i >= sample.responseStart ? 1 : 0));
}

/**
 * For each sample, the sample whose row carries its numbers: a turn whose tokens are the start of its episode's next turn
 * (the history kept whole, as multi-turn prompts are) is carried by the last turn of that chain, else by itself. A
 * causal model's per-token numbers on a prefix equal those on the longer row, so only the carriers need a forward pass.
 */
export function prefixCarriers(samples: TurnSample[]): number[] {
  const carrier = samples.map((_, i) => i);
  const byEpisode = new Map<number, number[]>();
  samples.forEach((s, i) => {
    const list = byEpisode.get(s.episode);
    if (list) list.push(i);
    else byEpisode.set(s.episode, [i]);
  });
  for (const indexes of byEpisode.values()) {
    indexes.sort((a, b) => samples[a]!.turn - samples[b]!.turn);
    for (let k = indexes.length - 2; k >= 0; k--) {
      const a = samples[indexes[k]!]!.ids, b = samples[indexes[k + 1]!]!.ids;
      if (a.length <= b.length && a.every((t, j) => b[j] === t)) carrier[indexes[k]!] = carrier[indexes[k + 1]!]!;
    }
  }
  return carrier;
}

/**
 * rl.updateRows 'episode': each episode's turn rows merged into one row, the row of its prefix carrier (prefixCarriers: the
 * last turn whose tokens extend the earlier turns' tokens), with every merged turn's per-token arrays (loss mask, advantages,
 * old log-probs, returns, ...) copied over its own response span [responseStart, ids.length). That is RAGEN's layout: one
 * sequence per trajectory with the loss mask over every assistant turn (RAGEN ragen/llm_agent/ctx_manager.py
 * get_masks_and_scores). A causal model gives a token the same log-prob in the carrier as in its own turn's row, so an
 * update over the merged rows has the loss and gradient of an update over the same turns' rows (token-mean; the episode is
 * the sequence of the seq-mean modes either way). What changes: a minibatch (miniBatchSize) counts episodes instead of turns
 * (rl-stage.ts updateBatches with the rows' episodes: an episode's rows are never split across minibatches),
 * and the compute, since an episode's history is computed once instead of once more for every later turn (study v4's
 * vanilla RL: 201k tokens of turn rows per step, 36k of episode rows). Turns whose tokens do not extend each other (a history
 * cut to the context budget) stay rows of their own. rows[i] must come from samples[i] (same ids); rows with an entropy mask
 * keep it merged the same way. Throws when the two lists differ in length or a row's ids are not its sample's.
 */
export function episodeRows(rows: TrainRow[], samples: TurnSample[]): TrainRow[] {
  if (rows.length !== samples.length) throw new Error(`episodeRows: ${rows.length} rows for ${samples.length} samples (one row per sample)`);
  rows.forEach((r, i) => {
    if (r.ids.length !== samples[i]!.ids.length) throw new Error(`episodeRows: row ${i} has ${r.ids.length} tokens, its sample ${samples[i]!.ids.length}`);
  });
  const carrier = prefixCarriers(samples);
  const merged = new Map<number, { row: TrainRow; entropy: number[] | null }>();
  const order = [...new Set(carrier)].sort((a, b) => a - b);
  for (const c of order) {
    const base = rows[c]!;
    const arrays = Object.fromEntries(Object.entries(base.arrays).map(([k, v]) => [k, [...v]]));
    const entropy = rowEntropyMask.get(base);
    merged.set(c, { row: { ids: base.ids, arrays }, entropy: entropy ? [...entropy] : null });
  }
  rows.forEach((r, i) => {
    const c = carrier[i]!;
    if (c === i) return;
    const into = merged.get(c)!;
    const from = samples[i]!.responseStart, to = r.ids.length;
    for (const [k, v] of Object.entries(r.arrays)) {
      const dest = into.row.arrays[k];
      if (!dest) throw new Error(`episodeRows: row ${i} has array '${k}', its carrier row ${c} does not`);
      for (let t = from; t < to; t++) dest[t] = v[t]!;
    }
    const e = rowEntropyMask.get(r);
    if (e && into.entropy) for (let t = from; t < to; t++) into.entropy[t] = e[t]!;
  });
  return order.map((c) => {
    const { row, entropy } = merged.get(c)!;
    rowEpisode.set(row, samples[c]!.episode);
    if (entropy) rowEntropyMask.set(row, entropy);
    return row;
  });
}

/** One scored row of samplingStats as its stats journal keeps it (encodeFloats: exact through JSON). */
export interface JournalledRowStats {
  logprobs: Array<number | string>; entropies: Array<number | string>; values: Array<number | string>; ref: Array<number | string> | null;
}

/**
 * Floats as JSON keeps them exactly: a finite number is written as the shortest text that reads back as the same double
 * (ECMA-262 Number::toString), so only NaN, +-Infinity and -0 (which JSON.stringify turns into null and 0) need a string.
 * decodeFloats(encodeFloats(xs)) is xs bit for bit (Object.is per element).
 */
export function encodeFloats(xs: readonly number[]): Array<number | string> {
  return xs.map((x) => (Object.is(x, -0) ? '-0' : Number.isFinite(x) ? x : String(x)));
}

/** The inverse of encodeFloats; throws on an element that is neither a number nor one of its strings. */
export function decodeFloats(xs: ReadonlyArray<number | string>): number[] {
  return xs.map((x) => {
    if (typeof x === 'number') return x;
    if (x === '-0') return -0;
    if (x === 'NaN' || x === 'Infinity' || x === '-Infinity') return Number(x);
    throw new Error(`stats journal: ${JSON.stringify(x)} is not an encoded float`);
  });
}

/**
 * Old log-probabilities (and values / reference log-probabilities when given) of every sample. The forward passes run on
 * the prefix carriers only (prefixCarriers: an episode's last turn instead of each of its turns); each sample's numbers are
 * the first ids.length of its carrier's. Log-probs and entropies are those of the samples' response tokens; elsewhere a backend
 * may give 0 (tokenStats' score: the torch worker's LM head skips the prompts).
 * `carriers` is the number of rows scored (the prefix carriers). journalledSamplingStats is this pass with a journal.
 */
export async function samplingStats(
  policy: ModelRuntime,
  samples: TurnSample[],
  opts: { critic?: ModelRuntime | null; reference?: ModelRuntime | null; batchSize: number },
): Promise<SamplingStats> {
  return (await journalledSamplingStats(policy, samples, opts))!;
}

/** What samplingStats gives: per sample, arrays of its ids.length. */
export interface SamplingStats { logprobs: number[][]; values: number[][]; refLogprobs: number[][] | null; entropies: number[][]; carriers?: number }

/**
 * samplingStats with its batches kept across a stop. `journal` (an RL step's stats journal, keyed by the first row of each
 * batch of `batchSize` scored rows): a batch found there is not scored again, and each scored batch is kept there before
 * the next starts, so a stop or a kill during a long scoring pass loses at most one batch; the numbers read back are the
 * numbers written (encodeFloats). `stopped`: checked before each batch; when it is true the pass ends and gives null.
 * `onBatch`: after each batch, the rows (prefix carriers) done and their total.
 */
export async function journalledSamplingStats(
  policy: ModelRuntime,
  samples: TurnSample[],
  opts: {
    critic?: ModelRuntime | null; reference?: ModelRuntime | null; batchSize: number;
    journal?: BatchJournal<JournalledRowStats>; stopped?: () => boolean;
    /** After each batch, scored or restored: the rows done so far and the rows to score (progress messages) */
    onBatch?: (done: number, total: number) => void;
  },
): Promise<SamplingStats | null> {
  const carrier = prefixCarriers(samples);
  const carriers = [...new Set(carrier)].sort((a, b) => a - b);
  const slot = new Map(carriers.map((c, k) => [c, k]));
  const rows = scoredCarrierRows(samples, carrier, carriers);
  const logprobs: number[][] = [], values: number[][] = [], refLogprobs: number[][] = [], entropies: number[][] = [];
  for (let i = 0; i < rows.length; i += opts.batchSize) {
    if (opts.stopped?.()) return null;
    const part = rows.slice(i, i + opts.batchSize);
    const kept = opts.journal?.load(i);
    if (kept && kept.length === part.length) {
      for (const r of kept) {
        logprobs.push(decodeFloats(r.logprobs));
        entropies.push(decodeFloats(r.entropies));
        values.push(decodeFloats(r.values));
        if (opts.reference) refLogprobs.push(decodeFloats(r.ref ?? []));
      }
      opts.onBatch?.(logprobs.length, rows.length);
      continue;
    }
    const from = logprobs.length;
    const sameModelValues = opts.critic === undefined || opts.critic === policy;
    const stats = await policy.tokenStats(part, sameModelValues);
    stats.forEach((s) => {
      logprobs.push(s.logprobs);
      entropies.push(s.entropies);
      if (sameModelValues) values.push(s.values ?? s.logprobs.map(() => 0));
    });
    if (!sameModelValues && opts.critic) (await opts.critic.tokenStats(part, true)).forEach((s) => values.push(s.values ?? s.logprobs.map(() => 0)));
    if (!sameModelValues && !opts.critic) part.forEach((p) => values.push(p.ids.map(() => 0)));
    if (opts.reference) (await opts.reference.tokenStats(part, false)).forEach((s) => refLogprobs.push(s.logprobs));
    opts.journal?.save(i, part.map((_, k) => ({
      logprobs: encodeFloats(logprobs[from + k]!), entropies: encodeFloats(entropies[from + k]!), values: encodeFloats(values[from + k]!),
      ref: opts.reference ? encodeFloats(refLogprobs[from + k]!) : null,
    })));
    opts.onBatch?.(logprobs.length, rows.length);
  }
  const each = (byCarrier: number[][]): number[][] => samples.map((s, i) => byCarrier[slot.get(carrier[i]!)!]!.slice(0, s.ids.length));
  return {
    logprobs: each(logprobs), values: each(values), refLogprobs: opts.reference ? each(refLogprobs) : null, entropies: each(entropies),
    carriers: carriers.length,
  };
}

/**
 * The rows samplingStats scores: each prefix carrier with its score mask (the response spans of the turns it carries: the
 * only log-probs and entropies read; a backend may skip the rest, as the torch LM head does). Exported for the stats
 * journal's identity (what is scored, not how).
 */
export function scoredCarrierRows(samples: TurnSample[], carrier = prefixCarriers(samples), carriers = [...new Set(carrier)].sort((a, b) => a - b)) {
  const score = new Map(carriers.map((c) => [c, samples[c]!.ids.map(() => 0)]));
  samples.forEach((s, i) => {
    const into = score.get(carrier[i]!)!;
    for (let t = s.responseStart; t < s.ids.length; t++) into[t] = 1;
  });
  return carriers.map((c) => ({ ids: samples[c]!.ids, score: score.get(c)! }));
}

/** PPO rows: advantages/returns from GAE over each episode's model tokens. */
export function buildPpoRows(
  samples: TurnSample[],
  turnRewards: number[][],
  stats: Awaited<ReturnType<typeof samplingStats>>,
  section: RlSection,
): { rows: TrainRow[]; explainedVariance: number; advantageMean: number; advantageStd: number } {
  const byEpisode = new Map<number, number[]>();
  samples.forEach((s, i) => {
    const list = byEpisode.get(s.episode) ?? [];
    list.push(i);
    byEpisode.set(s.episode, list);
  });
  const advantages: number[][] = samples.map((s) => s.ids.map(() => 0));
  const returns: number[][] = samples.map((s) => s.ids.map(() => 0));
  for (const [episode, indexes] of byEpisode) {
    // every turn of the episode, with the values of its model tokens ([] for a turn without any): episodeAdvantages moves the
    // reward of a turn without tokens to the previous turn that has some (the one redistribution rule, advantages.ts)
    const turns = Math.max(turnRewards[episode]!.length, ...indexes.map((i) => samples[i]!.turn + 1));
    const rewards = Array.from({ length: turns }, (_, t) => turnRewards[episode]![t] ?? 0);
    const sampleOfTurn = new Map(indexes.map((i) => [samples[i]!.turn, i]));
    const turnValues = rewards.map((_, t) => {
      const i = sampleOfTurn.get(t);
      return i === undefined ? [] : stats.values[i]!.slice(samples[i]!.responseStart);
    });
    const all = episodeAdvantages(turnValues, rewards, {
      placement: section.rewardPlacement,
      advantage: section.advantage,
      gamma: section.gamma,
      lambda: section.lambda,
      turnGamma: section.turnGamma,
    });
    const out = { advantages: indexes.map((i) => all.advantages[samples[i]!.turn]!), returns: indexes.map((i) => all.returns[samples[i]!.turn]!) };
    indexes.forEach((i, k) => {
      const start = samples[i]!.responseStart;
      out.advantages[k]!.forEach((a, t) => {
        advantages[i]![start + t] = a;
      });
      out.returns[k]!.forEach((r, t) => {
        returns[i]![start + t] = r;
      });
    });
  }
  const masks = samples.map(responseMask);
  const ev = explainedVariance(stats.values, returns, masks);
  const flat = advantages.flatMap((a, i) => a.filter((_, t) => masks[i]![t]! > 0));
  const advantageMean = flat.length ? flat.reduce((a, c) => a + c, 0) / flat.length : 0;
  const advantageStd = flat.length ? Math.sqrt(flat.reduce((a, c) => a + (c - advantageMean) ** 2, 0) / flat.length) : 0;
  const whitened = whitenMasked(advantages, masks);
  const rows = tagRowEpisodes(samples.map((s, i) => ({
    ids: s.ids,
    arrays: {
      lossMask: masks[i]!,
      oldLogprobs: stats.logprobs[i]!,
      advantages: whitened[i]!,
      returns: returns[i]!,
      oldValues: stats.values[i]!,
      ...(stats.refLogprobs ? { refLogprobs: stats.refLogprobs[i]! } : {}),
    },
  })), samples);
  return { rows, explainedVariance: ev, advantageMean, advantageStd };
}

/**
 * PPO with a critic: turn-level rewards, GAE advantages (advantages.ts), whitened; one update is the policy loss at lr and the
 * value loss on the critic (a separate model, or the shared trunk's value view with its own AdamW moments) at criticLr.
 */
export const ppoAlgorithm: RlAlgorithm = {
  id: 'ppo',
  summary: 'PPO: a critic, GAE advantages per token, clipped policy and value losses',
  needsCritic: true,
  buildRows: ({ samples, turnRewards, episodeRewards, groups, stats, section }) => {
    const built = buildPpoRows(samples, turnRewards, stats, section);
    return {
      rows: built.rows,
      charts: {
        'charts/explainedVariance': built.explainedVariance, 'charts/advantageMean': built.advantageMean, 'charts/advantageStd': built.advantageStd,
        ...groupRewardCharts(episodeRewards, groups),
      },
    };
  },
  update: async ({ policy, critic }, batch, lossParams, section) => {
    if (!critic) throw new Error('rlUpdate: PPO needs a critic or a value optimizer over the shared trunk');
    const rows = aggregatedBatch(batch, section);
    const policyStats = await policy.trainStep('ppo-policy', rows, lossParams, section.lr, section.gradClip);
    const valueStats = await critic.trainStep('value', rows, lossParams, section.criticLr, section.gradClip);
    return { ...policyStats, 'losses/value': valueStats['losses/value']!, 'charts/valueGradNorm': valueStats['charts/gradNorm']! };
  },
};
