// @vitest-environment jsdom
// Text states (issue 38 item 5): the word diff (LCS over words) and its view in the trace inspector and the replay for text envs
// (boards of `line` cells: TextWorld, Python envs), with the score line; grid envs keep their boards.
import { useState } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import type { WorkbenchApi } from '../../core/api/contract.js';
import type { Board, EpisodeRecord, EpisodeSummary, TurnRecord } from '../../core/api/records.js';
import { normalisedEqual, wordDiff, wordTokens } from '../../renderer/src/components/word-diff.js';
import { isTextBoard, similarityText } from '../../renderer/src/components/TextStateDiff.js';
import TraceView from '../../renderer/src/views/TraceView.js';
import ReplayView from '../../renderer/src/views/ReplayView.js';
import type { Route } from '../../renderer/src/routes.js';
import { boardFromSymbols } from '../../renderer/src/boards/sample-boards.js';
import { Rng } from '../../core/util/rng.js';

afterEach(cleanup);

describe('wordDiff', () => {
  it('marks the words only in the prediction and only in the truth, in reading order', () => {
    const d = wordDiff('You are in a kitchen. There is a coin.', 'You are in a cubicle. There is a coin. It shines.');
    expect(d.parts.map((p) => [p.kind, p.text])).toEqual([
      ['same', 'You are in a'], ['del', ' kitchen.'], ['add', ' cubicle.'], ['same', ' There is a coin.'], ['add', ' It shines.'],
    ]);
    expect(d.counts).toEqual({ same: 8, del: 1, add: 3 });
    expect(d.tooLong).toBe(false);
  });

  it('keeps line breaks and ignores other whitespace differences', () => {
    expect(wordTokens('a  b\n\tc\r\nd')).toEqual(['a', 'b', '\n', 'c', '\n', 'd']);
    const d = wordDiff('-= Office =-\nA  desk.', '-= Office =-\nA desk.\nAdmissible commands: go west');
    expect(d.counts).toEqual({ same: 5, del: 0, add: 4 });
    expect(d.parts.filter((p) => p.kind === 'add').map((p) => p.text).join('')).toBe('\nAdmissible commands: go west');
  });

  it('is a common subsequence of maximal length: same+del rebuild the prediction, same+add the truth (random texts)', () => {
    const rng = new Rng(7);
    const vocab = ['go', 'west', 'east', 'coin', 'the', 'a', 'room', '\n'];
    const text = (): string => Array.from({ length: 1 + rng.int(25) }, () => vocab[rng.int(vocab.length)]).join(' ');
    for (let k = 0; k < 200; k++) {
      const a = text();
      const b = text();
      const d = wordDiff(a, b);
      const rebuild = (keep: string) => wordTokens(d.parts.filter((p) => p.kind === 'same' || p.kind === keep).map((p) => p.text).join(''));
      expect(rebuild('del')).toEqual(wordTokens(a));
      expect(rebuild('add')).toEqual(wordTokens(b));
      // maximal: the common words equal a reference LCS length (plain DP on the words, line breaks left out as the counts do)
      const x = wordTokens(a).filter((t) => t !== '\n');
      const y = wordTokens(b).filter((t) => t !== '\n');
      expect(d.counts.same + d.counts.del).toBe(x.length);
      expect(d.counts.same + d.counts.add).toBe(y.length);
      const all = [...wordTokens(a)];
      const bll = [...wordTokens(b)];
      const t = Array.from({ length: all.length + 1 }, () => new Array<number>(bll.length + 1).fill(0));
      for (let i = all.length - 1; i >= 0; i--) for (let j = bll.length - 1; j >= 0; j--)
        t[i]![j] = all[i] === bll[j] ? t[i + 1]![j + 1]! + 1 : Math.max(t[i + 1]![j]!, t[i]![j + 1]!);
      const sameBreaks = d.parts.filter((p) => p.kind === 'same').reduce((n, p) => n + (p.text.match(/\n/g)?.length ?? 0), 0);
      expect(d.counts.same + sameBreaks).toBe(t[0]![0]);
    }
  });

  it('does not align texts past the size limit, and says so', () => {
    const d = wordDiff('a b c', 'a b d', 4);
    expect(d.tooLong).toBe(true);
    expect(d.parts.map((p) => p.kind)).toEqual(['del', 'add']);
  });

  it('normalises as the text envs score (case, whitespace, blank lines, a lone ">")', () => {
    expect(normalisedEqual('You see a COIN.\n\n>', '  you  see a coin. ')).toBe(true);
    expect(normalisedEqual('You see a coin.', 'You see no coin.')).toBe(false);
  });

  it('the score line prefers a recorded similarity and otherwise gives exact after normalisation', () => {
    expect(similarityText('a', 'A', null, null)).toMatch(/^exact after normalisation: yes/);
    expect(similarityText('a b', 'a c', { measure: 'embedding', value: 0.8123, model: 'all-MiniLM-L6-v2', threshold: 0.75 }))
      .toBe('similarity 0.812: embedding cosine (all-MiniLM-L6-v2), as the run recorded it, reward 1 at threshold 0.75');
  });
});

// ---------------------------------------------------------------- a TextWorld episode in the views

const textBoard = (text: string): Board => {
  const lines = text.split('\n').filter((l) => l.trim().length > 0);
  return { env: 'textworld', rows: lines.length, cols: 1, cells: lines.map(() => ['line']), values: lines.map((_, i) => [i]) };
};
const S0 = '-= Workshop =-\nAn ordinary workshop. An exit leads west.\nAdmissible commands: go west, inventory, look';
const S1 = '-= Cubicle =-\nA cubicle. There is a coin on the floor.\nAdmissible commands: go east, take coin, look';
const PREDICTED = '-= Cubicle =-\nA cubicle. There is a key on the floor.\nAdmissible commands: go east, look';

function textTurn(): TurnRecord {
  return {
    turn: 0, prompt: `Find the coin.\n${S0}`, response: `<think><prediction>\n${PREDICTED}\n</prediction></think><answer>go west</answer>`,
    parsed: { observation: null, reasoning: null, prediction: PREDICTED, answer: 'go west', actions: ['go west'], unknownActions: [], formatError: false, formatErrors: [] },
    stateBefore: { text: S0, board: textBoard(S0) }, stateAfter: { text: S1, board: textBoard(S1) },
    observedBoard: null, predictedBoard: textBoard(PREDICTED),
    wm: { observation: null, prediction: { parsed: true, exact: false, cellAccuracy: 1 / 3, entityF1: {}, meanF1: 0, wrongCells: [[1, 0], [2, 0]] } },
    actionsExecuted: ['go west'], reward: 0, flags: { formatError: false, invalidAction: false, actionIsEffective: true },
    tokens: { prompt: 60, response: 40 }, done: false,
  };
}

function textEpisode(): EpisodeRecord {
  return {
    id: 'tw-1', runId: 'run-t', stage: 'rl', step: 1, env: 'textworld', envConfig: {}, seed: 5, group: 0, sample: 0, templateHash: 'abcdef1234567890',
    success: false, totalReward: 0, numTurns: 1, numActions: 1, formatErrors: 0, invalidActions: 0, terminated: false, truncated: true,
    initialState: { text: S0, board: textBoard(S0) }, turns: [textTurn()], time: 0,
  };
}

function mockApi(episodes: EpisodeRecord[]) {
  const summary = (e: EpisodeRecord): EpisodeSummary => ({
    id: e.id, stage: e.stage, step: e.step, seed: e.seed, group: e.group, sample: e.sample, success: e.success, totalReward: e.totalReward,
    numTurns: e.numTurns, formatErrors: e.formatErrors, invalidActions: e.invalidActions, file: 'rollouts/rl.jsonl', offset: 0, length: 10,
  });
  return {
    runs: { list: vi.fn(async () => ({ runs: [], total: 0 })) },
    rollouts: {
      query: vi.fn(async () => ({ episodes: episodes.map(summary), total: episodes.length })),
      get: vi.fn(async (req: { id: string }) => episodes.find((e) => e.id === req.id)!),
      facets: vi.fn(async () => ({ stages: [{ stage: 'rl', count: episodes.length, minStep: 1, maxStep: 1, successes: 0 }] })),
      actionFrames: vi.fn(async () => ({ turns: [] })),
    },
  } as unknown as WorkbenchApi;
}

function Trace({ api, runId, episodeId }: { api: WorkbenchApi; runId: string; episodeId: string }) {
  const [route, setRoute] = useState<Route>({ view: 'trace', runId, episodeId });
  const r = route.view === 'trace' ? route : { view: 'trace' as const, runId };
  return <TraceView api={api} projectPath="/p" runId={r.runId} {...(r.episodeId ? { episodeId: r.episodeId } : {})} route={r}
    navigate={(next) => { if (next.view === 'trace') setRoute(next); }} />;
}

const marked = (el: HTMLElement, tag: 'del' | 'ins'): string[] =>
  Array.from(el.querySelectorAll(tag)).map((e) => (e.textContent ?? '').replace(/\[only in the [a-z ]+: /, '').replace(/\]$/, ''));

describe('text states in the trace inspector and the replay', () => {
  it('tells text boards from grids', () => {
    expect(isTextBoard(textBoard(S0))).toBe(true);
    expect(isTextBoard(boardFromSymbols('frozenlake', ['P_', '_G']))).toBe(false);
  });

  it('the trace inspector shows a text turn as a word diff with its score, not as boards', async () => {
    render(<Trace api={mockApi([textEpisode()])} runId="run-t" episodeId="tw-1" />);
    const pred = await screen.findByTestId('text-diff-prediction');
    expect(screen.queryByTestId('board-predicted')).toBeNull();
    const text = within(pred).getByTestId('text-diff-prediction-text');
    expect(marked(text, 'del')).toEqual(['−key']);
    expect(marked(text, 'ins')).toEqual(['+coin', '+take coin,']);
    // not colour only: every run carries a sign and a label a screen reader reads
    expect(text.querySelector('del')!.textContent).toContain('[only in the prediction: ');
    expect(within(pred).getByTestId('text-diff-prediction-score').textContent)
      .toBe('exact after normalisation: no · lines equal in place 33% (no embedding similarity recorded for this turn)');
    // the reply had no observation: the true state is still shown
    expect(screen.getByTestId('text-diff-observation').textContent).toContain('(no observation in the reply)');
    expect(screen.getByTestId('text-diff-observation').textContent).toContain('An ordinary workshop.');
  });

  it('the replay shows the state text and, with the prediction overlay, the diff', async () => {
    render(<ReplayView api={mockApi([textEpisode()])} projectPath="/p" runId="run-t" episodeId="tw-1" navigate={() => {}} />);
    await waitFor(() => expect(screen.getByTestId('replay-position').textContent).toBe('step 0 / 1'));
    expect(screen.getByTestId('replay-text').textContent).toContain('An ordinary workshop.');
    expect(screen.getByTestId('replay-main').querySelector('svg g.board-cell')).toBeNull();
    fireEvent.keyDown(window, { key: 'ArrowRight' });
    const diff = await screen.findByTestId('replay-text-diff-text');
    expect(marked(diff, 'del')).toEqual(['−key']);
    fireEvent.change(screen.getByLabelText('Overlay'), { target: { value: 'none' } });
    expect(screen.queryByTestId('replay-text-diff')).toBeNull();
    expect(screen.getByTestId('replay-text').textContent).toContain('There is a coin on the floor.');
  });
});
