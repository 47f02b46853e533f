import { describe, expect, it } from 'vitest';
import { parseResponse, stateSpans, turnPenalty } from '../../core/prompts/index.js';

const LEGAL = ['Up', 'Down', 'Left', 'Right'];
const wm = { legalActions: LEGAL, responseFormat: 'world-model' as const, maxActionsPerTurn: 5 };

describe('parseResponse', () => {
  it('parses a well-formed world-model response', () => {
    const p = parseResponse('<think><observation>\n#P#\n</observation> push it <prediction>#_P#</prediction></think><answer>Up || Left</answer>', wm);
    expect(p).toEqual({
      observation: '#P#', reasoning: 'push it', prediction: '#_P#', answer: 'Up || Left',
      actions: ['Up', 'Left'], unknownActions: [], formatError: false, formatErrors: [],
    });
    expect(turnPenalty(p)).toBe(0);
  });

  it('plain format: no observation/prediction needed; reasoning is the think content', () => {
    const p = parseResponse('<think>go up</think><answer>up</answer>', { legalActions: LEGAL });
    expect(p.reasoning).toBe('go up');
    expect(p.actions).toEqual(['Up']);
    expect(p.formatError).toBe(false);
  });

  it('missing tags are format errors (with reasons) and cost −0.1', () => {
    const noAnswer = parseResponse('<think>hmm</think> Up', { legalActions: LEGAL });
    expect(noAnswer.formatError).toBe(true);
    expect(noAnswer.formatErrors).toContain('missing <answer>');
    expect(noAnswer.actions).toEqual([]);
    expect(turnPenalty(noAnswer)).toBe(-0.1);
    const noPrediction = parseResponse('<think><observation>x</observation></think><answer>Up</answer>', wm);
    expect(noPrediction.formatErrors).toEqual(['missing <prediction>']);
    expect(noPrediction.actions).toEqual(['Up']); // tolerant: the valid action still counts
    const unclosed = parseResponse('<think>a</think><answer>Up', { legalActions: LEGAL });
    expect(unclosed.formatErrors).toEqual(['missing </answer>']);
    expect(unclosed.actions).toEqual(['Up']);
  });

  it('order matters: observation before prediction, answer after think', () => {
    const swapped = parseResponse('<think><prediction>b</prediction><observation>a</observation></think><answer>Up</answer>', wm);
    expect(swapped.formatErrors).toContain('<observation> must come before <prediction>');
    const early = parseResponse('<answer>Up</answer><think>x</think>', { legalActions: LEGAL });
    expect(early.formatErrors).toContain('<answer> must come after </think>');
    const outside = parseResponse('<think>x</think><observation>a</observation><prediction>b</prediction><answer>Up</answer>', wm);
    expect(outside.formatErrors).toContain('<observation> must be inside <think>');
  });

  it('extra text is tolerated by default and an error in strict mode', () => {
    const text = 'Sure! <think>t</think> then <answer>Up</answer> done.';
    expect(parseResponse(text, { legalActions: LEGAL }).formatError).toBe(false);
    const strict = parseResponse(text, { legalActions: LEGAL, strict: true });
    expect(strict.formatErrors).toEqual(['text before <think>', 'text between </think> and <answer>', 'text after </answer>']);
  });

  it('mixed case tags and actions, || spacing, empty tokens', () => {
    const p = parseResponse('<THINK>x</Think><Answer>  uP||LEFT ||   right  || </ANSWER>', { legalActions: LEGAL });
    expect(p.actions).toEqual(['Up', 'Left', 'Right']);
    expect(p.formatError).toBe(false);
  });

  it('unknown actions are dropped and flagged; valid ones kept in order', () => {
    const p = parseResponse('<think>x</think><answer>Up || Jump || Left || north</answer>', { legalActions: LEGAL });
    expect(p.actions).toEqual(['Up', 'Left']);
    expect(p.unknownActions).toEqual(['Jump', 'north']);
    expect(p.formatError).toBe(false);
    expect(turnPenalty(p)).toBe(-0.1);
  });

  it('keeps at most N actions per turn', () => {
    const p = parseResponse('<think>x</think><answer>Up || Up || Up || Left || Left || Down || Right</answer>', { legalActions: LEGAL, maxActionsPerTurn: 5 });
    expect(p.actions).toEqual(['Up', 'Up', 'Up', 'Left', 'Left']);
    expect(turnPenalty(p)).toBe(0);
  });

  it('empty answer and duplicated blocks are format errors', () => {
    expect(parseResponse('<think>x</think><answer> </answer>', { legalActions: LEGAL }).formatErrors).toEqual(['no actions in <answer>']);
    expect(parseResponse('<think>x</think><answer>Up</answer><answer>Up</answer>', { legalActions: LEGAL }).formatErrors).toContain('more than one <answer> block');
  });

  it('Sudoku moves match regardless of spaces and parentheses', () => {
    const p = parseResponse('<think>x</think><answer>1, 1, 3 || (4,1,1) || 9,9,9</answer>', { legalActions: ['1,1,3', '4,1,1'] });
    expect(p.actions).toEqual(['1,1,3', '4,1,1']);
    expect(p.unknownActions).toEqual(['9,9,9']);
  });
});

describe('ground-truth replacement has one home', () => {
  it('core/prompts no longer exports the stale replaceWithGroundTruth copy (audit B11; use selfplay-data replaceStates)', async () => {
    const prompts = await import('../../core/prompts/index.js');
    expect(Object.keys(prompts)).not.toContain('replaceWithGroundTruth');
  });
  it('stateSpans gives the observation and prediction contents', () => {
    const text = '<think><observation>\n#P#\n</observation> I push. <prediction>\n#_#\n</prediction></think><answer>Up</answer>';
    expect(stateSpans(text).map((s) => text.slice(s.start, s.end))).toEqual(['\n#P#\n', '\n#_#\n']);
  });
});
