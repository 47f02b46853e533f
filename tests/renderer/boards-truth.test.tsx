// @vitest-environment jsdom
// Boards that tell the truth (issue 37 item 2): the true state is drawn solid and the prediction
// only as a small inset in the cells where it differs (never painted over the truth, nor faded
// into it); a slip is marked on the turn where the env slipped, and the prediction's score says
// whether it matched the intended outcome.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import type { Board as BoardData, EpisodeRecord, TurnRecord, WmScore } from '../../core/api/records.js';
import Board from '../../renderer/src/boards/Board.js';
import { episodeFrames, slipScoreText, slipText } from '../../renderer/src/boards/replay-frames.js';
import { boardFromSymbols } from '../../renderer/src/boards/sample-boards.js';
import { BoardLegend } from '../../renderer/src/boards/board-legend.js';

afterEach(cleanup);

const lake = (rows: string[]): BoardData => boardFromSymbols('frozenlake', rows);
const score = (wrong: Array<[number, number]>): WmScore => ({ parsed: true, exact: wrong.length === 0, cellAccuracy: 1 - wrong.length / 9, entityF1: {}, meanF1: 0, wrongCells: wrong });

describe('the prediction overlay', () => {
  it('leaves the truth solid: no opacity on the truth, the prediction a scaled inset with a dashed outline', () => {
    const truth = lake(['___', 'P__', '__G']);       // the player slipped Left
    const predicted = lake(['_P_', '___', '__G']);   // the model predicted the intended Up
    const { container } = render(<Board board={truth} overlay={predicted} />);
    const overlay = container.querySelector('g.board-overlay')!;
    expect(overlay.getAttribute('class')).toBe('board-overlay');            // no faded layer painted over the board
    const cells = Array.from(overlay.querySelectorAll('g.board-overlay-cell'));
    expect(cells.map((g) => `${g.getAttribute('data-row')},${g.getAttribute('data-col')}:${g.getAttribute('data-overlay-kind')}`)).toEqual(['0,1:player', '1,0:frozen']);
    for (const g of cells) {
      const inset = g.querySelector('g.board-overlay-inset')!;
      expect(inset.getAttribute('transform')).toMatch(/scale\(0\.4\d?\)/);   // a corner inset, not a full cell over the truth
      expect(g.querySelector(':scope > rect.board-overlay-outline')).not.toBeNull();
    }
    expect(cells[1]!.querySelector('title')!.textContent).toBe('(1,0) predicted frozen; truth player');
    // the true player is drawn as the truth, at full strength
    const trueCell = container.querySelector('g.board-cells [data-row="1"][data-col="0"]')!;
    expect(trueCell.getAttribute('data-cell-kind')).toBe('player');
  });

  it('has a legend entry for the overlay when one is shown', () => {
    render(<BoardLegend family="frozenlake" showOverlay />);
    expect(screen.getByText(/model's prediction \(corner inset, dashed\)/)).toBeTruthy();
  });
});

describe('slips', () => {
  const before = lake(['___', '_P_', '__G']);
  const after = lake(['___', 'P__', '__G']);
  const intended = lake(['_P_', '___', '__G']);
  const slipTurn: TurnRecord = {
    turn: 0, prompt: 'p', response: 'r',
    parsed: { observation: 'o', reasoning: null, prediction: 'x', answer: 'Up', actions: ['Up'], unknownActions: [], formatError: false, formatErrors: [] },
    stateBefore: { text: '', board: before }, stateAfter: { text: '', board: after }, observedBoard: before, predictedBoard: intended,
    wm: { observation: score([]), prediction: score([[0, 1], [1, 0]]) }, actionsExecuted: ['Up'], reward: 0,
    flags: { formatError: false, invalidAction: false, actionIsEffective: true }, tokens: { prompt: 1, response: 1 }, done: false,
    slip: { moves: [{ action: 0, intended: 'Up', executed: 'Left' }], intendedBoard: intended, predictionVsIntended: score([]) },
  };
  const episode: EpisodeRecord = {
    id: 'e', runId: 'r', stage: 'selfplay', step: 0, env: 'frozenlake', envConfig: {}, seed: 1, group: 0, sample: 0, templateHash: 'h',
    success: false, totalReward: 0, numTurns: 1, numActions: 1, formatErrors: 0, invalidActions: 0, terminated: false, truncated: true,
    initialState: { text: '', board: before }, turns: [slipTurn], time: 0,
  };

  it('marks the frame of the turn that slipped, with intended vs executed move', () => {
    const frames = episodeFrames(episode);
    expect(frames[0]!.slip).toBeUndefined();
    expect(frames[1]!.slip?.moves).toEqual([{ action: 0, intended: 'Up', executed: 'Left' }]);
    expect(slipText(frames[1]!.slip!, 1)).toBe('the env slipped: intended Up, moved Left');
    expect(slipText({ ...frames[1]!.slip!, moves: [{ action: 1, intended: 'Up', executed: 'Left' }] }, 2)).toBe('the env slipped: move 2: intended Up, moved Left');
  });

  it('says whether the prediction matched the intended outcome (2 wrong against the truth, right against the intent)', () => {
    expect(slipScoreText(slipTurn.slip!)).toBe('matched the intended outcome');
    expect(slipScoreText({ ...slipTurn.slip!, predictionVsIntended: score([[0, 1]]) })).toBe('against the intended outcome: 1 wrong cell');
    expect(slipScoreText({ ...slipTurn.slip!, predictionVsIntended: null })).toBeNull();
  });
});
