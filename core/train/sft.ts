// SFT stage: finetune on the self-play rows (datasets/sft-train.jsonl). Loss on the model's own
// turn only (the last assistant message of each row and its end token); by default it covers the
// true-state spans (the paper's version); `maskStateSpans` drops the observation/prediction
// contents from the loss (the paper's ablation; the released code ends up close to it). Cosine schedule with
// warmup, validation loss each epoch (games never seen in training), a checkpoint per epoch, and
// state perplexity on the validation rows before and after. Batches group rows of like length (epochBatches).
// Resumes after the last finished epoch, or mid-epoch at the batch it stopped; the resume state keeps the interrupted
// epoch's batch losses (so its sft/trainLossEpoch averages every batch) and the 'before' perplexity, and the stop's
// resume point sft-latest is removed when the stage completes (N7).
import { GENERATION_PREFIX } from '../prompts/reply-format.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { StageDefinition } from '../api/stage.js';
import { formatChat, type ChatMessage } from '../model/chat.js';
import { learningRate } from '../model/optim.js';
import { withAggregationWeights } from '../model/losses.js';
import { maskedNll, statePerplexity } from './perplexity.js';
import { sftLossMask } from './sft-mask.js';
import { createRng, shuffleInPlace } from '../util/rng.js';
import { elapsedSeconds, loadStartingModel, mean, meanStats, timedResumePoint, writeCheckpoint, resumeModel } from './stage-utils.js';
import { loraForStage } from './lora.js';
import { breathe } from './breathe.js';
import { removeCheckpoint, type ModelRuntime, type TrainRow } from './runtime.js';
import { decisionTokenMask } from './ppo.js';
import type { PerplexityResult } from './perplexity.js';
import { sftFile } from '../storage/run-files.js';
import { sampleEvery, writeSample } from './samples.js';

interface Row { id: string; episodeId: string; messages: ChatMessage[]; drill?: boolean; lookahead?: boolean }

/**
 * The SFT stage's resume state (stages/sft/state.json): `epoch` epochs done; `batch` batches of the next one trained (a stop
 * mid-epoch), `epochLosses` their losses/sft in order; `step` optimizer steps; `checkpoint` the resume point;
 * `pplBefore` the starting model's state perplexity (null when there were no rows to measure).
 */
export interface SftState {
  epoch?: number; checkpoint?: string; step?: number; batch?: number; epochLosses?: number[]; pplBefore?: PerplexityResult | null;
  /** sft.decisionSteps: steps of the decision phase done after the last epoch (a stop in the phase saves them) */
  decisionStep?: number;
}

/** The forced start of every reply at generation (EpisodeSession.generationPrefix): defined once, in core/prompts/reply-format.ts. */
export { GENERATION_PREFIX };

/**
 * A training chat tokenised as generation saw it: the forced `<think>` of each assistant reply
 * is encoded on its own (with BPE, `<think><observation>` encoded whole can merge `><`; audit B9).
 */
export function formatTrainingChat(runtime: Pick<ModelRuntime, 'tokenizer'>, messages: ChatMessage[]) {
  return formatChat(messages, runtime.tokenizer, { generationPrefix: GENERATION_PREFIX });
}

/**
 * Train rows. A drill row (selfplay.drills) trains its state contents only, and so does a policy row with `maskActionSpans`
 * (sft.maskActionSpans); such rows are left out when the state contents are masked too (nothing to learn). A lookahead row
 * (selfplay.lookahead: one whole game) trains every reply in it, whole (the oldest turns past maxLength are dropped first).
 */
export function toTrainRows(
  runtime: ModelRuntime, rows: Array<{ messages: ChatMessage[]; drill?: boolean; lookahead?: boolean }>, maxLength: number, maskStateSpans: boolean,
  maskActionSpans = false,
): TrainRow[] {
  const out: TrainRow[] = [];
  for (const row of rows) {
    const statesOnly = row.drill === true || (maskActionSpans && row.lookahead !== true);
    if (statesOnly && maskStateSpans) continue;
    const { messages } = runtime.formatForTraining(row.messages, maxLength);
    const chat = formatTrainingChat(runtime, messages);
    if (chat.ids.length > runtime.maxContext) continue;
    // a lookahead row is a whole game: every reply in it is a target
    const messageIndexes = row.lookahead ? messages.flatMap((m, i) => (m.role === 'assistant' ? [i] : [])) : undefined;
    const lossMask = sftLossMask(chat, messages, runtime.tokenizer, { maskStateSpans, statesOnly, ...(messageIndexes ? { messageIndexes } : {}) });
    out.push({ ids: chat.ids, arrays: { lossMask } });
  }
  return out;
}

/**
 * sft.moveWeight: per-token weights of one train row, `moveWeight` on the token that chooses the move in each trained reply
 * (each run of loss tokens, ppo.ts decisionTokenMask) and 1 elsewhere. Shape: row.ids.length entries. A reply whose move is
 * not in the loss (a drill, maskActionSpans) has no weighted token.
 */
export function moveWeights(row: TrainRow, moveWeight: number, decode: (ids: number[]) => string): number[] {
  const mask = row.arrays.lossMask ?? [];
  const out = row.ids.map(() => 1);
  for (let t = 0; t < mask.length;) {
    if (!mask[t]) { t++; continue; }
    let end = t;
    while (end < mask.length && mask[end]) end++;
    decisionTokenMask(row.ids.slice(t, end), decode).forEach((d, k) => { if (d) out[t + k] = moveWeight; });
    t = end;
  }
  return out;
}

/** The batch with each row's aggregationWeight (1 when absent) multiplied by its move weights (moveWeights). */
function withMoveWeights(batch: TrainRow[], weights: number[][]): TrainRow[] {
  return batch.map((r, i) => {
    const base = r.arrays.aggregationWeight;
    return { ...r, arrays: { ...r.arrays, aggregationWeight: weights[i]!.map((x, t) => x * (base ? base[t]! : 1)) } };
  });
}

/**
 * One epoch's batches: the rows shuffled, then in windows of 8 batches sorted by length and cut into batches, and the
 * batches shuffled. Rows of like length share a batch, so little of a batch is padding (self-play turns with history are
 * 3-4x as long as one-turn drills), while every row is still seen once per epoch in an order fixed by the seed (a resumed
 * epoch replays the same batches). ceil(n / batchSize) batches.
 */
export function epochBatches(lengths: readonly number[], batchSize: number, seed: number): number[][] {
  const rng = createRng(seed);
  const order = shuffleInPlace(lengths.map((_, i) => i), rng);
  const window = batchSize * 8;
  const batches: number[][] = [];
  for (let w = 0; w < order.length; w += window) {
    const chunk = order.slice(w, w + window).sort((a, b) => lengths[b]! - lengths[a]! || a - b);
    for (let b = 0; b < chunk.length; b += batchSize) batches.push(chunk.slice(b, b + batchSize));
  }
  return shuffleInPlace(batches, rng);
}

/**
 * sft.decisionSteps' rows: the lookahead rows (whole games of the rule's moves), every reply token a target as in SFT, with
 * each reply's move token (ppo.ts decisionTokenMask, via moveWeights) weighing `moveWeight` and every other target 1 (the
 * batch array aggregationWeight). The move alone is not enough: trained on the move letter only, the 2 x 64 model wrote move
 * letters everywhere (100% format errors: docs/results/mainjob-v3, session 8). Rows without a move in the loss are left out.
 */
export function decisionRows(rows: TrainRow[], moveWeight: number, decode: (ids: number[]) => string): TrainRow[] {
  return rows.flatMap((row) => {
    // the moves are found with a marker weight, so a moveWeight of 1 still keeps the rows that have one
    const marked = moveWeights(row, 2, decode);
    if (!marked.some((w) => w > 1)) return [];
    return [{ ids: row.ids, arrays: { ...row.arrays, aggregationWeight: marked.map((w) => (w > 1 ? moveWeight : 1)) } }];
  });
}

/** The move tokens of one row (ppo.ts decisionTokenMask over its trained replies). */
function decisionMoveCount(row: TrainRow, decode: (ids: number[]) => string): number {
  return moveWeights(row, 2, decode).filter((w) => w > 1).length;
}

/**
 * The decision phase's batches: `steps` batches of `batchSize` row indices (of n rows), consecutive seeded shuffles of all
 * rows, so every row is seen once per pass and a resume at step k draws the same batches. Shape: steps x min(batchSize, n).
 */
export function decisionBatches(n: number, batchSize: number, steps: number, seed: number): number[][] {
  const rng = createRng(seed);
  const size = Math.min(batchSize, n);
  const flat: number[] = [];
  while (flat.length < steps * size) flat.push(...shuffleInPlace(Array.from({ length: n }, (_, i) => i), rng));
  return Array.from({ length: steps }, (_, k) => flat.slice(k * size, (k + 1) * size));
}

async function validationLoss(runtime: ModelRuntime, rows: TrainRow[], batchSize: number): Promise<number> {
  const masked = rows.map((row) => ({ ids: row.ids, positions: row.arrays.lossMask!.flatMap((m, t) => (m ? [t] : [])) }));
  const { nll, tokens } = await maskedNll(runtime, masked, batchSize);
  return tokens === 0 ? Number.NaN : nll / tokens;
}

export const sftStage: StageDefinition = {
  name: 'sft',
  title: 'SFT on the corrected self-play turns',
  async run(ctx) {
    const started = Date.now();
    const section = ctx.config.stages.sft;
    const trainRows = ctx.readJsonl<Row>(sftFile('train'));
    const valRows = ctx.readJsonl<Row>(sftFile('val'));
    // epoch: epochs completed; batch: batches of the next epoch already trained (a stop mid-epoch saves them) and
    // epochLosses their losses/sft; pplBefore: the state perplexity of the starting model (eval/sft-state-perplexity.json)
    const state = ctx.loadState() as SftState | null;
    let runtime: ModelRuntime;
    let from: string;
    if (state?.checkpoint && existsSync(join(state.checkpoint, 'config.json'))) {
      runtime = await resumeModel(ctx, state.checkpoint, { valueHead: false });
      from = state.checkpoint;
      const at = state.batch ? `in epoch ${(state.epoch ?? 0) + 1} after batch ${state.batch} (step ${state.step})` : `after epoch ${state.epoch}`;
      ctx.log('info', `sft: resuming ${at} from ${from}`);
    } else {
      ({ runtime, from } = await loadStartingModel(ctx, { valueHead: false }));
    }
    await loraForStage(ctx, runtime, 'sft');   // model.lora: adapters on a frozen base (kept when the checkpoint has them)
    if (trainRows.length === 0) {
      ctx.log('warn', 'sft: no training rows (self-play kept no well-formed turn); the model is passed on unchanged');
      const checkpoint = await writeCheckpoint(ctx, runtime, 'sft-epoch-0', 0, {}, from);
      runtime.dispose();
      return { checkpoint, epochs: 0, trainRows: 0, wallSeconds: elapsedSeconds(started) };
    }
    const train = toTrainRows(runtime, trainRows, section.maxLength, section.maskStateSpans, section.maskActionSpans);
    const drillRows = trainRows.filter((r) => r.drill).length;
    if (drillRows > 0) {
      ctx.log('info', section.maskStateSpans
        ? `sft: ${drillRows} drill rows left out (their state contents, all they train, are masked)`
        : `sft: ${drillRows} of ${trainRows.length} rows are one-action drills (loss on their state contents only)`);
    }
    const lookaheadRows = trainRows.filter((r) => r.lookahead).length;
    if (lookaheadRows > 0 || section.maskActionSpans) {
      ctx.log('info', `sft: ${lookaheadRows} lookahead rows (whole reply trained)` +
        (section.maskActionSpans ? `; the policy's own rows train their state contents only (maskActionSpans)` : ''));
    }
    const val = toTrainRows(runtime, valRows, section.maxLength, section.maskStateSpans, section.maskActionSpans);
    // sft.moveWeight: the move token of every trained reply weighs moveWeight in the cross-entropy (the validation loss stays plain)
    const moveWeighted = section.moveWeight !== 1
      ? train.map((r) => moveWeights(r, section.moveWeight, (ids) => runtime.tokenizer.decode(ids))) : null;
    if (moveWeighted) {
      const weighted = moveWeighted.reduce((n, w) => n + w.filter((x) => x !== 1).length, 0);
      ctx.log('info', `sft: moveWeight ${section.moveWeight} on ${weighted} move tokens of ${train.length} rows`);
    }
    const pplRows = (valRows.length > 0 ? valRows : trainRows).slice(0, 32);
    const resumed = Boolean(state?.epoch || state?.batch);
    // a resume keeps the starting model's perplexity from the state (null only for a state written before it was kept)
    const pplBefore = resumed ? state?.pplBefore ?? null : await statePerplexity(runtime, pplRows, section.maxLength);
    if (pplBefore && !resumed) ctx.metric(0, { 'sft/statePerplexityBefore': pplBefore.perplexity });
    const stepsPerEpoch = Math.max(1, Math.ceil(train.length / section.batchSize));
    const totalSteps = stepsPerEpoch * section.epochs;
    const warmupSteps = Math.round(totalSteps * section.warmupFraction);
    let step = state?.step ?? 0;
    const limits = ctx.config.stages.rollout;
    const sampleRow = [...valRows, ...trainRows].find((r) => r.messages.length > 1 && r.messages[r.messages.length - 1]!.role === 'assistant') ?? null;
    const every = sampleEvery(totalSteps);
    let checkpoint = from;
    runtime.ensureOptimizer(section.weightDecay);
    const timed = timedResumePoint();
    for (let epoch = (state?.epoch ?? 0) + 1; epoch <= section.epochs; epoch++) {
      const batches = epochBatches(train.map((r) => r.ids.length), section.batchSize, ctx.config.seeds.base * 31 + epoch);
      const firstBatch = epoch === (state?.epoch ?? 0) + 1 ? Math.min(state?.batch ?? 0, stepsPerEpoch) : 0;
      // a resumed epoch starts with the losses of the batches trained before the stop: the epoch's mean covers all of them
      const epochStats: Array<Record<string, number>> = firstBatch > 0 ? (state?.epochLosses ?? []).map((l) => ({ 'losses/sft': l })) : [];
      // the resume point at batch `next` of this epoch: the same shuffled order resumes there
      const midEpoch = async (next: number) => {
        const epochLosses = epochStats.map((st) => st['losses/sft']!);
        checkpoint = await saveResumePoint(ctx, runtime, from, { epoch: epoch - 1, batch: next, step, epochLosses, pplBefore });
      };
      for (let b = firstBatch; b < stepsPerEpoch; b++) {
        await breathe();
        if (ctx.signal.aborted) {
          if (b > firstBatch) await midEpoch(b);   // keep the steps done in this epoch
          runtime.dispose();
          return {};
        }
        // sft.lossAggregation: each row is a sequence (token-mean leaves the rows as they are)
        const aggregated = withAggregationWeights(batches[b]!.map((i) => train[i]!), batches[b]!, section.lossAggregation);
        const batch = moveWeighted ? withMoveWeights(aggregated, batches[b]!.map((i) => moveWeighted[i])) : aggregated;
        const lr = learningRate(step, { lr: section.lr, warmupSteps, totalSteps, kind: 'cosine' });
        const stats = await runtime.trainStep('sft', batch, {}, lr, section.gradClip);
        epochStats.push(stats);
        ctx.metric(step, { 'losses/sft': stats['losses/sft']!, 'charts/lr': lr, 'charts/gradNorm': stats['charts/gradNorm']! });
        step++;
        ctx.progress(step, totalSteps, `SFT epoch ${epoch}/${section.epochs}, step ${step}/${totalSteps}`);
        if (sampleRow && (step % every === 0 || step === totalSteps)) {
          // what the model writes now for a held-out prompt, beside the corrected reply it learns (samples/sft.jsonl)
          await writeSample(ctx, runtime, {
            step, messages: sampleRow.messages.slice(0, -1), target: sampleRow.messages[sampleRow.messages.length - 1]!.content,
            maxNewTokens: limits.maxNewTokens, maxContextTokens: limits.maxContextTokens,
          });
        }
        // model.memory.resumePointMinutes: the state a stop would save, written on a timer (not after an epoch's last batch)
        if (b + 1 < stepsPerEpoch && timed.due()) await midEpoch(b + 1);
      }
      const valLoss = val.length > 0 ? await validationLoss(runtime, val, section.batchSize) : Number.NaN;
      const trainLoss = meanStats(epochStats)['losses/sft'] ?? Number.NaN;
      ctx.metric(step, { 'losses/sftVal': valLoss, 'sft/epoch': epoch, 'sft/trainLossEpoch': trainLoss });
      // the last epoch's checkpoint ends the stage: no AdamW moments (docs/checkpoints.md)
      checkpoint = await writeCheckpoint(ctx, runtime, `sft-epoch-${epoch}`, step, { trainLoss, valLoss }, from,
        { resumePoint: epoch < section.epochs || section.decisionSteps > 0 });
      ctx.saveState({ epoch, checkpoint, step, pplBefore } satisfies SftState);
      ctx.log('info', `sft epoch ${epoch}: train loss ${trainLoss.toFixed(4)}, val loss ${Number.isFinite(valLoss) ? valLoss.toFixed(4) : 'n/a'}`);
    }
    if (section.decisionSteps > 0) {
      const done = await decisionPhase(ctx, runtime, trainRows, state?.decisionStep ?? 0, step, from, pplBefore);
      if (!done) return {};
      ({ checkpoint, step } = done);
    }
    const pplAfter = await statePerplexity(runtime, pplRows, section.maxLength);
    ctx.metric(step, { 'sft/statePerplexityAfter': pplAfter.perplexity });
    ctx.writeJson('eval/sft-state-perplexity.json', {
      stage: 'sft',
      step,
      before: pplBefore,
      after: pplAfter,
      rows: pplRows.length,
      maskStateSpans: section.maskStateSpans,
    });
    runtime.dispose();
    await removeCheckpoint(join(ctx.runDir, 'checkpoints', 'sft-latest'));   // a stop's resume point: nothing resumes from it now
    return {
      checkpoint,
      epochs: section.epochs,
      steps: step,
      trainRows: train.length,
      valRows: val.length,
      statePerplexityBefore: pplBefore?.perplexity ?? null,
      statePerplexityAfter: pplAfter.perplexity,
      meanTrainTokens: mean(train.map((r) => r.ids.length)),
      wallSeconds: elapsedSeconds(started),
    };
  },
};

/** Write the stage's resume point sft-latest (with AdamW moments) and the state that resumes from it; returns its folder. */
async function saveResumePoint(ctx: Parameters<StageDefinition['run']>[0], runtime: ModelRuntime, from: string,
  state: Omit<SftState, 'checkpoint'> & { step: number }): Promise<string> {
  const checkpoint = await writeCheckpoint(ctx, runtime, 'sft-latest', state.step, {}, from);
  ctx.saveState({ ...state, checkpoint } satisfies SftState);
  return checkpoint;
}

/**
 * sft.decisionSteps (ours, issue 34 item 5): after the epochs, SFT on the lookahead rows alone with their moves weighted
 * (decisionRows), sft.lr constant, gradClip as SFT. Resumable: a stop saves sft-latest and the steps done. Returns the phase's
 * checkpoint (sft-decision) and the optimizer step after it, or null after a stop. Throws when there are no lookahead rows.
 */
async function decisionPhase(ctx: Parameters<StageDefinition['run']>[0], runtime: ModelRuntime, trainRows: Row[], first: number, step0: number,
  from: string, pplBefore: PerplexityResult | null): Promise<{ checkpoint: string; step: number } | null> {
  const section = ctx.config.stages.sft;
  const decode = (ids: number[]) => runtime.tokenizer.decode(ids);
  const rows = decisionRows(toTrainRows(runtime, trainRows.filter((r) => r.lookahead), section.maxLength, false), section.decisionMoveWeight, decode);
  if (rows.length === 0) {
    throw new Error('sft.decisionSteps needs lookahead rows whose move is trained (selfplay.lookahead > 0 with the rule\'s moves); ' +
      'self-play wrote none');
  }
  const batches = decisionBatches(rows.length, section.batchSize, section.decisionSteps, ctx.config.seeds.base * 31 + 1_000_003);
  // sft.decisionDrills: drill rows beside each step's lookahead rows keep the world model of every move, not only the rule's
  const drills = toTrainRows(runtime, trainRows.filter((r) => r.drill), section.maxLength, section.maskStateSpans)
    .map((r) => ({ ids: r.ids, arrays: { ...r.arrays, aggregationWeight: r.ids.map(() => 1) } }));
  const perStep = drills.length > 0 ? Math.round(section.batchSize * section.decisionDrills) : 0;
  const drillBatches = perStep > 0 ? decisionBatches(drills.length, perStep, section.decisionSteps, ctx.config.seeds.base * 31 + 2_000_003) : [];
  const moves = rows.reduce((n, r) => n + decisionMoveCount(r, decode), 0);
  ctx.log('info', `sft: decision phase, ${section.decisionSteps} steps on ${rows.length} lookahead rows, their ${moves} moves weighted ` +
    `${section.decisionMoveWeight}` + (perStep > 0 ? `, with ${perStep} of ${drills.length} drill rows a step` : '') +
    (first > 0 ? `, resuming at step ${first + 1}` : ''));
  let step = step0;
  const timed = timedResumePoint();
  for (let k = first; k < section.decisionSteps; k++) {
    await breathe();
    if (ctx.signal.aborted) {
      if (k > first) await saveResumePoint(ctx, runtime, from, { epoch: section.epochs, step, pplBefore, decisionStep: k });
      runtime.dispose();
      return null;
    }
    const batch = [...batches[k]!.map((i) => rows[i]!), ...(drillBatches[k] ?? []).map((i) => drills[i]!)];
    const stats = await runtime.trainStep('sft', batch, {}, section.lr, section.gradClip);
    ctx.metric(step, { 'losses/sftDecision': stats['losses/sft']!, 'charts/lr': section.lr, 'charts/gradNorm': stats['charts/gradNorm']! });
    step++;
    ctx.progress(k + 1, section.decisionSteps, `SFT decision phase, step ${k + 1}/${section.decisionSteps}`);
    if (k + 1 < section.decisionSteps && timed.due()) {
      await saveResumePoint(ctx, runtime, from, { epoch: section.epochs, step, pplBefore, decisionStep: k + 1 });
    }
  }
  const checkpoint = await writeCheckpoint(ctx, runtime, 'sft-decision', step, {}, from, { resumePoint: false });
  ctx.saveState({ epoch: section.epochs, checkpoint, step, pplBefore, decisionStep: section.decisionSteps } satisfies SftState);
  return { checkpoint, step };
}
