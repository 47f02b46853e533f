// World-model probe (issue 12, item 12): load a checkpoint of a run, put the model on a puzzle of
// the run's env (a seed, or a saved episode at one of its turns), and
//   1. let it write its own turn: its <observation> and <prediction> parsed into boards and scored
//      against the true state and the true state after the actions it chose (a TurnRecord);
//   2. for an action you choose, force the turn's opening with that action given, as RWML-style
//      action-conditioned prediction does: "<think><observation>\n{its observation}\n</observation>
//      \nI will try {ACTION}.\n<prediction>\n", and let it write the prediction; score that against
//      the true next state after your action (computed without disturbing the episode).
// Stepping on is stateless: the caller sends the responses applied so far (`history`); each one
// executes its <answer>. `actionGiven.stepResponse` is the turn with your action as its answer.
// Used by `spa-workbench probe` and, through a child process running that command, by probe.turn.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ProbeResult } from '../api/contract.js';
import { RunConfigSchema, type RunConfig } from '../api/run-config.js';
import { tagText } from '../prompts/reply-format.js';
import { setChatSettings } from '../model/chat.js';
import { setMemorySettings } from '../model/memory.js';
import { RunData } from '../storage/run-data.js';
import { runTemplate, sessionFactory } from '../train/episodes.js';
import { forcedPredictions, runBaseDir, versusBaseLines, worldModelVersusBase, type WorldModelVersusBase } from '../train/world-model-check.js';
import { findCheckpoint, runFolder, TemplatePerplexityError } from './template-perplexity.js';

export interface ProbeOptions {
  project: string;
  runId: string;
  checkpoint?: string;
  seed?: number;
  episodeId?: string;
  turn?: number;
  history?: string[];
  actions?: string[];
  temperature?: number;
  sampleSeed?: number;
  backend?: string;
}

const fail = (code: 'NotFound' | 'ValidationError' | 'CorruptData', message: string, where: string, expected?: string, received?: string): never => {
  throw new TemplatePerplexityError(code, message, { where, ...(expected ? { expected } : {}), ...(received ? { received } : {}) });
};

function readConfig(runDir: string): RunConfig {
  const file = path.join(runDir, 'run.json');
  let json: { config?: unknown };
  try { json = JSON.parse(fs.readFileSync(file, 'utf8')) as { config?: unknown }; } catch (err) {
    return fail('CorruptData', `${file} could not be read (${(err as Error).message})`, file);
  }
  const parsed = RunConfigSchema.safeParse(json.config);
  if (!parsed.success)
    return fail(
      'CorruptData',
      `${file}: config does not match RunConfig at ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`,
      file,
    );
  return parsed.data;
}

/** The probed turn: the puzzle (a seed, or a saved episode and turn), the history replayed, the actions checked and canonicalised. */
function probeSession(opts: ProbeOptions, runDir: string, config: RunConfig, template: ReturnType<typeof runTemplate>) {
  const limits = config.stages.rollout;
  let seed = opts.seed;
  let history = opts.history ?? [];
  if (opts.episodeId !== undefined) {
    if (opts.seed !== undefined) fail('ValidationError', 'give a seed or an episode, not both', 'seed', '{ seed } or { episodeId, turn }', 'both');
    let episode;
    try { episode = new RunData(opts.runId, runDir).getEpisode(opts.episodeId); } catch (err) {
      return fail('NotFound', (err as Error).message, 'episodeId', 'an episode id of the run (rollouts.query)', opts.episodeId);
    }
    const turn = opts.turn ?? 0;
    if (turn > episode.turns.length - 1) {
      fail(
        'ValidationError',
        `episode ${episode.id} has ${episode.turns.length} turn(s); turn ${turn} does not exist (turns are counted from 0)`,
        'turn',
        `0 … ${episode.turns.length - 1}`,
        String(turn),
      );
    }
    if (episode.env !== config.env.id)
      fail('ValidationError', `episode ${episode.id} is on env ${episode.env}, the run's env is ${config.env.id}`, 'episodeId');
    seed = episode.seed;
    history = [...episode.turns.slice(0, turn).map((t) => t.response), ...(opts.history ?? [])];
  }
  if (seed === undefined)
    return fail('ValidationError', 'give a puzzle seed or a saved episode (episodeId)', 'seed', '{ seed } or { episodeId, turn }', 'neither');
  const session = sessionFactory(config, template, limits)({ seed, group: 0, sample: 0, id: 'probe' });
  history.forEach((response, i) => {
    if (session.done)
      fail(
        'ValidationError',
        `the episode ended after turn ${i} of the history; it has no turn ${i + 1} to apply`,
        `history[${i}]`,
        `at most ${i} responses`,
        `${history.length}`,
      );
    session.applyResponse(response);
  });
  if (session.done)
    fail(
      'ValidationError',
      `the episode is over after the ${history.length} turn(s) of the history (solved, failed or out of budget); there is no turn to probe`,
      'history',
    );
  const legalActions = session.legalActions();
  const actions = opts.actions ?? [];
  if (actions.length > 0) {
    const canon = new Map(legalActions.map((a) => [a.toLowerCase(), a]));
    actions.forEach((a, i) => {
      const c = canon.get(a.trim().toLowerCase());
      if (c === undefined && legalActions.length > 0)
        fail(
          'ValidationError',
          `action ${JSON.stringify(a)} is not a legal action here; legal: ${legalActions.join(', ')}`,
          `actions[${i}]`,
          legalActions.join(' | '),
          a,
        );
      if (c !== undefined) actions[i] = c;
    });
  }

  return { session, seed, history, legalActions, actions };
}

/** The checkpoint on the run's compute backend (torch or TF.js), chosen as a run chooses it (core/train/runtime.ts). */
async function loadForProbe(runId: string, checkpoint: { name: string; dir: string }, backend: string | undefined) {
  const { chooseCompute, loadRuntime } = await import('../train/runtime.js');
  const report = await chooseCompute(backend);
  try {
    return { report, runtime: await loadRuntime(checkpoint.dir, { valueHead: false, trainable: false }) };
  } catch (err) {
    return fail('CorruptData', `checkpoint ${checkpoint.name} of run ${runId} could not be loaded: ${(err as Error).message}`, checkpoint.dir);
  }
}

/**
 * The run's model settings, as its stages set them (core/train/runtime.ts useBackend): the chat layout and date, and
 * model.memory (frozen-weight dtype, generation rows, micro-batch budget), so a probe of a checkpoint computes with the
 * numerics the run's eval used (a torch probe of a 135M model otherwise keeps its frozen weights in bf16 where the run
 * kept f32).
 */
function useRunSettings(config: RunConfig): void {
  setChatSettings(config.model.chat);
  setMemorySettings(config.model.memory);
}

export async function probeTurn(opts: ProbeOptions): Promise<ProbeResult> {
  const started = performance.now();
  const runDir = runFolder(opts.project, opts.runId);
  const checkpoint = findCheckpoint(opts.project, opts.runId, opts.checkpoint);
  const config = readConfig(runDir);
  useRunSettings(config);
  const template = runTemplate(config, runDir);
  const limits = config.stages.rollout;
  const { session, seed, history, legalActions, actions } = probeSession(opts, runDir, config, template);

  const { report, runtime } = await loadForProbe(opts.runId, checkpoint, opts.backend ?? config.backend);
  try {
    const maxPrompt = Math.max(16, limits.maxContextTokens - limits.maxNewTokens);
    const sampling = { temperature: opts.temperature ?? 0, topP: limits.topP, topK: limits.topK, seed: opts.sampleSeed ?? 0 };
    const messages = session.messages();
    const prefix = session.generationPrefix();
    const promptIds = runtime.encodePrompt(messages, prefix, maxPrompt);
    const [own] = await runtime.generate([promptIds], { ...sampling, maxNewTokens: limits.maxNewTokens });
    const ownText = prefix + own!.text;

    let actionGiven: ProbeResult['actionGiven'] = null;
    if (actions.length > 0) {
      const truth = session.simulate(actions);
      const [given] = await forcedPredictions(runtime, [{
        messages, generationPrefix: prefix, observation: tagText(ownText, 'observation') ?? session.stateText(), actions, truth: truth.board,
      }], { envId: config.env.id, template, maxPrompt, sampling: { ...sampling, maxNewTokens: limits.maxNewTokens } });
      actionGiven = {
        actions, text: given!.text, prediction: given!.prediction, predictedBoard: given!.board,
        trueNext: { text: truth.text, board: truth.board },
        score: given!.score,
        stepResponse: `${given!.prefix}${given!.prediction ?? ''}\n</prediction></think><answer>${actions.join(' || ')}</answer>`,
      };
    }
    const turn = session.applyResponse(ownText, { prompt: promptIds.length, response: own!.ids.length });
    return {
      runId: opts.runId, checkpoint: checkpoint.name, env: { id: config.env.id, options: { ...(config.env.options ?? {}) } }, seed,
      turnIndex: turn.turn, messages, turn, actionGiven, legalActions, done: session.done, history,
      backend: report.backend, wallSeconds: Math.round((performance.now() - started) / 10) / 100,
    };
  } finally {
    await runtime.dispose();
  }
}

export interface ProbeCheckOptions { project: string; runId: string; checkpoint?: string; turns?: number; base?: string; backend?: string }
export interface ProbeCheckResult {
  runId: string; checkpoint: string; checkpointDir: string; turns: number; versusBase: WorldModelVersusBase; lines: string[];
  backend: string; wallSeconds: number;
}

/**
 * The eval stage's world-model check (worldModelVersusBase) on any checkpoint of a run, after the fact: the first
 * turns of `turns` eval puzzles (default: the run's stages.eval.worldModelTurns), with the run's template, puzzle
 * seeds and sampling seeds, beside the run's base (or `base`, a model folder). E.g. a study's "after SFT" measure on
 * checkpoints/sft-epoch-1, or the end-of-run measure of a run whose eval had no base to compare with.
 */
export async function probeCheck(opts: ProbeCheckOptions): Promise<ProbeCheckResult> {
  const started = performance.now();
  const runDir = runFolder(opts.project, opts.runId);
  const checkpoint = findCheckpoint(opts.project, opts.runId, opts.checkpoint);
  const config = readConfig(runDir);
  useRunSettings(config);
  const turns = opts.turns ?? config.stages.eval.worldModelTurns;
  if (!Number.isSafeInteger(turns) || turns < 1) fail('ValidationError', `turns: expected an integer ≥ 1, received ${String(turns)}`, 'turns');
  const template = runTemplate(config, runDir);
  if (template.responseFormat !== 'world-model')
    fail('ValidationError', `run ${opts.runId} uses template ${template.name}, which is not in the world-model format: there is no observation or ` +
      'prediction to check', 'runId', 'a run with a world-model template', template.name);
  const baseDir = opts.base !== undefined ? path.resolve(opts.base) : runBaseDir(config, runDir);
  if (!baseDir) fail('NotFound', `run ${opts.runId} has no base to compare with (no checkpoints/bootstrap, and it starts from a fresh model); give one ` +
    'with --base DIR', 'base');
  if (!fs.existsSync(path.join(baseDir!, 'config.json')))
    fail('NotFound', `base ${baseDir} is not a model folder (no config.json)`, 'base', 'a checkpoint folder');
  const { report, runtime } = await loadForProbe(opts.runId, checkpoint, opts.backend ?? config.backend);
  try {
    const versusBase = await worldModelVersusBase({ config, runDir, signal: new AbortController().signal }, runtime, turns, baseDir!);
    if (!versusBase) return fail('ValidationError', `the world-model check returned nothing for run ${opts.runId}`, 'runId');
    return {
      runId: opts.runId, checkpoint: checkpoint.name, checkpointDir: checkpoint.dir, turns, versusBase, lines: versusBaseLines(versusBase),
      backend: report.backend, wallSeconds: Math.round((performance.now() - started) / 10) / 100,
    };
  } finally {
    await runtime.dispose();
  }
}
