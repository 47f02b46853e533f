// Parsing model responses: `<think>…</think><answer>…</answer>` (plain) or
// `<think><observation>…</observation> … <prediction>…</prediction></think><answer>…</answer>`
// (world-model). Tolerant by default (extra text around the tags is allowed), strict on request.
// Actions are split on `||`, matched case-insensitively to the legal actions, unknown ones dropped,
// at most N kept. A turn with a format error or an unknown action gets the −0.1 penalty.
import type { ParsedResponse } from '../api/records.js';
import type { ResponseFormat } from './template.js';

export interface ParseOptions {
  legalActions: readonly string[];
  maxActionsPerTurn?: number;            // default 5
  responseFormat?: ResponseFormat;       // default 'plain'
  strict?: boolean;                      // text outside the tags is a format error (default false)
  separator?: string;                    // default '||'
}

export const FORMAT_PENALTY = -0.1;

interface TagHit { name: string; close: boolean; start: number; end: number }

const TAG = /<\s*(\/?)\s*(think|observation|prediction|answer)\s*>/gi;

function findTags(text: string): TagHit[] {
  const hits: TagHit[] = [];
  for (const m of text.matchAll(TAG)) hits.push({ name: m[2].toLowerCase(), close: m[1] === '/', start: m.index!, end: m.index! + m[0].length });
  return hits;
}

/** Content of the first <name>…</name> block (case-insensitive), with its offsets; null when absent. */
export function findBlock(
  text: string, name: string,
): { content: string; start: number; end: number; innerStart: number; innerEnd: number; closed: boolean } | null {
  const tags = findTags(text);
  const open = tags.find((t) => t.name === name && !t.close);
  if (!open) return null;
  const close = tags.find((t) => t.name === name && t.close && t.start >= open.end);
  if (!close) return { content: text.slice(open.end), start: open.start, end: text.length, innerStart: open.end, innerEnd: text.length, closed: false };
  return { content: text.slice(open.end, close.start), start: open.start, end: close.end, innerStart: open.end, innerEnd: close.start, closed: true };
}

/** Lower-case, remove whitespace and surrounding brackets/quotes: "( 1, 2 ,3 )" → "1,2,3", " UP " → "up". */
export function normalizeAction(token: string): string {
  return token.replace(/\s+/g, '').replace(/^[("'`[]+|[)"'`\].]+$/g, '').toLowerCase();
}

/** Parse a response into its spans and actions, with format-error flags. */
export function parseResponse(text: string, opts: ParseOptions): ParsedResponse {
  const format = opts.responseFormat ?? 'plain';
  const maxActions = opts.maxActionsPerTurn ?? 5;
  const separator = opts.separator ?? '||';
  const errors: string[] = [];
  const tags = findTags(text);
  const count = (name: string, close: boolean) => tags.filter((t) => t.name === name && t.close === close).length;

  for (const name of ['think', 'answer', ...(format === 'world-model' ? ['observation', 'prediction'] : [])]) {
    if (count(name, false) === 0) errors.push(`missing <${name}>`);
    else if (count(name, true) === 0) errors.push(`missing </${name}>`);
    else if (count(name, false) > 1 || count(name, true) > 1) errors.push(`more than one <${name}> block`);
  }
  const think = findBlock(text, 'think');
  const answer = findBlock(text, 'answer');
  const observation = findBlock(text, 'observation');
  const prediction = findBlock(text, 'prediction');
  if (think && answer && think.closed && answer.start < think.end) errors.push('<answer> must come after </think>');
  if (format === 'world-model') {
    if (observation && prediction && prediction.start < observation.start) errors.push('<observation> must come before <prediction>');
    for (const block of [['observation', observation], ['prediction', prediction]] as const) {
      if (block[1] && think && (block[1].start < think.innerStart || block[1].end > think.innerEnd)) errors.push(`<${block[0]}> must be inside <think>`);
    }
  }
  if (opts.strict) {
    if (think && text.slice(0, think.start).trim().length > 0) errors.push('text before <think>');
    if (think && answer && answer.start > think.end && text.slice(think.end, answer.start).trim().length > 0) errors.push('text between </think> and <answer>');
    if (answer && answer.closed && text.slice(answer.end).trim().length > 0) errors.push('text after </answer>');
  }

  let reasoning: string | null = null;
  if (think) {
    let inner = think.content;
    if (format === 'world-model' || observation || prediction) {
      // reasoning = think content without the observation and prediction blocks
      const local = [observation, prediction].filter((b): b is NonNullable<typeof b> => b !== null && b.start >= think.innerStart && b.end <= think.innerEnd)
        .sort((a, b) => b.start - a.start);
      for (const b of local) inner = inner.slice(0, b.start - think.innerStart) + inner.slice(b.end - think.innerStart);
    }
    reasoning = inner.trim();
  }

  const actions: string[] = [];
  const unknownActions: string[] = [];
  if (answer) {
    const legal = new Map(opts.legalActions.map((a) => [normalizeAction(a), a]));
    const tokens = answer.content.split(separator).map((t) => t.trim()).filter((t) => t.length > 0);
    if (tokens.length === 0) errors.push('no actions in <answer>');
    for (const token of tokens) {
      const hit = legal.get(normalizeAction(token));
      if (hit === undefined) unknownActions.push(token);
      else if (actions.length < maxActions) actions.push(hit);
    }
  }
  return {
    observation: observation ? observation.content.trim() : null,
    reasoning,
    prediction: prediction ? prediction.content.trim() : null,
    answer: answer ? answer.content.trim() : null,
    actions,
    unknownActions,
    formatError: errors.length > 0,
    formatErrors: errors,
  };
}

/** The −0.1 rule: a turn with a format error or an unknown action is penalised once. */
export function turnPenalty(parsed: ParsedResponse, penalty = FORMAT_PENALTY): number {
  return parsed.formatError || parsed.unknownActions.length > 0 ? penalty : 0;
}

/** Character spans of the observation and prediction contents (for masking them in SFT). */
export function stateSpans(text: string): { kind: 'observation' | 'prediction'; start: number; end: number }[] {
  const out: { kind: 'observation' | 'prediction'; start: number; end: number }[] = [];
  for (const kind of ['observation', 'prediction'] as const) {
    const b = findBlock(text, kind);
    if (b && b.closed) out.push({ kind, start: b.innerStart, end: b.innerEnd });
  }
  return out.sort((a, b) => a.start - b.start);
}

// Ground-truth replacement lives in the pipeline (core/train/selfplay-data.ts replaceStates), which keeps
// the model's own layout around the state; the old copy here forced "\n<state>\n" and was removed (audit B11).
