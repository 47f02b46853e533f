// RL stage: PPO with a critic (default) or GRPO. Each step plays `groups` puzzles × `groupSize`
// episodes from the RL seed range (groups share a seed), computes per-turn rewards (env reward and
// penalties, plus the online world-model reward 0.5·obs + 0.5·pred for well-formatted turns when
// worldModelReward > 0, scored by entity F1 as VAGEN, plus a format bonus), keeps the groups with
// the largest reward spread, builds rows (ppo.ts / grpo.ts) and updates (rlUpdate: policy and value
// losses as separate steps with their own lr and clip; updatesPerStep 1 = the release's one update). Pass@k on
// held-out seeds is tracked every passAtKEvery steps (eval/rl-step-<n>.json, metrics rl/passAt<k>).
// Resumable: the latest weights and the next step are saved after every step, after the step's metrics and its tracked
// Pass@k (so a kill between them loses nothing: the resumed run redoes the step; N6); a resume whose milestone Pass@k is
// missing (a stop during it) computes it first. The shared-trunk value step's moments are saved too (exact resume; N6b).
// rl.selfImitation > 0 steps: after the update, the step's won turns join a buffer of distinct turns (kept in the stage
// state) and the policy replays it (core/train/self-imitation.ts; Oh et al. 2018).
// Within a step nothing is lost either: its finished rollout batches are journalled (episode-journal.ts), so are its
// scored batches of old log-probs (the stats journal), and its update writes a resume point (checkpoints/rl-update with
// the AdamW moments, and the updates done in the stage state) on a Stop and every model.memory.resumePointMinutes; a resume
// from it applies the remaining updates to the same weights with the same old log-probs: the uninterrupted run's numbers.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StageContext, StageDefinition } from '../api/stage.js';
import type { RlSection } from '../api/run-config.js';
import type { TurnRecord } from '../api/records.js';
import { evaluateModel } from './evaluate-model.js';
import { STATS_JOURNAL_PREFIX, modelFingerprint, openBatchJournal, openEpisodeJournal, readJournalFile } from './episode-journal.js';
import { summaryMetrics } from './summary.js';
import { groupSpecs, playEpisodes, rolloutMetrics, type RolloutResult } from './rollout.js';
import { rolloutDeps } from './episodes.js';
import { filterGroupsBySpread } from './groups.js';
import {
  episodeRows, journalledSamplingStats, rowEpisodes, scoredCarrierRows, turnSamples, warmedLr, type JournalledRowStats, type TurnSample,
} from './ppo.js';
import { assertRlSectionSupported, rlAlgorithm } from './rl-algorithms.js';
import {
  checkpointDir, elapsedSeconds, loadStartingModel, meanStats, resumeModel, startingCheckpoint, startingModelRef, timedResumePoint, writeCheckpoint,
} from './stage-utils.js';
import { loraForStage } from './lora.js';
import { OPTIMIZER_VALUE_FILE } from '../model/checkpoint.js';
import { breathe } from './breathe.js';
import { loadRuntime, pruneMilestones, removeCheckpoint, type ModelRuntime, type RuntimeTrainer, type TrainRow } from './runtime.js';
import { createRng, shuffleInPlace } from '../util/rng.js';
import { attachTokenStats } from './token-stats.js';
import { formatDriftWarning } from './format-drift.js';
import { SelfImitationBuffer, selfImitationSteps, type SelfImitationEntry } from './self-imitation.js';

/** Score of one written state for the online world-model reward (VAGEN scores entities: F1 of player/box/hole positions). */
export function worldModelStateScore(score: TurnRecord['wm']['observation'], kind: RlSection['worldModelScore']): number {
  if (!score || !score.parsed) return 0;
  if (kind === 'exact') return score.exact ? 1 : 0;
  if (kind === 'cell-accuracy') return score.cellAccuracy;
  return score.meanF1;
}

/** Reward of one turn under the section's shaping (names in docs/metrics.md). */
export function shapedTurnReward(turn: TurnRecord, section: RlSection): { reward: number; wm: number } {
  const wellFormed = !turn.flags.formatError;
  let wm = 0;
  if (section.worldModelReward > 0 && wellFormed) {
    const score = (s: TurnRecord['wm']['observation']) => worldModelStateScore(s, section.worldModelScore);
    wm = 0.5 * score(turn.wm.observation) + 0.5 * score(turn.wm.prediction);
  }
  return { reward: turn.reward + section.worldModelReward * wm + (wellFormed ? section.formatBonus : 0), wm };
}

/** The separate critic: resumed with its AdamW moments, else a copy of the starting checkpoint, else the run's starting model. */
async function loadCritic(ctx: StageContext, resumeFrom: string | undefined, start: string | null): Promise<ModelRuntime> {
  if (resumeFrom && existsSync(join(resumeFrom, 'config.json'))) return loadRuntime(resumeFrom, { valueHead: true, resume: true });
  if (start) return loadRuntime(start, { valueHead: true });
  return (await loadStartingModel(ctx, { valueHead: true })).runtime;
}

/**
 * The minibatches of one RL step, as row indexes: `updatesPerStep` > 0 splits the shuffled kept
 * batch into that many equal updates (the release: 1 update over the whole filtered batch);
 * 0 = minibatches of miniBatchSize units. Repeated for ppoEpochs passes. A unit is a row, or with `groups` (the episode
 * of each row: ppo.ts rowEpisodes, under rl.updateRows 'episode') an episode with all its rows: an episode whose turns
 * did not chain into one row (its re-rendered history re-tokenized differently) still counts once, so every arm gets
 * the same updates per step whatever its replies (study v4's amendment of 2026-12-01 05:16: vanilla's 304 rows of 32
 * episodes made 38 updates a step, SPA's 4). When every episode has one row the batches equal the rows' batches.
 */
export function updateBatches(
  rowCount: number, section: Pick<RlSection, 'updatesPerStep' | 'miniBatchSize' | 'ppoEpochs'>, seed: number, groups?: readonly number[],
): number[][] {
  const out: number[][] = [];
  if (rowCount === 0) return out;
  if (groups && groups.length !== rowCount) throw new Error(`updateBatches: ${groups.length} row episodes for ${rowCount} rows`);
  // the units in the order their first row comes, each with its rows in row order
  const units: number[][] = [];
  if (groups) {
    const at = new Map<number, number[]>();
    groups.forEach((g, i) => {
      const unit = at.get(g);
      if (unit) unit.push(i);
      else { const fresh = [i]; at.set(g, fresh); units.push(fresh); }
    });
  } else for (let i = 0; i < rowCount; i++) units.push([i]);
  const size = section.updatesPerStep > 0 ? Math.ceil(units.length / section.updatesPerStep) : section.miniBatchSize;
  for (let epoch = 0; epoch < section.ppoEpochs; epoch++) {
    const order = shuffleInPlace(Array.from({ length: units.length }, (_, i) => i), createRng(seed + epoch));
    for (let b = 0; b < order.length; b += size) out.push(order.slice(b, b + size).flatMap((u) => units[u]!));
  }
  return out;
}

/**
 * The RL optimizer: AdamW with the section's betas and no weight decay (runtime.ensureOptimizer's default β2 0.95 is the SFT
 * setting); keeps resumed moments.
 */
export function ensureRlOptimizer(runtime: ModelRuntime, betas: readonly [number, number]): void {
  runtime.ensureOptimizer(0, betas);
}

/** What one update needs of a model (a ModelRuntime; a fake in tests). */
export interface Trainable {
  trainStep(lossName: string, rows: TrainRow[], params: Record<string, unknown>, lr: number, gradClip: number): Promise<Record<string, number>>;
}

/**
 * One RL update: the algorithm's row (RL_ALGORITHMS) runs its losses. PPO with a separate critic: the policy loss at lr, the
 * value loss on the critic at criticLr. PPO with a shared trunk: the same two losses as two steps on one model, the value step
 * through `valueOptimizer` (its own AdamW moments) at criticLr, so each has its own learning rate and its own gradient clip
 * (one clip over both let early value gradients shrink the policy step; audit B4). GRPO and Dr. GRPO: the policy loss only.
 */
export async function rlUpdate(
  policy: Trainable,
  critic: Trainable | null,
  valueOptimizer: Trainable | null,
  batch: TrainRow[],
  lossParams: Record<string, unknown>,
  section: RlSection,
): Promise<Record<string, number>> {
  return rlAlgorithm(section.algorithm).update({ policy, critic: critic ?? valueOptimizer }, batch, lossParams, section);
}

/**
 * The value step's handle on a shared-trunk model: the same weights, its own AdamW (betas of the
 * section), so value and policy keep separate moments (runtime.valueView, on every backend).
 * Dispose with disposeValueView (it frees only the view's moments). While it is open the policy's resume points carry its
 * moments (optimizer.value.safetensors), and a policy loaded with `resume` gives them back to this view.
 */
export function sharedTrunkValueView(policy: ModelRuntime, betas: readonly [number, number]): RuntimeTrainer {
  return policy.valueView(betas);
}

export async function disposeValueView(view: RuntimeTrainer | null): Promise<void> { await view?.dispose(); }

/** Whether the model after `step` RL steps gets a tracked Pass@k (and a milestone checkpoint rl-<step>). */
export function isPassAtKMilestone(step: number, section: Pick<RlSection, 'passAtKEvery' | 'steps'>): boolean {
  return section.passAtKEvery > 0 && step > 0 && (step % section.passAtKEvery === 0 || step === section.steps);
}

/** The tracked Pass@k file of the model after `step` RL steps, relative to the run folder. */
export function passAtKFile(step: number): string {
  return `eval/rl-step-${String(step).padStart(6, '0')}.json`;
}

async function trackPassAtK(ctx: StageContext, runtime: ModelRuntime, section: RlSection, step: number, model?: string): Promise<void> {
  const evalSection = ctx.config.stages.eval;
  // `model`: the checkpoint these weights were loaded from (step 0, or a resumed milestone): its finished batches are journalled
  const { summary, journal } = await evaluateModel(ctx, runtime, {
    puzzles: section.passAtKPuzzles,
    samples: evalSection.samples,
    k: evalSection.k,
    temperature: evalSection.temperature,
    stage: 'rl',
    step,
    // the step count stays; the message says which held-out game the Pass@k evaluation is at
    onProgress: (done, total) => ctx.progress(step, section.steps, `RL Pass@k at step ${step}: ${done}/${total} held-out games`),
    ...(model ? { journal: { key: `pass-at-k-${String(step).padStart(6, '0')}`, model } } : {}),
  });
  if (ctx.signal.aborted) return; // stopped mid-evaluation: no partial Pass@k (its finished batches stay in the journal)
  const values = summaryMetrics(summary, 'rl');
  ctx.metric(step, values);
  ctx.writeJson(passAtKFile(step), { kind: 'rl-pass-at-k', stage: 'rl', step, ...summary });
  journal?.clear();
}

/**
 * The resume point of an RL step's update, kept in the stage state as `update` while the step runs (core/train/rl-stage.ts):
 * checkpoints/rl-update (and rl-critic-update with a separate critic) hold the weights and AdamW moments after `batchesDone`
 * of the step's `batches` updates, trained with the old log-probs of the stats journal whose fingerprint is `stats`.
 */
export interface UpdatePoint {
  /** The step it belongs to (0-based: the state's nextStep when it was written). */
  step: number;
  batchesDone: number;
  batches: number;
  /** sha-256 of rl-update/manifest.json (and of rl-critic-update's): the folders hold the weights of this point. */
  manifest: string;
  criticManifest?: string;
  /** The stats journal's fingerprint and its batches: the old log-probs, values and entropies the updates used. */
  stats: string;
  statsBatches: number;
  /** The losses and charts of the updates done (the step's metrics average every update's). */
  updateStats: Array<Record<string, number>>;
}

/** The checkpoint folders of an update's resume point. */
export const UPDATE_POINT = 'rl-update', UPDATE_POINT_CRITIC = 'rl-critic-update';

/** The stats journal key of step `step` (0-based). */
export function statsJournalKey(step: number): string { return `${STATS_JOURNAL_PREFIX}${String(step).padStart(6, '0')}`; }

function manifestHash(dir: string): string | null {
  try { return createHash('sha256').update(readFileSync(join(dir, 'manifest.json'))).digest('hex'); } catch { return null; }
}

type RlState = { nextStep?: number; checkpoint?: string; critic?: string; selfImitation?: SelfImitationEntry[]; update?: UpdatePoint };

/**
 * The state's update point when a resume can use it, else null (with a log line saying why it is not used: then the step's
 * updates are redone from the step's start, which is exact too, only slower). Not used when a Pass@k must be computed on the
 * step's starting weights first, or when its weights or old log-probs are not the ones it recorded.
 */
function usableUpdatePoint(ctx: StageContext, state: RlState | null, section: RlSection, separateCritic: boolean): UpdatePoint | null {
  const point = state?.update;
  if (!point) return null;
  const step = state?.nextStep ?? 0;
  const why = ((): string | null => {
    if (point.step !== step) return `it belongs to step ${point.step + 1}`;
    if (manifestHash(checkpointDir(ctx, UPDATE_POINT)) !== point.manifest) {
      return `checkpoints/${UPDATE_POINT} does not hold its weights (a kill while it was written)`;
    }
    if (separateCritic && manifestHash(checkpointDir(ctx, UPDATE_POINT_CRITIC)) !== point.criticManifest) {
      return `checkpoints/${UPDATE_POINT_CRITIC} does not hold its critic`;
    }
    const journal = readJournalFile(join(ctx.runDir, 'stages', ctx.stage, 'batches', `${statsJournalKey(step)}.jsonl`));
    if (!journal || journal.fingerprint !== point.stats || new Set(journal.starts).size < point.statsBatches) {
      return 'the old log-probs its updates used are no longer in the step\'s stats journal';
    }
    const pending = (n: number) => !existsSync(join(ctx.runDir, passAtKFile(n)));
    if ((step === 0 && section.passAtKEvery > 0 && pending(0)) || (isPassAtKMilestone(step, section) && pending(step))) {
      return `the Pass@k of step ${step} is still to be computed on the step's starting weights`;
    }
    return null;
  })();
  if (why === null) return point;
  ctx.log('info', `rl: the resume point of step ${step + 1}'s update is not used (${why}); the step's updates are redone from its start`);
  return null;
}

/**
 * The models of an RL stage: the policy (resumed with its AdamW moments, else the starting model), a separate critic when the
 * algorithm needs one and model.criticMode is 'separate' (else the shared trunk's value view), the frozen KL reference, LoRA
 * adapters, and the loss parameters. With a usable update point (usableUpdatePoint) the policy and critic are that point's;
 * `from` and `criticFrom` stay the weights the step started from (its rollouts and old log-probs were computed with them).
 */
async function loadRlModels(ctx: StageContext, section: RlSection, ppo: boolean) {
  const separateCritic = ppo && ctx.config.model.criticMode === 'separate';
  const state = ctx.loadState() as RlState | null;
  const point = usableUpdatePoint(ctx, state, section, separateCritic);
  const resumed = !!state?.checkpoint && existsSync(join(state.checkpoint, 'config.json'));
  let policy: ModelRuntime;
  let from: string;
  if (point) {
    const dir = checkpointDir(ctx, UPDATE_POINT);
    policy = await resumeModel(ctx, dir, { valueHead: ppo && !separateCritic });
    from = resumed ? state.checkpoint! : startingModelRef(ctx);
    ctx.log('info', `rl: resuming step ${point.step + 1} after ${point.batchesDone} of its ${point.batches} updates from ${dir} ` +
      '(weights and AdamW moments restored; the rollouts and old log-probs from its journals)');
  } else if (resumed) {
    policy = await resumeModel(ctx, state.checkpoint!, { valueHead: ppo && !separateCritic });
    from = state.checkpoint!;
    const shared = ppo && !separateCritic && existsSync(join(state.checkpoint!, OPTIMIZER_VALUE_FILE)) ? ', the shared-trunk value step\'s too' : '';
    ctx.log('info', `rl: resuming at step ${state.nextStep} from ${from} (weights and AdamW moments restored${shared})`);
  } else {
    ({ runtime: policy, from } = await loadStartingModel(ctx, { valueHead: ppo && !separateCritic }));
  }
  // model.lora: adapters on a frozen base for the policy and a separate critic (kept when their checkpoint has them),
  // before any optimizer or value view is built over the trainable weights
  await loraForStage(ctx, policy, 'rl policy');
  const start = startingCheckpoint(ctx);
  const criticFrom = state?.critic && existsSync(join(state.critic, 'config.json')) ? state.critic : start ?? startingModelRef(ctx);
  const critic = separateCritic ? await loadCritic(ctx, point ? checkpointDir(ctx, UPDATE_POINT_CRITIC) : state?.critic, start) : null;
  if (critic) await loraForStage(ctx, critic, 'rl critic');
  const reference = section.klCoef > 0 ? (start ? await loadRuntime(start, { valueHead: false, trainable: false }) : null) : null;
  if (section.klCoef > 0 && !reference) ctx.log('warn', 'rl: klCoef > 0 but there is no starting checkpoint to act as the frozen reference; KL is skipped');
  const klCoef = reference ? section.klCoef : 0;
  ensureRlOptimizer(policy, section.adamBetas);
  if (critic) ensureRlOptimizer(critic, section.adamBetas);
  const valueView = ppo && !critic ? sharedTrunkValueView(policy, section.adamBetas) : null;
  const lossParams = {
    clipLow: section.clipLow,
    clipHigh: section.clipHigh,
    dualClip: section.dualClip,
    valueClip: section.valueClip,
    entropyCoef: section.entropyCoef,
    entropyCap: section.entropyCap,
    valueCoef: section.valueCoef,
    klCoef,
    klEstimator: section.klEstimator,
  };
  return { state, point, policy, from, critic, criticFrom, reference, start, valueView, lossParams };
}

/**
 * The identity of a step's stats journal: the weights that score (policy, critic, reference), what is scored (each prefix
 * carrier's ids and score mask) and the batch size (the journal's batches are keyed by their first row).
 */
function statsIdentity(o: {
  checkpoint: string; critic: string | null; reference: string | null; samples: TurnSample[]; batchSize: number;
}): unknown {
  return {
    model: modelFingerprint(o.checkpoint), critic: o.critic ? modelFingerprint(o.critic) : null, reference: o.reference ? modelFingerprint(o.reference) : null,
    batchSize: o.batchSize, rows: createHash('sha256').update(JSON.stringify(scoredCarrierRows(o.samples))).digest('hex'),
  };
}

export const rlStage: StageDefinition = {
  name: 'rl',
  title: 'RL (PPO or GRPO)',
  async run(ctx) {
    const started = Date.now();
    const section = ctx.config.stages.rl;
    const limits = ctx.config.stages.rollout;
    const algorithm = rlAlgorithm(section.algorithm);
    assertRlSectionSupported(section);
    const ppo = algorithm.needsCritic;
    const { state, point, policy, from, critic, criticFrom: firstCriticFrom, reference, start, valueView, lossParams } = await loadRlModels(ctx, section, ppo);
    const firstStep = state?.nextStep ?? 0;
    // step 0's Pass@k is the starting model's: one already written by an earlier attempt from the same start is kept
    if (firstStep === 0 && section.passAtKEvery > 0) {
      if (existsSync(join(ctx.runDir, passAtKFile(0)))) ctx.log('info', 'rl: the Pass@k of step 0 was computed by an earlier attempt; kept');
      else await trackPassAtK(ctx, policy, section, 0, from);
    }
    if (isPassAtKMilestone(firstStep, section) && !existsSync(join(ctx.runDir, passAtKFile(firstStep)))) {
      // the state was saved but its step's Pass@k was not (a stop during it, or a run from before N6): the resumed weights are that model's
      ctx.log('info', `rl: the Pass@k of step ${firstStep} is missing; computing it before step ${firstStep + 1}`);
      await trackPassAtK(ctx, policy, section, firstStep, from);
    }
    let checkpoint = from;
    let criticFrom = firstCriticFrom;
    // the state as saved at the last step's end: an update point is written into it during a step and dropped at its end
    let savedState: Record<string, unknown> = (({ update: _update, ...rest }) => rest)(state ?? {});
    // rl.selfImitation: the buffer of distinct won turns, restored from the stage state on a resume
    const sil = section.selfImitation;
    const silBuffer = sil.steps > 0 ? new SelfImitationBuffer(sil.capacity, state?.selfImitation ?? []) : null;
    if (silBuffer && firstStep > 0) ctx.log('info', `rl: self-imitation buffer restored with ${silBuffer.size} turns`);
    // selfImitation.moments 'own': the replay steps through a second AdamW over the policy's weights (its moments go in the
    // resume point as the value view's do); with a shared-trunk critic that view is the value step's, so it is refused
    if (silBuffer && sil.moments === 'own' && valueView) {
      throw new Error("rl.selfImitation.moments 'own' needs a critic-free algorithm (grpo, dr-grpo, reinforce) or model.criticMode " +
        "'separate': with the shared trunk the policy's second set of AdamW moments is the value step's; set moments to 'shared'");
    }
    const silView = silBuffer && sil.moments === 'own' ? sharedTrunkValueView(policy, section.adamBetas) : null;
    const silPolicy = silView
      ? { tokenizer: policy.tokenizer, tokenStats: policy.tokenStats.bind(policy), trainStep: silView.trainStep.bind(silView) }
      : policy;
    let silWarned = false;
    let episodesSeen = firstStep * section.groups * section.groupSize;
    const formatRates: number[] = []; // per step since this start or resume: the format-drift guard (format-drift.ts) warns once
    let driftWarned = false;
    for (let step = firstStep; step < section.steps; step++) {
      if (ctx.signal.aborted) break;
      // 1. rollouts: groups share a puzzle seed from the RL range
      const specs = groupSpecs(`rl-${String(step).padStart(6, '0')}`, ctx.config.seeds.rlStart + step * section.groups, 0, section.groups, section.groupSize);
      specs.forEach((s) => { s.group = step * section.groups + (s.group); });
      const deps = rolloutDeps(ctx.config, policy, limits, { runId: ctx.runId, stage: 'rl', step, runDir: ctx.runDir }, { signal: ctx.signal });
      const rolloutSeed = ctx.config.seeds.base * 1_000_003 + step * 7_919;
      // the step's finished batches survive a stop: `checkpoint` holds exactly these weights (the start, or the resume point
      // saved at the end of the previous step), so a resumed step replays only the batches it had not finished
      const journal = openEpisodeJournal(ctx, `rollouts-${String(step).padStart(6, '0')}`,
        (n) => `rl: step ${step + 1}: ${n} finished rollout batch(es) restored from its episode journal`, checkpoint, specs, rolloutSeed, limits);
      const stepLabel = `RL step ${step + 1}/${section.steps}`;
      const results: RolloutResult[] = await playEpisodes(specs, limits, rolloutSeed, {
        ...deps, journal, onBatch: (done, total) => ctx.progress(step, section.steps, `${stepLabel}: rollouts ${done}/${total} episodes`),
      });
      if (ctx.signal.aborted) break;
      episodesSeen += results.length;
      // 2. rewards and group filter
      const shaped = results.map((r) => r.record.turns.map((t) => shapedTurnReward(t, section)));
      const turnRewards = shaped.map((turns) => turns.map((t) => t.reward));
      const episodeRewards = turnRewards.map((rs) => rs.reduce((a, c) => a + c, 0));
      const groups = results.map((r) => r.spec.group);
      const filter = filterGroupsBySpread(episodeRewards, groups, section.keepGroupsFraction);
      const kept = new Set(filter.keptGroups);
      const samples = turnSamples(results, (e) => kept.has(groups[e]!), {
        maskStateSpans: section.maskStateSpans, entropyOn: section.entropyOn, lossOn: section.lossOn, decode: (ids) => policy.tokenizer.decode(ids),
      });
      // 3. rows with old log-probs / values (and reference log-probs for KL)
      // their scored batches are journalled: a resume does not score them again, and an update point needs them (the
      // weights then are no longer the ones that scored)
      const statsJournal = openBatchJournal<JournalledRowStats>(ctx, statsJournalKey(step), statsIdentity({
        checkpoint, critic: critic ? criticFrom : null, reference: reference ? start : null, samples, batchSize: section.miniBatchSize,
      }));
      if (statsJournal.restored) {
        ctx.log('info', `rl: step ${step + 1}: ${statsJournal.restored} scored batch(es) of old log-probs restored from its stats journal`);
      }
      const resumeUpdate = point && step === firstStep ? point : null;
      if (resumeUpdate && resumeUpdate.stats !== statsJournal.fingerprint) {
        throw new Error(`rl: step ${step + 1}'s update resume point was trained with other old log-probs than this step's rollouts give ` +
          `(stats journal ${resumeUpdate.stats.slice(0, 12)}… vs ${statsJournal.fingerprint.slice(0, 12)}…); remove ` +
          `${checkpointDir(ctx, UPDATE_POINT)} to redo the step's update from its start`);
      }
      const stats = await journalledSamplingStats(policy, samples, {
        critic: ppo ? (critic ?? policy) : undefined, reference, batchSize: section.miniBatchSize, journal: statsJournal, stopped: () => ctx.signal.aborted,
        onBatch: (done, total) => ctx.progress(step, section.steps, `${stepLabel}: old log-probs ${done}/${total} rows`),
      });
      if (!stats) break;   // stopped while scoring: the scored batches stay in the stats journal
      const built = algorithm.buildRows({ samples, turnRewards, episodeRewards, groups, stats, section });
      const rows: TrainRow[] = built.rows;
      const charts: Record<string, number> = { 'charts/keptGroups': filter.keptGroups.length, ...built.charts };
      // the episodes are written with per-token stats of the turns used in the update (core/train/token-stats.ts)
      attachTokenStats(
        results.map((r) => r.record),
        samples,
        { ...stats, values: ppo ? stats.values : null, advantages: rows.map((r) => r.arrays.advantages!) },
        (id) => policy.tokenizer.decode([id]),
      );
      for (const r of results) ctx.episode(`rl-${String(step).padStart(6, '0')}`, r.record);
      // 4. updates (rl.updateRows 'episode': one row per episode, its turns merged into their prefix carrier)
      const updateRows = section.updateRows === 'episode' ? episodeRows(rows, samples) : rows;
      charts['charts/updateRows'] = updateRows.length;
      const plan = updateBatches(updateRows.length, section, ctx.config.seeds.base + step * 101,
        section.updateRows === 'episode' ? rowEpisodes(updateRows) : undefined);
      charts['charts/updates'] = plan.length;
      const updateStats: Array<Record<string, number>> = [];
      let done = 0;
      if (resumeUpdate) {
        if (resumeUpdate.batches !== plan.length || resumeUpdate.batchesDone > plan.length) {
          throw new Error(`rl: step ${step + 1}'s update resume point has ${resumeUpdate.batchesDone} of ${resumeUpdate.batches} updates; ` +
            `the step has ${plan.length}; remove ${checkpointDir(ctx, UPDATE_POINT)} to redo the step's update from its start`);
        }
        done = resumeUpdate.batchesDone;
        updateStats.push(...resumeUpdate.updateStats);
      }
      const firstBatch = done;
      let saved = done;
      // the update's resume point: weights and AdamW moments after `done` updates, then the state that points at them (a
      // kill between the two leaves a point whose manifest differs: usableUpdatePoint then redoes the step's updates)
      const saveUpdatePoint = async (): Promise<void> => {
        const dir = await writeCheckpoint(ctx, policy, UPDATE_POINT, step, {}, checkpoint, { resumePoint: true });
        const criticDir = critic ? await writeCheckpoint(ctx, critic, UPDATE_POINT_CRITIC, step, {}, checkpoint, { resumePoint: true }) : null;
        const update: UpdatePoint = {
          step, batchesDone: done, batches: plan.length, manifest: manifestHash(dir)!, ...(criticDir ? { criticManifest: manifestHash(criticDir)! } : {}),
          stats: statsJournal.fingerprint, statsBatches: Math.ceil((stats.carriers ?? 0) / section.miniBatchSize), updateStats,
        };
        ctx.saveState({ ...savedState, update });
        saved = done;
        ctx.log('info', `rl: step ${step + 1}: resume point after ${done} of its ${plan.length} updates`);
      };
      const timed = timedResumePoint();
      for (let b = firstBatch; b < plan.length; b++) {
        await breathe();
        if (ctx.signal.aborted) break;
        const batch = plan[b]!.map((i) => updateRows[i]!);
        updateStats.push(await rlUpdate(policy, critic, valueView, batch, lossParams, { ...section, lr: warmedLr(section, step) }));
        done = b + 1;
        ctx.progress(step, section.steps, `${stepLabel}: update ${done}/${plan.length}`);
        if (done < plan.length && !ctx.signal.aborted && timed.due()) await saveUpdatePoint();
      }
      // stopped during the updates: the ones applied since the last resume point are kept in a new one (the resume applies
      // the rest to these weights); the step itself is not saved
      if (ctx.signal.aborted) {
        if (done > saved) await saveUpdatePoint();
        break;
      }
      // 5. self-imitation (rl.selfImitation): the step's won turns join the buffer, then its steps replay the buffer
      const silCharts: Record<string, number> = {};
      if (silBuffer && !ctx.signal.aborted) {
        const added = silBuffer.addWins(results, sil.filter, sil.gamma, sil.source);
        const done = await selfImitationSteps(silPolicy, silBuffer, sil, {
          lr: sil.lr ?? section.lr, gradClip: section.gradClip, maskStateSpans: section.maskStateSpans, lossParams,
          seed: ctx.config.seeds.base * 7_919 + step, stopped: () => ctx.signal.aborted,
        });
        Object.assign(silCharts, {
          'sil/buffer': silBuffer.size, 'sil/added': added.added, 'sil/leftOut': Object.values(added.leftOut).reduce((a, b) => a + b, 0),
          'sil/steps': done.steps, 'sil/crossEntropy': done.crossEntropy,
        });
        if (!silWarned && silBuffer.size === 0 && Object.keys(added.leftOut).length) {
          silWarned = true;
          ctx.log('warn', `rl: self-imitation left out every won turn of step ${step + 1} (filter ${sil.filter}: ` +
            `${Object.entries(added.leftOut).map(([why, n]) => `${n} ${why}`).join(', ')})`);
        }
      }
      if (ctx.signal.aborted) break;   // stopped during the replay: as during the updates, the step is redone
      const rollout = rolloutMetrics(results);
      const wmRewards = shaped.flatMap((turns) => turns.map((t) => t.wm));
      const losses = meanStats(updateStats);
      const values: Record<string, number> = {
        ...rollout,
        ...charts,
        ...losses,
        ...silCharts,
        'rollout/shapedReward': episodeRewards.reduce((a, c) => a + c, 0) / Math.max(1, episodeRewards.length),
      };
      if (section.worldModelReward > 0) values['rollout/wmReward'] = wmRewards.reduce((a, c) => a + c, 0) / Math.max(1, wmRewards.length);
      const turns = results.flatMap((r) => r.record.turns);
      const cell = (pick: (t: TurnRecord) => TurnRecord['wm']['observation']) => {
        const s = turns.map(pick).filter((x) => x !== null);
        return s.length ? s.reduce((a, x) => a + (x!.parsed ? x!.cellAccuracy : 0), 0) / s.length : Number.NaN;
      };
      values['rollout/wmObservationCellAccuracy'] = cell((t) => t.wm.observation);
      values['rollout/wmPredictionCellAccuracy'] = cell((t) => t.wm.prediction);
      // turns whose prediction parsed: with none, the accuracies above are undefined (not 0) and left out
      values['rollout/wmTurns'] = turns.filter((t) => t.wm.prediction?.parsed).length;
      if (values['rollout/wmTurns'] === 0) { delete values['rollout/wmObservationCellAccuracy']; delete values['rollout/wmPredictionCellAccuracy']; }
      for (const key of Object.keys(values)) if (!Number.isFinite(values[key]!)) delete values[key]; // e.g. explained variance when returns do not vary
      ctx.metric(step + 1, values, { episodes: episodesSeen });
      ctx.progress(step + 1, section.steps, `${stepLabel}: success ${(rollout['rollout/success']! * 100).toFixed(0)}%`);
      formatRates.push(rollout['rollout/formatErrorRate'] ?? 0);
      const drift = driftWarned ? null : formatDriftWarning(formatRates, ppo ? ctx.config.model.criticMode : null);
      if (drift) { ctx.log('warn', drift); driftWarned = true; }
      // 6. the tracked Pass@k, before the state: a kill before the state is saved redoes the step and its Pass@k (N6)
      const milestone = isPassAtKMilestone(step + 1, section);
      if (milestone) await trackPassAtK(ctx, policy, section, step + 1);
      // 7. checkpoints (docs/checkpoints.md): rl-latest is the resume point (AdamW moments of the policy and of a shared-trunk
      // value step, f32 weights); a milestone rl-<n> and the final rl-<steps> hold weights only (model.memory.checkpointDtype);
      // model.memory.keepMilestones bounds the milestones. A stop during the Pass@k still saves the step (the resume computes it).
      const last = step + 1 === section.steps;
      const scores = { reward: rollout['rollout/reward']!, success: rollout['rollout/success']! };
      if (!last) checkpoint = await writeCheckpoint(ctx, policy, 'rl-latest', step + 1, scores, from, { resumePoint: true });
      if (milestone || last) {
        const dir = await writeCheckpoint(ctx, policy, `rl-${step + 1}`, step + 1, scores, from, { resumePoint: false });
        if (last) checkpoint = dir;
        await pruneMilestones(join(ctx.runDir, 'checkpoints'), 'rl-', [`rl-${section.steps}`]);
      }
      const criticDir = critic ? await writeCheckpoint(ctx, critic, 'rl-critic-latest', step + 1, {}, from, { resumePoint: !last }) : undefined;
      savedState = {
        nextStep: step + 1, checkpoint, ...(criticDir ? { critic: criticDir } : {}), ...(silBuffer ? { selfImitation: silBuffer.toJSON() } : {}),
      };
      ctx.saveState(savedState);
      if (criticDir) criticFrom = criticDir;
      journal.clear();   // the step is saved: its rollouts are in rollouts/ and its update in the weights
      statsJournal.clear();
      await removeCheckpoint(checkpointDir(ctx, UPDATE_POINT));
      await removeCheckpoint(checkpointDir(ctx, UPDATE_POINT_CRITIC));
      if (last) await removeCheckpoint(join(ctx.runDir, 'checkpoints', 'rl-latest'));   // the stage is done: nothing resumes from it
    }
    await disposeValueView(valueView);
    await disposeValueView(silView);
    policy.dispose();
    critic?.dispose();
    reference?.dispose();
    if (ctx.signal.aborted) return {};
    // done: nothing resumes from rl-latest (already gone unless a kill came between the last step's state and its removal)
    await removeCheckpoint(join(ctx.runDir, 'checkpoints', 'rl-latest'));
    return { checkpoint, steps: section.steps, algorithm: section.algorithm, wallSeconds: elapsedSeconds(started) };
  },
};
