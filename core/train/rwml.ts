// RWML-style world-model learning by RL (arXiv 2602.05842), before task RL. Examples are states
// reached by a few random legal moves from puzzles of a separate seed range; the model writes its
// usual turn, and the reward is a binarised similarity between its <prediction> and the true next
// state after the actions it chose (computed without disturbing the episode):
//   structured  cell accuracy of the parsed predicted board ≥ threshold (exact for grids at 1.0)
//   embedding   cosine similarity of text embeddings from a local feature-extraction model
//               (@huggingface/transformers, local files only) ≥ threshold
// GRPO over the samples of each example, KL (k3) to the starting model. Examples the model already
// gets right in every sample are subsampled (keepCorrectFraction).
import { existsSync } from 'node:fs';
import type { StageDefinition } from '../api/stage.js';
import type { RwmlSection } from '../api/run-config.js';
import { createRng, Rng } from '../util/rng.js';
import { randomWellFormedResponse, type EpisodeSession } from '../prompts/session.js';
import { parseStateText, scoreWorldModel } from '../prompts/world-model.js';
import { parseResponse } from '../prompts/response.js';
import { stageSection } from './plan.js';
import { runTemplate, sessionFactory } from './episodes.js';
import { grpoAdvantages } from './groups.js';
import { elapsedSeconds, loadStartingModel, meanStats, startingCheckpoint, writeCheckpoint } from './stage-utils.js';
import { breathe } from './breathe.js';
import { loadRuntime, type TrainRow } from './runtime.js';

type Embedder = (texts: string[]) => Promise<number[][]>;

async function loadEmbedder(section: RwmlSection): Promise<Embedder> {
  if (!section.embeddingModel || !existsSync(section.embeddingModel)) {
    throw new Error(`rwml: similarity "embedding" needs stages.rwml.embeddingModel, a local feature-extraction model folder (ONNX, as used by @huggingface/transformers); received ${JSON.stringify(section.embeddingModel ?? null)}. No model is bundled and nothing is downloaded: use similarity "structured" for grid states, or point embeddingModel at a local folder.`);
  }
  const transformers = await import('@huggingface/transformers');
  transformers.env.allowRemoteModels = false;
  transformers.env.allowLocalModels = true;
  const extractor = await transformers.pipeline('feature-extraction', section.embeddingModel, { local_files_only: true } as never);
  return async (texts) => {
    const out = await (extractor as unknown as (t: string[], o: unknown) => Promise<{ tolist(): number[][] }>)(texts, { pooling: 'mean', normalize: true });
    return out.tolist();
  };
}

function cosine(a: number[], b: number[]): number {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) { dot += a[i]! * b[i]!; na += a[i]! ** 2; nb += b[i]! ** 2; }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

export const rwmlStage: StageDefinition = {
  name: 'rwml',
  title: 'RWML: GRPO on next-state prediction',
  async run(ctx) {
    const started = Date.now();
    const section = stageSection(ctx.config, 'rwml');
    const limits = stageSection(ctx.config, 'rollout');
    const template = runTemplate(ctx.config, ctx.runDir);
    if (template.responseFormat !== 'world-model') throw new Error(`rwml: the run's template must use the world-model response format (the reward reads <prediction>); template ${template.name} uses ${template.responseFormat}`);
    const embed = section.similarity === 'embedding' ? await loadEmbedder(section) : null;
    const { runtime, from } = await loadStartingModel(ctx, { valueHead: false });
    const start = startingCheckpoint(ctx);
    const reference = section.klCoef > 0 && start ? await loadRuntime(start, { valueHead: false, trainable: false }) : null;
    runtime.ensureOptimizer(0);
    const rng = new Rng(ctx.config.seeds.base + 77);
    const subsample = createRng(ctx.config.seeds.base + 78);
    const makeSession = sessionFactory(ctx.config, template, limits);
    const seedBase = ctx.config.seeds.selfplayStart + 500_000; // disjoint from self-play games, RL and eval
    let checkpoint = from;
    for (let step = 0; step < section.steps; step++) {
      await breathe();
      if (ctx.signal.aborted) break;
      // 1. example states: a few random moves into a fresh puzzle
      const sessions: EpisodeSession[] = [];
      for (let e = 0; e < section.examples; e++) {
        const s = makeSession({ seed: seedBase + step * section.examples + e, group: e, sample: 0, id: `rwml-${step}-${e}` });
        const warm = rng.int(2);
        for (let w = 0; w < warm && !s.done; w++) s.applyResponse(randomWellFormedResponse(s, rng));
        if (!s.done) sessions.push(s);
      }
      // 2. groupSize samples per example
      const prompts = sessions.map((s) => runtime.encodePrompt(s.messages(), s.generationPrefix(), limits.maxContextTokens - section.maxNewTokens));
      const flatPrompts = prompts.flatMap((p) => Array.from({ length: section.groupSize }, () => p));
      const generated = await runtime.generate(flatPrompts, { maxNewTokens: section.maxNewTokens, temperature: limits.temperature, topP: limits.topP, topK: limits.topK, seed: ctx.config.seeds.base * 97 + step });
      // 3. binarised similarity reward against the true next state of the chosen actions
      const rewards: number[] = [], groups: number[] = [];
      const predictions: Array<{ predicted: string | null; truth: string }> = [];
      generated.forEach((g, i) => {
        const session = sessions[Math.floor(i / section.groupSize)]!;
        const parsed = parseResponse(session.generationPrefix() + g.text, { legalActions: session.legalActions(), maxActionsPerTurn: session.maxActionsPerTurn, responseFormat: 'world-model', strict: false });
        const next = session.simulate(parsed.actions);
        predictions.push({ predicted: parsed.formatError ? null : parsed.prediction, truth: next.text });
        if (!embed) {
          const board = parseStateText(ctx.config.env.id, parsed.prediction, template, next.board);
          const score = scoreWorldModel(board, next.board);
          rewards.push(!parsed.formatError && score.parsed && score.cellAccuracy >= section.threshold ? 1 : 0);
        } else rewards.push(0);
        groups.push(Math.floor(i / section.groupSize));
      });
      if (embed) {
        const texts = predictions.flatMap((p) => [p.predicted ?? '', p.truth]);
        const vectors = await embed(texts);
        predictions.forEach((p, i) => { rewards[i] = p.predicted !== null && cosine(vectors[2 * i]!, vectors[2 * i + 1]!) >= section.threshold ? 1 : 0; });
      }
      // 4. subsample examples already right in every sample; GRPO rows
      const keepGroup = sessions.map((_, e) => {
        const rs = rewards.slice(e * section.groupSize, (e + 1) * section.groupSize);
        return rs.every((r) => r === 1) ? subsample() < section.keepCorrectFraction : true;
      });
      const advantages = grpoAdvantages(rewards, groups);
      const rows: TrainRow[] = [];
      const samples = generated.map((g, i) => ({ ids: [...flatPrompts[i]!, ...g.ids], start: flatPrompts[i]!.length, i })).filter((s) => keepGroup[groups[s.i]!] && s.ids.length > s.start && s.ids.length <= runtime.maxContext);
      const old = await runtime.tokenStats(samples, false);
      const ref = reference ? await reference.tokenStats(samples, false) : null;
      samples.forEach((s, k) => {
        const mask = s.ids.map((_, t) => (t >= s.start ? 1 : 0));
        rows.push({ ids: s.ids, arrays: { lossMask: mask, oldLogprobs: old[k]!.logprobs, advantages: mask.map((m) => m * advantages[s.i]!), ...(ref ? { refLogprobs: ref[k]!.logprobs } : {}) } });
      });
      const stats: Array<Record<string, number>> = [];
      for (let b = 0; b < rows.length; b += 8) stats.push(await runtime.trainStep('grpo', rows.slice(b, b + 8), { clipLow: 0.2, clipHigh: 0.28, dualClip: 3, entropyCoef: 0, klCoef: reference ? section.klCoef : 0, klEstimator: 'k3' }, section.lr, 1));
      const accuracy = rewards.reduce((a, c) => a + c, 0) / Math.max(1, rewards.length);
      ctx.metric(step + 1, { ...meanStats(stats), 'rwml/predictionReward': accuracy, 'rwml/keptExamples': keepGroup.filter(Boolean).length });
      ctx.progress(step + 1, section.steps, `RWML step ${step + 1}/${section.steps}: prediction reward ${(accuracy * 100).toFixed(0)}%`);
    }
    if (!ctx.signal.aborted) checkpoint = await writeCheckpoint(ctx, runtime, `rwml-${section.steps}`, section.steps, {}, from);
    runtime.dispose();
    reference?.dispose();
    if (ctx.signal.aborted) return {};
    return { checkpoint, steps: section.steps, similarity: section.similarity, wallSeconds: elapsedSeconds(started) };
  },
};
