// @vitest-environment jsdom
// Replay view: frames from an episode, keyboard stepping (←/→/Home/End/space), the prediction
// overlaid with its wrong cells, and a second run found by seed shown side by side.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import type { WorkbenchApi } from '../../core/api/contract.js';
import type { Board, EpisodeRecord, TurnRecord } from '../../core/api/records.js';
import ReplayView from '../../renderer/src/views/ReplayView.js';
import { episodeFrames, frameOverlay } from '../../renderer/src/boards/replay-frames.js';
import { boardFromSymbols } from '../../renderer/src/boards/sample-boards.js';

afterEach(() => { cleanup(); vi.useRealTimers(); });

const lake = (rows: string[]): Board => boardFromSymbols('frozenlake', rows);
const s0 = lake(['P_', '_G']);
const s1 = lake(['_P', '_G']);
const s2 = lake(['__', '_√']);

function turn(i: number, before: Board, after: Board, predicted: Board | null, wrong: Array<[number, number]>): TurnRecord {
  return {
    turn: i, prompt: `turn ${i}`, response: 'r',
    parsed: { observation: null, reasoning: null, prediction: null, answer: 'Right', actions: ['Right'], unknownActions: [], formatError: false, formatErrors: [] },
    stateBefore: { text: '', board: before }, stateAfter: { text: '', board: after },
    observedBoard: before, predictedBoard: predicted,
    wm: { observation: null, prediction: predicted ? { parsed: true, exact: wrong.length === 0, cellAccuracy: 1 - wrong.length / 4, entityF1: {}, meanF1: 0, wrongCells: wrong } : null },
    actionsExecuted: [i === 0 ? 'Right' : 'Down'], reward: i === 1 ? 1 : 0,
    flags: { formatError: false, invalidAction: false, actionIsEffective: true }, tokens: { prompt: 1, response: 1 }, done: i === 1,
  };
}

function episode(runId: string, id: string, seed: number, turns: TurnRecord[]): EpisodeRecord {
  return {
    id, runId, stage: 'eval', step: 0, env: 'frozenlake', envConfig: {}, seed, group: 0, sample: 0, templateHash: 'h',
    success: true, totalReward: 1, numTurns: turns.length, numActions: turns.length, formatErrors: 0, invalidActions: 0,
    terminated: true, truncated: false, initialState: { text: '', board: s0 }, turns, time: 0,
  };
}

// run A: correct first prediction, wrong second one (predicted the player still at (0,1))
const epA = episode('run-a', 'a-1', 42, [turn(0, s0, s1, s1, []), turn(1, s1, s2, s1, [[0, 1], [1, 1]])]);
// run B, same seed: one turn only
const epB = episode('run-b', 'b-7', 42, [turn(0, s0, s1, s0, [[0, 0], [0, 1]])]);

function mockApi() {
  const all = [epA, epB];
  const query = vi.fn(async (req: { runId: string; seed?: number; stage?: string }) => {
    const eps = all.filter((e) => e.runId === req.runId && (req.seed === undefined || e.seed === req.seed) && (req.stage === undefined || e.stage === req.stage));
    return { episodes: eps.map((e) => ({ id: e.id, stage: e.stage, step: e.step, seed: e.seed, group: 0, sample: 0, success: e.success, totalReward: e.totalReward, numTurns: e.numTurns, formatErrors: 0, invalidActions: 0, file: 'f', offset: 0, length: 1 })), total: eps.length };
  });
  const api = {
    runs: { list: vi.fn(async () => ({ runs: [], total: 0 })) },
    rollouts: { query, get: vi.fn(async (req: { runId: string; id: string }) => all.find((e) => e.runId === req.runId && e.id === req.id)!) },
  } as unknown as WorkbenchApi;
  return { api, query };
}

const position = (): string => screen.getByTestId('replay-position').textContent ?? '';
const litCells = (el: Element): string[] => Array.from(el.querySelectorAll('g.board-cell[data-highlighted="true"]')).map((g) => `${g.getAttribute('data-row')},${g.getAttribute('data-col')}`).sort();

describe('replay frames', () => {
  it('turns an episode into initial state + one frame per turn with predictions attached', () => {
    const frames = episodeFrames(epA);
    expect(frames.map((f) => f.board)).toEqual([s0, s1, s2]);
    expect(frames.map((f) => f.turn)).toEqual([null, 0, 1]);
    expect(frameOverlay(frames[2]!, 'prediction')).toEqual({ overlay: s1, highlight: [[0, 1], [1, 1]] });
    expect(frameOverlay(frames[2]!, 'none')).toEqual({ overlay: null, highlight: [] });
    expect(frames[2]!.cumulativeReward).toBe(1);
  });
});

describe('ReplayView', () => {
  it('steps with the keyboard and shows the wrong cells of the prediction on the board', async () => {
    const { api } = mockApi();
    render(<ReplayView api={api} projectPath="/p" runId="run-a" episodeId="a-1" navigate={() => {}} />);
    await waitFor(() => expect(position()).toBe('step 0 / 2'));
    const main = screen.getByTestId('replay-main');
    expect(main.querySelector('g.board-cell[data-cell-kind="player"]')?.getAttribute('data-col')).toBe('0');
    fireEvent.keyDown(window, { key: 'ArrowRight' });
    expect(position()).toBe('step 1 / 2');
    expect(litCells(main)).toEqual([]);
    fireEvent.keyDown(window, { key: 'ArrowRight' });
    expect(position()).toBe('step 2 / 2');
    expect(litCells(main)).toEqual(['0,1', '1,1']);
    expect(main.querySelector('g.board-cell[data-cell-kind="playerOnGoal"]')).not.toBeNull();
    // the prediction (player still at (0,1)) is drawn over the truth where it differs
    expect(Array.from(main.querySelectorAll('g.board-overlay-cell')).map((g) => g.getAttribute('data-overlay-kind')).sort()).toEqual(['goal', 'player']);
    fireEvent.keyDown(window, { key: 'ArrowRight' });
    expect(position()).toBe('step 2 / 2');
    fireEvent.keyDown(window, { key: 'Home' });
    expect(position()).toBe('step 0 / 2');
    fireEvent.keyDown(window, { key: 'End' });
    expect(position()).toBe('step 2 / 2');
    fireEvent.keyDown(window, { key: 'ArrowLeft' });
    expect(position()).toBe('step 1 / 2');
    fireEvent.change(screen.getByLabelText('Scrub'), { target: { value: '0' } });
    expect(position()).toBe('step 0 / 2');
  });

  it('plays to the end with space and stops there', async () => {
    const { api } = mockApi();
    render(<ReplayView api={api} projectPath="/p" runId="run-a" episodeId="a-1" navigate={() => {}} />);
    await waitFor(() => expect(position()).toBe('step 0 / 2'));
    vi.useFakeTimers();
    fireEvent.keyDown(window, { key: ' ' });
    expect(screen.getByRole('button', { name: 'Pause' })).toBeTruthy();
    await act(async () => { vi.advanceTimersByTime(1000); });
    expect(position()).toBe('step 1 / 2');
    await act(async () => { vi.advanceTimersByTime(1000); });
    expect(position()).toBe('step 2 / 2');
    await act(async () => { vi.advanceTimersByTime(3000); });
    expect(position()).toBe('step 2 / 2');
    expect(screen.getByRole('button', { name: 'Play' })).toBeTruthy();
  });

  it('shows a second run on the same seed side by side', async () => {
    const { api, query } = mockApi();
    render(<ReplayView api={api} projectPath="/p" runId="run-a" episodeId="a-1" otherRunId="run-b" navigate={() => {}} />);
    const other = await screen.findByTestId('replay-other');
    expect(query).toHaveBeenCalledWith(expect.objectContaining({ runId: 'run-b', seed: 42 }));
    expect(within(other).getByText('run-b · b-7')).toBeTruthy();
    fireEvent.keyDown(window, { key: 'ArrowRight' });
    expect(litCells(other)).toEqual(['0,0', '0,1']);
    fireEvent.keyDown(window, { key: 'ArrowRight' });
    // run B ended after one turn: it stays on its last state and says so
    expect(other.getAttribute('data-frame')).toBe('1');
    expect(other.textContent).toContain('episode ended at step 1');
  });
});
