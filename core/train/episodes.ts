// Glue between the rollout loop and core/prompts: sessions for a run's env and template, the
// model-backed text policy, the random writer, and the bootstrap's ungrounded turns.
import type { EpisodeRecord } from '../api/records.js';
import type { RunConfig, RolloutSection } from '../api/run-config.js';
import { createEnv } from '../envs/index.js';
import { Rng } from '../util/rng.js';
import { EpisodeSession, randomWellFormedResponse, renderState } from '../prompts/session.js';
import { assertTemplate, type PromptTemplate } from '../prompts/template.js';
import type { ModelRuntime } from './runtime.js';
import type { EpisodeSpec, RolloutDeps, TextPolicy } from './rollout.js';
import { builtinTemplate } from '../prompts/resolve-template.js';
import { readPinnedTemplate } from '../storage/run-files.js';

/**
 * The run's template. `runs.create` pins the resolved version (a preset or a template saved in the
 * project) as <run>/template.json; that file is authoritative, so saved templates run and a later
 * edit of the preset or of the saved template cannot change a run under way. Without a run folder
 * (or for runs created before pinning), the preset is resolved by name.
 */
export function runTemplate(config: RunConfig, runDir?: string): PromptTemplate {
  const pinned = runDir ? readPinnedTemplate(runDir, assertTemplate) : null;
  if (pinned !== null) {
    let template = pinned.template;
    if (config.template.responseFormat !== template.responseFormat) template = { ...template, responseFormat: config.template.responseFormat };
    return template;
  }
  return builtinTemplate(config.template.preset, config.template.responseFormat);
}

/**
 * Sessions of a run's env and template. The format rule comes from the rl section and holds in
 * every stage that plays episodes (self-play, RL, evaluation): a reply that fails the format check
 * executes no action unless rl.executeOnFormatError, and rl.formatCheck picks the tags checked.
 */
export function sessionFactory(config: RunConfig, template: PromptTemplate, limits: RolloutSection) {
  const rl = config.stages.rl;
  return (spec: EpisodeSpec): EpisodeSession => new EpisodeSession(createEnv(config.env.id, config.env.options), template, {
    seed: spec.seed,
    executeOnFormatError: rl.executeOnFormatError,
    ...(rl.formatCheck ? { formatCheck: rl.formatCheck } : {}),
    ...(limits.maxTurns ? { maxTurns: limits.maxTurns } : {}),
    ...(limits.maxActionsPerTurn ? { maxActionsPerTurn: limits.maxActionsPerTurn } : {}),
    ...(limits.maxActionsPerGame ? { maxActionsPerGame: limits.maxActionsPerGame } : {}),
  });
}

export function modelPolicy(runtime: ModelRuntime): TextPolicy {
  return {
    encodePrompt: (messages, prefix, maxTokens) => runtime.encodePrompt(messages, prefix, maxTokens),
    continuePrompt: (history, messages, prefix, maxTokens) => runtime.continuePrompt(history, messages, prefix, maxTokens),
    generate: (prompts, opts) => runtime.generate(prompts, opts),
  };
}

/** Deps for playEpisodes with a model (or random writer) on a run's env. */
export function rolloutDeps(
  config: RunConfig,
  runtime: ModelRuntime,
  limits: RolloutSection,
  meta: { runId: string; stage: string; step: number; runDir?: string },
  opts: { random?: boolean; seed?: number; signal?: AbortSignal; template?: PromptTemplate } = {},
): RolloutDeps<EpisodeSession> {
  const template = opts.template ?? runTemplate(config, meta.runDir);
  const rng = new Rng(opts.seed ?? 0);
  return {
    createSession: sessionFactory(config, template, limits),
    finish: (session, spec): EpisodeRecord =>
      session.toEpisodeRecord({ id: spec.id, runId: meta.runId, stage: meta.stage, step: meta.step, group: spec.group, sample: spec.sample }),
    policy: modelPolicy(runtime),
    ...(opts.random ? { writeResponse: (session: EpisodeSession) => randomWellFormedResponse(session, rng) } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  };
}

/**
 * A bootstrap turn that reads the state but does not know the dynamics: random legal actions,
 * <observation> = the TRUE current state, <prediction> = a counterfactual, the true state after
 * *other* random actions from the same state (drawn independently of the answer). The base learns
 * the format, to copy the state (state estimation) and what successor states look like, p(s'|s),
 * but not p(s'|s, a): that is what the methods then differ on (audit B2; the decoy version below
 * taught the base not to copy the state).
 */
export function groundedBootstrapResponse(session: EpisodeSession, rng: Rng): string {
  const reply = randomWellFormedResponse(session, rng);
  if (session.responseFormat === 'plain') return reply;
  const legal = session.legalActions();
  const limit = Math.max(1, Math.min(session.maxActionsPerTurn, session.actionsLeft()));
  const other = Array.from({ length: 1 + rng.int(limit) }, () => legal[rng.int(legal.length)]!);
  const counterfactual = session.simulate(other).text;
  return reply.replace(/<prediction>[\s\S]*?<\/prediction>/, `<prediction>\n${counterfactual}\n</prediction>`);
}

/**
 * A random-action turn whose observation and prediction are well formed but *ungrounded*: the
 * state text of an unrelated decoy puzzle (another seed, a few random moves). Bootstrap data:
 * the base learns the format, the state syntax and the actions, but not the world model.
 * `decoyPool` > 0 draws the decoy from that many fixed puzzles (seeds 900000000…), so a tiny
 * model can learn to write complete, well-formed states; 0 = a fresh decoy each turn.
 */
export function ungroundedResponse(session: EpisodeSession, config: RunConfig, rng: Rng, decoyPool = 0): string {
  const grounded = randomWellFormedResponse(session, rng);
  if (session.responseFormat === 'plain') return grounded;
  const decoy = createEnv(config.env.id, config.env.options);
  decoy.reset({ seed: 900_000_000 + rng.int(decoyPool > 0 ? decoyPool : 1_000_000) });
  const legal = decoy.legalActions();
  const decoyText = (): string => renderState(session.template, decoy);
  const observation = decoyText();
  for (let i = 0, n = 1 + rng.int(3); i < n; i++) {
    try { const r = decoy.step(legal[rng.int(legal.length)]!); if (r.terminated || r.truncated) break; } catch { break; }
  }
  const prediction = decoyText();
  return grounded
    .replace(/<observation>[\s\S]*?<\/observation>/, `<observation>\n${observation}\n</observation>`)
    .replace(/<prediction>[\s\S]*?<\/prediction>/, `<prediction>\n${prediction}\n</prediction>`);
}
