// Issue 12 items 5 and 12 in a real browser against the real engine: after a smoke run, the trace
// inspector's group view (the samples of one group side by side), keyboard navigation between
// episodes (j / k), sorting by a column with the filters in the URL, and the world-model probe
// (the model's turn, a prediction for our own action against the truth, stepping on with it).
// Screenshots go to docs/screenshots (inspect-*.png).
import { expect, expectNoSidewaysScroll, setTheme, shot, smokeRun, test } from './helpers.js';

test('group view, j/k navigation, sorting in the URL and the world-model probe', async ({ workbench, consoleProblems }) => {
  test.setTimeout(600_000);
  const { page, api, go } = workbench;
  const runId = await smokeRun(api, 'inspect e2e');
  await setTheme(page, 'light');

  // ── keyboard navigation: j / k follow the list order ──
  const list = await api.rollouts.query({ runId, stage: 'selfplay', limit: 5 });
  expect(list.episodes.length).toBeGreaterThanOrEqual(3);
  await go(`#/trace/${encodeURIComponent(runId)}/${encodeURIComponent(list.episodes[0]!.id)}?stage=selfplay`);
  await expect(page.getByTestId('trace-episode')).toHaveAttribute('data-episode-id', list.episodes[0]!.id);
  // the keys act on the loaded list: wait for it, with the episode marked, before pressing
  // (the episode pane can arrive first; a key pressed before the list is there is ignored)
  await expect(page.locator(`tr.selected[data-episode-id="${list.episodes[0]!.id}"]`)).toBeVisible();
  await expect(page.locator(`tr[data-episode-id="${list.episodes[2]!.id}"]`)).toBeVisible();
  await page.keyboard.press('j');
  await expect(page.getByTestId('trace-episode')).toHaveAttribute('data-episode-id', list.episodes[1]!.id);
  await page.keyboard.press('ArrowDown');
  await expect(page.getByTestId('trace-episode')).toHaveAttribute('data-episode-id', list.episodes[2]!.id);
  await page.keyboard.press('k');
  await expect(page.getByTestId('trace-episode')).toHaveAttribute('data-episode-id', list.episodes[1]!.id);
  expect(page.url()).toContain('stage=selfplay');

  // ── sort by reward, descending: in the URL and in the table ──
  await page.locator('button[data-sort-key="reward"]').click();
  await page.locator('button[data-sort-key="reward"]').click();
  await expect.poll(() => page.url()).toContain('order=desc');
  expect(page.url()).toContain('sort=reward');
  await shot(page, 'inspect-trace-sorted', { docs: true });

  // ── group view: the samples of the selected episode's group ──
  const current = list.episodes[1]!;
  const members = await api.rollouts.query({ runId, stage: current.stage, step: current.step, group: current.group });
  await page.getByRole('button', { name: `Group ${current.group}`, exact: true }).click();
  const group = page.getByTestId('trace-group');
  await expect(group).toBeVisible();
  await expect(group.getByTestId('group-sample')).toHaveCount(members.total);
  const successFlags = await group.getByTestId('group-sample').evaluateAll((els) => els.map((el) => el.getAttribute('data-success')));
  expect(successFlags).toEqual([...successFlags].sort().reverse());        // successes first
  expect(page.url()).toContain('show=group');
  await expectNoSidewaysScroll(page);
  await shot(page, 'inspect-group', { docs: true });

  // ── world-model probe on the run's SFT checkpoint ──
  await go(`#/probe/${encodeURIComponent(runId)}?seed=3`);
  await expect(page.getByTestId('probe-view')).toBeVisible();
  await page.getByRole('button', { name: 'Let the model write its turn' }).click();
  const result = page.getByTestId('probe-result');
  await expect(result).toBeVisible({ timeout: 120_000 });
  await expect(result).toHaveAttribute('data-turn', '0');
  await expect(page.getByTestId('probe-true-before').locator('svg')).toBeVisible();
  const action = await page.getByLabel('Your action').locator('option').first().textContent();
  await page.getByRole('button', { name: 'Predict the next state for it' }).click();
  await expect(page.getByTestId('probe-given-true').locator('svg')).toBeVisible({ timeout: 120_000 });
  await expect(page.getByTestId('probe-action-card')).toContainText(`True next state: ${action}`);
  await shot(page, 'inspect-probe', { docs: true });
  await page.getByRole('button', { name: 'Step on with my action' }).click();
  await expect(result).toHaveAttribute('data-turn', '1', { timeout: 120_000 });
  expect(consoleProblems).toEqual([]);
});
