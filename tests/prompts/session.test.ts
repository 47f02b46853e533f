import { describe, expect, it } from 'vitest';
import { EpisodeRecordSchema, TurnRecordSchema } from '../../core/api/records.js';
import { createEnv, Rng } from '../../core/envs/index.js';
import { EpisodeSession, getTemplatePreset, randomWellFormedResponse } from '../../core/prompts/index.js';
import { replaceStates } from '../../core/train/selfplay-data.js';

const LEVEL = '#######\n#@ $ .#\n#######'; // Right, Right, Right solves it (push the box twice)

function sokobanSession(opts: Partial<ConstructorParameters<typeof EpisodeSession>[2]> = {}) {
  return new EpisodeSession(createEnv('sokoban', { level: LEVEL }), getTemplatePreset('spa'), { seed: 0, ...opts });
}

describe('EpisodeSession', () => {
  it('builds the chat skeleton: system, user(instruction + turn 1); forced <think>', () => {
    const s = sokobanSession();
    const m = s.messages();
    expect(m.map((x) => x.role)).toEqual(['system', 'user']);
    expect(m[1].content).toContain('You are solving the Sokoban puzzle.');
    expect(m[1].content).toContain('\nTurn 1:\nState:\n#######\n#P_X_O#\n#######\nPlayer (P) is at (1,1); box (X) is at (1,3); target (O) is at (1,5).\nYou have 10 actions left.');
    expect(s.generationPrefix()).toBe('<think>');
  });

  it('applies a reply: executes valid actions, rewards, true states, WM scores; next user message has Reward and Turn 2', () => {
    const s = sokobanSession();
    const before = s.stateText();
    const after = s.simulate(['Right', 'Right']).text;
    expect(s.stateText()).toBe(before); // simulate does not disturb the episode
    const t = s.applyResponse(`<observation>\n${before}\n</observation> push <prediction>\n${after}\n</prediction></think><answer>Right || Right</answer>`, { prompt: 100, response: 30 });
    expect(TurnRecordSchema.parse(t)).toBeTruthy();
    expect(t.response.startsWith('<think><observation>')).toBe(true);
    expect(t.actionsExecuted).toEqual(['Right', 'Right']);
    expect(t.reward).toBeCloseTo(-0.2);
    expect(t.stateAfter.text).toBe(after);
    expect(t.wm.observation!.exact).toBe(true);
    expect(t.wm.prediction!.exact).toBe(true);
    expect(t.flags).toEqual({ formatError: false, invalidAction: false, actionIsEffective: true });
    expect(t.tokens).toEqual({ prompt: 100, response: 30 });
    const m = s.messages();
    expect(m.map((x) => x.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(m[3].content.startsWith('Reward:\n-0.2\n\nTurn 2:\nState:\n#######\n#__PXO#')).toBe(true);
    expect(m[3].content).toContain('You have 8 actions left.');
    const t2 = s.applyResponse('<think><observation>?</observation><prediction>?</prediction></think><answer>Right</answer>');
    expect(t2.reward).toBeCloseTo(10.9);
    expect(t2.wm.observation!.parsed).toBe(false);
    expect(s.done).toBe(true);
    expect(s.success).toBe(true);
    expect(() => s.applyResponse('<think></think><answer>Left</answer>')).toThrow(/episode is over/);
    const record = s.toEpisodeRecord({ id: 'e1', runId: 'r1', stage: 'eval' });
    expect(EpisodeRecordSchema.parse(record)).toBeTruthy();
    expect(record).toMatchObject({ success: true, terminated: true, truncated: false, numTurns: 2, numActions: 3, formatErrors: 0, invalidActions: 0 });
    expect(record.totalReward).toBeCloseTo(10.7);
  });

  it('format error or unknown action: −0.1 once per turn; a reply that fails the format check executes nothing (RAGEN)', () => {
    const s = sokobanSession();
    const t = s.applyResponse('<think>no tags</think><answer>Right || Fly</answer>');
    expect(t.flags.formatError).toBe(true);     // world-model format needs observation and prediction
    expect(t.flags.invalidAction).toBe(true);
    expect(t.actionsExecuted).toEqual([]);
    expect(t.stateAfter.text).toBe(t.stateBefore.text);
    expect(t.reward).toBeCloseTo(-0.1);
    expect(t.observedBoard).toBeNull();
    // a well-formed reply with an unknown action still runs its valid actions
    const ok = sokobanSession().applyResponse('<think><observation>?</observation><prediction>?</prediction></think><answer>Right || Fly</answer>');
    expect(ok.flags.formatError).toBe(false);
    expect(ok.actionsExecuted).toEqual(['Right']);
  });

  it('executeOnFormatError runs the actions of a malformed reply (the old, laxer rule)', () => {
    const s = new EpisodeSession(createEnv('sokoban'), getTemplatePreset('spa'), { seed: 0, executeOnFormatError: true });
    const t = s.applyResponse('<think>no tags</think><answer>Right || Fly</answer>');
    expect(t.flags.formatError).toBe(true);
    expect(t.actionsExecuted.length).toBe(1);
  });

  it('formatCheck plain: a world-model session accepts think/answer replies and still scores states when present', () => {
    const s = new EpisodeSession(createEnv('sokoban'), getTemplatePreset('spa'), { seed: 0, formatCheck: 'plain' });
    const t = s.applyResponse('<think>no tags</think><answer>Right</answer>');
    expect(t.flags.formatError).toBe(false);
    expect(t.actionsExecuted.length).toBe(1);
    const s2 = new EpisodeSession(createEnv('sokoban'), getTemplatePreset('spa'), { seed: 0, formatCheck: 'plain' });
    const t2 = s2.applyResponse(`<think><observation>\n${s2.stateText()}\n</observation>x<prediction>?</prediction></think><answer>Right</answer>`);
    expect(t2.wm.observation!.exact).toBe(true);
  });

  it('budgets: at most N per turn, the game budget ends the episode (truncated), max turns', () => {
    const s = new EpisodeSession(createEnv('frozenlake', { isSlippery: false, map: ['SFFF', 'FFFF', 'FFFF', 'FFFG'] }), getTemplatePreset('raw-grid'),
      { seed: 0, maxActionsPerTurn: 2, maxActionsPerGame: 3, responseFormat: 'plain' });
    const t1 = s.applyResponse('<think>x</think><answer>Right || Left || Right || Left</answer>');
    expect(t1.actionsExecuted).toEqual(['Right', 'Left']);
    const t2 = s.applyResponse('<think>x</think><answer>Right || Right</answer>');
    expect(t2.actionsExecuted).toEqual(['Right']); // only 1 left in the game
    expect(s.done).toBe(true);
    const r = s.toEpisodeRecord({ id: 'x', runId: 'r', stage: 'rl' });
    expect(r).toMatchObject({ terminated: false, truncated: true, success: false, numActions: 3 });
    expect(t1.wm).toEqual({ observation: null, prediction: null });

    const turns = new EpisodeSession(createEnv('frozenlake', { isSlippery: false, map: ['SFFF', 'FFFF', 'FFFF', 'FFFG'] }), getTemplatePreset('raw-grid'), { seed: 0, maxTurns: 2 });
    turns.applyResponse('<think>x</think><answer>Up</answer>');
    expect(turns.done).toBe(false);
    turns.applyResponse('<think>x</think><answer>Up</answer>');
    expect(turns.done).toBe(true);
  });

  it('Sudoku defaults to 50 actions per game', () => {
    const s = new EpisodeSession(createEnv('sudoku'), getTemplatePreset('spa'), { seed: 1 });
    expect(s.maxActionsPerGame).toBe(50);
    expect(s.messages()[1].content).toContain('You have 50 actions left.');
  });

  it('slippery FrozenLake: simulate() predicts exactly what executing the actions does', () => {
    for (let seed = 0; seed < 20; seed++) {
      const s = new EpisodeSession(createEnv('frozenlake'), getTemplatePreset('spa'), { seed });
      const predicted = s.simulate(['Right', 'Down', 'Down']);
      const t = s.applyResponse('<think><observation>a</observation><prediction>b</prediction></think><answer>Right || Down || Down</answer>');
      expect(t.stateAfter.text).toBe(predicted.text);
    }
  });

  it('randomWellFormedResponse: well-formed, legal, observation and prediction exactly true; GT replacement is a no-op on it', () => {
    const rng = new Rng(9);
    for (const id of ['sokoban', 'frozenlake', 'sudoku']) {
      for (let seed = 0; seed < 5; seed++) {
        const s = new EpisodeSession(createEnv(id), getTemplatePreset('spa'), { seed });
        while (!s.done) {
          const reply = randomWellFormedResponse(s, rng);
          const t = s.applyResponse(reply);
          expect(t.flags.formatError).toBe(false);
          expect(t.flags.invalidAction).toBe(false);
          expect(t.wm.observation!.exact).toBe(true);
          expect(t.wm.prediction!.exact).toBe(true);
          expect(replaceStates(t.response, t.stateBefore.text, t.stateAfter.text)).toBe(t.response);
        }
        expect(EpisodeRecordSchema.safeParse(s.toEpisodeRecord({ id: 'a', runId: 'b', stage: 'selfplay' })).success).toBe(true);
      }
    }
  });
});
