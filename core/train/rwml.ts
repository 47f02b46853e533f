// RWML-style world-model learning by RL (arXiv 2602.05842), before task RL. Each step the current
// policy plays `examples` episodes (a seed range of its own); from each, one turn whose actions were
// executed gives an example (s≤t, a_t): the chat up to that turn's state, with the actions the
// policy took written into the prompt. The model generates only the next state (the reply is forced
// to start with `<prediction>` and stops at `</prediction>`), and the reward is a binarised
// similarity between that text and the true next state the env produced:
//   structured  cell accuracy of the parsed predicted board ≥ threshold (exact for grids at 1.0)
//   embedding   cosine similarity of sentence embeddings (all-MiniLM-L6-v2 by default, core/model/embedding.ts;
//               local files only) ≥ threshold
// GRPO over the samples of each example (the RL stage's row builder, buildGrpoRows), KL (k3) to the
// starting model. Examples the model already gets right in every sample are subsampled
// (keepCorrectFraction). Because the action is given, "copy the state after a no-op" is no shortcut:
// the model is scored on the consequence of actions it did not choose for this prompt.
// Resumable: the weights and the next step are saved after every step.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { StageDefinition } from '../api/stage.js';
import type { RwmlSection } from '../api/run-config.js';
import type { Board } from '../api/records.js';
import type { ChatMessage } from '../model/chat.js';
import { parseStateText, scoreWorldModel } from '../prompts/world-model.js';
import type { PromptTemplate } from '../prompts/template.js';
import { rolloutDeps, runTemplate, sessionFactory } from './episodes.js';
import { groupSpecs, playEpisodes, type RolloutResult } from './rollout.js';
import { buildGrpoRows } from './grpo.js';
import { samplingStats, type TurnSample } from './ppo.js';
import { createRng } from '../util/rng.js';
import { elapsedSeconds, loadStartingModel, meanStats, startingCheckpoint, writeCheckpoint, resumeModel } from './stage-utils.js';
import { loraForStage } from './lora.js';
import { breathe } from './breathe.js';
import { loadRuntime, type ModelRuntime, type TrainRow } from './runtime.js';

export type Embedder = (texts: string[]) => Promise<number[][]>;

/**
 * The sentence-embedding model of `similarity: embedding` (core/model/embedding.ts: all-MiniLM-L6-v2 in TF.js, mean pooling +
 * L2 normalisation as sentence-transformers): stages.rwml.embeddingModel when set, else the model cache's all-MiniLM-L6-v2
 * (filled once by .ci/install-envs.sh; never downloaded at run time: a missing model is an error naming that command).
 */
async function loadEmbedder(section: RwmlSection): Promise<Embedder> {
  const { sharedSentenceEmbedder, defaultEmbeddingModelDir } = await import('../model/embedding.js');
  const embedder = await sharedSentenceEmbedder(section.embeddingModel ?? defaultEmbeddingModelDir());
  return (texts) => embedder.embed(texts);
}

function cosine(a: number[], b: number[]): number {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) { dot += a[i]! * b[i]!; na += a[i]! ** 2; nb += b[i]! ** 2; }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * Binarised embedding reward of RWML: 1 when cosine(embed(prediction), embed(truth)) ≥ threshold, else 0; an empty prediction
 * gets 0 without being embedded. `similarities` are the cosines (0 for empty predictions). One embed call for all pairs, each
 * distinct text once (a group's samples share their true state; bench/embedding-reward.ts measures the cost per text).
 */
export async function embeddingRewards(embed: Embedder, predictions: readonly string[], truths: readonly string[], threshold: number):
  Promise<{ rewards: number[]; similarities: number[] }> {
  if (predictions.length !== truths.length) throw new Error(`embeddingRewards: ${predictions.length} predictions but ${truths.length} true states`);
  const scored = predictions.map((p, i) => i).filter((i) => predictions[i]!.trim().length > 0);
  const unique = [...new Set(scored.flatMap((i) => [predictions[i]!, truths[i]!]))];
  const vectors = unique.length > 0 ? await embed(unique) : [];
  const vectorOf = new Map(unique.map((text, k) => [text, vectors[k]!]));
  const similarities = predictions.map(() => 0);
  for (const i of scored) similarities[i] = cosine(vectorOf.get(predictions[i]!)!, vectorOf.get(truths[i]!)!);
  return { rewards: similarities.map((s, i) => (scored.includes(i) && s >= threshold ? 1 : 0)), similarities };
}

/** The forced start of an RWML reply: only the next state is generated. */
export const RWML_PREFIX = '<prediction>\n';

/** One RWML example: the prompt chat (its last user message names the actions taken) and the true next state. */
export interface RwmlExample { messages: ChatMessage[]; actions: string[]; truthText: string; truthBoard: Board; episodeId: string; turn: number }

/** The user line that gives the policy's actions (the prompt ends with it). */
export function actionLine(actions: readonly string[]): string {
  return `\nActions taken: ${actions.join(' || ')}\nWrite the state after them in <prediction></prediction>.`;
}

/**
 * Examples from policy rollouts: per episode, one turn (drawn with `pick`) among those whose actions
 * were executed; the chat is the system message, the episode's turns before it (the policy's own
 * replies) and that turn's user message with the action line appended.
 */
export function rwmlExamples(results: RolloutResult[], systemMessage: string, pick: () => number): RwmlExample[] {
  const out: RwmlExample[] = [];
  for (const r of results) {
    const turns = r.record.turns;
    const usable = turns.map((t, i) => (t.actionsExecuted.length > 0 ? i : -1)).filter((i) => i >= 0);
    if (usable.length === 0) continue;
    const t = usable[Math.floor(pick() * usable.length)]!;
    const messages: ChatMessage[] = [{ role: 'system', content: systemMessage }];
    for (let i = 0; i < t; i++) messages.push({ role: 'user', content: turns[i]!.prompt }, { role: 'assistant', content: turns[i]!.response });
    const turn = turns[t]!;
    messages.push({ role: 'user', content: turn.prompt + actionLine(turn.actionsExecuted) });
    out.push({
      messages,
      actions: [...turn.actionsExecuted],
      truthText: turn.stateAfter.text,
      truthBoard: turn.stateAfter.board,
      episodeId: r.record.id,
      turn: t,
    });
  }
  return out;
}

/** The predicted state text of a generated reply (after the forced prefix, before `</prediction>`). */
export function predictedText(generated: string): string {
  const end = generated.indexOf('</prediction>');
  return (end >= 0 ? generated.slice(0, end) : generated).trim();
}

/** The structured similarity: the parsed prediction's cell accuracy against the true board (0 when it does not parse). */
export function structuredSimilarity(envId: string, text: string, template: PromptTemplate, truth: Board): number {
  const score = scoreWorldModel(parseStateText(envId, text, template, truth), truth);
  return score.parsed ? score.cellAccuracy : 0;
}

/** Binarised structured reward: the parsed prediction's cell accuracy ≥ threshold (an unparsed prediction gets 0). */
export function structuredReward(envId: string, text: string, template: PromptTemplate, truth: Board, threshold: number): number {
  const score = scoreWorldModel(parseStateText(envId, text, template, truth), truth);
  return score.parsed && score.cellAccuracy >= threshold ? 1 : 0;
}

/** The run folder's record of RWML's predictions (JSON lines, one per sample, appended after each step's state is saved). */
export const RWML_PREDICTIONS_FILE = 'rwml-predictions.jsonl';

/** One sample of an RWML step as the run folder records it (RWML_PREDICTIONS_FILE, one JSON line each). */
export interface RwmlPredictionRow {
  step: number; episodeId: string; turn: number; actions: string[]; sample: number;
  prediction: string; truth: string; measure: RwmlSection['similarity']; similarity: number; reward: number;
}

/**
 * One step's samples as rows: step (1-based), the example's episode id, turn and actions, the sample index within its group,
 * the predicted and the true next-state text, the measure (`embedding` or `structured`), the similarity the reward used
 * (embedding cosine, or structured cell accuracy; 0 for an empty or unparsed prediction) and the binarised reward.
 */
export function rwmlPredictionRows(step: number, examples: readonly RwmlExample[], texts: readonly string[], similarities: readonly number[],
  rewards: readonly number[], groupSize: number, measure: RwmlSection['similarity']): RwmlPredictionRow[] {
  return texts.map((prediction, i) => {
    const e = examples[Math.floor(i / groupSize)]!;
    return {
      step, episodeId: e.episodeId, turn: e.turn, actions: [...e.actions], sample: i % groupSize,
      prediction, truth: e.truthText, measure, similarity: similarities[i]!, reward: rewards[i]!,
    };
  });
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, c) => a + c, 0) / xs.length;
}

export const rwmlStage: StageDefinition = {
  name: 'rwml',
  title: 'RWML: GRPO on next-state prediction',
  async run(ctx) {
    const started = Date.now();
    const section = ctx.config.stages.rwml;
    const limits = ctx.config.stages.rollout;
    const template = runTemplate(ctx.config, ctx.runDir);
    const embed = section.similarity === 'embedding' ? await loadEmbedder(section) : null;
    const state = ctx.loadState() as { nextStep?: number; checkpoint?: string } | null;
    let runtime: ModelRuntime;
    let from: string;
    if (state?.checkpoint && existsSync(join(state.checkpoint, 'config.json'))) {
      runtime = await resumeModel(ctx, state.checkpoint, { valueHead: false });
      from = state.checkpoint;
      ctx.log('info', `rwml: resuming at step ${state.nextStep} from ${from}`);
    } else {
      ({ runtime, from } = await loadStartingModel(ctx, { valueHead: false }));
    }
    await loraForStage(ctx, runtime, 'rwml');   // model.lora: adapters on a frozen base (kept when the checkpoint has them)
    const start = startingCheckpoint(ctx);
    const reference = section.klCoef > 0 && start ? await loadRuntime(start, { valueHead: false, trainable: false }) : null;
    runtime.ensureOptimizer(0);
    const seedBase = ctx.config.seeds.selfplayStart + 500_000; // disjoint from self-play games, RL and eval
    const systemMessage = sessionFactory(ctx.config, template, limits)({ seed: seedBase, group: 0, sample: 0, id: 'rwml-system' }).messages()[0]!.content;
    const lossParams = {
      clipLow: section.clipLow,
      clipHigh: section.clipHigh,
      dualClip: section.dualClip,
      entropyCoef: section.entropyCoef,
      klCoef: reference ? section.klCoef : 0,
      klEstimator: 'k3',
    };
    let checkpoint = from;
    const firstStep = state?.nextStep ?? 0;
    for (let step = firstStep; step < section.steps; step++) {
      await breathe();
      if (ctx.signal.aborted) break;
      // 1. policy rollouts → (s≤t, a_t) examples
      const specs = groupSpecs(`rwml-${String(step).padStart(6, '0')}`, seedBase + step * section.examples, 0, section.examples, 1);
      const deps = rolloutDeps(ctx.config, runtime, limits, { runId: ctx.runId, stage: 'rwml', step, runDir: ctx.runDir }, { signal: ctx.signal, template });
      const results = await playEpisodes(specs, limits, ctx.config.seeds.base * 31 + step * 7_919, deps);
      if (ctx.signal.aborted) break;
      const examples = rwmlExamples(results, systemMessage, createRng(ctx.config.seeds.base * 1_009 + step));
      // 2. groupSize predictions per example: the reply starts at <prediction> and stops at </prediction>
      const maxPrompt = Math.max(16, limits.maxContextTokens - section.maxNewTokens);
      const prompts = examples.map((e) => runtime.encodePrompt(e.messages, RWML_PREFIX, maxPrompt));
      const flatPrompts = prompts.flatMap((p) => Array.from({ length: section.groupSize }, () => p));
      const generated =
        flatPrompts.length === 0
          ? []
          : await runtime.generate(flatPrompts, {
              maxNewTokens: section.maxNewTokens,
              temperature: limits.temperature,
              topP: limits.topP,
              topK: limits.topK,
              seed: ctx.config.seeds.base * 97 + step,
              stop: ['</prediction>'],
            });
      // 3. binarised similarity to the true next state
      const groups = generated.map((_, i) => Math.floor(i / section.groupSize));
      const texts = generated.map((g) => predictedText(g.text));
      // similarities: the embedding cosine, or the structured cell accuracy (0 unparsed); reward = similarity ≥ threshold
      const truthBoard = (i: number): Board => examples[groups[i]!]!.truthBoard;
      let similarities = texts.map((text, i) => (embed ? 0 : structuredSimilarity(ctx.config.env.id, text, template, truthBoard(i))));
      let rewards = texts.map((text, i) => (embed ? 0 : structuredReward(ctx.config.env.id, text, template, truthBoard(i), section.threshold)));
      if (embed && texts.length > 0) {
        ({ rewards, similarities } = await embeddingRewards(embed, texts, texts.map((_, i) => examples[groups[i]!]!.truthText), section.threshold));
      }
      // 4. subsample examples already right in every sample; GRPO rows (the RL stage's builder)
      const subsample = createRng(ctx.config.seeds.base * 1_013 + step);
      const keepGroup = examples.map((_, e) => {
        const rs = rewards.slice(e * section.groupSize, (e + 1) * section.groupSize);
        return rs.every((r) => r === 1) ? subsample() < section.keepCorrectFraction : true;
      });
      const samples: TurnSample[] = generated
        .map((g, i) => ({ episode: i, turn: 0, ids: [...flatPrompts[i]!, ...g.ids], responseStart: flatPrompts[i]!.length }))
        .filter((s) => keepGroup[groups[s.episode]!] && s.ids.length > s.responseStart && s.ids.length <= runtime.maxContext);
      const stats = await samplingStats(runtime, samples, { reference, batchSize: section.miniBatchSize });
      const rows: TrainRow[] = buildGrpoRows(samples, rewards, groups, stats).rows;
      const updates: Array<Record<string, number>> = [];
      for (let b = 0; b < rows.length; b += section.miniBatchSize) {
        await breathe();
        if (ctx.signal.aborted) break;
        updates.push(await runtime.trainStep('grpo', rows.slice(b, b + section.miniBatchSize), lossParams, section.lr, section.gradClip));
      }
      if (ctx.signal.aborted) break;
      const accuracy = rewards.reduce((a, c) => a + c, 0) / Math.max(1, rewards.length);
      ctx.metric(step + 1, {
        ...meanStats(updates),
        'rwml/predictionReward': accuracy,
        ...(similarities.length > 0 ? { 'rwml/predictionSimilarity': mean(similarities) } : {}),   // undefined without samples: not logged
        'rwml/examples': examples.length,
        'rwml/keptExamples': keepGroup.filter(Boolean).length,
      });
      ctx.progress(step + 1, section.steps, `RWML step ${step + 1}/${section.steps}: prediction reward ${(accuracy * 100).toFixed(0)}%`);
      checkpoint = await writeCheckpoint(
        ctx,
        runtime,
        step + 1 === section.steps ? `rwml-${section.steps}` : 'rwml-latest',
        step + 1,
        { predictionReward: accuracy },
        from,
        { resumePoint: step + 1 < section.steps },   // the final one: no AdamW moments (docs/checkpoints.md)
      );
      ctx.saveState({ nextStep: step + 1, checkpoint });
      ctx.appendJsonl(RWML_PREDICTIONS_FILE, rwmlPredictionRows(step + 1, examples, texts, similarities, rewards, section.groupSize, section.similarity));
    }
    runtime.dispose();
    reference?.dispose();
    if (ctx.signal.aborted) return {};
    if (firstStep >= section.steps && state?.checkpoint) checkpoint = state.checkpoint;
    return { checkpoint, steps: section.steps, similarity: section.similarity, wallSeconds: elapsedSeconds(started) };
  },
};
