// @vitest-environment jsdom
// Dataset browser and its text diff: original vs ground-truth-corrected responses with the
// replaced spans marked, paged rows, drop reasons with counts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import type { WorkbenchApi } from '../../core/api/contract.js';
import DatasetView from '../../renderer/src/views/DatasetView.js';
import { diffText, tokenize } from '../../renderer/src/boards/text-diff.js';

afterEach(cleanup);

describe('diffText', () => {
  it('marks exactly the replaced spans and reconstructs both texts', () => {
    const a = '<observation>P at (1,2); box at (2,2)</observation> <answer>Up</answer>';
    const b = '<observation>P at (1,3); box at (2,2)</observation> <answer>Up</answer>';
    const parts = diffText(a, b);
    expect(parts.filter((p) => p.kind !== 'ins').map((p) => p.text).join('')).toBe(a);
    expect(parts.filter((p) => p.kind !== 'del').map((p) => p.text).join('')).toBe(b);
    expect(parts.filter((p) => p.kind === 'del').map((p) => p.text)).toEqual(['2']);
    expect(parts.filter((p) => p.kind === 'ins').map((p) => p.text)).toEqual(['3']);
  });

  it('returns one same part for equal texts and handles empty sides', () => {
    expect(diffText('a b', 'a b')).toEqual([{ kind: 'same', text: 'a b' }]);
    expect(diffText('', 'x y')).toEqual([{ kind: 'ins', text: 'x y' }]);
    expect(diffText('x', '')).toEqual([{ kind: 'del', text: 'x' }]);
    expect(tokenize('ab, c')).toEqual(['ab', ',', ' ', 'c']);
  });

  it('falls back to one replaced block for huge different middles instead of freezing', () => {
    const a = Array.from({ length: 3000 }, (_, i) => `a${i}`).join(' ');
    const b = Array.from({ length: 3000 }, (_, i) => `b${i}`).join(' ');
    const parts = diffText(a, b);
    expect(parts.map((p) => p.kind)).toEqual(['del', 'ins']);
  });
});

describe('DatasetView', () => {
  const rows = Array.from({ length: 45 }, (_, i) => ({
    id: `e${i}-t0`, episodeId: `e${i}`, seed: i, turn: 0, prompt: `prompt ${i}`,
    original: `<prediction>player at (${i},1)</prediction>`, corrected: `<prediction>player at (${i},2)</prediction>`,
  }));
  function mockApi() {
    const query = vi.fn(async (req: { offset?: number; limit?: number; split?: string }) => {
      const offset = req.offset ?? 0;
      return { rows: rows.slice(offset, offset + (req.limit ?? 50)), total: rows.length, skipped: 0 };
    });
    const api = {
      runs: { list: vi.fn(async () => ({ runs: [], total: 0 })) },
      datasets: { query, stats: vi.fn(async () => ({ stats: { train: 45, val: 5, dropped: { 'format error': 7, 'no effective action': 3 } } })) },
    } as unknown as WorkbenchApi;
    return { api, query };
  }

  it('makes whitespace-only corrections visible and labels them', async () => {
    const api = {
      runs: { list: vi.fn(async () => ({ runs: [], total: 0 })) },
      datasets: {
        query: vi.fn(async () => ({ rows: [{ id: 'w-t0', episodeId: 'w', seed: 1, turn: 0, prompt: 'p', original: '<observation>\n#P#\n</observation>', corrected: '<observation>#P#</observation>' }], total: 1, skipped: 0 })),
        stats: vi.fn(async () => ({ stats: null })),
      },
    } as unknown as WorkbenchApi;
    const { container } = render(<DatasetView api={api} projectPath="/p" runId="run-1" navigate={() => {}} />);
    await waitFor(() => expect(container.querySelector('article[data-row-id="w-t0"]')).not.toBeNull());
    const row = container.querySelector('article[data-row-id="w-t0"]')!;
    expect(Array.from(row.querySelectorAll('del.diff-ws')).map((e) => e.textContent)).toEqual(['↵\n', '↵\n']);
    expect(row.textContent).toContain('whitespace only');
    expect(screen.getByText(/has not written datasets\/sft-stats.json/)).toBeTruthy();
  });

  it('shows rows side by side with the corrected span highlighted, pages, and lists drop reasons', async () => {
    const { api, query } = mockApi();
    const navigate = vi.fn();
    const { container } = render(<DatasetView api={api} projectPath="/p" runId="run-1" navigate={navigate} />);
    await waitFor(() => expect(container.querySelectorAll('article.dataset-row')).toHaveLength(20));
    const first = container.querySelector('article[data-row-id="e0-t0"]')!;
    expect(Array.from(first.querySelectorAll('del.diff-del')).map((e) => e.textContent)).toEqual(['1']);
    expect(Array.from(first.querySelectorAll('ins.diff-ins')).map((e) => e.textContent)).toEqual(['2']);
    const stats = screen.getByTestId('dataset-stats');
    expect(stats.querySelector('tr[data-reason="format error"]')?.textContent).toContain('7');
    expect(stats.textContent).toContain('10 dropped');
    fireEvent.click(screen.getAllByRole('button', { name: 'Next page' })[0]!);
    await waitFor(() => expect(container.querySelector('article[data-row-id="e20-t0"]')).not.toBeNull());
    expect(query).toHaveBeenLastCalledWith(expect.objectContaining({ runId: 'run-1', split: 'train', offset: 20, limit: 20 }));
    fireEvent.click(screen.getByRole('button', { name: 'episode e20 ›' }));
    expect(navigate).toHaveBeenCalledWith({ view: 'trace', runId: 'run-1', episodeId: 'e20' });
  });
});
