// Bootstrap stage: the common starting point of every method when the model is a tiny one
// trained from scratch (there is no pretrained base). It pretrains on random-policy games written
// in each template/format the study uses (plain and world-model), whose observation and
// prediction are well formed but *ungrounded* (the state text of an unrelated puzzle). The base
// therefore knows the chat layout, the tags, the state syntax and the legal actions, but has no
// world model of the game: that is what the methods then differ on. One row per game (all
// assistant turns trained). The checkpoint is cached per (env, templates, model, seed, settings)
// under <project>/cache/bootstrap/ so the runs of a study share it.
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { StageDefinition } from '../api/stage.js';
import { createRng, Rng, shuffleInPlace } from '../util/rng.js';
import { formatChat, type ChatMessage } from '../model/chat.js';
import { learningRate } from '../model/optim.js';
import { stageSection } from './plan.js';
import { builtinTemplate } from '../prompts/resolve-template.js';
import { runTemplate, sessionFactory, ungroundedResponse } from './episodes.js';
import { templateHash, type PromptTemplate } from '../prompts/template.js';
import { assistantMask } from './sft-mask.js';
import { elapsedSeconds, loadStartingModel, writeCheckpoint } from './stage-utils.js';
import { breathe } from './breathe.js';
import { saveRuntime, type TrainRow } from './runtime.js';
import type { EpisodeSession } from '../prompts/session.js';
import type { RunConfig } from '../api/run-config.js';
import type { Tokenizer } from '../model/tokenizer.js';

export const bootstrapStage: StageDefinition = {
  name: 'bootstrap',
  title: 'Bootstrap: pretrain the tiny base on random-policy games',
  async run(ctx) {
    const started = Date.now();
    const section = stageSection(ctx.config, 'bootstrap');
    const limits = stageSection(ctx.config, 'rollout');
    const names = [...new Set([...section.templates, ctx.config.template.preset])];
    // the run's own template is its pinned template.json (a saved template runs too); the key
    // carries its content hash only when it is not the built-in of that name, so cached bases of
    // built-in templates stay valid
    const own = runTemplate(ctx.config, ctx.runDir);
    let builtIn: PromptTemplate | null = null;
    try { builtIn = builtinTemplate(ctx.config.template.preset, ctx.config.template.responseFormat); } catch { builtIn = null; }
    const customHash = builtIn && templateHash(builtIn) === templateHash(own) ? undefined : templateHash(own);
    const templates = names.map((n) => (n === ctx.config.template.preset ? own : n));
    // the cache key holds what the base depends on: env, templates, model, seed, the bootstrap
    // settings and the rollout limits that shape its games (not sampling settings)
    const shape = { maxTurns: limits.maxTurns, maxActionsPerTurn: limits.maxActionsPerTurn, maxActionsPerGame: limits.maxActionsPerGame };
    const key = createHash('sha256').update(JSON.stringify({ env: ctx.config.env, templates: names, customTemplate: customHash, model: ctx.config.model, seed: ctx.config.seeds.base, selfplayStart: ctx.config.seeds.selfplayStart, section, limits: shape })).digest('hex').slice(0, 16);
    const cacheDir = ctx.cacheDir('bootstrap', key);
    const target = join(ctx.runDir, 'checkpoints', 'bootstrap');
    if (section.cache && existsSync(join(cacheDir, 'config.json'))) {
      cpSync(cacheDir, target, { recursive: true });
      ctx.log('info', `bootstrap: reused the cached base ${cacheDir}`);
      ctx.checkpoint(section.steps, target);
      return { checkpoint: target, cached: true, cacheKey: key, wallSeconds: elapsedSeconds(started) };
    }

    const { runtime } = await loadStartingModel(ctx, { valueHead: false });
    // 1. random-policy games, alternating templates (each with its own response format)
    const data = bootstrapRows(ctx.config, runtime.tokenizer, runtime.maxContext, templates);
    if (ctx.signal.aborted) return {};
    const { rows, tokens: tokensTotal } = data;
    if (rows.length === 0) throw new Error(`bootstrap: no game fits the context (${runtime.maxContext} tokens); raise model max_position_embeddings or stages.bootstrap.maxLength`);
    ctx.log('info', `bootstrap: ${rows.length} random-policy games of up to ${data.turns} turns, ${tokensTotal} tokens, templates ${names.join(', ')}; longest well-formed reply ${data.longestResponseTokens} tokens (rollout.maxNewTokens ${limits.maxNewTokens})`);
    if (data.longestResponseTokens > limits.maxNewTokens) {
      ctx.log('warn', `bootstrap: the longest well-formed reply (${data.longestResponseTokens} tokens after the forced prefix) exceeds stages.rollout.maxNewTokens (${limits.maxNewTokens}): generated turns of that length are cut before </answer> and fail the structural filter; raise stages.rollout.maxNewTokens`);
    }
    // 2. pretraining steps
    const order = shuffleInPlace(rows.map((_, i) => i), createRng(ctx.config.seeds.base + 1));
    const warmupSteps = Math.ceil(section.steps * 0.05);
    let cursor = 0;
    for (let step = 0; step < section.steps; step++) {
      await breathe();
      if (ctx.signal.aborted) { runtime.dispose(); return {}; }
      const batch: TrainRow[] = [];
      for (let b = 0; b < section.batchSize; b++) { batch.push(rows[order[cursor % order.length]!]!); cursor++; }
      const lr = learningRate(step, { lr: section.lr, warmupSteps, totalSteps: section.steps, kind: 'cosine' });
      const stats = await runtime.trainStep('sft', batch, {}, lr, 1);
      ctx.metric(step, { 'losses/bootstrap': stats['losses/sft'] ?? stats['losses/total']!, 'charts/lr': lr, 'charts/gradNorm': stats['charts/gradNorm']! });
      ctx.progress(step + 1, section.steps, `bootstrap step ${step + 1}/${section.steps}`);
    }
    const checkpoint = await writeCheckpoint(ctx, runtime, 'bootstrap', section.steps, {}, null);
    if (section.cache) {
      mkdirSync(dirname(cacheDir), { recursive: true });
      await saveRuntime(runtime, cacheDir, { stage: 'bootstrap', cacheKey: key, runId: ctx.runId });
    }
    runtime.dispose();
    return { checkpoint, cached: false, cacheKey: key, games: rows.length, tokens: tokensTotal, turns: data.turns, longestResponseTokens: data.longestResponseTokens, wallSeconds: elapsedSeconds(started) };
  },
};

export interface BootstrapData {
  rows: TrainRow[];
  /** The chats the rows were formatted from (system, user, assistant, …, ending with an assistant turn). */
  chats: ChatMessage[][];
  tokens: number;
  /** Turns per game (stages.bootstrap.turns, else the rollout's maxTurns, else the env budget). */
  turns: number | undefined;
  /** Longest assistant reply in tokens after the forced generation prefix: what rollout.maxNewTokens must cover. */
  longestResponseTokens: number;
}

/**
 * The bootstrap's training rows: `games` random-policy games with ungrounded world-model turns,
 * templates alternating, played with the rollout's limits (turns, actions per turn and per game),
 * so each row is laid out exactly as the rollouts will see it: the prompt that
 * ModelRuntime.encodePrompt builds for turn t (chat + assistant opening + the forced `<think>`)
 * is a prefix of the row, followed by the reply and its end-of-turn token. One row per game, all
 * assistant turns in the loss; later turns are cut when a game exceeds maxLength.
 */
export function bootstrapRows(config: RunConfig, tokenizer: Tokenizer, maxContext: number, templates: Array<string | PromptTemplate>): BootstrapData {
  const section = stageSection(config, 'bootstrap');
  const limits = stageSection(config, 'rollout');
  const turns = section.turns ?? limits.maxTurns;
  const rng = new Rng(config.seeds.base + 17);
  const rows: TrainRow[] = [];
  const chats: ChatMessage[][] = [];
  let tokens = 0;
  let longestResponseTokens = 0;
  const limit = Math.min(section.maxLength, maxContext);
  for (let g = 0; g < section.games; g++) {
    const entry = templates[g % templates.length]!;
    const template = typeof entry === 'string' ? builtinTemplate(entry) : entry;
    const session: EpisodeSession = sessionFactory(config, template, { ...limits, ...(turns ? { maxTurns: turns } : {}) })({ seed: config.seeds.selfplayStart - 1 - g, group: g, sample: 0, id: `bootstrap-${g}` });
    const prefix = session.generationPrefix();
    while (!session.done) {
      const reply = ungroundedResponse(session, config, rng, section.decoyPool);
      longestResponseTokens = Math.max(longestResponseTokens, tokenizer.encode(reply.startsWith(prefix) ? reply.slice(prefix.length) : reply).length);
      session.applyResponse(reply);
    }
    let messages: ChatMessage[] = session.messages();
    if (messages[messages.length - 1]?.role === 'user') messages = messages.slice(0, -1);
    let chat = formatChat(messages, tokenizer, { generationPrefix: prefix });
    while (chat.ids.length > limit && messages.length > 3) {
      messages = messages.slice(0, -2);
      chat = formatChat(messages, tokenizer, { generationPrefix: prefix });
    }
    if (chat.ids.length > limit) continue;
    rows.push({ ids: chat.ids, arrays: { lossMask: assistantMask(chat) } });
    chats.push(messages);
    tokens += chat.ids.length;
  }
  return { rows, chats, tokens, turns, longestResponseTokens };
}
