// Self-play data: from played episodes to SFT rows. Per assistant turn:
//   1. structural filter — think before answer, observation and prediction present, in order
//      (<think><observation>…</observation> … <prediction>…</prediction></think><answer>…</answer>);
//      dropped turns are counted by reason, never silently lost;
//   2. ground-truth replacement — observation ← true state before the turn, prediction ← true
//      state after the turn's actions, both rendered with the run's template (TurnRecord.stateBefore/After.text);
//      the self-belief ablation keeps the model's own states; with `alignPlan` the reasoning is
//      also rewritten as the plan of the answer's actions (alignPlan below);
//   3. one row per kept turn, with the original and corrected text side by side;
//   4. split by whole game (core/train/split.ts).
import type { EpisodeRecord } from '../api/records.js';

export type DropReason = 'missing-think' | 'missing-answer' | 'missing-observation' | 'missing-prediction' | 'wrong-order' | 'replacement-failed';

const ORDER = ['<think>', '<observation>', '</observation>', '<prediction>', '</prediction>', '</think>', '<answer>', '</answer>'] as const;

/** The structural filter: null when the response is well formed, else the first reason it is not. */
export function structuralProblem(response: string): DropReason | null {
  const positions = ORDER.map((tag) => response.indexOf(tag));
  const [think, obs, obsEnd, pred, predEnd, thinkEnd, answer, answerEnd] = positions as [number, number, number, number, number, number, number, number];
  if (think < 0 || thinkEnd < 0) return 'missing-think';
  if (answer < 0 || answerEnd < 0) return 'missing-answer';
  if (obs < 0 || obsEnd < 0) return 'missing-observation';
  if (pred < 0 || predEnd < 0) return 'missing-prediction';
  for (let i = 1; i < positions.length; i++) if (positions[i]! < positions[i - 1]!) return 'wrong-order';
  // each tag exactly once
  for (const tag of ORDER) if (response.indexOf(tag, response.indexOf(tag) + 1) >= 0) return 'wrong-order';
  return null;
}

/** Replace the observation and prediction contents (one of each, well formed) by the given texts. */
export function replaceStates(response: string, observation: string, prediction: string): string {
  const swap = (text: string, tag: string, content: string): string => {
    const open = `<${tag}>`, close = `</${tag}>`;
    const a = text.indexOf(open), b = text.indexOf(close, a + open.length);
    if (a < 0 || b < 0) throw new Error(`replaceStates: expected one <${tag}>…</${tag}> in the response; received ${JSON.stringify(text.slice(0, 120))}`);
    // keep the model's own whitespace around the state (e.g. "<observation>\n…\n</observation>"):
    // replacement corrects the state, not the layout the base writes
    const inner = text.slice(a + open.length, b);
    const [lead, trail] = inner.trim() ? [/^\s*/.exec(inner)![0], /\s*$/.exec(inner)![0]] : ['', ''];
    return text.slice(0, a + open.length) + lead + content.trim() + trail + text.slice(b);
  };
  return swap(swap(response, 'observation', observation), 'prediction', prediction);
}

/**
 * The reasoning between </observation> and <prediction> rewritten as the plan of the actions the
 * answer gave ("I will try A, B."; the tiny templates' and the bootstrap's plan sentence), so the
 * prediction that follows is the effect of the plan written before it. Without it a tiny base,
 * which does not tie its <answer> to its plan, gives SFT next states that depend on actions
 * written only after the prediction.
 */
export function alignPlan(response: string, actions: readonly string[]): string {
  const a = response.indexOf('</observation>'), b = response.indexOf('<prediction>', a);
  if (a < 0 || b < 0 || actions.length === 0) return response;
  return `${response.slice(0, a + '</observation>'.length)}\nI will try ${actions.join(', ')}.\n${response.slice(b)}`;
}

export interface SftRowData {
  id: string;                 // "<episodeId>-t<turn>"
  episodeId: string;
  seed: number;
  turn: number;
  messages: Array<{ role: string; content: string }>; // conversation up to and including this turn (history corrected too)
  prompt: string;             // the user message of this turn
  original: string;           // the model's own response
  corrected: string;          // observation/prediction replaced by the truth (or = original for self-belief)
  success: boolean;           // the game was solved (failures are kept)
}

export interface BuildRowsResult {
  rows: SftRowData[];
  turns: number;
  dropped: Record<DropReason, number>;
}

/**
 * Rows from episodes. `systemAndFirst(ep)` gives the messages before the first turn's user message
 * content (system line); each turn's prompt is TurnRecord.prompt. The history of earlier turns
 * uses the corrected texts of kept turns and the original text of dropped ones.
 */
export function buildSftRows(
  episodes: EpisodeRecord[],
  opts: { groundTruthReplacement: boolean; alignPlan?: boolean; systemPrompt?: string; rewardMessage?: (reward: number) => string },
): BuildRowsResult {
  const dropped: Record<DropReason, number> = {
    'missing-think': 0,
    'missing-answer': 0,
    'missing-observation': 0,
    'missing-prediction': 0,
    'wrong-order': 0,
    'replacement-failed': 0,
  };
  const rows: SftRowData[] = [];
  let turns = 0;
  for (const ep of episodes) {
    const history: Array<{ role: string; content: string }> = opts.systemPrompt ? [{ role: 'system', content: opts.systemPrompt }] : [];
    for (const turn of ep.turns) {
      turns++;
      history.push({ role: 'user', content: turn.prompt });
      const problem = structuralProblem(turn.response);
      let corrected = turn.response;
      if (problem) {
        dropped[problem]++;
      } else {
        try {
          corrected = opts.groundTruthReplacement ? replaceStates(turn.response, turn.stateBefore.text, turn.stateAfter.text) : turn.response;
          if (opts.alignPlan) corrected = alignPlan(corrected, turn.parsed.actions);
          rows.push({
            id: `${ep.id}-t${turn.turn}`,
            episodeId: ep.id,
            seed: ep.seed,
            turn: turn.turn,
            messages: [...history, { role: 'assistant', content: corrected }],
            prompt: turn.prompt,
            original: turn.response,
            corrected,
            success: ep.success,
          });
        } catch {
          dropped['replacement-failed']++;
        }
      }
      history.push({ role: 'assistant', content: corrected });
      if (opts.rewardMessage && !turn.done) history.push({ role: 'user', content: opts.rewardMessage(turn.reward) });
    }
  }
  return { rows, turns, dropped };
}
