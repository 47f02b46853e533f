// The world-model check, one for every caller: the bootstrap gate (is the base ready: reads the state, keeps the format, does
// not know the dynamics yet), the eval stage's comparison with the base (worldModelVersusBase), and the probe's prediction
// given an action (core/eval/world-model-probe.ts). The model writes the first turn of held-out puzzles; the action-conditioned
// prediction p(s' | s, a) is asked through one forced prefix (reply-format.ts actionGivenPrefix) by forcedPredictions.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Board, WmScore } from '../api/records.js';
import type { RunConfig } from '../api/run-config.js';
import type { StageContext } from '../api/stage.js';
import type { ChatMessage } from '../model/chat.js';
import type { GenerateOptions } from '../model/runtime.js';
import { Rng } from '../util/rng.js';
import { builtinTemplate } from '../prompts/resolve-template.js';
import { actionGivenPrefix, isLookaheadLine, observationPrefix, PREDICTION_STOP, tagText } from '../prompts/reply-format.js';
import type { EpisodeSession } from '../prompts/session.js';
import type { PromptTemplate } from '../prompts/template.js';
import { parseStateText, scoreWorldModel } from '../prompts/world-model.js';
import { breathe } from './breathe.js';
import { modelPolicy, runTemplate, sessionFactory } from './episodes.js';
import { loadRuntime, type ModelRuntime } from './runtime.js';
import { structuralProblem } from './selfplay-data.js';

/** One action-conditioned prediction to ask for: the turn's messages, its observation, the action(s), the true next board. */
export interface ForcedPredictionRequest {
  messages: ChatMessage[];
  generationPrefix: string;
  observation: string;
  actions: readonly string[];
  truth: Board;
}

export interface ForcedPrediction {
  /** The whole forced reply: prefix + what the model wrote, up to the closing </prediction>. */
  text: string;
  prefix: string;
  prediction: string | null;
  board: Board | null;
  score: WmScore;
}

/**
 * p(s' | s, a): each turn forced open with its observation and "I will try A." (actionGivenPrefix), the model writes only the
 * prediction (generation stops at </prediction>), scored against the true next board with the run's template's parser.
 */
export async function forcedPredictions(
  runtime: Pick<ModelRuntime, 'encodePrompt' | 'generate'>,
  requests: ForcedPredictionRequest[],
  opts: { envId: string; template: PromptTemplate; maxPrompt: number; sampling: GenerateOptions; lookahead?: boolean },
): Promise<ForcedPrediction[]> {
  // a lookahead reply writes its candidates before the plan: the model writes them first (kept only when they have the
  // line's shape; a paper-order model's own "I will try …" is dropped), then the action is forced after it
  const lines = opts.lookahead
    ? (await runtime.generate(requests.map((r) => runtime.encodePrompt(r.messages, observationPrefix(r.generationPrefix, r.observation), opts.maxPrompt)),
      { ...opts.sampling, stop: ['I will try', PREDICTION_STOP] }))
      .map((o) => o.text.split('I will try')[0]!.trim()).map((line) => (isLookaheadLine(line) ? line : undefined))
    : requests.map(() => undefined);
  const prefixes = requests.map((r, i) => actionGivenPrefix(r.generationPrefix, r.observation, r.actions, lines[i]));
  const out = await runtime.generate(requests.map((r, i) => runtime.encodePrompt(r.messages, prefixes[i]!, opts.maxPrompt)),
    { ...opts.sampling, stop: [PREDICTION_STOP] });
  return requests.map((r, i) => {
    const text = prefixes[i]! + out[i]!.text;
    const prediction = tagText(text, 'prediction');
    const board = opts.template.responseFormat === 'world-model' ? parseStateText(opts.envId, prediction, opts.template, r.truth) : null;
    return { text, prefix: prefixes[i]!, prediction, board, score: scoreWorldModel(board, r.truth) };
  });
}

/** What the gate measured on held-out turns; `passed` = all three conditions. */
export interface BootstrapGate {
  turns: number;                        // held-out turns generated (first turns of fresh puzzles)
  observationExact: number;             // <observation> equals the true state
  keepRate: number;                     // share of replies the self-play structural filter keeps
  predictionExactChanged: number;       // <prediction> equals the true next state, on turns that changed the state
  counterfactualExactChanged: number;   // the same for the counterfactual (other random actions) on those turns
  changedTurns: number;
  thresholds: { observationExact: number; keepRate: number; predictionMargin: number };
  passed: boolean;
  failures: string[];
}

export function gateLine(g: BootstrapGate): string {
  const f = (x: number) => (100 * x).toFixed(0) + '%';
  return `bootstrap gate ${g.passed ? 'PASSED' : 'FAILED'} on ${g.turns} held-out turns: observation exact ${f(g.observationExact)} (≥ ` +
    `${f(g.thresholds.observationExact)}), keep rate ${f(g.keepRate)} (≥ ${f(g.thresholds.keepRate)}), prediction exact on state-changing turns ` +
      `${f(g.predictionExactChanged)} vs counterfactual ${f(g.counterfactualExactChanged)} (${g.changedTurns} turns; must be no ` +
        `better)${g.failures.length ? `; failed: ${g.failures.join('; ')}. Extend the bootstrap (stages.bootstrap.steps), not the methods` : ''}`;
}

/** Prediction exact may exceed the counterfactual's by this much before the base counts as knowing the dynamics (sampling noise at ~50 turns). */
const PREDICTION_MARGIN = 0.1;

/** World-model accuracy of a model's first turns on held-out puzzles (the gate, and the eval's comparison with the base). */
export interface WorldModelCheck {
  turns: number;                        // turns generated (first turns of fresh puzzles)
  seedStart: number;                    // puzzle seeds seedStart … seedStart + turns - 1
  observationExact: number;             // <observation> equals the true state
  keepRate: number;                     // share of replies the self-play structural filter keeps
  predictionExact: number;              // <prediction> equals the true next state, all turns
  predictionExactChanged: number;       // the same, on turns that changed the state
  counterfactualExactChanged: number;   // a counterfactual (other random actions) on those turns
  changedTurns: number;
  /**
   * p(s'|s, a) alone, apart from whether the model's answer follows its plan: the turn is forced open with the true
   * observation and the plan "I will try A." for one random legal action A, the model writes the prediction, scored
   * against the state after A (with the env's own slips: the ceiling is the success rate). On turns where A changes the state.
   */
  conditioned?: { exactChanged: number; counterfactualExactChanged: number; changedTurns: number; oracleExactChanged?: number };
}

/** The same puzzles without slips (FrozenLake isSlippery false): whose step is the intended move. Null for deterministic envs. */
function withoutSlips(config: RunConfig): RunConfig | null {
  if (config.env.id !== 'frozenlake' || config.env.options?.isSlippery === false) return null;
  return { ...config, env: { ...config.env, options: { ...config.env.options, isSlippery: false } } };
}

/**
 * The model writes the first turn of `turns` puzzles (seeds from `seedStart`) in each world-model
 * template at the rollout temperature, with sampling seeds fixed by config.seeds.base, so two
 * models checked with the same arguments see the same puzzles. Null when no template is world-model.
 */
export async function worldModelCheck(
  config: RunConfig, runtime: ModelRuntime, templates: Array<string | PromptTemplate>, turns: number, seedStart: number, signal?: AbortSignal,
): Promise<WorldModelCheck | null> {
  const limits = config.stages.rollout;
  const wm = templates.map((t) => (typeof t === 'string' ? builtinTemplate(t) : t)).filter((t) => t.responseFormat === 'world-model');
  if (wm.length === 0 || turns === 0) return null;
  const rng = new Rng(config.seeds.base + 29);
  const sessions: EpisodeSession[] = [];
  const twins = new Map<EpisodeSession, EpisodeSession>();   // the puzzle without slips: the oracle's prediction is its step
  const still = withoutSlips(config);
  for (let i = 0; i < turns; i++) {
    const spec = { seed: seedStart + i, group: i, sample: 0, id: `wm-check-${i}` };
    const session = sessionFactory(config, wm[i % wm.length]!, limits)(spec);
    sessions.push(session);
    if (still) twins.set(session, sessionFactory(still, wm[i % wm.length]!, limits)(spec));
  }
  const policy = modelPolicy(runtime);
  const maxPrompt = Math.max(16, limits.maxContextTokens - limits.maxNewTokens);
  let observationExact = 0, kept = 0, changed = 0, predicted = 0, predictedAll = 0, counterfactual = 0;
  let condChanged = 0, condExact = 0, condCounterfactual = 0, condOracle = 0;
  const condRng = new Rng(config.seeds.base + 31);
  for (let b = 0; b < sessions.length; b += limits.batchSize) {
    await breathe();
    if (signal?.aborted) return null;
    const batch = sessions.slice(b, b + limits.batchSize);
    const prompts = batch.map((s) => policy.encodePrompt(s.messages(), s.generationPrefix(), maxPrompt));
    const sampling = { maxNewTokens: limits.maxNewTokens, temperature: limits.temperature, topP: limits.topP, topK: limits.topK };
    // the action-conditioned prediction (before the free turn moves the episodes on)
    const forced = batch.map((s) => {
      const legal = s.legalActions();
      const action = legal[condRng.int(legal.length)]!;
      const other = legal.filter((x) => x !== action);
      const counter = other.length ? s.simulate([other[condRng.int(other.length)]!]).text : null;
      const truth = s.simulate([action]);
      const twin = twins.get(s);
      const oracle = twin && twin.stateText() === s.stateText() ? twin.simulate([action]).text : truth.text;
      const request = { messages: s.messages(), generationPrefix: s.generationPrefix(), observation: s.stateText(), actions: [action], truth: truth.board };
      return { before: s.stateText(), truth, counter, oracle, request };
    });
    const predictions = await forcedPredictions(runtime, forced.map((f) => f.request),
      { envId: config.env.id, template: wm[0]!, maxPrompt, sampling: { ...sampling, seed: config.seeds.base * 11 + b }, lookahead: writesLookahead(config) });
    forced.forEach((f, i) => {
      if (f.truth.text === f.before) return;
      condChanged++;
      if (predictions[i]!.score.exact) condExact++;
      if (f.counter === f.truth.text) condCounterfactual++;
      if (f.oracle === f.truth.text) condOracle++;
    });
    const out = await policy.generate(prompts, { ...sampling, seed: config.seeds.base * 7 + b });
    batch.forEach((s, i) => {
      const reply = s.generationPrefix() + out[i]!.text;
      if (structuralProblem(reply) === null) kept++;
      const legal = s.legalActions();
      const other = Array.from({ length: 1 + rng.int(Math.min(s.maxActionsPerTurn, s.actionsLeft())) }, () => legal[rng.int(legal.length)]!);
      const counterfactualState = s.simulate(other).text; // other random actions from the same state (the episode is not disturbed)
      const turn = s.applyResponse(reply);
      if (turn.wm.observation?.exact) observationExact++;
      if (turn.wm.prediction?.exact) predictedAll++;
      if (turn.stateAfter.text !== turn.stateBefore.text) {
        changed++;
        if (turn.wm.prediction?.exact) predicted++;
        if (counterfactualState === turn.stateAfter.text) counterfactual++;
      }
    });
  }
  const n = sessions.length;
  return {
    turns: n, seedStart, observationExact: observationExact / n, keepRate: kept / n, predictionExact: predictedAll / n,
    predictionExactChanged: changed ? predicted / changed : 0, counterfactualExactChanged: changed ? counterfactual / changed : 0, changedTurns: changed,
    conditioned: {
      exactChanged: condChanged ? condExact / condChanged : 0, counterfactualExactChanged: condChanged ? condCounterfactual / condChanged : 0,
      changedTurns: condChanged, oracleExactChanged: condChanged ? condOracle / condChanged : 0,
    },
  };
}

/**
 * The gate: the base writes the first turn of `gateTurns` held-out puzzles (seeds 2,900,000…, apart
 * from bootstrap, self-play, RL and eval) in each world-model template at the rollout temperature.
 */
export async function bootstrapGate(config: RunConfig, runtime: ModelRuntime, templates: Array<string | PromptTemplate>): Promise<BootstrapGate | null> {
  const section = config.stages.bootstrap;
  const c = await worldModelCheck(config, runtime, templates, section.gateTurns, 2_900_000);
  if (!c) return null;
  const g: BootstrapGate = {
    turns: c.turns, observationExact: c.observationExact, keepRate: c.keepRate,
    predictionExactChanged: c.predictionExactChanged, counterfactualExactChanged: c.counterfactualExactChanged, changedTurns: c.changedTurns,
    thresholds: { observationExact: section.gateObservationExact, keepRate: section.gateKeepRate, predictionMargin: PREDICTION_MARGIN },
    passed: false, failures: [],
  };
  if (g.observationExact < section.gateObservationExact) g.failures.push('observation exact below threshold');
  if (g.keepRate < section.gateKeepRate) g.failures.push('keep rate below threshold');
  if (g.predictionExactChanged > g.counterfactualExactChanged + PREDICTION_MARGIN) g.failures.push('the base already predicts the effect of its actions');
  g.passed = g.failures.length === 0;
  return g;
}

/** The eval's world-model comparison: the final model and the run's base, same puzzles, same sampling seeds. */
export interface WorldModelVersusBase { model: WorldModelCheck; base: WorldModelCheck; baseCheckpoint: string; template: string }

/**
 * The run's base: its checkpoints/bootstrap, or, for a run that starts from a checkpoint or a Hugging Face folder
 * with no bootstrap of its own (e.g. a 0-step bootstrap), that model folder. Null when the run has neither.
 */
export function runBaseDir(config: RunConfig, runDir: string): string | null {
  const own = join(runDir, 'checkpoints', 'bootstrap');
  if (existsSync(join(own, 'config.json'))) return own;
  if (config.model.source !== 'preset' && config.model.path && existsSync(join(resolve(config.model.path), 'config.json'))) return resolve(config.model.path);
  return null;
}

/**
 * The final model's and the base's (runBaseDir) world-model check on the first turns of `turns` evaluation
 * puzzles in the run's own template. Null when the run has no base or its template is not in the world-model
 * format. Also run on any checkpoint after the fact (`spa-workbench probe --check`), with the same puzzles and seeds.
 */
export async function worldModelVersusBase(
  ctx: Pick<StageContext, 'config' | 'runDir' | 'signal'>, runtime: ModelRuntime, turns: number, baseDir = runBaseDir(ctx.config, ctx.runDir),
): Promise<WorldModelVersusBase | null> {
  const own = runTemplate(ctx.config, ctx.runDir);
  if (turns === 0 || own.responseFormat !== 'world-model' || !baseDir) return null;
  const model = await worldModelCheck(ctx.config, runtime, [own], turns, ctx.config.seeds.evalStart, ctx.signal);
  if (!model) return null;
  const baseRuntime = await loadRuntime(baseDir, { valueHead: false });
  try {
    const base = await worldModelCheck(ctx.config, baseRuntime, [own], turns, ctx.config.seeds.evalStart, ctx.signal);
    return base ? { model, base, baseCheckpoint: baseDir, template: own.name } : null;
  } finally {
    baseRuntime.dispose();
  }
}

export function versusBaseLines(v: WorldModelVersusBase): string[] {
  const f = (x: number) => `${(100 * x).toFixed(0)}%`.padStart(5);
  const cond = (c: WorldModelCheck) => (c.conditioned ? `${f(c.conditioned.exactChanged)} (${c.conditioned.changedTurns})` : '   –');
  const row = (name: string, c: WorldModelCheck) =>
    `${name.padEnd(12)} ${f(c.observationExact)}       ${f(c.predictionExact)}      ${f(c.predictionExactChanged)} (${c.changedTurns})   ` +
      `${f(c.keepRate)}   ${cond(c)}`;
  const c = v.base.conditioned;
  const only = (name: string, x: number) => `${name.padEnd(12)}     –            –           –               –    ${f(x)} (${c!.changedTurns})`;
  return [
    `world model on the first turns of ${v.model.turns} eval puzzles (seeds ${v.model.seedStart}…), template ${v.template}:`,
    '             observation  prediction  on changed turns  kept   given the action',
    row('this model', v.model),
    row('base', v.base),
    ...(c ? [only('chance', c.counterfactualExactChanged), ...(c.oracleExactChanged !== undefined ? [only('oracle', c.oracleExactChanged)] : [])] : []),
    '("given the action": the true observation and "I will try A." forced for one random action A (after the model\'s own candidates ' +
      'in a lookahead run), prediction exact on turns A changes; '
      + 'chance = the outcome of a random other action, oracle = the intended move\'s outcome, what a model that knows the dynamics predicts)',
  ];
}


/** Whether a run's SFT teaches the lookahead reply (selfplay.lookahead games or lookahead drills): its check lets the model write its candidates. */
export function writesLookahead(config: RunConfig): boolean {
  return config.stages.selfplay.lookahead > 0 || config.stages.selfplay.drillLookahead;
}
