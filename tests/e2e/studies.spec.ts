// Studies from the UI: start a smoke study (2 methods × 1 env × 2 seeds) with the form, follow
// its status and progress live, see its paper-style table, and open Compare with its runs.
import { clippedTexts, expect, expectNoSidewaysScroll, shot, shotBothThemes, test } from './helpers.js';

test('start a smoke study from the UI, follow it to completion and read its table', async ({ workbench, consoleProblems }) => {
  test.setTimeout(600_000);   // a hang guard: four smoke runs, one after another: ~1.5 min on a quiet 2-core machine, more on a busy one
  const { page, api } = workbench;
  await page.getByTestId('nav-studies').click();
  await expect(page.getByTestId('studies-view')).toBeVisible();
  await expect(page.getByText('No studies yet')).toBeVisible();

  // The form explains what is missing before anything starts.
  await page.getByTestId('study-start').click();
  await expect(page.getByTestId('study-error-methods')).toBeVisible();
  await page.getByTestId('study-name').fill('ui-smoke');
  await page.getByTestId('study-method-vanilla-rl').check();
  await page.getByTestId('study-method-state-estimation-rl').check();
  await page.getByTestId('study-env-frozenlake').check();
  await page.getByTestId('study-seeds').fill('0, 1');
  await page.getByTestId('study-size').selectOption('smoke');
  await expect(page.getByTestId('study-grid-size')).toHaveText('4 runs');
  await page.getByTestId('study-start').click();

  const row = page.locator('[data-testid="study-row"][data-study="ui-smoke"]');
  await expect(row).toHaveAttribute('data-status', 'running');
  await expect(page).toHaveURL(/#\/studies\/ui-smoke$/);
  await expect(row.getByTestId('study-current-run')).toBeVisible();
  await expect(row.getByTestId('study-stop')).toBeVisible();
  await expectNoSidewaysScroll(page, '[data-testid="studies-view"] .card:has([data-testid="studies-table"])');   // the Stop button is inside the card
  await shot(page, 'studies-running', { docs: true });

  await expect(row).toHaveAttribute('data-status', 'completed', { timeout: 480_000 });
  await expect(row.getByTestId('study-progress')).toHaveText('4/4');
  const table = page.getByTestId('study-table');
  await expect(table.getByTestId('study-table-row')).toHaveCount(2);
  await expect(table.locator('tr[data-method="vanilla-rl"] td[data-env="frozenlake"]')).toContainText('2/2 runs');
  await expect(table.locator('tr[data-method="state-estimation-rl"] td[data-env="frozenlake"]')).toContainText('[');
  await expect(table.locator('thead')).toContainText('Pass@1');
  // paired differences per (run seed, puzzle); the smoke model writes no parseable world-model turn, so no world-model rows
  await expect(page.locator('[data-testid="study-difference"][data-a="vanilla-rl"][data-b="state-estimation-rl"][data-k="1"]')).toContainText('n too small');
  await expect(page.getByTestId('study-world-model')).toHaveCount(0);

  // The runs are ordinary runs of the project.
  const { runs } = await api.runs.list();
  expect(runs.filter((r) => r.name.startsWith('study:ui-smoke:') && r.status === 'completed')).toHaveLength(4);

  expect(await clippedTexts(page, '[data-testid="study-methods"] label')).toEqual([]);   // every method id readable
  await expectNoSidewaysScroll(page);
  await shotBothThemes(page, 'studies', 'studies-dark', { docs: true });

  await page.getByTestId('study-compare').click();
  await expect(page.getByTestId('compare-view')).toBeVisible();
  await expect(page.getByTestId('compare-chip')).toHaveCount(4);
  expect(consoleProblems).toEqual([]);
});
