// The reply format in one place: the tags a model's reply uses (<think>, <observation>, <prediction>, <answer>), the prefix a
// turn's generation starts with, and the forced prefixes that make a model write only part of a reply (the action-conditioned
// prediction of the world-model check, the probe and the eval stage). The parser (response.ts), the session, the world-model
// check and the probe read them from here, so the format is changed in one file.
import { findBlock } from './response.js';

/** The reply tags, in the order a world-model reply writes them. */
export const REPLY_TAGS = ['think', 'observation', 'prediction', 'answer'] as const;
export type ReplyTag = (typeof REPLY_TAGS)[number];

export const openTag = (tag: ReplyTag): string => `<${tag}>`;
export const closeTag = (tag: ReplyTag): string => `</${tag}>`;

/** What every turn's generation starts with (the model continues after it). */
export const GENERATION_PREFIX = openTag('think');

/** The stop string of a forced prediction: generation ends when the prediction is closed. */
export const PREDICTION_STOP = closeTag('prediction');

/** The content of the first <tag>…</tag> block (or of an unclosed <tag>… to the end), less one newline each side; null when absent. */
export function tagText(text: string, tag: ReplyTag): string | null {
  const block = findBlock(text, tag);
  return block ? block.content.replace(/^\n/, '').replace(/\n$/, '') : null;
}

/**
 * The forced opening of an action-conditioned prediction: the turn's generation prefix, the observation written out, the
 * action(s) announced, and an open <prediction>, so the model writes only p(s' | s, a):
 * `<think><observation>\n…\n</observation>\nI will try Up.\n<prediction>\n`. With `candidateLine` (a lookahead reply: the
 * model's own line of each action's landing cell) it sits between the observation and the plan, as that reply writes it.
 */
export function actionGivenPrefix(generationPrefix: string, observation: string, actions: readonly string[], candidateLine?: string): string {
  const stated = `${openTag('observation')}\n${observation}\n${closeTag('observation')}\n${candidateLine ? `${candidateLine}\n` : ''}`;
  return `${generationPrefix}${stated}I will try ${actions.join(', ')}.\n${openTag('prediction')}\n`;
}

/** The forced opening up to the candidate line of a lookahead reply: `<think><observation>\n…\n</observation>\n`. */
export function observationPrefix(generationPrefix: string, observation: string): string {
  return `${generationPrefix}${openTag('observation')}\n${observation}\n${closeTag('observation')}\n`;
}

/**
 * The lookahead reply's candidate grids (ours, issue 34; selfplay.lookaheadForm 'grids'): each action on its own line as
 * "Action:", then the state its intended move gives, e.g. `Left:\n_P__\n…\nDown:\n…`; the same state text a prediction holds.
 */
export function lookaheadGrids(candidates: ReadonlyArray<{ action: string; state: string }>): string {
  if (candidates.length === 0) throw new Error('lookaheadGrids: expected at least one candidate');
  return candidates.map((c) => `${c.action}:\n${c.state.trim()}`).join('\n');
}

/**
 * Whether a text between the observation and the plan is a lookahead block: the candidate line ("Action C, Action C, …."; one
 * landing-cell character each) or candidate grids ("Action:" lines, each followed by state lines with no colon).
 */
export function isLookaheadLine(text: string): boolean {
  if (/^[A-Za-z]+ \S(, [A-Za-z]+ \S)*\.$/u.test(text)) return true;
  const lines = text.split('\n');
  return /^[A-Za-z]+:$/.test(lines[0] ?? '') && lines.length >= 2 && lines.every((l) => /^[A-Za-z]+:$/.test(l) || (l.length > 0 && !l.includes(':')));
}

/**
 * The lookahead reply's candidate line (ours, issue 34; not the paper's format): each action with the cell its intended move
 * lands on, in the env's action order, e.g. `Left O, Down _, Right G, Up #.` (O hole, _ ice, G goal, # the edge: the player
 * stays). It sits in the reasoning between </observation> and the plan, so the decision ("I will try A.") is written after
 * the predictions it can read; the parser sees an ordinary world-model reply.
 */
export function lookaheadLine(outcomes: ReadonlyArray<{ action: string; cell: string }>): string {
  if (outcomes.length === 0) throw new Error('lookaheadLine: expected at least one action outcome');
  return `${outcomes.map((o) => `${o.action} ${o.cell}`).join(', ')}.`;
}
