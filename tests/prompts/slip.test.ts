// A slip on a slippery lake is recorded on the turn where it happened (issue 37 item 2): the env
// reports the executed move and the board the intended move would have given; the turn record
// carries both and scores the prediction against the intended outcome as well as the truth.
import { describe, expect, it } from 'vitest';
import { TurnRecordSchema } from '../../core/api/records.js';
import { createEnv } from '../../core/envs/index.js';
import { EpisodeSession, getTemplatePreset } from '../../core/prompts/index.js';

// every move slips (successRate 0): from the centre, Up goes Left or Right
const LAKE = { isSlippery: true, successRate: 0, map: ['FFF', 'FSF', 'FFG'] };

describe('slips', () => {
  it('the env reports the executed move and the intended outcome\'s board', () => {
    const env = createEnv('frozenlake', LAKE);
    env.reset({ seed: 3 });
    const r = env.step('Up');
    expect(r.info['slipped']).toBe(true);
    expect(['Left', 'Right']).toContain(r.info['movedDirection']);
    const intended = r.info['intendedBoard'] as { cells: string[][] };
    expect(intended.cells[0]![1]).toBe('player');                 // Up from (1,1) → (0,1)
    expect(env.board().cells[0]![1]).toBe('frozen');              // the player is not there
    const noSlip = createEnv('frozenlake', { ...LAKE, isSlippery: false });
    noSlip.reset({ seed: 3 });
    const d = noSlip.step('Up');
    expect(d.info['slipped']).toBe(false);
    expect(d.info['intendedBoard']).toBeUndefined();
  });

  it('the turn record marks the slip and says the prediction matched the intended outcome', () => {
    const s = new EpisodeSession(createEnv('frozenlake', LAKE), getTemplatePreset('raw-grid'), { seed: 3 });
    const before = s.stateText();
    const intendedText = before.split('\n').map((row, r) => (r === 0 ? '_P_' : r === 1 ? '___' : row)).join('\n');
    const t = s.applyResponse(`<think><observation>\n${before}\n</observation> up <prediction>\n${intendedText}\n</prediction></think><answer>Up</answer>`);
    expect(TurnRecordSchema.parse(t)).toBeTruthy();
    expect(t.slip?.moves).toEqual([{ action: 0, intended: 'Up', executed: expect.stringMatching(/^(Left|Right)$/) }]);
    expect(t.wm.prediction!.exact).toBe(false);                   // scored against the truth: wrong
    expect(t.slip!.predictionVsIntended!.exact).toBe(true);       // against the intended outcome: right
    expect(t.slip!.intendedBoard!.cells[0]![1]).toBe('player');
    // a deterministic lake records no slip
    const d = new EpisodeSession(createEnv('frozenlake', { ...LAKE, isSlippery: false }), getTemplatePreset('raw-grid'), { seed: 3 });
    expect(d.applyResponse('<think><observation>?</observation><prediction>?</prediction></think><answer>Up</answer>').slip).toBeUndefined();
  });
});
