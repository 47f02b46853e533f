// Bootstrap stage: the common starting point of every method when the model is a tiny one
// trained from scratch (there is no pretrained base). It pretrains on random-policy games written
// in each template/format the study uses (plain and world-model). In world-model turns the
// <observation> is the TRUE state and the <prediction> a counterfactual (the true state after other
// random actions), plus short one-turn "copy drills": the base can read a state and knows what
// successor states look like, p(s'|s), but not the effect of an action, p(s'|s, a); that is what
// the methods then differ on. (`observation: 'decoy'` keeps the old data whose states came from
// unrelated puzzles, which taught the base not to copy; audit B2.) One row per game (all assistant
// turns trained). The state is saved every `saveEvery` steps and a stopped bootstrap resumes there.
// After training, a gate on held-out turns (observation exact, self-play keep rate, prediction exact
// vs the counterfactual) is printed and stored in bootstrap/gate.json and the checkpoint. The
// checkpoint is cached per (env, templates, model, seed, settings) under <project>/cache/bootstrap/
// so the runs of a study share it.
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { StageContext, StageDefinition } from '../api/stage.js';
import { createRng, Rng, shuffleInPlace } from '../util/rng.js';
import { formatChat, type ChatMessage } from '../model/chat.js';
import { learningRate } from '../model/optim.js';
import { builtinTemplate } from '../prompts/resolve-template.js';
import { groundedBootstrapResponse, runTemplate, sessionFactory, ungroundedResponse } from './episodes.js';
import { nothingMovesResponse } from './bootstrap-copy.js';
import { templateHash, type PromptTemplate } from '../prompts/template.js';
import { assistantMask } from './sft-mask.js';
import { checkpointProblems, elapsedSeconds, loadStartingModel, writeCheckpoint, resumeModel } from './stage-utils.js';
import { breathe } from './breathe.js';
import { sampleEvery, writeSample } from './samples.js';
import { baseDescriptor, findShippedBase } from './shipped-base.js';
import { loadRuntime, saveRuntime, type ModelRuntime, type TrainRow } from './runtime.js';
import { bootstrapGate, gateLine, type BootstrapGate } from './world-model-check.js';
import type { EpisodeSession } from '../prompts/session.js';
import type { BootstrapSection, RolloutSection, RunConfig } from '../api/run-config.js';
import type { Tokenizer } from '../model/tokenizer.js';

export const bootstrapStage: StageDefinition = {
  name: 'bootstrap',
  title: 'Bootstrap: pretrain the tiny base on random-policy games',
  async run(ctx) {
    const started = Date.now();
    const section = ctx.config.stages.bootstrap;
    const limits = ctx.config.stages.rollout;
    const { names, own, templates } = bootstrapTemplates(ctx.config, ctx.runDir);
    const key = bootstrapCacheKey(ctx.config, section, limits, names, own);
    const cacheDir = ctx.cacheDir('bootstrap', key);
    const target = join(ctx.runDir, 'checkpoints', 'bootstrap');
    const reused = (await useShippedBase(ctx, section, templates, target, started)) ?? (await reuseCachedBase(ctx, section, cacheDir, target, key, started));
    if (reused) return reused;

    const saved = ctx.loadState() as { step?: number; checkpoint?: string } | null;
    const phases = bootstrapPhases(section);
    const totalSteps = phases[phases.length - 1]!.end;
    let runtime: ModelRuntime;
    let firstStep = 0;
    if (saved?.checkpoint && saved.step && existsSync(join(saved.checkpoint, 'config.json'))) {
      runtime = await resumeModel(ctx, saved.checkpoint, { valueHead: false });
      firstStep = saved.step;
      ctx.log('info', `bootstrap: resuming at step ${firstStep} from ${saved.checkpoint}`);
    } else {
      ({ runtime } = await loadStartingModel(ctx, { valueHead: false }));
    }
    // 1. random-policy games, alternating templates (each with its own response format), per phase (copy drills differ)
    const phaseData = (p: BootstrapPhaseRange): BootstrapData => {
      const data = bootstrapRows(ctx.config, runtime.tokenizer, runtime.maxContext, templates, p.copyDrills);
      if (data.rows.length === 0) {
        throw new Error(
          `bootstrap: no game fits the context (${runtime.maxContext} tokens); raise model max_position_embeddings or stages.bootstrap.maxLength`,
        );
      }
      const phaseName = phases.length > 1 ? `phase ${p.index + 1}/${phases.length} (steps ${p.start + 1}–${p.end}, batch ${p.batchSize}, ` +
        `lr ${p.lr}, copy drills ${p.copyDrills}): ` : '';
      ctx.log(
        'info',
        `bootstrap: ${phaseName}${data.rows.length - data.drills} random-policy games of up to ${data.turns} turns and ${data.drills} copy drills, ` +
          `${data.tokens} tokens, templates ${names.join(', ')}; longest well-formed reply ${data.longestResponseTokens} tokens ` +
            `(rollout.maxNewTokens ${limits.maxNewTokens})`,
      );
      if (data.longestResponseTokens > limits.maxNewTokens) {
        ctx.log(
          'warn',
          `bootstrap: the longest well-formed reply (${data.longestResponseTokens} tokens after the forced prefix) exceeds ` +
            `stages.rollout.maxNewTokens (${limits.maxNewTokens}): generated turns of that length are cut before </answer> and fail the structural ` +
              `filter; raise stages.rollout.maxNewTokens`,
        );
      }
      return data;
    };
    let phase = phaseAt(phases, Math.min(firstStep, totalSteps - 1));
    let data = phaseData(phase);
    const firstData = data;
    if (ctx.signal.aborted) return {};
    // 2. pretraining steps; each phase shuffles its rows with the same seed and runs its own cosine
    const orderOf = (rows: TrainRow[]) => shuffleInPlace(rows.map((_, i) => i), createRng(ctx.config.seeds.base + 1));
    let order = orderOf(data.rows);
    // sample generations during the stage (samples/bootstrap.jsonl): the run's template on a held-out puzzle
    const sample = bootstrapSampleChat(ctx.config, own);
    const every = sampleEvery(totalSteps);
    for (let step = firstStep; step < totalSteps; step++) {
      await breathe();
      if (ctx.signal.aborted) { runtime.dispose(); return {}; }
      if (step >= phase.end) {
        phase = phaseAt(phases, step);
        data = phaseData(phase);
        order = orderOf(data.rows);
      }
      if (step === phase.start && phase.index > 0) {
        // a new phase starts warm from the last one's weights with a fresh optimizer (the weights reloaded without AdamW moments)
        const boundary = await writeCheckpoint(ctx, runtime, 'bootstrap-latest', step, {}, null);
        await runtime.dispose();
        runtime = await loadRuntime(boundary, { valueHead: false });
        ctx.saveState({ step, checkpoint: boundary });
      } else if (step > firstStep && section.saveEvery > 0 && step % section.saveEvery === 0) {
        const latest = await writeCheckpoint(ctx, runtime, 'bootstrap-latest', step, {}, null);
        ctx.saveState({ step, checkpoint: latest });
      }
      const batch: TrainRow[] = [];
      let cursor = (step - phase.start) * phase.batchSize;
      for (let b = 0; b < phase.batchSize; b++) { batch.push(data.rows[order[cursor % order.length]!]!); cursor++; }
      const lr = learningRate(step - phase.start, { lr: phase.lr, warmupSteps: Math.ceil(phase.steps * 0.05), totalSteps: phase.steps, kind: 'cosine' });
      const stats = await runtime.trainStep('sft', batch, {}, lr, 1);
      ctx.metric(step, { 'losses/bootstrap': stats['losses/sft'] ?? stats['losses/total']!, 'charts/lr': lr, 'charts/gradNorm': stats['charts/gradNorm']! });
      ctx.progress(step + 1, totalSteps, `bootstrap step ${step + 1}/${totalSteps}`);
      if ((step + 1) % every === 0 || step + 1 === totalSteps) {
        await writeSample(ctx, runtime, { step: step + 1, messages: sample.messages, target: sample.target, maxNewTokens: limits.maxNewTokens,
          maxContextTokens: limits.maxContextTokens });
      }
    }
    const { rows, tokens: tokensTotal } = firstData;
    const trainSeconds = elapsedSeconds(started);
    // 3. the gate, on held-out turns of the world-model templates
    if (section.gateTurns > 0) ctx.log('info', `bootstrap: checking the gate on ${section.gateTurns} held-out turns…`);
    const gate = section.gateTurns > 0 ? await bootstrapGate(ctx.config, runtime, templates) : null;
    if (ctx.signal.aborted) { runtime.dispose(); return {}; }
    if (gate) {
      ctx.writeJson('bootstrap/gate.json', gate);
      ctx.log(gate.passed ? 'info' : 'warn', gateLine(gate));
      ctx.metric(totalSteps, {
        'bootstrap/gateObservationExact': gate.observationExact,
        'bootstrap/gateKeepRate': gate.keepRate,
        'bootstrap/gatePredictionExact': gate.predictionExactChanged,
        'bootstrap/gateCounterfactualExact': gate.counterfactualExactChanged,
      });
    }
    const checkpoint = await writeCheckpoint(
      ctx,
      runtime,
      'bootstrap',
      totalSteps,
      gate ? { gateObservationExact: gate.observationExact, gateKeepRate: gate.keepRate } : {},
      null,
    );
    if (section.cache) {
      mkdirSync(dirname(cacheDir), { recursive: true });
      await saveRuntime(runtime, cacheDir, { stage: 'bootstrap', cacheKey: key, runId: ctx.runId, ...(gate ? { gate } : {}) });
      if (gate) writeFileSync(join(cacheDir, 'gate.json'), JSON.stringify(gate, null, 2));
    }
    runtime.dispose();
    return {
      checkpoint,
      cached: false,
      cacheKey: key,
      games: rows.length - firstData.drills,
      drills: firstData.drills,
      tokens: tokensTotal,
      phases: phases.length,
      turns: firstData.turns,
      longestResponseTokens: firstData.longestResponseTokens,
      trainSeconds,
      ...(gate ? { gatePassed: gate.passed } : {}),
      wallSeconds: elapsedSeconds(started),
    };
  },
};

/**
 * The templates a run's bootstrap trains on: stages.bootstrap.templates plus the run's own, which is
 * its pinned template.json (a saved template runs too) in the run's response format.
 */
export function bootstrapTemplates(config: RunConfig, runDir?: string): { names: string[]; own: PromptTemplate; templates: Array<string | PromptTemplate> } {
  const section = config.stages.bootstrap;
  const names = [...new Set([...section.templates, config.template.preset])];
  const own = runTemplate(config, runDir);
  return { names, own, templates: names.map((n) => (n === config.template.preset ? own : n)) };
}

/** One phase of the bootstrap's training: global steps start … end - 1 (the section's own settings, then each `extend` entry). */
export interface BootstrapPhaseRange { index: number; start: number; end: number; steps: number; batchSize: number; lr: number; copyDrills: number }

/** The bootstrap's phases in order: the section's `steps`, then its `extend` phases (unset settings inherit the section's). */
export function bootstrapPhases(section: BootstrapSection): BootstrapPhaseRange[] {
  const out: BootstrapPhaseRange[] = [{ index: 0, start: 0, end: section.steps, steps: section.steps, batchSize: section.batchSize, lr: section.lr,
    copyDrills: section.copyDrills }];
  for (const p of section.extend ?? []) {
    const start = out[out.length - 1]!.end;
    out.push({ index: out.length, start, end: start + p.steps, steps: p.steps, batchSize: p.batchSize ?? section.batchSize, lr: p.lr ?? section.lr,
      copyDrills: p.copyDrills ?? section.copyDrills });
  }
  return out;
}

/** All optimizer steps of the bootstrap (its own steps plus those of its extension phases). */
export function bootstrapTotalSteps(section: BootstrapSection): number {
  const phases = bootstrapPhases(section);
  return phases[phases.length - 1]!.end;
}

/** The phase that trains global step `step` (the last phase when past the end). */
export function phaseAt(phases: BootstrapPhaseRange[], step: number): BootstrapPhaseRange {
  return phases.find((p) => step < p.end) ?? phases[phases.length - 1]!;
}

/** Puzzle seed of the bootstrap's sample generations: in the gate's held-out range, past its turns (never trained on). */
export const BOOTSTRAP_SAMPLE_SEED = 2_990_000;

/**
 * The prompt of the bootstrap's sample generations (the first turn of a held-out puzzle in the run's
 * template) and the reply the bootstrap trains towards on it (true observation, counterfactual prediction).
 */
export function bootstrapSampleChat(config: RunConfig, template: PromptTemplate): { messages: ChatMessage[]; target: string } {
  const limits = config.stages.rollout;
  const session = sessionFactory(config, template, { ...limits, maxTurns: 1 })({ seed: BOOTSTRAP_SAMPLE_SEED, group: 0, sample: 0, id: 'bootstrap-sample' });
  const messages = session.messages();
  return { messages, target: groundedBootstrapResponse(session, new Rng(config.seeds.base + 23)) };
}

export interface BootstrapData {
  rows: TrainRow[];
  /** The chats the rows were formatted from (system, user, assistant, …, ending with an assistant turn). */
  chats: ChatMessage[][];
  tokens: number;
  /** Turns per game (stages.bootstrap.turns, else the rollout's maxTurns, else the env budget). */
  turns: number | undefined;
  /** Longest assistant reply in tokens after the forced generation prefix: what rollout.maxNewTokens must cover. */
  longestResponseTokens: number;
  /** One-turn copy-drill rows added after the games. */
  drills: number;
}

/**
 * The bootstrap's training rows: `games` random-policy games with ungrounded world-model turns,
 * templates alternating, played with the rollout's limits (turns, actions per turn and per game),
 * so each row is laid out exactly as the rollouts will see it: the prompt that
 * ModelRuntime.encodePrompt builds for turn t (chat + assistant opening + the forced `<think>`)
 * is a prefix of the row, followed by the reply and its end-of-turn token. One row per game, all
 * assistant turns in the loss; later turns are cut when a game exceeds maxLength.
 */
export function bootstrapRows(
  config: RunConfig, tokenizer: Tokenizer, maxContext: number, templates: Array<string | PromptTemplate>, copyDrills?: number,
): BootstrapData {
  const section = config.stages.bootstrap;
  const limits = config.stages.rollout;
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
    const session: EpisodeSession = sessionFactory(config, template, { ...limits, ...(turns ? { maxTurns: turns } : {}) })({
      seed: config.seeds.selfplayStart - 1 - g,
      group: g,
      sample: 0,
      id: `bootstrap-${g}`,
    });
    const prefix = session.generationPrefix();
    while (!session.done) {
      const reply = section.observation === 'decoy' ? ungroundedResponse(session, config, rng, section.decoyPool)
        : section.prediction === 'copy' ? nothingMovesResponse(session, rng) : groundedBootstrapResponse(session, rng);
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
  // copy drills: one-turn rows of fresh puzzles in the world-model templates (the state to copy sits right before the reply)
  const wmTemplates = templates.map((t) => (typeof t === 'string' ? builtinTemplate(t) : t)).filter((t) => t.responseFormat === 'world-model');
  let drills = 0;
  const drillCount = section.observation === 'true' && wmTemplates.length > 0 ? Math.round((copyDrills ?? section.copyDrills) * section.games) : 0;
  for (let d = 0; d < drillCount; d++) {
    const template = wmTemplates[d % wmTemplates.length]!;
    const session = sessionFactory(config, template, { ...limits, maxTurns: 1 })({
      seed: config.seeds.selfplayStart - 1 - section.games - d,
      group: d,
      sample: 0,
      id: `drill-${d}`,
    });
    const prefix = session.generationPrefix();
    session.applyResponse(section.prediction === 'copy' ? nothingMovesResponse(session, rng) : groundedBootstrapResponse(session, rng));
    const messages = session.messages().filter((_, i, all) => !(i === all.length - 1 && all[i]!.role === 'user'));
    const chat = formatChat(messages, tokenizer, { generationPrefix: prefix });
    if (chat.ids.length > limit) continue;
    rows.push({ ids: chat.ids, arrays: { lossMask: assistantMask(chat) } });
    chats.push(messages);
    tokens += chat.ids.length;
    drills++;
  }
  return { rows, chats, tokens, turns, longestResponseTokens, drills };
}

/**
 * The bootstrap cache key: what the base depends on (env, templates, model, seed, the bootstrap settings and the rollout limits
 * that shape its games; not sampling settings, not model.lora: the bootstrap always trains the full base).
 */
export function bootstrapCacheKey(config: RunConfig, section: BootstrapSection, limits: RolloutSection, names: string[],
  own: PromptTemplate): string {
  // the key carries the run template's content hash only when it is not the built-in of that name,
  // so cached bases of built-in templates stay valid
  let builtIn: PromptTemplate | null = null;
  try { builtIn = builtinTemplate(config.template.preset, config.template.responseFormat); } catch { builtIn = null; }
  const customHash = builtIn && templateHash(builtIn) === templateHash(own) ? undefined : templateHash(own);
  // the cache key holds what the base depends on: env, templates, model, seed, the bootstrap
  // settings and the rollout limits that shape its games (not sampling settings; not model.lora: the bootstrap always trains
  // the full base, LoRA starts at the finetuning stages, core/train/lora.ts)
  const shape = { maxTurns: limits.maxTurns, maxActionsPerTurn: limits.maxActionsPerTurn, maxActionsPerGame: limits.maxActionsPerGame };
  // (the run's response format enters the key only when it is not its built-in template's own, e.g. tiny-spa in the plain
  // format, so such a base is not mistaken for the world-model one; `shipped` does not change the base)
  let defaultFormat: string | null = null;
  try { defaultFormat = builtinTemplate(config.template.preset).responseFormat; } catch { defaultFormat = null; }
  const ownFormat = defaultFormat !== null && defaultFormat !== own.responseFormat ? own.responseFormat : undefined;
  const keySection = { ...section, shipped: undefined, extend: section.extend.length > 0 ? section.extend : undefined };
  const model = { ...config.model, lora: undefined };
  const keyParts = {
    env: config.env, templates: names, customTemplate: customHash, ownFormat, model, seed: config.seeds.base,
    selfplayStart: config.seeds.selfplayStart, section: keySection, limits: shape,
  };
  const key = createHash('sha256').update(JSON.stringify(keyParts)).digest('hex').slice(0, 16);
  return key;
}

/** The shipped base (resources/bases/<env>) when this run's base would be the same one: copied in, no training. Null otherwise. */
async function useShippedBase(ctx: StageContext, section: BootstrapSection, templates: Array<string | PromptTemplate>, target: string,
  started: number): Promise<Record<string, unknown> | null> {
  // the shipped base (resources/bases/<env>) when this run's base would be the same one: copied in, no training
  if (section.shipped) {
    const found = await findShippedBase(baseDescriptor(ctx.config, templates.map((t) => (typeof t === 'string' ? builtinTemplate(t) : t))));
    if (found.kind === 'match') {
      rmSync(target, { recursive: true, force: true });
      cpSync(found.dir, target, { recursive: true });
      const gate = found.record.gate as BootstrapGate | null;
      if (gate) ctx.writeJson('bootstrap/gate.json', gate);
      const content = found.record.contentHash.slice(0, 12);
      ctx.log(
        gate && !gate.passed ? 'warn' : 'info',
        `bootstrap: using the shipped base ${found.dir} (content ${content}…; ${gate ? gateLine(gate) : 'no gate recorded'})`,
      );
      ctx.checkpoint(bootstrapTotalSteps(section), target);
      const gatePassed = gate ? { gatePassed: gate.passed } : {};
      return {
        checkpoint: target,
        cached: true,
        shipped: found.dir,
        contentHash: found.record.contentHash,
        ...gatePassed,
        wallSeconds: elapsedSeconds(started),
      };
    }
    if (found.kind === 'mismatch') {
      ctx.log('info', `bootstrap: the shipped base ${found.dir} does not fit this run (${found.differs.join('; ')}); training a base`);
    }
  }
  return null;
}

/** The project's cached base of the same key, when it is intact (a damaged one is moved aside and rebuilt). Null otherwise. */
async function reuseCachedBase(ctx: StageContext, section: BootstrapSection, cacheDir: string, target: string, key: string,
  started: number): Promise<Record<string, unknown> | null> {
  const cacheProblems = section.cache && existsSync(cacheDir) ? await checkpointProblems(cacheDir) : null;
  if (cacheProblems && cacheProblems.length > 0) {
    // a damaged cache is moved aside (kept for inspection) and rebuilt, never reused
    const aside = `${cacheDir}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    renameSync(cacheDir, aside);
    ctx.log('warn', `bootstrap: the cached base ${cacheDir} is damaged (${cacheProblems[0]}); moved to ${aside} and rebuilt`);
  }
  if (cacheProblems && cacheProblems.length === 0) {
    cpSync(cacheDir, target, { recursive: true });
    ctx.log('info', `bootstrap: reused the cached base ${cacheDir}`);
    ctx.checkpoint(bootstrapTotalSteps(section), target);
    const cachedGate = existsSync(join(cacheDir, 'gate.json')) ? JSON.parse(readFileSync(join(cacheDir, 'gate.json'), 'utf8')) as BootstrapGate : null;
    if (cachedGate) { ctx.writeJson('bootstrap/gate.json', cachedGate); ctx.log(cachedGate.passed ? 'info' : 'warn', gateLine(cachedGate)); }
    return {
      checkpoint: target,
      cached: true,
      cacheKey: key,
      ...(cachedGate ? { gatePassed: cachedGate.passed } : {}),
      wallSeconds: elapsedSeconds(started),
    };
  }

  return null;
}
