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
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { StageContext, StageDefinition } from '../api/stage.js';
import type { RlSection } from '../api/run-config.js';
import type { TurnRecord } from '../api/records.js';
import { evaluateModel } from './evaluate-model.js';
import { openEpisodeJournal } from './episode-journal.js';
import { summaryMetrics } from './summary.js';
import { groupSpecs, playEpisodes, rolloutMetrics, type RolloutResult } from './rollout.js';
import { rolloutDeps } from './episodes.js';
import { filterGroupsBySpread } from './groups.js';
import { episodeRows, samplingStats, turnSamples, warmedLr } from './ppo.js';
import { assertRlSectionSupported, rlAlgorithm } from './rl-algorithms.js';
import { elapsedSeconds, loadStartingModel, meanStats, startingCheckpoint, writeCheckpoint, resumeModel } from './stage-utils.js';
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
 * 0 = minibatches of miniBatchSize rows. Repeated for ppoEpochs passes.
 */
export function updateBatches(rowCount: number, section: Pick<RlSection, 'updatesPerStep' | 'miniBatchSize' | 'ppoEpochs'>, seed: number): number[][] {
  const out: number[][] = [];
  if (rowCount === 0) return out;
  const size = section.updatesPerStep > 0 ? Math.ceil(rowCount / section.updatesPerStep) : section.miniBatchSize;
  for (let epoch = 0; epoch < section.ppoEpochs; epoch++) {
    const order = shuffleInPlace(Array.from({ length: rowCount }, (_, i) => i), createRng(seed + epoch));
    for (let b = 0; b < order.length; b += size) out.push(order.slice(b, b + size));
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
 * The models of an RL stage: the policy (resumed with its AdamW moments, else the starting model), a separate critic when the
 * algorithm needs one and model.criticMode is 'separate' (else the shared trunk's value view), the frozen KL reference, LoRA
 * adapters, and the loss parameters.
 */
async function loadRlModels(ctx: StageContext, section: RlSection, ppo: boolean) {
  const separateCritic = ppo && ctx.config.model.criticMode === 'separate';
  const state = ctx.loadState() as { nextStep?: number; checkpoint?: string; critic?: string; selfImitation?: SelfImitationEntry[] } | null;
  let policy: ModelRuntime;
  let from: string;
  if (state?.checkpoint && existsSync(join(state.checkpoint, 'config.json'))) {
    policy = await resumeModel(ctx, state.checkpoint, { valueHead: ppo && !separateCritic });
    from = state.checkpoint;
    const shared = ppo && !separateCritic && existsSync(join(state.checkpoint, OPTIMIZER_VALUE_FILE)) ? ', the shared-trunk value step\'s too' : '';
    ctx.log('info', `rl: resuming at step ${state.nextStep} from ${from} (weights and AdamW moments restored${shared})`);
  } else {
    ({ runtime: policy, from } = await loadStartingModel(ctx, { valueHead: ppo && !separateCritic }));
  }
  // model.lora: adapters on a frozen base for the policy and a separate critic (kept when their checkpoint has them),
  // before any optimizer or value view is built over the trainable weights
  await loraForStage(ctx, policy, 'rl policy');
  const start = startingCheckpoint(ctx);
  const critic = separateCritic ? await loadCritic(ctx, state?.critic, start) : null;
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
  return { state, policy, from, critic, reference, valueView, lossParams };
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
    const { state, policy, from, critic, reference, valueView, lossParams } = await loadRlModels(ctx, section, ppo);
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
      const results: RolloutResult[] = await playEpisodes(specs, limits, rolloutSeed, { ...deps, journal });
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
      const stats = await samplingStats(policy, samples, { critic: ppo ? (critic ?? policy) : undefined, reference, batchSize: section.miniBatchSize });
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
      const updateStats: Array<Record<string, number>> = [];
      for (const indexes of updateBatches(updateRows.length, section, ctx.config.seeds.base + step * 101)) {
        await breathe();
        if (ctx.signal.aborted) break;
        const batch = indexes.map((i) => updateRows[i]!);
        updateStats.push(await rlUpdate(policy, critic, valueView, batch, lossParams, { ...section, lr: warmedLr(section, step) }));
      }
      // stopped before the step's updates were all applied: nothing of the step is saved (the weights in memory hold part of
      // its update and are dropped); the resume redoes it from the last saved state, its rollouts from the episode journal
      if (ctx.signal.aborted) break;
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
      ctx.progress(step + 1, section.steps, `RL step ${step + 1}/${section.steps}: success ${(rollout['rollout/success']! * 100).toFixed(0)}%`);
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
      ctx.saveState({
        nextStep: step + 1, checkpoint, ...(criticDir ? { critic: criticDir } : {}), ...(silBuffer ? { selfImitation: silBuffer.toJSON() } : {}),
      });
      journal.clear();   // the step is saved: its rollouts are in rollouts/ and its update in the weights
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
