// One episode as a chat: builds the messages (RAGEN/SPA chat skeleton), applies each model reply
// (parse, execute valid actions, reward with the −0.1 penalty, true states before/after, parsed
// world-model boards and their scores) and produces the TurnRecord / EpisodeRecord the engine
// stores. The pipeline batches many sessions and calls the LLM between messages() and applyResponse().
import { GENERATION_PREFIX, lookaheadGrids, lookaheadLine } from './reply-format.js';
import { frozenLakeLookahead, lookaheadChoice } from '../envs/frozen-lake.js';
import type { Board, EpisodeRecord, ParsedResponse, StateSnapshot, TurnRecord, WmScore } from '../api/records.js';
import type { Env } from '../envs/types.js';
import { getEnvDefinition } from '../envs/index.js';
import type { Rng } from '../util/rng.js';
import { DEFAULT_FORMAT, renderPart, templateHash, type PromptTemplate, type ResponseFormat } from './template.js';
import { stateVariables } from './state-text.js';
import { parseResponse, turnPenalty } from './response.js';
import { parseStateText, scoreWorldModel } from './world-model.js';

export interface ChatMessage { role: 'system' | 'user' | 'assistant'; content: string }

export interface SessionOptions {
  seed: number;
  envOptions?: Record<string, unknown>;   // per-reset overrides; recorded as envConfig
  maxTurns?: number;                      // default: env budget (5)
  maxActionsPerTurn?: number;             // default: env budget (5)
  maxActionsPerGame?: number;             // default: env budget (10; Sudoku 50)
  responseFormat?: ResponseFormat;        // default: the template's
  lengthLimit?: number;                   // "Max response length: N words (tokens)" (default 100)
  strict?: boolean;                       // strict response parsing (default false: tolerant)
  penalty?: number;                       // format / unknown-action penalty (default −0.1)
  executeOnFormatError?: boolean;         // run the actions of a reply that fails the format check (default false, as RAGEN)
  formatCheck?: ResponseFormat;           // tags a reply must have to be well formed (default: the response format)
}

export interface EpisodeMeta {
  id: string;
  runId: string;
  stage: string;
  step?: number;
  group?: number;
  sample?: number;
  time?: number;
}

/** Render the state text of an env's current state with a template's `state` part. */
export function renderState(template: PromptTemplate, env: Env): string {
  const vars = stateVariables(env);
  Object.defineProperty(vars, 'env', { value: { id: env.id }, enumerable: true });
  return renderPart(template, 'state', vars);
}

export class EpisodeSession {
  readonly env: Env;
  readonly template: PromptTemplate;
  readonly templateHash: string;
  readonly seed: number;
  readonly envOptions: Record<string, unknown>;
  readonly maxTurns: number;
  readonly maxActionsPerTurn: number;
  readonly maxActionsPerGame: number;
  readonly responseFormat: ResponseFormat;
  readonly lengthLimit: number;
  private readonly strict: boolean;
  private readonly penalty: number;
  private readonly executeOnFormatError: boolean;
  readonly formatCheck: ResponseFormat;
  /** The env's one-line rules for the options it was reset with (EnvDefinition.rules; `{{ env.rules }}`). */
  private readonly rules: string;
  private readonly turns: TurnRecord[] = [];
  private readonly userMessages: string[] = [];
  private readonly initial: StateSnapshot;
  private actionsUsed = 0;
  private envTerminated = false;
  private envTruncated = false;
  private budgetExhausted = false;
  private solved = false;
  private totalReward = 0;

  constructor(env: Env, template: PromptTemplate, opts: SessionOptions) {
    const def = getEnvDefinition(env.id);
    const budget = def.budget;
    this.env = env;
    this.template = template;
    this.templateHash = templateHash(template);
    this.seed = opts.seed;
    this.envOptions = { ...(opts.envOptions ?? {}) };
    this.maxTurns = opts.maxTurns ?? budget.maxTurns;
    this.maxActionsPerTurn = opts.maxActionsPerTurn ?? budget.maxActionsPerTurn;
    this.maxActionsPerGame = opts.maxActionsPerGame ?? budget.maxActionsPerGame;
    this.responseFormat = opts.responseFormat ?? template.responseFormat;
    this.lengthLimit = opts.lengthLimit ?? 100;
    this.strict = opts.strict ?? false;
    this.penalty = opts.penalty ?? -0.1;
    this.executeOnFormatError = opts.executeOnFormatError ?? false;
    this.formatCheck = opts.formatCheck ?? this.responseFormat;
    for (const [name, v] of [
      ['maxTurns', this.maxTurns],
      ['maxActionsPerTurn', this.maxActionsPerTurn],
      ['maxActionsPerGame', this.maxActionsPerGame],
    ] as const) {
      if (!Number.isInteger(v) || v < 1) throw new Error(`EpisodeSession: ${name} expected a positive integer, received ${String(v)}`);
    }
    env.reset(opts.envOptions ? { seed: opts.seed, options: opts.envOptions } : { seed: opts.seed });
    this.rules = def.rules?.(env) ?? `Solve the ${def.id} puzzle.`;
    this.initial = this.snapshot();
    this.userMessages.push(this.renderInstruction() + this.renderTurn(0));
  }

  // ------------------------------------------------------------ rendering

  private baseVars(): Record<string, unknown> {
    const def = getEnvDefinition(this.env.id);
    const actions = def.actions.length > 0 ? def.actions : [def.actionPattern ?? ''];
    const formatVars = { response_format: this.responseFormat };
    const format = this.template.parts.format !== undefined
      ? renderPart(this.template, 'format', formatVars)
      : DEFAULT_FORMAT[this.responseFormat];
    return {
      env: { id: def.id, title: def.title, instruction: def.instruction, legend: def.legend, actions, rules: this.rules },
      actions_text: actions.join(', '),
      max_turns: this.maxTurns,
      max_actions_per_turn: this.maxActionsPerTurn,
      max_actions_per_game: this.maxActionsPerGame,
      response_format: this.responseFormat,
      format,
      length_limit: this.lengthLimit,
    };
  }

  private renderInstruction(): string {
    return renderPart(this.template, 'instruction', this.baseVars());
  }

  private renderTurn(turnIndex: number): string {
    return renderPart(this.template, 'turn', {
      ...this.baseVars(), turn: turnIndex + 1, state: this.stateText(), actions_left: this.actionsLeft(),
    });
  }

  /** The state text of the env's current state (the template's `state` part). */
  stateText(): string {
    return renderState(this.template, this.env);
  }

  private snapshot(): StateSnapshot {
    return { text: this.stateText(), board: this.env.board() };
  }

  /** The system line. */
  systemMessage(): string {
    return renderPart(this.template, 'system', this.baseVars());
  }

  /** The chat so far: system, user (instruction + turn 1), assistant, user (reward + next turn), … */
  messages(): ChatMessage[] {
    const out: ChatMessage[] = [{ role: 'system', content: this.systemMessage() }];
    for (let i = 0; i < this.userMessages.length; i++) {
      out.push({ role: 'user', content: this.userMessages[i] });
      if (i < this.turns.length) out.push({ role: 'assistant', content: this.turns[i].response });
    }
    return out;
  }

  /** Text the generation is forced to start with (the assistant message begins with it). */
  generationPrefix(): string {
    return GENERATION_PREFIX;
  }

  // ------------------------------------------------------------ state

  get done(): boolean {
    return this.envTerminated || this.envTruncated || this.budgetExhausted;
  }

  get success(): boolean {
    return this.solved;
  }

  get turnIndex(): number {
    return this.turns.length;
  }

  actionsLeft(): number {
    return Math.max(0, this.maxActionsPerGame - this.actionsUsed);
  }

  legalActions(): string[] {
    return this.env.legalActions();
  }

  /** Records of the turns played so far. */
  turnRecords(): TurnRecord[] {
    return [...this.turns];
  }

  /**
   * The true state after `actions` from the current state, without disturbing the episode
   * (getState / setState around the steps; the env RNG is restored, so slippery outcomes match
   * what executing the same actions next will produce).
   */
  simulate(actions: readonly string[]): StateSnapshot & { rewards: number[]; terminated: boolean } {
    const saved = this.env.getState();
    try {
      const rewards: number[] = [];
      let terminated = false;
      for (const a of actions) {
        const r = this.env.step(a);
        rewards.push(r.reward);
        if (r.terminated || r.truncated) { terminated = r.terminated; break; }
      }
      return { ...this.snapshot(), rewards, terminated };
    } finally {
      this.env.setState(saved);
    }
  }

  // ------------------------------------------------------------ playing

  /**
   * Apply one model reply. `responseText` may include the forced "<think>" or start after it
   * (then the prefix is prepended). Parses it (the format check uses `formatCheck`), executes the
   * valid actions in order (at most maxActionsPerTurn and what is left of the game budget) unless
   * the reply failed the format check (RAGEN executes nothing then; `executeOnFormatError` runs
   * them anyway), adds the penalty for a format error or unknown action, and returns the turn's record.
   */
  applyResponse(responseText: string, tokens: { prompt?: number; response?: number } = {}): TurnRecord {
    if (this.done) throw new Error(`EpisodeSession.applyResponse: the episode is over (turn ${this.turns.length}); start a new session`);
    const response = /^\s*<\s*think\s*>/i.test(responseText) ? responseText : this.generationPrefix() + responseText;
    const turn = this.turns.length;
    const parsed: ParsedResponse = parseResponse(response, {
      legalActions: this.env.legalActions(),
      maxActionsPerTurn: Math.min(this.maxActionsPerTurn, this.actionsLeft()),
      responseFormat: this.formatCheck,
      strict: this.strict,
    });
    const stateBefore = this.snapshot();
    const executed: string[] = [];
    const slips: NonNullable<TurnRecord['slip']>['moves'] = [];
    let intendedBoard: Board | null = null;
    let reward = 0;
    let effective = false;
    const toExecute = parsed.formatError && !this.executeOnFormatError ? [] : parsed.actions;
    for (const action of toExecute) {
      const r = this.env.step(action);
      executed.push(action);
      if (r.info['slipped'] === true && typeof r.info['movedDirection'] === 'string') {
        slips.push({ action: executed.length - 1, intended: action, executed: r.info['movedDirection'] });
        intendedBoard = (r.info['intendedBoard'] as Board | undefined) ?? null;
      }
      reward += r.reward;
      effective ||= r.info.actionIsEffective;
      if (r.info.success) this.solved = true;
      if (r.terminated || r.truncated) {
        this.envTerminated = r.terminated;
        this.envTruncated = r.truncated;
        break;
      }
    }
    this.actionsUsed += executed.length;
    reward += turnPenalty(parsed, this.penalty);
    reward = Math.round(reward * 1e6) / 1e6;
    this.totalReward = Math.round((this.totalReward + reward) * 1e6) / 1e6;
    const stateAfter = this.snapshot();
    if (turn + 1 >= this.maxTurns || this.actionsUsed >= this.maxActionsPerGame) this.budgetExhausted = true;

    const worldModel = this.responseFormat === 'world-model';
    const observedBoard = worldModel ? parseStateText(this.env.id, parsed.observation, this.template, stateBefore.board) : null;
    const predictedBoard = worldModel ? parseStateText(this.env.id, parsed.prediction, this.template, stateAfter.board) : null;
    const wm: { observation: WmScore | null; prediction: WmScore | null } = {
      observation: worldModel ? scoreWorldModel(observedBoard, stateBefore.board) : null,
      prediction: worldModel ? scoreWorldModel(predictedBoard, stateAfter.board) : null,
    };
    const record: TurnRecord = {
      turn,
      prompt: this.userMessages[turn],
      response,
      parsed,
      stateBefore,
      stateAfter,
      observedBoard,
      predictedBoard,
      wm,
      actionsExecuted: executed,
      reward,
      flags: { formatError: parsed.formatError, invalidAction: parsed.unknownActions.length > 0, actionIsEffective: effective },
      tokens: { prompt: tokens.prompt ?? 0, response: tokens.response ?? 0 },
      done: this.done,
    };
    if (slips.length > 0) {
      // the intended outcome is known for a one-move turn (later moves would start elsewhere)
      const intended = executed.length === 1 ? intendedBoard : null;
      const againstIntended = worldModel && intended ? parseStateText(this.env.id, parsed.prediction, this.template, intended) : null;
      record.slip = { moves: slips, intendedBoard: intended, predictionVsIntended: worldModel && intended ? scoreWorldModel(againstIntended, intended) : null };
    }
    this.turns.push(record);
    if (!this.done) {
      this.userMessages.push(renderPart(this.template, 'reward', { ...this.baseVars(), reward, turn: turn + 1 }) + this.renderTurn(turn + 1));
    }
    return record;
  }

  /** The finished (or current) episode as a record for storage. */
  toEpisodeRecord(meta: EpisodeMeta): EpisodeRecord {
    return {
      id: meta.id,
      runId: meta.runId,
      stage: meta.stage,
      step: meta.step ?? 0,
      env: this.env.id,
      envConfig: { ...this.envOptions },
      seed: this.seed,
      group: meta.group ?? 0,
      sample: meta.sample ?? 0,
      templateHash: this.templateHash,
      success: this.solved,
      totalReward: this.totalReward,
      numTurns: this.turns.length,
      numActions: this.actionsUsed,
      formatErrors: this.turns.filter((t) => t.flags.formatError).length,
      invalidActions: this.turns.reduce((n, t) => n + t.parsed.unknownActions.length, 0),
      terminated: this.envTerminated,
      truncated: !this.envTerminated && (this.envTruncated || this.budgetExhausted),
      initialState: this.initial,
      turns: this.turnRecords(),
      time: meta.time ?? Date.now(),
      system: this.systemMessage(),
    };
  }
}

/**
 * A well-formed world-model turn with random legal actions: observation = the true current
 * state, prediction = the true state after those actions (computed without disturbing the
 * episode). For the random-action self-play ablation and for bootstrap data. Returns the full
 * reply including the forced "<think>".
 */
export function randomWellFormedResponse(session: EpisodeSession, rng: Rng): string {
  const legal = session.legalActions();
  const limit = Math.max(1, Math.min(session.maxActionsPerTurn, session.actionsLeft()));
  const count = 1 + rng.int(limit);
  const actions = Array.from({ length: count }, () => legal[rng.int(legal.length)]);
  const next = session.simulate(actions);
  const reasoning = `I will try ${actions.join(', ')}.`;
  if (session.responseFormat === 'plain') {
    return `<think>${reasoning}</think><answer>${actions.join(' || ')}</answer>`;
  }
  return `<think><observation>\n${session.stateText()}\n</observation>\n${reasoning}\n` +
    `<prediction>\n${next.text}\n</prediction></think><answer>${actions.join(' || ')}</answer>`;
}

/**
 * A lookahead world-model turn (ours, issue 34; selfplay.lookahead): the true observation, the candidates (`form` 'cells': one
 * line of each action's landing cell, reply-format.ts lookaheadLine; 'grids': each action with the state its intended move
 * gives, lookaheadGrids; 'none': no candidates, the paper's order with the rule's move), the plan "I will try A." with A chosen by the one-step
 * rule on those true outcomes (frozen-lake.ts lookaheadChoice: goal > nearer ice > ice > edge > hole, ties at random), the
 * true state after A (with the env's own slip, as the drills), and the answer A. `choose` 'random': A uniformly at random
 * instead (the lookahead drills, selfplay.drillLookahead, whose move is never trained). FrozenLake only (EnvError otherwise);
 * one action per turn. Returns the full reply including the forced "<think>".
 */
export function lookaheadResponse(
  session: EpisodeSession, rng: Rng, choose: 'rule' | 'random' = 'rule', form: 'cells' | 'grids' | 'none' = 'cells',
): string {
  if (session.responseFormat !== 'world-model')
    throw new Error(`lookaheadResponse: the lookahead reply is a world-model reply; the session's format is ${session.responseFormat}`);
  const outcomes = frozenLakeLookahead(session.env.board());
  const action = choose === 'rule' ? lookaheadChoice(outcomes, () => rng.next()) : outcomes[rng.int(outcomes.length)]!.action;
  const candidates = form === 'cells' ? `${lookaheadLine(outcomes)}\n`
    : form === 'grids' ? `${lookaheadGrids(outcomes.map((o) => ({ action: o.action, state: intendedState(session, o.action) })))}\n` : '';
  const next = session.simulate([action]);
  return `<think><observation>\n${session.stateText()}\n</observation>\n${candidates}I will try ${action}.\n` +
    `<prediction>\n${next.text}\n</prediction></think><answer>${action}</answer>`;
}

/** The state text after `action`'s intended move on FrozenLake (no slip), without disturbing the episode. */
function intendedState(session: EpisodeSession, action: string): string {
  const saved = session.env.getState() as { options?: Record<string, unknown> };
  try {
    session.env.setState({ ...saved, options: { ...saved.options, isSlippery: false } } as never);
    session.env.step(action);
    return session.stateText();
  } finally {
    session.env.setState(saved as never);
  }
}
