// The chat layout of SPA's released SFT data and of RAGEN's PPO prompts (M5 of the interop check).
// The release writes its SFT rows from SPA_agent's ctx_manager (SPA @3848e68):
//   - prefix:  SPA_agent/ctx_manager.py:179-194 — the env instruction (env_instruction_add_worldmodel in
//              add_worldmodel mode), then "\nThe meaning of each symbol in the state is:\n<grid_vocab>" and
//              "\nYour available actions are:\n<names>\nYou can make up to N actions, separated by …\n";
//   - chat:    SPA_agent/ctx_manager.py:339-358 — system "You're a helpful assistant. ", one user message
//              holding the prefix and turn 1, then per turn the assistant reply and a user message
//              "Reward:\n<r>\n" to which the next "\nTurn k:\nState:\n…" is appended;
//   - rows:    SPA_agent/generate_sft_data.py:254-268 — one row per assistant message, prompt = every
//              message before it.
// RAGEN's PPO prompts (RAGEN @5eb79b8 ragen/llm_agent/ctx_manager.py:120-127, 248-263) are the same layout
// with env_instruction and the base format line; so an exported SFT row and the PPO prompt of the same
// game differ in the format line (as in the release) and in nothing else but the states.
// Pure: no fs; the exporter hands in the episodes.
import type { EpisodeRecord } from '../api/records.js';

export type RagenEnvId = 'sokoban' | 'frozenlake';
export type CtxMode = 'add_worldmodel' | 'base';
export interface ChatMessage { role: string; content: string }

/** grid_vocab of RAGEN's env configs in dict order (RAGEN @5eb79b8 ragen/env/sokoban/config.py:10, frozen_lake/config.py:21). */
export const RAGEN_GRID_VOCAB: Record<RagenEnvId, readonly (readonly [string, string])[]> = {
  sokoban: [['#', 'wall'], ['_', 'empty'], ['O', 'target'], ['√', 'box on target'], ['X', 'box'], ['P', 'player'], ['S', 'player on target']],
  frozenlake: [['P', 'player'], ['_', 'empty'], ['O', 'hole'], ['G', 'goal'], ['X', 'player in hole'], ['√', 'player on goal']],
};
/** action_lookup values in dict order (sokoban/config.py:11, frozen_lake/config.py:22). */
export const RAGEN_ACTION_NAMES: Record<RagenEnvId, readonly string[]> = {
  sokoban: ['Up', 'Down', 'Left', 'Right'],
  frozenlake: ['Left', 'Down', 'Right', 'Up'],
};

/** FORMAT_PROMPT with enable_think (SPA_agent/ctx_manager.py:349 add_worldmodel, :351 base = RAGEN ctx_manager.py:256). */
export const FORMAT_PROMPT: Record<CtxMode, string> = {
  add_worldmodel: '<think> <observation> [current state] </observation> [Your thoughts] <prediction> [next state]</prediction> </think> ' +
    '<answer> [your answer] </answer>',
  base: '<think> [Your thoughts] </think> <answer> [your answer] </answer>',
};
export const RAGEN_SYSTEM_PROMPT = "You're a helpful assistant. ";

/** The user-message prefix _init_prefix_lookup builds for an env tag (SPA_agent/ctx_manager.py:179-194). */
export function ragenPrefix(env: RagenEnvId, instruction: string, maxActionsPerTraj: number, actionSep = '||'): string {
  return instruction +
    '\nThe meaning of each symbol in the state is:\n' + RAGEN_GRID_VOCAB[env].map(([k, v]) => `${k}: ${v}`).join(', ') +
    '\nYour available actions are:\n' + RAGEN_ACTION_NAMES[env].join(', ') +
    `\nYou can make up to ${maxActionsPerTraj} actions, separated by the action separator " ${actionSep} "\n`;
}

/** A number as Python's str() writes it (repr of a float, or of the int 0 when no action ran: es_manager.py:131). */
export function pythonNumberText(x: number, isFloat: boolean): string {
  if (!isFloat && Number.isInteger(x)) return String(x);
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf';
  if (Number.isInteger(x) && Math.abs(x) < 1e16) return x.toFixed(1);
  const abs = Math.abs(x);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e16)) {
    // Python repr switches to exponent form below 1e-4; its exponent has at least two digits
    return x.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  }
  return String(x);
}

/** One turn of a game as RAGEN's es_manager history holds it. */
export interface RagenTurn {
  state: string;          // the state before the turn (the env's render())
  actionsLeft: number;    // max_actions_per_traj minus the actions executed so far (es_manager.py:148)
  response: string;       // the assistant reply kept in the history
  reward: number;         // the turn's accumulated reward
  actionsRun: number;     // actions executed this turn (0 → RAGEN's reward is the int 0)
}

/**
 * The chat get_lm_inputs builds for a game (prepare_for_update, so the last turn's reward is left out), as far as
 * `upto` assistant turns: the messages before assistant turn `upto` (0-based) when `upto` < turns.length.
 */
export function ragenChat(prefix: string, turns: readonly RagenTurn[], opts: { mode: CtxMode; maxTokens: number; upto?: number }): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'system', content: RAGEN_SYSTEM_PROMPT }, { role: 'user', content: prefix }];
  const last = turns.length - 1;
  const upto = opts.upto ?? turns.length;
  for (let idx = 0; idx < turns.length && idx <= upto; idx++) {
    const t = turns[idx]!;
    messages[messages.length - 1]!.content += `\nTurn ${idx + 1}:\n`;
    messages[messages.length - 1]!.content += `State:\n${t.state}\nYou have ${t.actionsLeft} actions left. Always output: ${FORMAT_PROMPT[opts.mode]} ` +
      `with no extra text. Strictly follow this format. Max response length: ${opts.maxTokens} words (tokens).\n`;
    if (idx === upto) break;
    messages.push({ role: 'assistant', content: t.response });
    if (idx !== last) messages.push({ role: 'user', content: `Reward:\n${pythonNumberText(t.reward, t.actionsRun > 0)}\n` });
  }
  return messages;
}

/** RAGEN history turns of a workbench episode, with the replies the SFT data keeps (corrected where kept, else the model's own). */
export function ragenTurnsOf(episode: EpisodeRecord, replies: readonly string[], maxActionsPerTraj: number): RagenTurn[] {
  let used = 0;
  return episode.turns.map((t, i) => {
    const turn: RagenTurn = { state: t.stateBefore.text, actionsLeft: maxActionsPerTraj - used, response: replies[i] ?? t.response, reward: t.reward,
      actionsRun: t.actionsExecuted.length };
    used += t.actionsExecuted.length;
    return turn;
  });
}
