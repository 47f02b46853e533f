// Issue 2 / 6: the shell loads in Debian's Chromium against `serve`; a project is created in the
// UI and appears in the recent list; both themes render; the access token is required.
import { expect, test } from '@playwright/test';
import { freshProjectDir, openApp, serverUrl, setTheme, shot, watchConsole } from './helpers.js';

test('the shell loads and shows the projects page', async ({ page }) => {
  const problems = watchConsole(page);
  await openApp(page);
  await expect(page.getByTestId('projects-view')).toBeVisible();
  await expect(page.getByTestId('statusbar')).toContainText('browser mode');
  await expect(page.getByTestId('statusbar')).toContainText('host: serve');
  await expect(page.getByTestId('nav-runs')).toBeVisible();
  await setTheme(page, 'light');
  await shot(page, 'shell-projects-light');
  await setTheme(page, 'dark');
  await shot(page, 'shell-projects-dark');
  await setTheme(page, 'light');
  expect(problems).toEqual([]);
});

test('a project is created and appears in the recent list', async ({ page }) => {
  const problems = watchConsole(page);
  await openApp(page, '#/projects');
  const dir = freshProjectDir('created-in-ui');
  await page.getByTestId('create-path').fill(dir);
  await page.getByTestId('create-name').fill('Sokoban study');
  await page.getByTestId('create-project').click();
  await expect(page.getByTestId('runs-view')).toBeVisible();
  await expect(page.getByTestId('current-project')).toContainText('Sokoban study');
  await page.getByTestId('nav-projects').click();
  const recent = page.getByTestId('recent-list');
  await expect(recent).toContainText(dir);
  await expect(recent.getByTestId('recent-item').first()).toContainText('Sokoban study');
  await expect(page.getByTestId('open-project-card')).toContainText(dir);
  await shot(page, 'shell-project-created');
  expect(problems).toEqual([]);
});

test('bad input is explained at the field: creating a project in a non-empty folder', async ({ page }) => {
  await openApp(page, '#/projects');
  await page.getByTestId('create-path').fill('/');
  await page.getByTestId('create-project').click();
  const alert = page.getByRole('alert').first();
  await expect(alert).toBeVisible();
  await expect(alert).not.toHaveText('');
  await shot(page, 'shell-project-error');
});

test('the server refuses a request without the token', async ({ request }) => {
  const u = new URL(serverUrl());
  const res = await request.get(`${u.origin}/`);
  expect(res.status()).toBe(401);
  expect(await res.text()).toMatch(/access token/);
});
