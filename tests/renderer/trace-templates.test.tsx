// @vitest-environment jsdom
// Template editor against a mocked API: the loaded source is in CodeMirror, edits trigger a
// debounced preview with the new text, diagnostics appear in the editor and as text with line
// and column, saving sends the text with its parent and shows the new hash, versions diff.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { EditorView } from '@codemirror/view';
import type { TemplatePreview, WorkbenchApi } from '../../core/api/contract.js';
import TemplatesView, { findPerplexities, parseOptions } from '../../renderer/src/views/TemplatesView.js';
import { placeDiagnostic } from '../../renderer/src/editor/codemirror-setup.js';
import { Text } from '@codemirror/state';
import { SAMPLE_BOARDS } from '../../renderer/src/boards/sample-boards.js';
import { stubRangeLayout } from './jsdom-layout.js';

afterEach(cleanup);

beforeAll(stubRangeLayout);

const slow = { timeout: 5000 };

const V1 = '{\n  "name": "mine",\n  "parts": {\n    "state": "{{ grid }}"\n  }\n}';
const V2 = '{\n  "name": "mine",\n  "parts": {\n    "state": "{{ coordinates }}"\n  }\n}';

function mockApi() {
  const preview = vi.fn(async (req: { source?: string; seed?: number }): Promise<TemplatePreview> => {
    const broken = (req.source ?? '').includes('{% bad');
    return {
      ok: !broken,
      diagnostics: broken ? [{ message: 'unknown tag "bad"', line: 4, column: 15, severity: 'error' }] : [],
      hash: broken ? null : `hash-of-${(req.source ?? '').length}`,
      stateText: broken ? null : `STATE[${req.source?.includes('coordinates') ? 'coords' : 'grid'}] seed ${req.seed}`,
      prompt: broken ? null : 'first user message', messages: [], board: SAMPLE_BOARDS.sokoban,
    };
  });
  const save = vi.fn(async (req: { name: string; source: string; parent?: string }) => ({
    version: { name: req.name, hash: 'ffff0000aaaa1111', createdAt: 2, description: '', parent: req.parent ?? null, source: req.source },
    created: true, diagnostics: [],
  }));
  const api = {
    runs: { list: vi.fn(async () => ({ runs: [], total: 0 })) },
    envs: { list: vi.fn(async () => ({ envs: [{ id: 'sokoban', title: 'Sokoban', description: '', actions: [], defaultOptions: {} }] })) },
    evals: { list: vi.fn(async () => ({ results: [] })) },
    templates: {
      list: vi.fn(async () => ({ templates: [{ name: 'mine', kind: 'saved', description: '', latestHash: 'bbbb', versionCount: 2 }] })),
      get: vi.fn(async (req: { name: string; hash?: string }) => ({
        name: req.name, hash: req.hash ?? 'bbbb', createdAt: 1, description: '', parent: null, source: req.hash === 'aaaa' ? V1 : V2,
      })),
      versions: vi.fn(async () => ({ versions: [
        { name: 'mine', hash: 'bbbb', createdAt: 2, description: 'coords', parent: 'aaaa' },
        { name: 'mine', hash: 'aaaa', createdAt: 1, description: 'grid', parent: null },
      ] })),
      preview, save,
    },
  } as unknown as WorkbenchApi;
  return { api, preview, save };
}

/** The editor lives in a shadow root (CSP-safe styles): query inside it. */
function inEditor(selector: string): Element | null {
  return screen.getByTestId('template-editor').shadowRoot?.querySelector(selector) ?? null;
}

function editorView(): EditorView {
  const dom = inEditor('.cm-editor') as HTMLElement;
  const view = EditorView.findFromDOM(dom);
  if (!view) throw new Error('no editor view');
  return view;
}

describe('TemplatesView', () => {
  it('previews the loaded template, re-previews after an edit, shows errors with line and column, saves a new version', async () => {
    const { api, preview, save } = mockApi();
    render(<TemplatesView api={api} projectPath="/p" navigate={() => {}} previewDelayMs={20} />);
    await waitFor(() => expect(editorView().state.doc.toString()).toBe(V2), slow);
    await waitFor(() => expect(screen.getByTestId('preview-state').textContent).toBe('STATE[coords] seed 0'), slow);
    expect(preview).toHaveBeenLastCalledWith(expect.objectContaining({ source: V2, env: { id: 'sokoban', options: {} }, seed: 0 }));

    // an edit that breaks the template: error in the editor and as text
    const view = editorView();
    const at = view.state.doc.toString().indexOf('{{ coordinates }}');
    view.dispatch({ changes: { from: at, to: at + '{{ coordinates }}'.length, insert: '{% bad %}' } });
    await waitFor(() => expect(screen.getByTestId('template-diagnostics').textContent).toContain('line 4, column 15: unknown tag "bad"'), slow);
    await waitFor(() => expect(inEditor('.cm-diag-error')).not.toBeNull(), slow);
    expect(screen.getByTestId('template-base').textContent).toContain('modified');

    // fix it differently and change the seed: the preview follows
    const text = view.state.doc.toString();
    view.dispatch({ changes: { from: 0, to: text.length, insert: V1 } });
    fireEvent.click(screen.getByRole('button', { name: 'Next seed' }));
    await waitFor(() => expect(screen.getByTestId('preview-state').textContent).toBe('STATE[grid] seed 1'), slow);
    expect(inEditor('.cm-diag-error')).toBeNull();

    fireEvent.change(screen.getByLabelText('Environment options'), { target: { value: '{"width": 8}' } });
    await waitFor(() => expect(preview).toHaveBeenLastCalledWith(expect.objectContaining({ env: { id: 'sokoban', options: { width: 8 } }, seed: 1 })), slow);

    fireEvent.change(screen.getByLabelText('Version description'), { target: { value: 'back to grid' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save new version' }));
    await waitFor(() => expect(screen.getByTestId('save-result').textContent).toContain('Saved new version ffff0000aaaa'), slow);
    expect(save).toHaveBeenCalledWith({ name: 'mine', source: V1, description: 'back to grid', parent: 'bbbb' });
  });

  it('lists versions and diffs two of them', async () => {
    const { api } = mockApi();
    render(<TemplatesView api={api} projectPath="/p" navigate={() => {}} />);
    const diff = await screen.findByTestId('template-diff');
    await waitFor(() => expect(diff.getAttribute('data-chunks')).toBe('1'), slow);
    expect(diff.shadowRoot?.textContent).toContain('grid');
    expect(diff.shadowRoot?.textContent).toContain('coordinates');
    expect(diff.textContent).toBe(''); // nothing outside the shadow root
    expect(document.querySelectorAll('tr[data-version]')).toHaveLength(2);
  });
});

describe('template editor helpers', () => {
  it('places a one-based line/column diagnostic on the word at that position, clamped to the document', () => {
    const doc = Text.of(['abc', '  foo.bar baz']);
    expect(placeDiagnostic(doc, { message: 'm', line: 2, column: 3, severity: 'error' })).toMatchObject({ from: 6, to: 13, line: 2 });
    expect(placeDiagnostic(doc, { message: 'm', line: 99, column: 99, severity: 'error' })).toMatchObject({ line: 2, to: doc.length });
    expect(placeDiagnostic(doc, { message: 'm', line: null, column: null, severity: 'error' })).toBeNull();
  });

  it('parses environment options as a JSON object and explains anything else', () => {
    expect(parseOptions('')).toEqual({ value: {}, error: null });
    expect(parseOptions('{"size": 9}')).toEqual({ value: { size: 9 }, error: null });
    expect(parseOptions('[1]').error).toContain('expected a JSON object');
    expect(parseOptions('{size: 9}').error).toContain('not valid JSON');
  });

  it('finds recorded perplexities in nested evaluation results', () => {
    expect(findPerplexities({ passAt1: 0.5, wm: { statePerplexity: 3.2, ppl: 4, other: 1 }, notes: 'x' }))
      .toEqual([{ key: 'wm.statePerplexity', value: 3.2 }, { key: 'wm.ppl', value: 4 }]);
  });
});

describe('part-relative template positions', () => {
  it('maps a Liquid position inside parts.<part> to the editor line and column', async () => {
    const { mapPartPosition, toEditorDiagnostics } = await import('../../renderer/src/editor/template-positions.js');
    const source = '{\n  "name": "x",\n  "parts": {\n    "turn": "Turn {{ turn }}:\\nState:\\n{% bad %}",\n    "state": "{{ grid }}"\n  }\n}';
    // "{% bad %}" is on decoded line 3, column 1 of parts.turn
    const pos = mapPartPosition(source, 'turn', 3, 1)!;
    expect(pos.line).toBe(4);
    expect(source.slice(pos.offset, pos.offset + 9)).toBe('{% bad %}');
    expect(pos.column).toBe(source.split('\n')[3]!.indexOf('{% bad %}') + 1);
    const [d] = toEditorDiagnostics(source, [{ message: 'turn: tag "bad" not found', line: 3, column: 4, severity: 'error' as const }]);
    expect(d).toMatchObject({ line: 4, column: pos.column + 3 });
    // JSON errors (no part prefix) stay as they are
    expect(toEditorDiagnostics(source, [{ message: 'not valid JSON', line: 2, column: 5, severity: 'error' as const }])[0]).toMatchObject({ line: 2, column: 5 });
    expect(mapPartPosition(source, 'format', 1, 1)).toBeNull();
  });
});
