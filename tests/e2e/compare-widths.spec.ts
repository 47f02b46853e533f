// Compare's results table at 1280 and 1920 px: every column fits (no sideways scroll, no clipped
// header), each row says what its intervals rest on ("n"), and a Pass@k bootstrap over 2 puzzles
// is not shown as an interval beside the Wilson one. The runs carry eval files of the eval stage's
// shape (eval/final.json: episodes, puzzles, samplesPerPuzzle, success, passAtK), written here.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clippedTexts, expect, expectNoSidewaysScroll, shot, test } from './helpers.js';

const iv = (mean: number, low: number, high: number, method: string) => ({ mean, low, high, level: 0.95, method });

test('compare: columns fit at 1280 and 1920 px; n per row; no bootstrap interval on 2 puzzles', async ({ workbench, consoleProblems }) => {
  const { page, api, project, go } = workbench;
  const ids: string[] = [];
  for (const [name, puzzles, success] of [['spa, 64 puzzles', 64, 0.31], ['vanilla, 2 puzzles', 2, 0]] as const) {
    const run = await api.runs.create({ preset: 'sft-only', size: 'smoke', name, start: false });
    ids.push(run.id);
    const dir = join(project.path, 'runs', run.id, 'eval');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'final.json'), JSON.stringify({
      stage: 'eval', step: 0, episodes: puzzles * 4, puzzles, samplesPerPuzzle: 4,
      success: iv(success, Math.max(0, success - 0.1), success + 0.12, 'wilson'),
      passAtK: { 1: iv(success, puzzles > 2 ? success - 0.08 : 0, puzzles > 2 ? success + 0.09 : 0, 'bootstrap'), 4: iv(success * 1.5, success, success * 2, 'bootstrap') },
      avgActions: 3.2,
    }));
  }
  await go(`#/compare/${ids.join(',')}`);
  const table = page.getByTestId('compare-table');
  await expect(table.getByTestId('compare-row')).toHaveCount(2);
  const row = (name: string) => table.getByTestId('compare-row').filter({ hasText: name });
  await expect(row('spa, 64 puzzles').getByTestId('compare-n')).toHaveText('64 puzzles × 4 = 256 episodes');
  await expect(row('spa, 64 puzzles')).toContainText('31.0 [23.0, 40.0]');           // Pass@1's bootstrap over 64 puzzles is shown
  await expect(row('vanilla, 2 puzzles').getByTestId('compare-n')).toHaveText('2 puzzles × 4 = 8 episodes');
  await expect(row('vanilla, 2 puzzles')).not.toContainText('[0.0, 0.0]');           // no bootstrap bracket on 2 puzzles
  await expect(row('vanilla, 2 puzzles')).toContainText('0.0 [0.0, 12.0]');          // the Wilson one stays
  for (const width of [1280, 1920]) {
    await page.setViewportSize({ width, height: width === 1280 ? 800 : 1080 });
    await expectNoSidewaysScroll(page);
    expect(await clippedTexts(page, '[data-testid="compare-table"] th'), `clipped headers at ${width}px`).toEqual([]);
    await shot(page, `compare-table-${width}`, { docs: true });
  }
  expect(consoleProblems).toEqual([]);
});
