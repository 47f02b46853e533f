// RAGEN / SPA rollouts → the workbench's EpisodeRecord, turn by turn. Three sources, best first:
//   1. recorder JSONL (resources/interop/ragen_recorder.py): RAGEN's per-env history, unchanged —
//      state before/after each turn, raw response, executed actions, reward, info flags, seed, group;
//   2. chats: SPA's stage-1 raw_trajectories_*.json ({id, messages_list}) and the W&B
//      `val/generations` table (whole decoded chats, re-split on the role lines and the
//      "Turn k:" / "State:" / "Reward:" markers RAGEN's ctx_manager writes);
// Boards come from RAGEN's symbols (Sokoban `# _ O √ X P S`, FrozenLake `P _ O G X √`), parsed by
// the workbench's own parseStateText, so an imported trace is drawn like a native one.
import type { Board, EpisodeRecord, StateSnapshot, TurnRecord } from '../api/records.js';
import { WorkbenchError } from '../api/errors.js';
import { describeEnv } from '../envs/index.js';
import { parseResponse, parseStateText, scoreWorldModel } from '../prompts/index.js';

export const RECORDER_FORMAT = 'spa-workbench.ragen-recorder';

/** A bad input: names the file, the line (one-based; 0 = the whole file) and the field. */
export function importError(file: string, line: number, field: string, message: string, expected?: string, received?: unknown): WorkbenchError {
  const where = `${file}${line > 0 ? `:${line}` : ''}${field ? ` ${field}` : ''}`;
  return new WorkbenchError('ValidationError', `${where}: ${message}`, {
    where, ...(expected ? { expected } : {}), ...(received !== undefined ? { received: JSON.stringify(received)?.slice(0, 200) ?? String(received) } : {}),
  });
}

const SYMBOLS: Record<string, string> = { sokoban: '#_OX√PS', frozenlake: 'P_OGX√' };

/** Workbench env id from RAGEN's env_type or tag; null when neither names Sokoban or FrozenLake. */
export function envFromRagen(envType: unknown, tag: unknown): 'sokoban' | 'frozenlake' | null {
  const s = `${typeof envType === 'string' ? envType : ''} ${typeof tag === 'string' ? tag : ''}`.toLowerCase();
  if (s.includes('sokoban')) return 'sokoban';
  if (s.includes('frozen')) return 'frozenlake';
  return null;
}

/** The symbol grid at the start of a state text (the coordinate line after it is left out). */
export function gridPart(env: string, text: string): string {
  const allowed = SYMBOLS[env] ?? '';
  const lines: string[] = [];
  for (const line of text.replace(/^\n+/, '').split('\n')) {
    const t = line.trimEnd();
    if (t.length === 0 || [...t].some((ch) => !allowed.includes(ch))) break;
    lines.push(t);
  }
  return lines.join('\n');
}

function snapshot(env: string, text: string, file: string, line: number, field: string): StateSnapshot {
  const grid = gridPart(env, text);
  const board = grid ? parseStateText(env, grid) : null;
  if (!board) throw importError(file, line, field, `no ${env} symbol grid at the start of the state text`, `rows of ${SYMBOLS[env]}`, text.slice(0, 80));
  return { text, board };
}

function predicted(env: string, text: string | null, truth: Board): Board | null {
  if (text === null) return null;
  const grid = gridPart(env, text.trim());
  return parseStateText(env, grid || text, undefined, truth);
}

interface TurnInput {
  stateBefore: StateSnapshot; stateAfter: StateSnapshot; prompt: string; response: string;
  actions: string[] | null; reward: number; actionIsValid: boolean | null; actionIsEffective: boolean | null; done: boolean;
}

function makeTurn(env: string, index: number, t: TurnInput): TurnRecord {
  const legalActions = describeEnv(env).actions;
  const worldModel = t.response.includes('<observation>') || t.response.includes('<prediction>');
  const parsed = parseResponse(t.response, { legalActions, responseFormat: worldModel ? 'world-model' : 'plain' });
  const observedBoard = predicted(env, parsed.observation, t.stateBefore.board);
  const predictedBoard = predicted(env, parsed.prediction, t.stateAfter.board);
  const actions = t.actions ?? parsed.actions;
  return {
    turn: index, prompt: t.prompt, response: t.response, parsed,
    stateBefore: t.stateBefore, stateAfter: t.stateAfter, observedBoard, predictedBoard,
    wm: {
      observation: parsed.observation !== null ? scoreWorldModel(observedBoard, t.stateBefore.board) : null,
      prediction: parsed.prediction !== null ? scoreWorldModel(predictedBoard, t.stateAfter.board) : null,
    },
    actionsExecuted: actions, reward: t.reward,
    flags: {
      formatError: parsed.formatError,
      invalidAction: t.actionIsValid === null ? parsed.unknownActions.length > 0 : !t.actionIsValid,
      actionIsEffective: t.actionIsEffective ?? t.stateBefore.text !== t.stateAfter.text,
    },
    tokens: { prompt: 0, response: 0 },   // token counts are not recorded by RAGEN
    done: t.done,
  };
}

export interface EpisodeMetaInput {
  runId: string; id: string; stage: string; step: number; env: string; envConfig: Record<string, unknown>;
  seed: number; group: number; sample: number; success: boolean | null; penalty: number; terminated: boolean | null; truncated: boolean | null; time: number;
}

function episodeOf(meta: EpisodeMetaInput, initialState: StateSnapshot, turns: TurnRecord[]): EpisodeRecord {
  const lastDone = turns.length > 0 && turns[turns.length - 1]!.done;
  const finalCells = turns.length > 0 ? turns[turns.length - 1]!.stateAfter.board.cells.flat() : initialState.board.cells.flat();
  // without a recorded outcome: Sokoban is solved when no box is off target, FrozenLake when the player stands on the goal
  const solved = meta.env === 'sokoban' ? !finalCells.includes('box') : finalCells.includes('playerOnGoal');
  const success = meta.success ?? solved;
  return {
    id: meta.id, runId: meta.runId, stage: meta.stage, step: meta.step, env: meta.env, envConfig: meta.envConfig,
    seed: meta.seed, group: meta.group, sample: meta.sample, templateHash: 'ragen', success,
    totalReward: turns.reduce((a, t) => a + t.reward, 0) + meta.penalty, numTurns: turns.length,
    numActions: turns.reduce((a, t) => a + t.actionsExecuted.length, 0),
    formatErrors: turns.filter((t) => t.flags.formatError).length, invalidActions: turns.filter((t) => t.flags.invalidAction).length,
    terminated: meta.terminated ?? lastDone, truncated: meta.truncated ?? !success,
    initialState, turns, time: meta.time,
  };
}

// ───────────── 1. recorder JSONL ─────────────

/** RAGEN's action ids (the `action_lookup` of ragen/env/sokoban/config.py and ragen/env/frozen_lake/config.py:22 @5eb79b8). */
export const RAGEN_ACTION_IDS: Record<'sokoban' | 'frozenlake', Record<number, string>> = {
  sokoban: { 1: 'Up', 2: 'Down', 3: 'Left', 4: 'Right' },
  frozenlake: { 1: 'Left', 2: 'Down', 3: 'Right', 4: 'Up' },
};

/** A history entry's executed actions: RAGEN logs the ids (es_manager.py:153,257-267), older recorders the names. */
function actionNames(env: 'sokoban' | 'frozenlake', actions: unknown, file: string, line: number, field: string): string[] {
  if (!Array.isArray(actions)) throw importError(file, line, field, 'expected a list of action ids or names', 'number[] | string[]', actions);
  return actions.map((a, k) => {
    if (typeof a === 'string') return a;
    if (typeof a === 'number' && Number.isInteger(a) && RAGEN_ACTION_IDS[env][a] !== undefined) return RAGEN_ACTION_IDS[env][a]!;
    throw importError(file, line, `${field}[${k}]`, `expected a RAGEN ${env} action id (${Object.keys(RAGEN_ACTION_IDS[env]).join(', ')}) or an action name`,
      'integer 1-4 | string', a);
  });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One recorder line → an episode. `sample` is the index of this env within its group in the file. */
export function episodeFromRecorderLine(value: unknown, file: string, line: number, runId: string, sample: number, time: number): EpisodeRecord {
  if (!isObject(value)) throw importError(file, line, '', 'expected a JSON object (one recorder record per line)', 'object', value);
  if (value.format !== RECORDER_FORMAT) throw importError(file, line, 'format', `expected "${RECORDER_FORMAT}"`, RECORDER_FORMAT, value.format);
  if (value.version !== 1) throw importError(file, line, 'version', 'unsupported recorder version', '1', value.version);
  const env = envFromRagen(value.env_type, value.tag);
  if (!env) throw importError(file, line, 'env_type', 'neither env_type nor tag names a Sokoban or FrozenLake env',
    'sokoban | frozen_lake | workbench_*', value.env_type ?? value.tag);
  const step = value.step;
  if (typeof step !== 'number' || !Number.isInteger(step)) throw importError(file, line, 'step', 'expected an integer step', 'integer', step);
  const history = value.history;
  if (!Array.isArray(history) || history.length < 1) throw importError(file, line, 'history', 'expected a non-empty list of history entries', 'array', history);
  history.forEach((h, i) => {
    if (!isObject(h)) throw importError(file, line, `history[${i}]`, 'expected an object', 'object', h);
    if (typeof h.state !== 'string') throw importError(file, line, `history[${i}].state`, 'expected the state text (a string)', 'string', h.state);
    if (i < history.length - 1) {
      if (typeof h.reward !== 'number') throw importError(file, line, `history[${i}].reward`,
        'expected a number (every entry but the last is a played turn)', 'number', h.reward);
      if (!Number.isFinite(h.reward)) throw importError(file, line, `history[${i}].reward`, `the reward is ${h.reward}; an episode's total reward ` +
        'must be a finite number to be stored and queried', 'a finite number', String(h.reward));
      h.actions = actionNames(env, h.actions, file, line, `history[${i}].actions`);
      const response = h.llm_raw_response ?? h.llm_response;
      if (typeof response !== 'string') throw importError(file, line, `history[${i}].llm_raw_response`, 'expected the model response (a string)',
        'string', response);
    }
  });
  const entries = history as Array<Record<string, unknown>>;
  const snaps = entries.map((h, i) => snapshot(env, h.state as string, file, line, `history[${i}].state`));
  const turns: TurnRecord[] = [];
  for (let t = 0; t < entries.length - 1; t++) {
    const h = entries[t]!;
    const info = isObject(h.info) ? h.info : {};
    turns.push(makeTurn(env, t, {
      stateBefore: snaps[t]!, stateAfter: snaps[t + 1]!,
      prompt: `Turn ${t + 1}:\nState:\n${h.state as string}\nYou have ${typeof h.actions_left === 'number' ? h.actions_left : '?'} actions left.`,
      response: String(h.llm_raw_response ?? h.llm_response), actions: h.actions as string[], reward: h.reward as number,
      actionIsValid: typeof info.action_is_valid === 'boolean' ? info.action_is_valid : null,
      actionIsEffective: typeof info.action_is_effective === 'boolean' ? info.action_is_effective : null,
      done: t === entries.length - 2,
    }));
  }
  const tag = typeof value.tag === 'string' ? value.tag : '';
  const metrics = isObject(value.metrics) ? value.metrics : {};
  const successMetric = metrics[`${tag}/success`];
  const seed = typeof value.seed === 'number' && Number.isInteger(value.seed) ? value.seed : -1;
  const group = typeof value.group_id === 'number' ? value.group_id : 0;
  const envId = typeof value.env_id === 'number' ? value.env_id : line - 1;
  const split = typeof value.split === 'string' && /^[a-z]+$/.test(value.split) ? value.split : 'val';
  return episodeOf({
    runId, id: `${split}-${String(step).padStart(6, '0')}-e${envId}`, stage: split, step, env,
    envConfig: isObject(value.env_config) ? { ragenTag: tag, ...value.env_config } : { ragenTag: tag },
    seed, group, sample, success: typeof successMetric === 'number' && !Number.isNaN(successMetric) ? successMetric > 0 : null,
    penalty: finitePenalty(value.penalty, file, line),
    terminated: typeof value.terminated === 'boolean' ? value.terminated : null,
    truncated: typeof value.truncated === 'boolean' ? value.truncated : null, time,
  }, snaps[0]!, turns);
}

/** The recorder's penalty: 0 when absent; a non-finite one is refused (it would make the total reward unstorable). */
function finitePenalty(v: unknown, file: string, line: number): number {
  if (typeof v !== 'number') return 0;
  if (!Number.isFinite(v)) throw importError(file, line, 'penalty', `the penalty is ${v}; it must be a finite number`, 'a finite number', String(v));
  return v;
}

// ───────────── 2. chats (stage-1 raw trajectories, W&B tables) ─────────────

export interface ChatMessageIn { role: string; content: string }

const TURN_STATE = /Turn (\d+):\nState:\n([\s\S]*?)\nYou have (\d+) actions? left/g;
const REWARD = /^Reward:\n(-?[\d.eE+-]+)/;

/** The turns of a RAGEN chat: per assistant message, the state shown before it and the reward after it. */
export function episodeFromChat(messages: ChatMessageIn[], where: { file: string; line: number; field: string }, meta: Omit<EpisodeMetaInput,
  'success' | 'penalty' | 'terminated' | 'truncated' | 'env' | 'envConfig'> & { env: string | null }): EpisodeRecord {
  const states: { state: string; actionsLeft: number; messageIndex: number }[] = [];
  messages.forEach((m, i) => {
    if (m.role !== 'user') return;
    for (const hit of m.content.matchAll(TURN_STATE)) states.push({ state: hit[2]!, actionsLeft: Number(hit[3]), messageIndex: i });
  });
  if (states.length === 0) throw importError(where.file, where.line, where.field,
    'no "Turn k:\\nState:\\n…\\nYou have N actions left" block in the user messages; not a RAGEN chat', 'a RAGEN multi-turn chat');
  const env = meta.env ?? (states[0]!.state.includes('#') ? 'sokoban' : 'frozenlake');
  const assistants = messages.map((m, i) => ({ m, i })).filter(({ m }) => m.role === 'assistant');
  if (assistants.length === 0) throw importError(where.file, where.line, where.field, 'the chat has no assistant message', 'at least one assistant turn');
  const snaps = states.map((s, k) => snapshot(env, s.state, where.file, where.line, `${where.field} turn ${k + 1} state`));
  const turns: TurnRecord[] = [];
  assistants.forEach(({ m, i }, t) => {
    const before = snaps[t];
    if (!before) return;   // an assistant message after the last state (none in RAGEN chats)
    let after = snaps[t + 1];
    if (!after) {
      // the last turn: SPA's stage-1 chats have the true next state inside <prediction> (ground-truth replaced)
      const pred = /<prediction>([\s\S]*?)<\/prediction>/.exec(m.content)?.[1]?.trim();
      const grid = pred ? gridPart(env, pred) : '';
      after = grid && parseStateText(env, grid) ? { text: pred!, board: parseStateText(env, grid)! } : before;
    }
    const next = messages[i + 1];
    const reward = next && next.role === 'user' ? REWARD.exec(next.content) : null;
    if (reward && !Number.isFinite(Number(reward[1]))) throw importError(where.file, where.line, `${where.field} turn ${t + 1} reward`,
      'the reward is not a finite number (too large for a double, or malformed)', 'a finite number', reward[1]);
    turns.push(makeTurn(env, t, {
      stateBefore: before, stateAfter: after, prompt: messages[states[t]!.messageIndex]!.content,
      response: m.content.startsWith('<think>') ? m.content : `<think>${m.content}`, actions: null,
      reward: reward ? Number(reward[1]) : 0, actionIsValid: null, actionIsEffective: null, done: t === Math.min(assistants.length, snaps.length) - 1,
    }));
  });
  return episodeOf({ ...meta, env, envConfig: {}, success: null, penalty: 0, terminated: null, truncated: null }, snaps[0]!, turns);
}

/** A decoded chat without role markers (W&B val/generations `output_i`): split on the role lines Qwen's template leaves. */
export function splitDecodedChat(text: string): ChatMessageIn[] {
  const out: ChatMessageIn[] = [];
  const re = /(^|\n)(system|user|assistant)\n/g;
  let last: { role: string; start: number } | null = null;
  for (const hit of text.matchAll(re)) {
    const start = hit.index! + hit[0].length;
    if (last) out.push({ role: last.role, content: text.slice(last.start, hit.index!) });
    last = { role: hit[2]!, start };
  }
  if (last) out.push({ role: last.role, content: text.slice(last.start).replace(/\n$/, '') });
  return out;
}
