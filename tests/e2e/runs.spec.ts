// Issue 6: create a project, configure and start a run from the New-run form (field-level
// validation), watch its progress advance live, see charts and the log, stop and resume,
// the run table (sort, filter, select), compare two runs (table, curves, config differences).
import type { WorkbenchClient } from '../../core/api/contract.js';
import { expect, setTheme, shot, test } from './helpers.js';

async function waitForStatus(api: WorkbenchClient, runId: string, statuses: string[], timeoutMs = 90_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await api.runs.get({ runId });
    if (statuses.includes(run.status)) return run.status;
    if (Date.now() > deadline) throw new Error(`run ${runId} is ${run.status}, expected one of ${statuses.join(', ')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

test('configure a run with field validation, start it and watch progress advance', async ({ workbench, consoleProblems }) => {
  const { page } = workbench;
  await page.getByTestId('new-run-button').click();
  await expect(page.getByTestId('new-run-view')).toBeVisible();
  await page.getByTestId('preset-diagnostic').click();
  await page.getByTestId('size-select').selectOption('quick');
  await expect(page.getByTestId('stage-plan')).toContainText('diag-wait');
  await expect(page.getByTestId('env-preview')).toBeVisible();
  await expect(page.getByTestId('preview-prompt')).not.toBeEmpty();

  // Bad input is explained at the field, and blocks creation.
  const seed = page.locator('input[data-path="seeds.base"]');
  await seed.fill('1.5');
  await expect(page.locator('[data-field="seeds.base"] [data-testid="field-error"]')).toContainText('expected an integer');
  await expect(page.getByTestId('create-start')).toBeDisabled();
  await expect(page.getByTestId('form-invalid')).toBeVisible();
  await seed.evaluate((el) => el.scrollIntoView({ block: 'center' }));
  await shot(page, 'new-run-validation');
  await seed.fill('7');
  await expect(page.locator('[data-field="seeds.base"] [data-testid="field-error"]')).toHaveCount(0);
  await expect(page.getByTestId('create-start')).toBeEnabled();
  await page.getByTestId('new-run-view').evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await shot(page, 'new-run-form');

  await page.getByTestId('create-start').click();
  await expect(page.getByTestId('run-view')).toBeVisible();
  await expect(page.getByTestId('stage-pipeline')).toBeVisible();
  const stage = page.getByTestId('stage-diag-wait');
  await expect(stage).toBeVisible();
  // progress advances: the counter shows a value, then a larger one (or the stage completes)
  await expect(stage.getByTestId('stage-count')).toHaveText(/^\d+\/\d+$/, { timeout: 30_000 });
  const first = Number((await stage.getByTestId('stage-count').textContent())!.split('/')[0]);
  await expect.poll(async () => {
    const status = await stage.getAttribute('data-stage-status');
    if (status === 'completed') return Number.POSITIVE_INFINITY;
    return Number((await stage.getByTestId('stage-count').textContent())!.split('/')[0]);
  }, { timeout: 30_000 }).toBeGreaterThan(first);
  await shot(page, 'run-view-progress');
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'completed', { timeout: 90_000 });
  await expect(page.getByTestId('charts').locator('.chart-card').first()).toBeVisible();
  await expect(page.getByTestId('charts').locator('canvas').first()).toBeVisible();
  await shot(page, 'run-view-completed');
  await setTheme(page, 'dark');
  await shot(page, 'run-view-completed-dark');
  await setTheme(page, 'light');
  await page.getByRole('tab', { name: /Log/ }).click();
  await expect(page.getByTestId('log-pane')).toContainText('completed');
  await shot(page, 'run-view-log');
  await page.getByRole('tab', { name: 'Config' }).click();
  await expect(page.getByTestId('run-config')).toContainText('"base": 7');
  expect(consoleProblems).toEqual([]);
});

test('a smoke SPA run started from the form trains through every stage', async ({ workbench, consoleProblems }) => {
  const { page } = workbench;
  await workbench.go('#/new-run');
  await page.getByTestId('preset-spa').click();
  await page.getByTestId('size-select').selectOption('smoke');
  await expect(page.getByTestId('stage-plan')).toContainText('selfplay');
  await expect(page.getByTestId('create-start')).toBeEnabled();
  await page.getByTestId('create-start').click();
  await expect(page.getByTestId('run-view')).toBeVisible();
  for (const stage of ['selfplay', 'sft', 'rl', 'eval']) await expect(page.getByTestId(`stage-${stage}`)).toBeVisible();
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'completed', { timeout: 110_000 });
  await expect(page.getByTestId('stage-rl')).toHaveAttribute('data-stage-status', 'completed');
  await expect(page.getByTestId('charts').locator('canvas').first()).toBeVisible();
  await page.getByTestId('charts').locator('.chart-card').first().scrollIntoViewIfNeeded();
  await shot(page, 'run-view-spa-smoke');
  expect(consoleProblems).toEqual([]);
});

test('stop a running run and resume it', async ({ workbench }) => {
  const { page, api } = workbench;
  const run = await api.runs.create({ preset: 'diagnostic', size: 'quick', set: { 'stages.diag-wait.steps': 400, 'stages.diag-wait.delayMs': 50 }, start: true });
  await workbench.go(`#/run/${run.id}`);
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'running', { timeout: 30_000 });
  await page.getByTestId('stop-run').click();
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'stopped', { timeout: 30_000 });
  await expect(page.getByTestId('resume-run')).toBeVisible();
  await shot(page, 'run-view-stopped');
  await page.getByTestId('resume-run').click();
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', /running|completed/, { timeout: 30_000 });
  await api.runs.stop({ runId: run.id }).catch(() => undefined);
  await waitForStatus(api, run.id, ['stopped', 'completed', 'failed']);
});

test('the run table sorts, filters and selects; an SPA and a vanilla-RL run are compared', async ({ workbench }) => {
  test.setTimeout(300_000);
  const { page, api } = workbench;
  const a = await api.runs.create({ preset: 'spa', size: 'smoke', name: 'alpha run', set: { 'seeds.base': 1 }, start: true });
  await waitForStatus(api, a.id, ['completed'], 110_000);
  const b = await api.runs.create({ preset: 'vanilla-rl', size: 'smoke', name: 'beta run', set: { 'seeds.base': 2 }, start: true });
  await waitForStatus(api, b.id, ['completed'], 110_000);
  await workbench.go('#/runs');
  const table = page.getByTestId('runs-table');
  await expect(table.locator('tbody tr[data-row-id]')).toHaveCount(2);
  await expect(table.getByTestId('row-count')).toHaveText('2 rows');
  await table.getByRole('searchbox').fill('beta');
  await expect(table.locator('tbody tr[data-row-id]')).toHaveCount(1);
  await expect(table.getByTestId('row-count')).toHaveText('1 of 2 rows');
  await table.getByRole('searchbox').fill('');
  // sort by name ascending: alpha first
  await table.locator('th', { hasText: 'Name' }).click();
  await expect(table.locator('tbody tr[data-row-id]').first()).toContainText('alpha run');
  await table.locator('th', { hasText: 'Name' }).click();
  await expect(table.locator('tbody tr[data-row-id]').first()).toContainText('beta run');
  await table.getByLabel(`Select ${a.id}`).check();
  await table.getByLabel(`Select ${b.id}`).check();
  await shot(page, 'runs-table');
  await setTheme(page, 'dark');
  await shot(page, 'runs-table-dark');
  await setTheme(page, 'light');

  await page.getByTestId('compare-selected').click();
  await expect(page.getByTestId('compare-view')).toBeVisible();
  await expect(page.getByTestId('compare-chip')).toHaveCount(2);
  const rows = page.getByTestId('compare-table').getByTestId('compare-row');
  await expect(rows).toHaveCount(2);
  await expect(page.getByTestId('compare-table')).toContainText('Pass@1');
  await expect(rows.first()).toContainText(/\d+\.\d/);      // evaluated numbers, not dashes
  await shot(page, 'compare-table');
  await page.getByRole('tab', { name: 'Curves' }).click();
  await expect(page.getByTestId('compare-charts').locator('canvas').first()).toBeVisible();
  await shot(page, 'compare-curves');
  await page.getByRole('tab', { name: /Config/ }).click();
  const diff = page.getByTestId('config-diff');
  await expect(diff).toContainText('seeds.base');
  await expect(diff).toContainText('method');
  await expect(diff).not.toContainText('env.id');          // equal fields hidden
  await page.getByTestId('diff-only').uncheck();
  await expect(diff).toContainText('env.id');
  await page.getByTestId('diff-only').check();
  await shot(page, 'compare-config-diff');
});
