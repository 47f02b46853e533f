import { describe, expect, it } from 'vitest';
import { buildSftRows, replaceStates, structuralProblem } from '../../core/train/selfplay-data.js';
import { splitByGame } from '../../core/train/split.js';
import type { Board, EpisodeRecord, TurnRecord } from '../../core/api/records.js';

const board: Board = { env: 'frozenlake', rows: 1, cols: 3, cells: [['player', 'frozen', 'goal']] };
const good = '<think><observation>my guess</observation> move right <prediction>my next</prediction></think><answer>Right</answer>';

function turn(i: number, response: string): TurnRecord {
  return {
    turn: i, prompt: `Turn ${i + 1}: state`, response,
    parsed: { observation: null, reasoning: null, prediction: null, answer: null, actions: [], unknownActions: [], formatError: false, formatErrors: [] },
    stateBefore: { text: `TRUE${i}`, board }, stateAfter: { text: `TRUE${i + 1}`, board },
    observedBoard: null, predictedBoard: null, wm: { observation: null, prediction: null },
    actionsExecuted: ['Right'], reward: 0, flags: { formatError: false, invalidAction: false, actionIsEffective: true },
    tokens: { prompt: 10, response: 20 }, done: false,
  };
}

function episode(id: string, seed: number, responses: string[]): EpisodeRecord {
  return {
    id, runId: 'r', stage: 'selfplay', step: 0, env: 'frozenlake', envConfig: {}, seed, group: 0, sample: 0, templateHash: 'h',
    success: false, totalReward: 0, numTurns: responses.length, numActions: responses.length, formatErrors: 0, invalidActions: 0,
    terminated: false, truncated: true, initialState: { text: 'TRUE0', board }, turns: responses.map((r, i) => turn(i, r)), time: 0,
  };
}

describe('structural filter', () => {
  it('accepts the world-model format and names what is wrong otherwise', () => {
    expect(structuralProblem(good)).toBeNull();
    expect(structuralProblem('<answer>Right</answer>')).toBe('missing-think');
    expect(structuralProblem('<think>x</think>')).toBe('missing-answer');
    expect(structuralProblem('<think><prediction>a</prediction></think><answer>Up</answer>')).toBe('missing-observation');
    expect(structuralProblem('<think><observation>a</observation></think><answer>Up</answer>')).toBe('missing-prediction');
    expect(structuralProblem('<think><prediction>b</prediction><observation>a</observation></think><answer>Up</answer>')).toBe('wrong-order');
    expect(structuralProblem('<answer>Up</answer><think><observation>a</observation><prediction>b</prediction></think>')).toBe('wrong-order');
    expect(structuralProblem(good + good)).toBe('wrong-order');
  });
});

describe('ground-truth replacement', () => {
  it('replaces exactly the two state contents', () => {
    expect(replaceStates(good, 'S0', 'S1')).toBe('<think><observation>S0</observation> move right <prediction>S1</prediction></think><answer>Right</answer>');
  });
  it('keeps the layout around the states (the newlines the base writes), so SFT rows match the bootstrap format', () => {
    const reply = '<think><observation>\nguess\n</observation>\nI will try Up.\n<prediction>\nnext\n</prediction></think><answer>Up</answer>';
    expect(replaceStates(reply, '##\n#P', '##\nP#')).toBe('<think><observation>\n##\n#P\n</observation>\nI will try Up.\n<prediction>\n##\nP#\n</prediction></think><answer>Up</answer>');
    expect(replaceStates('<think><observation></observation><prediction> </prediction></think><answer>Up</answer>', 'A', 'B')).toBe('<think><observation>A</observation><prediction>B</prediction></think><answer>Up</answer>');
  });
  it('builds one row per kept turn with original and corrected side by side, counting drops', () => {
    const eps = [episode('e1', 1, [good, '<answer>Up</answer>', good]), episode('e2', 2, [good])];
    const out = buildSftRows(eps, { groundTruthReplacement: true, systemPrompt: 'sys' });
    expect(out.turns).toBe(4);
    expect(out.rows.length).toBe(3);
    expect(out.dropped['missing-think']).toBe(1);
    const row = out.rows[1]!;
    expect(row.id).toBe('e1-t2');
    expect(row.original).toBe(good);
    expect(row.corrected).toContain('<observation>TRUE2</observation>');
    expect(row.corrected).toContain('<prediction>TRUE3</prediction>');
    // history: system, then user/assistant pairs, earlier kept turn corrected, dropped turn original
    expect(row.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    expect(row.messages[2]!.content).toContain('TRUE0');
    expect(row.messages[4]!.content).toBe('<answer>Up</answer>');
    const selfBelief = buildSftRows(eps, { groundTruthReplacement: false });
    expect(selfBelief.rows[0]!.corrected).toBe(good);
    const split = splitByGame(out.rows, (r) => r.episodeId, 0.5, 0);
    expect(new Set(split.train.map((r) => r.episodeId)).size + new Set(split.val.map((r) => r.episodeId)).size).toBe(2);
  });
});

describe('plan alignment (selfplay.alignPlan)', () => {
  it('rewrites the reasoning as the plan of the answer\'s actions, after ground-truth replacement, only when asked', () => {
    const reply = '<think><observation>\nguess\n</observation>\nI will try Left, Up.\n<prediction>\nnext\n</prediction></think><answer>Right || Down</answer>';
    const ep = episode('e', 1, [reply]);
    ep.turns[0]!.parsed.actions = ['Right', 'Down'];
    const aligned = buildSftRows([ep], { groundTruthReplacement: true, alignPlan: true }).rows[0]!.corrected;
    expect(aligned).toBe('<think><observation>\nTRUE0\n</observation>\nI will try Right, Down.\n<prediction>\nTRUE1\n</prediction></think><answer>Right || Down</answer>');
    const plain = buildSftRows([ep], { groundTruthReplacement: true }).rows[0]!.corrected;
    expect(plain).toContain('I will try Left, Up.');
    // no actions parsed: the reasoning is left alone
    ep.turns[0]!.parsed.actions = [];
    expect(buildSftRows([ep], { groundTruthReplacement: true, alignPlan: true }).rows[0]!.corrected).toContain('I will try Left, Up.');
  });
});
