// @vitest-environment jsdom
// The template editor's "State perplexity" panel against a mocked API: picking a run lists its
// checkpoints, Compute sends the editor's current (unsaved) text with the env, checkpoint and
// sample count to templates.perplexity and shows the number; an edit marks the result stale; a
// failure shows the error message (with the process output); recorded eval values stay visible.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { EditorView } from '@codemirror/view';
import type { TemplatePerplexity, WorkbenchApi } from '../../core/api/contract.js';
import TemplatesView, { parseSamples } from '../../renderer/src/views/TemplatesView.js';
import { SAMPLE_BOARDS } from '../../renderer/src/boards/sample-boards.js';
import { stubRangeLayout } from './jsdom-layout.js';

afterEach(cleanup);

beforeAll(stubRangeLayout);

const slow = { timeout: 5000 };
const SOURCE = '{\n  "name": "mine",\n  "parts": {\n    "state": "{{ grid }}"\n  }\n}';

const checkpoint = (name: string, stage: string, step: number) => ({ name, dir: `/p/runs/r1/checkpoints/${name}`, stage, step, created: null, role: 'policy' as const });

function result(req: { source?: string; samples?: number; checkpoint?: string }): TemplatePerplexity {
  return {
    perplexity: 12.34567, meanNll: Math.log(12.34567), tokens: 321, rows: req.samples ?? 8, samples: req.samples ?? 8, seedStart: 3_000_000,
    runId: 'r1', checkpoint: checkpoint(req.checkpoint ?? 'sft-epoch-1', 'sft', 4), template: { name: 'mine', hash: 'abcdef0123456789', from: 'text' },
    env: { id: 'sokoban', options: {} }, backend: 'wasm', maxContext: 1024, longestRow: 400, wallSeconds: 1.5, processSeconds: 2.75,
  };
}

function mockApi(perplexity: (req: Record<string, unknown>) => Promise<TemplatePerplexity>) {
  const perplexityFn = vi.fn(perplexity);
  const checkpoints = vi.fn(async () => ({ runId: 'r1', latest: 'sft-epoch-1', checkpoints: [checkpoint('bootstrap', 'bootstrap', 1), checkpoint('sft-epoch-1', 'sft', 4)] }));
  const api = {
    runs: {
      list: vi.fn(async () => ({ runs: [{ id: 'r1', name: 'spa · sokoban', env: 'sokoban', status: 'completed' }], total: 1 })),
      get: vi.fn(async () => ({ id: 'r1', templateHash: 'other' })),
    },
    envs: { list: vi.fn(async () => ({ envs: [{ id: 'sokoban', title: 'Sokoban', description: '', actions: [], defaultOptions: {} }] })) },
    inspect: {
      runTemplate: vi.fn(async () => ({ runId: 'r1', pinned: true, name: 'mine', hash: 'runhash', recordedHash: 'runhash', responseFormat: 'world-model', source: SOURCE, env: { id: 'sokoban', options: {} } })),
    },
    evals: { list: vi.fn(async () => ({ results: [{ id: 'final', stage: 'eval', step: 0, time: 1, result: { statePerplexity: { 'tiny-spa': { perplexity: 7.5, tokens: 10 } } } }] })) },
    templates: {
      list: vi.fn(async () => ({ templates: [{ name: 'mine', kind: 'saved', description: '', latestHash: 'bbbb', versionCount: 1 }] })),
      get: vi.fn(async (req: { name: string }) => ({ name: req.name, hash: 'bbbb', createdAt: 1, description: '', parent: null, source: SOURCE })),
      versions: vi.fn(async () => ({ versions: [{ name: 'mine', hash: 'bbbb', createdAt: 1, description: '', parent: null }] })),
      preview: vi.fn(async () => ({ ok: true, diagnostics: [], hash: 'h', stateText: 'S', prompt: 'P', messages: [], board: SAMPLE_BOARDS.sokoban })),
      checkpoints,
      perplexity: perplexityFn,
    },
  } as unknown as WorkbenchApi;
  return { api, perplexity: perplexityFn, checkpoints };
}

function editorView(): EditorView {
  const dom = screen.getByTestId('template-editor').shadowRoot?.querySelector('.cm-editor') as HTMLElement;
  const view = EditorView.findFromDOM(dom);
  if (!view) throw new Error('no editor view');
  return view;
}

async function pickRunAndCheckpoint(): Promise<void> {
  await waitFor(() => expect(editorView().state.doc.toString()).toBe(SOURCE), slow);
  await waitFor(() => expect(screen.getByRole('option', { name: /spa · sokoban/ })).toBeTruthy(), slow);
  fireEvent.change(screen.getByLabelText('Checkpoint of run'), { target: { value: 'r1' } });
  await waitFor(() => expect(screen.getByRole('option', { name: 'latest (sft-epoch-1)' })).toBeTruthy(), slow);
}

describe('TemplatesView state perplexity panel', () => {
  it('computes the editor text under the chosen checkpoint and shows the number', async () => {
    const { api, perplexity, checkpoints } = mockApi(async (req) => result(req));
    render(<TemplatesView api={api} projectPath="/p" navigate={() => {}} previewDelayMs={10} />);
    const compute = screen.getByRole('button', { name: 'Compute' }) as HTMLButtonElement;
    expect(compute.disabled).toBe(true);                      // no run yet
    await pickRunAndCheckpoint();
    expect(checkpoints).toHaveBeenCalledWith({ runId: 'r1' });
    // the recorded evaluation values stay as a secondary line
    await waitFor(() => expect(screen.getByTestId('perplexity').textContent).toContain('Recorded by the run'), slow);
    expect(screen.getByTestId('perplexity').textContent).toContain('7.500');

    // unsaved edit: the computation must use the editor's current text
    const view = editorView();
    const edited = SOURCE.replace('{{ grid }}', '{{ grid }}\\n{{ spa_coordinates }}');
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: edited } });
    fireEvent.change(screen.getByLabelText('Checkpoint'), { target: { value: 'bootstrap' } });
    fireEvent.change(screen.getByLabelText('Samples'), { target: { value: '4' } });
    await waitFor(() => expect((screen.getByRole('button', { name: 'Compute' }) as HTMLButtonElement).disabled).toBe(false), slow);
    fireEvent.click(screen.getByRole('button', { name: 'Compute' }));
    await waitFor(() => expect(screen.getByTestId('live-perplexity-value').textContent).toBe('12.346'), slow);
    expect(perplexity).toHaveBeenCalledTimes(1);
    expect(perplexity).toHaveBeenCalledWith({ runId: 'r1', source: edited, env: { id: 'sokoban', options: {} }, samples: 4, checkpoint: 'bootstrap' });
    expect(screen.getByTestId('live-perplexity').textContent).toContain('bootstrap');
    expect(screen.getByTestId('live-perplexity').textContent).toContain('321 tokens · 4 rows');
    expect(screen.queryByTestId('live-perplexity-stale')).toBeNull();

    // another edit: the shown number is marked stale
    view.dispatch({ changes: { from: 0, to: 0, insert: ' ' } });
    await waitFor(() => expect(screen.getByTestId('live-perplexity-stale')).toBeTruthy(), slow);
  });

  it("opens the run's own template with its hash; warns when the editor's template differs from the run's (issue 12, item 6)", async () => {
    const { api } = mockApi(async (req) => result(req));
    const preview = (api.templates.preview as unknown as ReturnType<typeof vi.fn>);
    preview.mockImplementation(async (req: { source: string }) => ({ ok: true, diagnostics: [], hash: req.source === SOURCE ? 'runhash' : 'edited', stateText: 'S', prompt: 'P', messages: [], board: SAMPLE_BOARDS.sokoban }));
    render(<TemplatesView api={api} projectPath="/p" runId="r1" navigate={() => {}} previewDelayMs={10} />);
    await waitFor(() => expect(screen.getByTestId('run-template-banner').textContent).toContain('mine@runhash'), slow);
    expect(api.inspect.runTemplate).toHaveBeenCalledWith({ runId: 'r1' });
    expect(api.templates.get).not.toHaveBeenCalled();          // not the first preset: the run's pinned file
    await waitFor(() => expect(editorView().state.doc.toString()).toBe(SOURCE), slow);
    await waitFor(() => expect(preview).toHaveBeenCalled(), slow);
    expect(screen.queryByTestId('perplexity-template-differs')).toBeNull();
    const view = editorView();
    view.dispatch({ changes: { from: 0, to: 0, insert: ' ' } });
    await waitFor(() => expect(screen.getByTestId('perplexity-template-differs').textContent).toContain('differs from the template run r1 used (mine@runhash)'), slow);
  });

  it('shows a running state, then the error message and the process output on failure', async () => {
    let fail!: (e: unknown) => void;
    const { api } = mockApi(() => new Promise<TemplatePerplexity>((_resolve, reject) => { fail = reject; }));
    render(<TemplatesView api={api} projectPath="/p" navigate={() => {}} previewDelayMs={10} />);
    await pickRunAndCheckpoint();
    await waitFor(() => expect((screen.getByRole('button', { name: 'Compute' }) as HTMLButtonElement).disabled).toBe(false), slow);
    fireEvent.click(screen.getByRole('button', { name: 'Compute' }));
    await waitFor(() => expect(screen.getByRole('button', { name: 'Computing…' })).toBeTruthy(), slow);
    expect((screen.getByRole('button', { name: 'Computing…' }) as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId('live-perplexity-status').textContent).toContain('computing on 8 sampled states');
    fail({
      name: 'ValidationError',
      message: 'templates.perplexity: template "mine" does not fit the model context: the row for sokoban seed 3000000 is 1462 tokens',
      details: { where: 'templates.perplexity template (sokoban, seed 3000000)', expected: 'at most 1024 tokens', received: '1462 tokens', stderrTail: ['error: template "mine" does not fit the model context'] },
    });
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('State perplexity: ValidationError: templates.perplexity: template "mine" does not fit the model context');
    expect(alert.textContent).toContain('expected: at most 1024 tokens');
    expect(screen.getByTestId('live-perplexity-stderr').textContent).toContain('error: template "mine" does not fit');
    expect(screen.queryByTestId('live-perplexity')).toBeNull();
    expect((screen.getByRole('button', { name: 'Compute' }) as HTMLButtonElement).disabled).toBe(false);
  });

  it('validates the sample count', async () => {
    expect(parseSamples('8')).toEqual({ value: 8, error: null });
    expect(parseSamples('0').error).toContain('1 to 256');
    expect(parseSamples('many').error).toContain('"many"');
    const { api } = mockApi(async (req) => result(req));
    render(<TemplatesView api={api} projectPath="/p" navigate={() => {}} previewDelayMs={10} />);
    await pickRunAndCheckpoint();
    fireEvent.change(screen.getByLabelText('Samples'), { target: { value: '999' } });
    await waitFor(() => expect(screen.getByText(/samples: expected a whole number from 1 to 256/)).toBeTruthy(), slow);
    expect((screen.getByRole('button', { name: 'Compute' }) as HTMLButtonElement).disabled).toBe(true);
  });
});
