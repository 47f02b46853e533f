// Self-play stage: the starting policy plays `games` puzzles from the self-play seed range at the
// rollout temperature (or, as the random-action ablation, a generator writes well-formed turns
// with random legal actions). Failures are kept. Every assistant turn then goes through the
// structural filter and ground-truth replacement (core/train/selfplay-data.ts); rows are split by
// whole game and written to datasets/sft-{train,val}.jsonl with the original and corrected text
// side by side, plus datasets/filter-report.json and datasets/sft-stats.json.
import { join } from 'node:path';
import type { EpisodeRecord } from '../api/records.js';
import type { StageContext, StageDefinition } from '../api/stage.js';
import type { RolloutSection } from '../api/run-config.js';
import type { ModelRuntime } from '../model/runtime.js';
import { readJsonl } from '../storage/jsonl.js';
import { playEpisodes, groupSpecs, rolloutMetrics, type RolloutResult } from './rollout.js';
import { rolloutDeps, runTemplate, sessionFactory } from './episodes.js';
import { lookaheadResponse, type EpisodeSession } from '../prompts/session.js';
import { Rng } from '../util/rng.js';
import { buildSftRows } from './selfplay-data.js';
import { splitByGame } from './split.js';
import { elapsedSeconds, loadStartingModel } from './stage-utils.js';

export const selfplayStage: StageDefinition = {
  name: 'selfplay',
  title: 'Self-play data with ground-truth replacement',
  async run(ctx) {
    const started = Date.now();
    const section = ctx.config.stages.selfplay;
    const limits = ctx.config.stages.rollout;
    const { runtime, from } = await loadStartingModel(ctx, { valueHead: false });
    ctx.log(
      'info',
      `self-play with ${section.policy === 'random' ? 'the random-action generator' : `the policy from ${from}`} on ${section.games} games (seeds ` +
        `${ctx.config.seeds.selfplayStart}…)`,
    );
    const specs = groupSpecs('selfplay', ctx.config.seeds.selfplayStart, 0, section.games, 1);
    const deps = rolloutDeps(
      ctx.config,
      runtime,
      limits,
      { runId: ctx.runId, stage: 'selfplay', step: 0, runDir: ctx.runDir },
      { random: section.policy === 'random', seed: ctx.config.seeds.base + 3, signal: ctx.signal },
    );
    // One rollout batch at a time (the same batches and seeds as one playEpisodes call over all games). Each finished
    // batch is kept in a partial file and counted in state.json, so a stop keeps the games already played.
    const seed = ctx.config.seeds.base * 7 + 11;
    const state = ctx.loadState() as { done?: number; file?: string } | null;
    // (a stop between the append and the state write leaves one batch more in the file than counted: it is played again)
    const kept = state?.file ? readJsonl<EpisodeRecord>(join(ctx.runDir, state.file)).rows.slice(0, state.done ?? 0) : [];
    const resumed = state?.file && state.done && kept.length === state.done;
    let done = resumed ? state.done! : 0;
    // a fresh partial file each attempt, starting with the games kept, so an uncounted batch never lingers in it
    const partial = `stages/selfplay/partial-${Date.now()}.jsonl`;
    const results: Array<Pick<RolloutResult, 'record'>> = resumed ? kept.map((record) => ({ record })) : [];
    if (resumed) {
      ctx.appendJsonl(partial, kept);
      ctx.saveState({ done, file: partial });
      ctx.log('info', `self-play: resuming after ${done} of ${specs.length} games`);
    }
    else if (state?.done) ctx.log('warn', `self-play: the saved games (${kept.length} of ${state.done}) do not match its state; playing from the first game`);
    for (let start = done; start < specs.length; start += limits.batchSize) {
      if (ctx.signal.aborted) break;
      const played = await playEpisodes(specs.slice(start, start + limits.batchSize), limits, seed + start * 7919, deps);
      if (ctx.signal.aborted) break;                                   // a batch cut short is dropped, never kept half-played
      ctx.appendJsonl(partial, played.map((r) => r.record));
      results.push(...played);
      done = start + played.length;
      ctx.saveState({ done, file: partial });
      ctx.progress(done, specs.length, `self-play games ${done}/${specs.length}`);
    }
    if (ctx.signal.aborted) { runtime.dispose(); return {}; }
    for (const r of results) ctx.episode('selfplay', r.record);
    ctx.metric(0, rolloutMetrics(results), { episodes: results.length });

    const systemPrompt = sessionFactory(ctx.config, runTemplate(ctx.config, ctx.runDir), limits)(specs[0]!).messages()[0]!.content;
    const drills = await playDrills(ctx, runtime, section.drills, limits, section.drillLookahead);
    if (ctx.signal.aborted) { runtime.dispose(); return {}; }
    const options = { groundTruthReplacement: section.groundTruthReplacement, alignPlan: section.alignPlan, systemPrompt };
    const played = buildSftRows(results.map((r) => r.record), options);
    // lookahead drills already carry their plan after the candidate line (plan alignment would erase the line)
    const drilled = buildSftRows(drills, section.drillLookahead ? { ...options, alignPlan: false } : options);
    const lookaheadGames = await playLookahead(ctx, runtime, section.lookahead, section.lookaheadTurns, limits);
    if (ctx.signal.aborted) { runtime.dispose(); return {}; }
    // written with true states and the plan already in place: no replacement, no plan alignment (it would erase the candidate line)
    const lookaheadTurns = buildSftRows(lookaheadGames, { groundTruthReplacement: false, alignPlan: false, systemPrompt });
    // one row per game: its last turn's row holds the whole game, and SFT trains every reply in a lookahead row
    const lastOfGame = new Map(lookaheadTurns.rows.map((r) => [r.episodeId, r]));
    const lookahead = { ...lookaheadTurns, rows: [...lastOfGame.values()] };
    const built = {
      kept: played.rows.length + drilled.rows.length + lookahead.rows.length, turns: played.turns + drilled.turns + lookahead.turns,
      dropped: Object.fromEntries(Object.entries(played.dropped)
        .map(([k, n]) => [k, n + drilled.dropped[k as keyof typeof played.dropped] + lookahead.dropped[k as keyof typeof played.dropped]])),
    };
    // validation = the policy's own games (what SFT is for); the drills all train (marked, so SFT trains their states only)
    const split = splitByGame(played.rows, (row) => row.episodeId, section.valFraction, ctx.config.seeds.base + 5);
    const row = (r: (typeof played.rows)[number]) => ({ ...r, split: undefined });
    ctx.appendJsonl('datasets/sft-train.jsonl', [
      ...split.train.map(row), ...drilled.rows.map((r) => ({ ...row(r), drill: true })), ...lookahead.rows.map((r) => ({ ...row(r), lookahead: true })),
    ]);
    const trainCount = split.train.length + drilled.rows.length + lookahead.rows.length;
    ctx.appendJsonl('datasets/sft-val.jsonl', split.val.map(row));
    const droppedTotal = Object.values(built.dropped).reduce((a, c) => a + c, 0);
    const report = {
      games: results.length, drills: drills.length, lookaheadGames: lookaheadGames.length, lookaheadTurns: lookaheadTurns.rows.length,
      turns: built.turns, kept: built.kept, dropped: built.dropped, droppedTotal,
      groundTruthReplacement: section.groundTruthReplacement, policy: section.policy,
      successfulGames: results.filter((r) => r.record.success).length,
      split: {
        train: trainCount, drills: drilled.rows.length, lookahead: lookahead.rows.length, val: split.val.length,
        trainGames: split.trainGames.length, valGames: split.valGames.length,
      },
    };
    ctx.writeJson('datasets/filter-report.json', report);
    ctx.writeJson('datasets/sft-stats.json', {
      train: trainCount,
      val: split.val.length,
      drills: drilled.rows.length,
      lookahead: lookahead.rows.length,
      dropped: built.dropped,
      games: { train: split.trainGames.length, val: split.valGames.length },
    });
    ctx.metric(0, { 'selfplay/turns': built.turns, 'selfplay/kept': built.kept, 'selfplay/dropped': droppedTotal, 'selfplay/drills': drills.length });
    ctx.log(
      built.kept === 0 ? 'warn' : 'info',
      `self-play: ${built.turns} turns, kept ${built.kept}, dropped ${droppedTotal} (${
        Object.entries(built.dropped)
          .filter(([, n]) => n > 0)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ') || 'none'
      })${drills.length ? ` (with ${drills.length} one-action drills)` : ''}${
        lookahead.rows.length ? ` (with ${lookaheadGames.length} lookahead games of ${lookaheadTurns.rows.length} turns, one row each)` : ''
      }; train ${trainCount} rows / val ${split.val.length} rows`,
    );
    runtime.dispose();
    return {
      checkpoint: from.startsWith('fresh') ? null : from,
      train: trainCount,
      val: split.val.length,
      dropped: droppedTotal,
      wallSeconds: elapsedSeconds(started),
    };
  },
};

/** Seed offset of the drills inside the self-play range (the policy's games start at 0, RWML at 500,000). */
export const DRILL_SEED_OFFSET = 700_000;

/**
 * selfplay.drills: one-turn, one-action games of the random-action generator on fresh self-play seeds. Their turns are
 * well formed by construction, the answer is the plan, and ground-truth replacement writes the true state after the one
 * action: p(s'|s,a) in its shortest form. Played in one pass (no model calls); a stop plays them again.
 */
async function playDrills(
  ctx: StageContext, runtime: ModelRuntime, count: number, limits: RolloutSection, lookahead = false,
): Promise<EpisodeRecord[]> {
  if (count === 0) return [];
  const drillLimits = { ...limits, maxTurns: 1, maxActionsPerTurn: 1 };
  const specs = groupSpecs('drill', ctx.config.seeds.selfplayStart + DRILL_SEED_OFFSET, 0, count, 1);
  const random = rolloutDeps(ctx.config, runtime, drillLimits, { runId: ctx.runId, stage: 'selfplay', step: 0, runDir: ctx.runDir },
    { random: true, seed: ctx.config.seeds.base + 13, signal: ctx.signal });
  // selfplay.drillLookahead: a uniformly random move, with the candidate line written before it
  const rng = new Rng(ctx.config.seeds.base + 13);
  const form = ctx.config.stages.selfplay.lookaheadForm;
  const deps = lookahead ? { ...random, writeResponse: (session: EpisodeSession) => lookaheadResponse(session, rng, 'random', form) } : random;
  const played = await playEpisodes(specs, drillLimits, ctx.config.seeds.base * 7 + 17, deps);
  ctx.log('info', `self-play drills: ${played.length} one-action games (seeds ${specs[0]!.seed}…${specs[specs.length - 1]!.seed})`);
  return played.map((r) => r.record);
}

/** Seed offset of the lookahead games inside the self-play range (after the drills' 700,000). */
export const LOOKAHEAD_SEED_OFFSET = 800_000;

/**
 * selfplay.lookahead: games on fresh self-play seeds written by the lookahead writer (core/prompts/session.ts lookaheadResponse:
 * true observation, each action's landing cell, the one-step rule's move, the true next state), one action per turn, at most
 * `turns` turns (and rollout.maxTurns). No model calls; a stop plays them again.
 */
async function playLookahead(ctx: StageContext, runtime: ModelRuntime, count: number, turns: number, limits: RolloutSection): Promise<EpisodeRecord[]> {
  if (count === 0) return [];
  const gameLimits = { ...limits, maxTurns: Math.min(turns, limits.maxTurns ?? turns), maxActionsPerTurn: 1 };
  const specs = groupSpecs('lookahead', ctx.config.seeds.selfplayStart + LOOKAHEAD_SEED_OFFSET, 0, count, 1);
  const rng = new Rng(ctx.config.seeds.base + 19);
  const deps = {
    ...rolloutDeps(ctx.config, runtime, gameLimits, { runId: ctx.runId, stage: 'selfplay', step: 0, runDir: ctx.runDir }, { signal: ctx.signal }),
    writeResponse: (session: EpisodeSession) => lookaheadResponse(session, rng, 'rule', ctx.config.stages.selfplay.lookaheadForm),
  };
  const played = await playEpisodes(specs, gameLimits, ctx.config.seeds.base * 7 + 23, deps);
  const solved = played.filter((r) => r.record.success).length;
  ctx.log('info', `self-play lookahead: ${played.length} games of the one-step rule (seeds ${specs[0]!.seed}…${specs[specs.length - 1]!.seed}), ` +
    `${solved} reached the goal`);
  return played.map((r) => r.record);
}
