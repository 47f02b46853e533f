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
import type { StageDefinition } from '../engine/stage.js';
import { Rng } from '../envs/rng.js';
import { formatChat, type ChatMessage } from '../model/chat.js';
import { learningRate } from '../model/optim.js';
import { stageSection } from './plan.js';
import { resolveTemplate } from './templates.js';
import { sessionFactory, ungroundedResponse } from './episodes.js';
import { assistantMask } from './sft-mask.js';
import { createRng, shuffleInPlace } from './rng.js';
import { elapsedSeconds, loadStartingModel, writeCheckpoint } from './stage-utils.js';
import { saveRuntime, type TrainRow } from './runtime.js';
import type { EpisodeSession } from '../prompts/session.js';

export const bootstrapStage: StageDefinition = {
  name: 'bootstrap',
  title: 'Bootstrap: pretrain the tiny base on random-policy games',
  async run(ctx) {
    const started = Date.now();
    const section = stageSection(ctx.config, 'bootstrap');
    const limits = stageSection(ctx.config, 'rollout');
    const templates = [...new Set([...section.templates, ctx.config.template.preset])];
    const key = createHash('sha256').update(JSON.stringify({ env: ctx.config.env, templates, model: ctx.config.model, seed: ctx.config.seeds.base, section, limits })).digest('hex').slice(0, 16);
    const projectDir = dirname(dirname(ctx.runDir));
    const cacheDir = join(projectDir, 'cache', 'bootstrap', key);
    const target = join(ctx.runDir, 'checkpoints', 'bootstrap');
    if (section.cache && existsSync(join(cacheDir, 'config.json'))) {
      cpSync(cacheDir, target, { recursive: true });
      ctx.log('info', `bootstrap: reused the cached base ${cacheDir}`);
      ctx.checkpoint(section.steps, target);
      return { checkpoint: target, cached: true, cacheKey: key, wallSeconds: elapsedSeconds(started) };
    }

    const { runtime } = await loadStartingModel(ctx, { valueHead: false });
    // 1. random-policy games, alternating templates (each with its own response format)
    const rng = new Rng(ctx.config.seeds.base + 17);
    const rows: TrainRow[] = [];
    let tokensTotal = 0;
    for (let g = 0; g < section.games; g++) {
      const template = resolveTemplate(templates[g % templates.length]!);
      const session: EpisodeSession = sessionFactory(ctx.config, template, { ...limits, ...(section.turns ? { maxTurns: section.turns } : {}) })({ seed: ctx.config.seeds.selfplayStart - 1 - g, group: g, sample: 0, id: `bootstrap-${g}` });
      while (!session.done) session.applyResponse(ungroundedResponse(session, ctx.config, rng));
      let messages: ChatMessage[] = session.messages();
      if (messages[messages.length - 1]?.role === 'user') messages = messages.slice(0, -1);
      let chat = formatChat(messages, runtime.tokenizer);
      while (chat.ids.length > Math.min(section.maxLength, runtime.maxContext) && messages.length > 3) {
        messages = messages.slice(0, -2);
        chat = formatChat(messages, runtime.tokenizer);
      }
      if (chat.ids.length > Math.min(section.maxLength, runtime.maxContext)) continue;
      const mask = assistantMask(chat);
      rows.push({ ids: chat.ids, arrays: { lossMask: mask } });
      tokensTotal += chat.ids.length;
      if (ctx.signal.aborted) return {};
    }
    if (rows.length === 0) throw new Error(`bootstrap: no game fits the context (${runtime.maxContext} tokens); raise model max_position_embeddings or stages.bootstrap.maxLength`);
    ctx.log('info', `bootstrap: ${rows.length} random-policy games, ${tokensTotal} tokens, templates ${templates.join(', ')}`);
    // 2. pretraining steps
    const order = shuffleInPlace(rows.map((_, i) => i), createRng(ctx.config.seeds.base + 1));
    const warmupSteps = Math.ceil(section.steps * 0.05);
    let cursor = 0;
    for (let step = 0; step < section.steps; step++) {
      if (ctx.signal.aborted) return {};
      const batch: TrainRow[] = [];
      for (let b = 0; b < section.batchSize; b++) { batch.push(rows[order[cursor % order.length]!]!); cursor++; }
      const lr = learningRate(step, { lr: section.lr, warmupSteps, totalSteps: section.steps, kind: 'cosine' });
      const stats = runtime.trainStep('sft', batch, {}, lr, 1);
      ctx.metric(step, { 'losses/bootstrap': stats['losses/sft'] ?? stats['losses/total']!, 'charts/lr': lr, 'charts/gradNorm': stats['charts/gradNorm']! });
      ctx.progress(step + 1, section.steps, `bootstrap step ${step + 1}/${section.steps}`);
    }
    const checkpoint = await writeCheckpoint(ctx, runtime, 'bootstrap', section.steps, {}, null);
    if (section.cache) {
      mkdirSync(dirname(cacheDir), { recursive: true });
      await saveRuntime(runtime, cacheDir, { stage: 'bootstrap', cacheKey: key, runId: ctx.runId });
    }
    runtime.dispose();
    return { checkpoint, cached: false, cacheKey: key, games: rows.length, tokens: tokensTotal, wallSeconds: elapsedSeconds(started) };
  },
};
