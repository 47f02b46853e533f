// @vitest-environment jsdom
// Trace inspector against a mocked API: the episode list is paged from rollouts.query with the
// filters passed through, and a fixture episode with one wrong predicted cell shows that cell lit.
import { useState } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import type { WorkbenchApi } from '../../core/api/contract.js';
import type { Board, EpisodeRecord, EpisodeSummary, TurnRecord } from '../../core/api/records.js';
import TraceView from '../../renderer/src/views/TraceView.js';
import type { Route } from '../../renderer/src/routes.js';
import { boardFromSymbols } from '../../renderer/src/boards/sample-boards.js';

afterEach(cleanup);

const before = boardFromSymbols('sokoban', ['#####', '#P__#', '#_O_#', '#####']);
const after = boardFromSymbols('sokoban', ['#####', '#_P_#', '#_O_#', '#####']);
// the model predicted the player one cell too far: wrong at (1,2) and (1,3)
const predicted: Board = boardFromSymbols('sokoban', ['#####', '#__P#', '#_O_#', '#####']);

function turn(overrides: Partial<TurnRecord> = {}): TurnRecord {
  return {
    turn: 0,
    prompt: 'Turn 1:\nState:\n#####\n#P_X#\n#_O_#\n#####',
    response: '<think><observation>...</observation><prediction>...</prediction></think><answer>Right</answer>',
    parsed: { observation: '#####', reasoning: 'push', prediction: '#####', answer: 'Right', actions: ['Right'], unknownActions: [], formatError: false, formatErrors: [] },
    stateBefore: { text: 'before text', board: before },
    stateAfter: { text: 'after text', board: after },
    observedBoard: before,
    predictedBoard: predicted,
    wm: {
      observation: { parsed: true, exact: true, cellAccuracy: 1, entityF1: { player: 1, box: 1 }, meanF1: 1, wrongCells: [] },
      prediction: { parsed: true, exact: false, cellAccuracy: 0.875, entityF1: { player: 0, box: 1 }, meanF1: 0.5, wrongCells: [[1, 2], [1, 3]] },
    },
    actionsExecuted: ['Right'],
    reward: -0.1,
    flags: { formatError: false, invalidAction: false, actionIsEffective: true },
    tokens: { prompt: 40, response: 30 },
    done: false,
    ...overrides,
  };
}

function episode(id: string, seed: number, turns: TurnRecord[]): EpisodeRecord {
  return {
    id, runId: 'run-1', stage: 'rl', step: 3, env: 'sokoban', envConfig: {}, seed, group: 0, sample: 0,
    templateHash: 'abcdef1234567890', success: false, totalReward: -0.1, numTurns: turns.length, numActions: 1,
    formatErrors: 0, invalidActions: 0, terminated: false, truncated: true, initialState: { text: 'x', board: before },
    turns, time: 0,
  };
}

function summary(e: EpisodeRecord): EpisodeSummary {
  return { id: e.id, stage: e.stage, step: e.step, seed: e.seed, group: e.group, sample: e.sample, success: e.success, totalReward: e.totalReward,
    numTurns: e.numTurns, formatErrors: e.formatErrors, invalidActions: e.invalidActions, file: 'rollouts/rl.jsonl', offset: 0, length: 10 };
}

/** The view with the App's route state: its filters live in the URL, so navigate must feed the route back. */
function Trace({ api, runId, episodeId, navigate, filters }: { api: WorkbenchApi; runId: string; episodeId?: string; navigate?: (r: Route) => void; filters?: Record<string, string> }) {
  const [route, setRoute] = useState<Route>({ view: 'trace', runId, ...(episodeId ? { episodeId } : {}), ...(filters ? { filters } : {}) });
  const r = route.view === 'trace' ? route : { view: 'trace' as const, runId };
  return <TraceView api={api} projectPath="/p" runId={r.runId} {...(r.episodeId ? { episodeId: r.episodeId } : {})} route={r}
    navigate={(next) => { navigate?.(next); if (next.view === 'trace') setRoute(next); }} />;
}

function mockApi(episodes: EpisodeRecord[]) {
  const query = vi.fn(async (req: { offset?: number; limit?: number; seed?: number; group?: number; sortBy?: string; order?: string }) => {
    let matching = episodes.filter((e) => (req.seed === undefined || e.seed === req.seed) && (req.group === undefined || e.group === req.group));
    if (req.sortBy === 'seed') matching = [...matching].sort((a, b) => (req.order === 'desc' ? b.seed - a.seed : a.seed - b.seed));
    const offset = req.offset ?? 0;
    return { episodes: matching.slice(offset, offset + (req.limit ?? 50)).map(summary), total: matching.length };
  });
  const get = vi.fn(async (req: { runId: string; id: string }) => {
    const e = episodes.find((x) => x.id === req.id);
    if (!e) throw Object.assign(new Error(`episode ${req.id} not found`), { name: 'NotFound', details: { where: 'rollouts.get', expected: 'an episode id of the run', received: req.id } });
    return e;
  });
  const api = {
    runs: { list: vi.fn(async () => ({ runs: [], total: 0 })) },
    rollouts: {
      query, get,
      facets: vi.fn(async () => ({ stages: [{ stage: 'rl', count: episodes.length, minStep: 3, maxStep: 3, successes: 0 }] })),
    },
  } as unknown as WorkbenchApi;
  return { api, query, get };
}

describe('TraceView', () => {
  it('shows the episode with the wrong predicted cells highlighted on the prediction board', async () => {
    const ep = episode('rl-000003-g00-s0', 7, [turn()]);
    const { api, get } = mockApi([ep]);
    render(<Trace api={api} runId="run-1" episodeId={ep.id} />);
    const turnCard = await screen.findByTestId('turn-0');
    expect(get).toHaveBeenCalledWith({ runId: 'run-1', id: ep.id });
    const predictedFigure = within(turnCard).getByTestId('board-predicted');
    const lit = Array.from(predictedFigure.querySelectorAll('g.board-cell[data-highlighted="true"]'))
      .map((g) => `${g.getAttribute('data-row')},${g.getAttribute('data-col')}:${g.getAttribute('data-cell-kind')}`).sort();
    expect(lit).toEqual(['1,2:floor', '1,3:player']);
    // the true next state shows the same cells lit, and the exact observation has none
    const truthLit = within(turnCard).getByTestId('board-true-after').querySelectorAll('[data-highlighted="true"]');
    expect(truthLit).toHaveLength(2);
    expect(within(turnCard).getByTestId('board-observed').querySelectorAll('[data-highlighted="true"]')).toHaveLength(0);
    // scores, actions, reward
    const scoreRow = within(turnCard).getByRole('table', { name: 'World-model scores' }).querySelector('tr[data-score-row="prediction"]')!;
    expect(scoreRow.textContent).toContain('87.5%');
    expect(turnCard.textContent).toContain('Right');
    expect(turnCard.textContent).toContain('-0.10');
    expect(turnCard.textContent).toContain('2 wrong');
  });

  it('says why a prediction board is missing instead of drawing one', async () => {
    const t = turn({
      predictedBoard: null,
      parsed: { observation: '#', reasoning: null, prediction: null, answer: 'Up', actions: ['Up'], unknownActions: ['Jump'], formatError: true, formatErrors: ['missing <prediction>'] },
      wm: { observation: null, prediction: null },
      flags: { formatError: true, invalidAction: true, actionIsEffective: false },
    });
    const { api } = mockApi([episode('e1', 1, [t])]);
    render(<Trace api={api} runId="run-1" episodeId="e1" />);
    const card = await screen.findByTestId('turn-0');
    const pred = within(card).getByTestId('board-predicted');
    expect(pred.querySelector('svg')).toBeNull();
    expect(pred.textContent).toContain('no <prediction> in the response');
    expect(card.textContent).toContain('missing <prediction>');
    expect(card.textContent).toContain('Jump');
    expect(within(card).getByText('format error')).toBeTruthy();
  });

  it('pages the episode list from the index and passes the seed filter to rollouts.query', async () => {
    const episodes = Array.from({ length: 120 }, (_, i) => episode(`e${i}`, i % 10, [turn()]));
    const { api, query } = mockApi(episodes);
    const navigate = vi.fn();
    render(<Trace api={api} runId="run-1" navigate={navigate} />);
    await waitFor(() => expect(screen.getByTestId('pager-range').textContent).toBe('1–50 of 120 episodes'));
    expect(document.querySelectorAll('tr[data-episode-id]')).toHaveLength(50);
    fireEvent.click(screen.getByRole('button', { name: 'Next page' }));
    await waitFor(() => expect(screen.getByTestId('pager-range').textContent).toBe('51–100 of 120 episodes'));
    expect(query).toHaveBeenLastCalledWith(expect.objectContaining({ runId: 'run-1', offset: 50, limit: 50 }));
    fireEvent.change(screen.getByLabelText('Seed'), { target: { value: '3' } });
    await waitFor(() => expect(screen.getByTestId('pager-range').textContent).toBe('1–12 of 12 episodes'));
    expect(query).toHaveBeenLastCalledWith(expect.objectContaining({ seed: 3, offset: 0 }));
    fireEvent.click(document.querySelector('tr[data-episode-id="e13"]')!);
    expect(navigate).toHaveBeenCalledWith({ view: 'trace', runId: 'run-1', episodeId: 'e13', filters: { seed: '3' } });
    await screen.findByTestId('turn-0');
  });

  it('exports every filtered episode as JSONL, reading them one by one', async () => {
    const episodes = Array.from({ length: 30 }, (_, i) => episode(`e${i}`, i % 3, [turn()]));
    const { api, get } = mockApi(episodes);
    const blobs: Blob[] = [];
    const createObjectURL = vi.fn((blob: Blob) => { blobs.push(blob); return 'blob:x'; });
    Object.assign(URL, { createObjectURL, revokeObjectURL: vi.fn() });
    render(<Trace api={api} runId="run-1" />);
    fireEvent.change(screen.getByLabelText('Seed'), { target: { value: '2' } });
    const button = await screen.findByRole('button', { name: 'Export 10 as JSONL' });
    fireEvent.click(button);
    await waitFor(() => expect(blobs).toHaveLength(1));
    const lines = (await blobs[0]!.text()).trim().split('\n').map((l) => JSON.parse(l) as EpisodeRecord);
    expect(lines.map((e) => e.id)).toEqual(episodes.filter((e) => e.seed === 2).map((e) => e.id));
    expect(get).toHaveBeenCalledTimes(10);
  });

  it('rejects a non-numeric seed at the field and shows API errors with where/expected', async () => {
    const { api, query } = mockApi([episode('e1', 1, [turn()])]);
    render(<Trace api={api} runId="run-1" episodeId="missing" />);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('episode missing not found');
    expect(alert.textContent).toContain('expected: an episode id of the run');
    const calls = query.mock.calls.length;
    fireEvent.change(screen.getByLabelText('Seed'), { target: { value: 'abc' } });
    expect(await screen.findByText('seed: expected a whole number, got "abc"')).toBeTruthy();
    expect(query.mock.calls.length).toBe(calls);
  });
});

describe('TraceView inspection (issue 12)', () => {
  it('sorts by a clicked column (both ways) and keeps the filters in the URL', async () => {
    const episodes = Array.from({ length: 6 }, (_, i) => episode(`e${i}`, (i * 7) % 5, [turn()]));
    const { api, query } = mockApi(episodes);
    const navigate = vi.fn();
    render(<Trace api={api} runId="run-1" navigate={navigate} />);
    await waitFor(() => expect(document.querySelectorAll('tr[data-episode-id]')).toHaveLength(6));
    fireEvent.click(document.querySelector('button[data-sort-key="seed"]')!);
    await waitFor(() => expect(query).toHaveBeenLastCalledWith(expect.objectContaining({ sortBy: 'seed', order: 'asc' })));
    expect(navigate).toHaveBeenLastCalledWith(expect.objectContaining({ filters: { sort: 'seed' } }));
    fireEvent.click(document.querySelector('button[data-sort-key="seed"]')!);
    await waitFor(() => expect(query).toHaveBeenLastCalledWith(expect.objectContaining({ sortBy: 'seed', order: 'desc' })));
    await waitFor(() => {
      const seeds = [...document.querySelectorAll('tr[data-episode-id]')].map((tr) => Number(tr.children[3]!.textContent));
      expect(seeds).toEqual([...seeds].sort((a, b) => b - a));
    });
    fireEvent.change(screen.getByLabelText('Search responses'), { target: { value: 'push' } });
    fireEvent.change(screen.getByLabelText('Minimum world-model accuracy'), { target: { value: '50' } });
    await waitFor(() => expect(query).toHaveBeenLastCalledWith(expect.objectContaining({ search: 'push', wmMin: 0.5, sortBy: 'seed', order: 'desc' })));
    expect(navigate).toHaveBeenLastCalledWith(expect.objectContaining({ filters: { sort: 'seed', order: 'desc', q: 'push', wmMin: '50' } }));
  });

  it('starts from filters given in the URL', async () => {
    const { api, query } = mockApi([episode('e1', 1, [turn()])]);
    render(<Trace api={api} runId="run-1" filters={{ stepMin: '2', stepMax: '9', outcome: 'failure', wmMax: '80' }} />);
    await waitFor(() => expect(query).toHaveBeenCalledWith(expect.objectContaining({ stepMin: 2, stepMax: 9, outcome: 'failure', wmMax: 0.8 })));
    expect((screen.getByLabelText('First step') as HTMLInputElement).value).toBe('2');
  });

  it('j / k and the arrow keys move between episodes', async () => {
    const episodes = Array.from({ length: 4 }, (_, i) => episode(`e${i}`, i, [turn()]));
    const { api } = mockApi(episodes);
    render(<Trace api={api} runId="run-1" episodeId="e1" />);
    await screen.findByTestId('trace-episode');
    await waitFor(() => expect(document.querySelectorAll('tr[data-episode-id]')).toHaveLength(4));
    fireEvent.keyDown(window, { key: 'j' });
    await waitFor(() => expect(screen.getByTestId('trace-episode').getAttribute('data-episode-id')).toBe('e2'));
    fireEvent.keyDown(window, { key: 'ArrowDown' });
    await waitFor(() => expect(screen.getByTestId('trace-episode').getAttribute('data-episode-id')).toBe('e3'));
    fireEvent.keyDown(window, { key: 'j' });                      // the last one: stays
    fireEvent.keyDown(window, { key: 'k' });
    fireEvent.keyDown(window, { key: 'k' });
    await waitFor(() => expect(screen.getByTestId('trace-episode').getAttribute('data-episode-id')).toBe('e1'));
    // typing in a filter field is not navigation
    fireEvent.keyDown(screen.getByLabelText('Seed'), { key: 'j' });
    expect(screen.getByTestId('trace-episode').getAttribute('data-episode-id')).toBe('e1');
  });

  it('Group shows the samples of the group side by side, successes first', async () => {
    const members = [0, 1, 2].map((s) => ({ ...episode(`g-s${s}`, 5, [turn()]), group: 4, sample: s, success: s === 2, totalReward: s === 2 ? 1 : -0.1 }));
    const other = { ...episode('other', 6, [turn()]), group: 1 };
    const { api } = mockApi([...members, other]);
    render(<Trace api={api} runId="run-1" episodeId="g-s0" />);
    fireEvent.click(await screen.findByRole('button', { name: 'Group 4' }));
    const view = await screen.findByTestId('trace-group');
    await waitFor(() => expect(within(view).getAllByTestId('group-sample')).toHaveLength(3));
    const samples = within(view).getAllByTestId('group-sample');
    expect(samples.map((el) => el.getAttribute('data-episode-id'))).toEqual(['g-s2', 'g-s0', 'g-s1']);
    expect(samples[0]!.getAttribute('data-success')).toBe('true');
    expect(view.textContent).toContain('1 success · 2 failures');
  });

  it('shows the whole conversation, a character diff of state texts, readable ids and the token overlay', async () => {
    const t0 = turn({ turn: 0, prompt: 'FIRST USER MESSAGE', response: 'FIRST REPLY' });
    const t1 = turn({
      turn: 1, prompt: 'SECOND USER MESSAGE', response: '<think>ab',
      parsed: { ...turn().parsed, observation: 'before tExt' },
      tokenStats: { tokens: ['a', 'b'], logprobs: [-0.1, -3], entropies: [0.2, 1.5], values: [0.5, 0.4], advantages: [1, -1], dropped: 0 },
    });
    const ep = { ...episode('rl-000003-g0004-s1', 1, [t0, t1]), system: 'SYSTEM PROMPT' };
    const { api } = mockApi([ep]);
    render(<Trace api={api} runId="run-1" episodeId={ep.id} />);
    const card = await screen.findByTestId('turn-1');
    const chat = within(card).getByTestId('conversation');
    expect([...chat.querySelectorAll('li')].map((li) => li.getAttribute('data-role'))).toEqual(['system', 'user', 'assistant', 'user']);
    expect(chat.textContent).toContain('SYSTEM PROMPT');
    expect(chat.textContent).toContain('FIRST REPLY');
    expect(chat.textContent).toContain('SECOND USER MESSAGE');
    const diff = within(card).getByTestId('diff-observation');
    expect([...diff.querySelectorAll('del')].map((d) => d.textContent)).toEqual(['E']);
    expect([...diff.querySelectorAll('ins')].map((d) => d.textContent)).toEqual(['e']);
    expect(screen.getByTestId('episode-readable').textContent).toBe('rl · step 3 · group 0 · sample 0');
    expect(document.querySelector('td.trace-id')!.textContent).toBe('rl-000003-g0004-s1');
    const overlay = within(card).getByTestId('token-overlay');
    const tokens = overlay.querySelectorAll('.trace-token');
    expect([...tokens].map((t) => t.textContent)).toEqual(['a', 'b']);
    expect(tokens[1]!.getAttribute('title')).toContain('advantage -1');
    expect((tokens[1] as HTMLElement).style.background).not.toBe('');
  });
});
