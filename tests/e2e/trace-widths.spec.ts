// The trace list fits at the widths people use (1280 and 1920 px): every column of the episode
// table visible, none clipped, no sideways scroll in the list; screenshots at both widths.
import { expect, shot, test, clippedTexts } from './helpers.js';

test('the trace list fits its columns at 1280 and 1920 px', async ({ workbench, consoleProblems }) => {
  const { page, api, go } = workbench;
  const run = await api.runs.create({ preset: 'diagnostic', size: 'quick', name: 'trace widths', set: { 'stages.diag-wait.steps': 2, 'stages.diag-wait.delayMs': 1 }, start: true });
  await expect.poll(async () => (await api.runs.get({ runId: run.id })).status, { timeout: 120_000 }).toBe('completed');
  await go(`#/trace/${encodeURIComponent(run.id)}`);
  const table = page.locator('.trace-table');
  await expect(table.locator('tbody tr').first()).toBeVisible();
  for (const width of [1280, 1920]) {
    await page.setViewportSize({ width, height: width === 1280 ? 800 : 1080 });
    await expect(table.locator('th')).toHaveCount(9);
    const overflow = await page.locator('.trace-table-scroll').evaluate((el) => el.scrollWidth - el.clientWidth);
    expect(overflow, `the episode table scrolls sideways by ${overflow}px at ${width}px`).toBeLessThanOrEqual(1);
    // the id column ellipsises by design (full id in its tooltip); every other cell shows all of its text
    expect(await clippedTexts(page, '.trace-table th, .trace-table td:not(.trace-id)'), `clipped at ${width}px`).toEqual([]);
    await shot(page, `trace-list-${width}`, { docs: true });
  }
  expect(consoleProblems).toEqual([]);
});
