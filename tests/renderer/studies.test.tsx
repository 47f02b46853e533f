// @vitest-environment jsdom
// Studies view with a mocked API: form validation (name, methods, envs, seeds, overrides), the
// studies.start payload, the list with status/progress and stop/resume, the paper-style table
// with Pass@1 / Pass@k and intervals, and the link to Compare with the study's runs.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import type { StudySummary, StudyTable } from '../../core/api/contract.js';
import StudiesView, { parseOverrides, parseSeeds, validateStudyForm } from '../../renderer/src/views/StudiesView.js';

afterEach(cleanup);

const iv = (mean: number, low: number, high: number) => ({ mean, low, high, level: 0.95, method: 'bootstrap' });

function summary(over: Partial<StudySummary>): StudySummary {
  return {
    name: 'grid', methods: ['vanilla-rl', 'spa'], envs: ['sokoban', 'frozenlake'], seeds: [0, 1], size: 'smoke', set: null,
    runs: 0, completed: 0, runIds: [], status: 'pending', reason: null, progress: { done: 0, failed: 0, total: 8, currentRunId: null },
    startedAt: null, finishedAt: null, ...over,
  };
}

const TABLE: StudyTable = {
  name: 'done-grid', methods: ['vanilla-rl', 'spa'], envs: ['sokoban'], ks: [1, 4],
  cells: [
    { method: 'vanilla-rl', env: 'sokoban', runs: 2, completed: 2, passAt: { '1': iv(0.125, 0.05, 0.2), '4': iv(0.3, 0.2, 0.41) }, success: 0.125, wallSeconds: 20 },
    { method: 'spa', env: 'sokoban', runs: 1, completed: 0, passAt: {}, success: null, wallSeconds: 3 },
  ],
  markdown: '| method | sokoban Pass@1 / Pass@4 |', csv: 'method,env\n',
};

function mockClient(studies: StudySummary[]) {
  const start = vi.fn(async (req: { name: string }) => summary({ name: req.name, status: 'running' }));
  // A stop stays in flight until the test calls settleStop(), as a real one takes a while: no timer to race.
  const pendingStops: Array<() => void> = [];
  const stop = vi.fn((req: { name: string }) => new Promise<StudySummary>((resolve) => {
    pendingStops.push(() => resolve(summary({ name: req.name, status: 'stopped' })));
  }));
  const settleStop = () => pendingStops.splice(0).forEach((settle) => settle());
  const table = vi.fn(async () => TABLE);
  const client = {
    studies: { list: vi.fn(async () => ({ studies })), start, stop, table },
    runs: {
      list: vi.fn(async () => ({ runs: [], total: 0 })),
      // runs.estimate: spa trains a base on sokoban (600 s); every other cell takes 100 s, one stage not estimated
      estimate: vi.fn(async (req: { preset: string; set: Record<string, unknown> }) => {
        const train = req.preset === 'spa' && req.set['env.id'] === 'sokoban';
        return { seconds: train ? 600 : 100, stages: [], unestimated: train ? [] : ['eval'], bootstrap: train ? 'train' : 'shipped', warning: null, shippedBaseEnvs: ['frozenlake'] };
      }),
      presets: vi.fn(async () => ({ presets: ['vanilla-rl', 'spa', 'diagnostic'].map((id) => ({ id, title: id, description: `${id} preset`, method: 'spa', sizes: ['smoke'], stages: [], config: {} })) })),
    },
    envs: { list: vi.fn(async () => ({ envs: ['frozenlake', 'sokoban', 'sudoku'].map((id) => ({ id, title: id, description: id, actions: [], defaultOptions: {} })) })) },
    subscribe: vi.fn(() => () => {}),
  };
  return { client: client as unknown as Parameters<typeof StudiesView>[0]['client'], start, stop, settleStop, table };
}

describe('study form helpers', () => {
  it('parses seeds and overrides, and names each problem', () => {
    expect(parseSeeds('0, 1 2')).toEqual({ seeds: [0, 1, 2], error: null });
    expect(parseSeeds('0,x').error).toMatch(/"x" is not an integer/);
    expect(parseSeeds('1,1').error).toMatch(/seed 1 appears twice/);
    expect(parseSeeds(' ').error).toMatch(/at least one seed/);
    expect(parseOverrides('stages.rl.steps=20\n# note\nmodel.name=tiny')).toEqual({ set: { 'stages.rl.steps': 20, 'model.name': 'tiny' }, error: null });
    expect(parseOverrides('oops').error).toMatch(/line 1: expected key=value/);
    const form = { name: 'a b', methods: [], envs: [], seeds: '', size: 'smoke' as const, overrides: '' };
    expect(Object.keys(validateStudyForm(form)).sort()).toEqual(['envs', 'methods', 'name', 'seeds']);
    expect(validateStudyForm({ ...form, name: 'ok', methods: ['spa'], envs: ['sokoban'], seeds: '0' })).toEqual({});
  });
});

describe('StudiesView', () => {
  it('validates the form, then starts a study with the chosen grid', async () => {
    const { client, start } = mockClient([]);
    const navigate = vi.fn();
    render(<StudiesView client={client} navigate={navigate} />);
    await waitFor(() => expect(screen.getByTestId('study-method-spa')).toBeTruthy());
    expect(screen.getByText(/No studies yet/)).toBeTruthy();

    fireEvent.click(screen.getByTestId('study-start'));
    expect(start).not.toHaveBeenCalled();
    expect(screen.getByTestId('study-error-name').textContent).toMatch(/name/);
    expect(screen.getByTestId('study-error-methods').textContent).toMatch(/at least one method/);
    expect(screen.getByTestId('study-error-envs').textContent).toMatch(/at least one environment/);

    fireEvent.change(screen.getByTestId('study-name'), { target: { value: '../bad' } });
    expect(screen.getByTestId('study-error-name').textContent).toMatch(/letters, digits/);
    fireEvent.change(screen.getByTestId('study-name'), { target: { value: 'sokoban-baselines' } });
    fireEvent.click(screen.getByTestId('study-method-vanilla-rl'));
    fireEvent.click(screen.getByTestId('study-method-spa'));
    fireEvent.click(screen.getByTestId('study-env-sokoban'));
    fireEvent.change(screen.getByTestId('study-seeds'), { target: { value: '0, zero' } });
    expect(screen.getByTestId('study-error-seeds').textContent).toMatch(/"zero" is not an integer/);
    expect((screen.getByTestId('study-start') as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(screen.getByTestId('study-seeds'), { target: { value: '0, 1, 2' } });
    fireEvent.change(screen.getByTestId('study-size'), { target: { value: 'quick' } });
    fireEvent.change(screen.getByTestId('study-overrides'), { target: { value: 'stages.rl.steps=20' } });
    expect(screen.queryByTestId('study-error-seeds')).toBeNull();
    expect(screen.getByTestId('study-grid-size').textContent).toBe('6 runs');
    // the cost: (vanilla-rl 100 s + spa 600 s) x 3 seeds; vanilla-rl's unestimated stage x 3; spa's base trained in its 3 runs
    await waitFor(() => expect(screen.getByTestId('study-cost').textContent).toMatch(/^Estimated: about 35m 00s \+ 3 stage\(s\) not measured yet/));
    expect(screen.getByTestId('study-cost-bootstrap').textContent).toBe('3 of 6 runs train a bootstrap base first (no shipped base fits them)');
    expect((client as unknown as { runs: { estimate: ReturnType<typeof vi.fn> } }).runs.estimate).toHaveBeenCalledWith({ preset: 'spa', size: 'quick', set: { 'stages.rl.steps': 20, 'env.id': 'sokoban' } });

    fireEvent.click(screen.getByTestId('study-start'));
    await waitFor(() => expect(start).toHaveBeenCalledTimes(1));
    expect(start).toHaveBeenCalledWith({ name: 'sokoban-baselines', methods: ['vanilla-rl', 'spa'], envs: ['sokoban'], seeds: [0, 1, 2], size: 'quick', set: { 'stages.rl.steps': 20 } });
    await waitFor(() => expect(navigate).toHaveBeenCalledWith({ view: 'studies', name: 'sokoban-baselines' }));
  });

  it('lists studies with status and progress, stops a running one and resumes a stopped one', async () => {
    const { client, start, stop, settleStop } = mockClient([
      summary({ name: 'live', status: 'running', runs: 3, completed: 2, startedAt: Date.now() - 60_000, progress: { done: 2, failed: 0, total: 8, currentRunId: 'r3' } }),
      summary({ name: 'paused', status: 'stopped', reason: 'stopped on request; start it again to resume', progress: { done: 1, failed: 1, total: 8, currentRunId: null } }),
      summary({ name: 'finished', status: 'completed', progress: { done: 8, failed: 0, total: 8, currentRunId: null } }),
    ]);
    render(<StudiesView client={client} navigate={() => {}} />);
    await waitFor(() => expect(screen.getAllByTestId('study-row')).toHaveLength(3));
    const row = (n: string) => screen.getAllByTestId('study-row').find((r) => r.getAttribute('data-study') === n)!;
    expect(within(row('live')).getByTestId('study-progress').textContent).toBe('2/8');
    expect(row('live').querySelector('.badge')!.textContent).toBe('running');
    expect(within(row('paused')).getByText(/1 stopped or failed/)).toBeTruthy();
    expect(within(row('finished')).queryByTestId('study-resume')).toBeNull();
    expect(within(row('finished')).queryByTestId('study-stop')).toBeNull();

    fireEvent.click(within(row('live')).getByTestId('study-stop'));
    await waitFor(() => expect(stop).toHaveBeenCalledWith({ name: 'live' }));
    // Every row's button is disabled while an action is in flight (a click on it is a no-op): Resume is clicked only
    // once Stop has settled.
    const resume = () => within(row('paused')).getByTestId('study-resume') as HTMLButtonElement;
    expect(resume().disabled).toBe(true);
    settleStop();
    await waitFor(() => expect(resume().disabled).toBe(false));
    fireEvent.click(resume());
    await waitFor(() => expect(start).toHaveBeenCalledWith({ name: 'paused' }));

    // Typing an existing name turns the form into a resume.
    fireEvent.change(screen.getByTestId('study-name'), { target: { value: 'paused' } });
    expect(screen.getByTestId('study-exists').textContent).toMatch(/resumes it/);
    expect(screen.getByTestId('study-start').textContent).toBe('Resume study');
  });

  it('shows the selected study\'s paper-style table with intervals and links to Compare', async () => {
    const { client, table } = mockClient([summary({ name: 'done-grid', methods: ['vanilla-rl', 'spa'], envs: ['sokoban'], status: 'completed', runIds: ['r1', 'r2', 'r3'], runs: 3, completed: 2, progress: { done: 2, failed: 0, total: 4, currentRunId: null } })]);
    const navigate = vi.fn();
    render(<StudiesView client={client} navigate={navigate} name="done-grid" />);
    await waitFor(() => expect(screen.getAllByTestId('study-table-row')).toHaveLength(2));
    expect(table).toHaveBeenCalledWith({ name: 'done-grid' });
    const t = screen.getByTestId('study-table');
    expect(t.querySelector('thead')!.textContent).toContain('Pass@1 / Pass@4');
    const cell = (method: string) => t.querySelector(`tr[data-method="${method}"] td[data-env="sokoban"]`)!.textContent!;
    expect(cell('vanilla-rl')).toContain('12.5 [5.0, 20.0]');
    expect(cell('vanilla-rl')).toContain('30.0 [20.0, 41.0]');
    expect(cell('vanilla-rl')).toContain('2/2 runs');
    expect(cell('spa')).toBe('not finished');
    fireEvent.click(screen.getByTestId('study-compare'));
    expect(navigate).toHaveBeenCalledWith({ view: 'compare', runIds: ['r1', 'r2', 'r3'] });
    expect(screen.queryByTestId('study-differences')).toBeNull();               // none in this table
    expect(screen.queryByTestId('study-world-model')).toBeNull();
  });

  it('shows the paired differences (interval, or n too small) and the world model per method with each seed and the base', async () => {
    const { client, table } = mockClient([summary({ name: 'done-grid', status: 'completed', runIds: ['r1'], runs: 4, completed: 4 })]);
    table.mockImplementation(async () => ({
      ...TABLE,
      differences: [
        { env: 'sokoban', a: 'spa', b: 'vanilla-rl', k: 1, cells: 256, diff: iv(0.031, 0.004, 0.06), smallN: false },
        { env: 'sokoban', a: 'spa', b: 'vanilla-rl', k: 4, cells: 8, diff: iv(-0.02, -0.3, 0.2), smallN: true },
      ],
      worldModel: [{
        method: 'spa', env: 'sokoban', seeds: [0, 1],
        mean: { afterSftObservation: 0.8, afterSftPrediction: 0.05, givenAction: 0.1, givenActionBase: 0.02 },
        bySeed: [{ seed: 0, afterSftObservation: 0.75, afterSftPrediction: 0.04, givenAction: 0.1, givenActionBase: 0.02 },
          { seed: 1, afterSftObservation: 0.85, afterSftPrediction: 0.06, givenAction: 0.1, givenActionBase: 0.02 }],
      }],
    }));
    render(<StudiesView client={client} navigate={vi.fn()} name="done-grid" />);
    await waitFor(() => expect(screen.getAllByTestId('study-difference')).toHaveLength(2));
    const [d1, d4] = screen.getAllByTestId('study-difference');
    expect(d1!.textContent).toContain('3.1 [0.4, 6.0] *');                     // the interval excludes 0
    expect(d4!.textContent).toContain('-2.0 (n too small for an interval)');
    const row = screen.getByTestId('study-world-model-row');
    expect(row.getAttribute('data-method')).toBe('spa');
    const cell = (key: string) => row.querySelector(`[data-testid="study-wm-${key}"]`)!;
    expect(cell('afterSftObservation').textContent).toBe('80.0 / 5.0');
    expect(cell('afterSftObservation').getAttribute('title')).toBe('seed 0: 75.0 · seed 1: 85.0 | prediction seed 0: 4.0 · seed 1: 6.0');
    expect(cell('endObservation').textContent).toBe('– / –');                      // not measured
    expect(cell('givenAction').textContent).toBe('10.0 (2.0)');
  });
});
