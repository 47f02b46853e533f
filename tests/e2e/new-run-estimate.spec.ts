// The New Run form starts from an env with a shipped base (FrozenLake), shows the run's estimated
// time from the stage times measured (earlier runs here, else the bench) with where each comes
// from, and warns when the env picked must train a bootstrap base first (Sokoban).
import { expect, shot, test } from './helpers.js';

test('new run: FrozenLake by default (shipped base), an estimate per stage, a warning when a base must be trained', async ({ workbench, consoleProblems }) => {
  const { page } = workbench;
  await page.getByTestId('new-run-button').click();
  await expect(page.getByTestId('preset-spa')).toHaveClass(/active/);
  const env = page.locator('[data-path="env.id"]');
  await expect(env).toHaveValue('frozenlake');
  await expect(page.getByTestId('env-shipped-base')).toBeVisible();
  await expect(page.getByTestId('run-estimate-total')).toHaveText(/^about \d/);
  await expect(page.getByTestId('bootstrap-warning')).toHaveCount(0);
  await page.getByTestId('run-estimate').locator('summary').click();
  const rows = page.getByTestId('run-estimate-stages').locator('tr');
  await expect(rows).toHaveCount(5);
  await expect(rows.first()).toContainText('shipped base');
  await expect(rows.nth(3)).toContainText(/^rl.*bench spa-stages-quick-frozenlake\.json/);
  await shot(page, 'new-run-estimate', { docs: true });

  await env.selectOption('sokoban');
  await expect(page.getByTestId('bootstrap-warning')).toContainText(/A bootstrap base must be trained first \(no shipped base for sokoban\): \d+ training steps, about/);
  await expect(page.getByTestId('bootstrap-warning')).toContainText('Runs on frozenlake use a shipped base instead.');
  await expect(page.getByTestId('env-shipped-base')).toHaveCount(0);
  await shot(page, 'new-run-bootstrap-warning', { docs: true });
  // back to the preset's own default (reset): the user's choice is kept, the form does not switch it back
  expect(consoleProblems).toEqual([]);
});
