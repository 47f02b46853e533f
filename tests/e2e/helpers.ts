// Shared e2e helpers: the `workbench` fixture (a page connected to the running server with a
// fresh project open), API access from Node for setup, and screenshots saved under
// test-results/screenshots/ for people to look at.
import { test as base, expect, type Page } from '@playwright/test';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProjectInfo, WorkbenchClient } from '../../core/api/contract.js';
import { connectWorkbench } from '../../core/server/ws-client.js';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
export const SCREENSHOT_DIR = join(root, 'test-results', 'screenshots');

export function serverUrl(): string {
  const url = process.env['SPA_E2E_URL'];
  if (!url) throw new Error('SPA_E2E_URL is not set: run the e2e tests through playwright.config.ts (its global setup starts the server)');
  return url;
}

/** ws://host:port/api?token=... for the Node API client. */
export function apiUrl(): string {
  const u = new URL(serverUrl());
  return `ws://${u.host}/api?token=${u.searchParams.get('token')}`;
}

/** A new empty folder for a project (inside the run's temp folder). */
export function freshProjectDir(label = 'project'): string {
  const parent = process.env['SPA_E2E_PROJECTS'] ?? join(root, '.tmp');
  mkdirSync(parent, { recursive: true });
  return join(mkdtempSync(join(parent, `${label}-`)), 'proj');
}

/** Save a full-page screenshot to test-results/screenshots/<name>.png. */
export async function shot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false });
  return file;
}

/** Switch the theme via the top bar; returns the theme now active. */
export async function setTheme(page: Page, theme: 'light' | 'dark'): Promise<void> {
  const current = await page.locator('html').getAttribute('data-theme');
  if (current !== theme) await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
}

/** Open the app and wait until it is connected. */
export async function openApp(page: Page, hash = ''): Promise<void> {
  await page.goto(serverUrl() + hash);
  await expect(page.getByTestId('app-shell')).toBeVisible();
  await expect(page.getByTestId('statusbar')).toContainText('open');
}

export interface Workbench {
  page: Page;
  api: WorkbenchClient;
  project: ProjectInfo;
  /** Navigate by hash route, e.g. '#/runs'. */
  go(hash: string): Promise<void>;
}

/** Collects page errors and CSP violations so that tests can assert there were none. */
export function watchConsole(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    const text = msg.text();
    if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(text)) problems.push(`csp: ${text}`);
  });
  return problems;
}

export const test = base.extend<{ workbench: Workbench; consoleProblems: string[] }>({
  consoleProblems: async ({ page }, use) => {
    await use(watchConsole(page));
  },
  workbench: async ({ page, consoleProblems: _c }, use) => {
    const api = await connectWorkbench(apiUrl());
    const project = await api.projects.create({ path: freshProjectDir(), name: 'e2e project' });
    await openApp(page, '#/runs');
    await expect(page.getByTestId('current-project')).toContainText('e2e project');
    const go = async (hash: string) => {
      await page.evaluate((h) => { (globalThis as unknown as { location: { hash: string } }).location.hash = h; }, hash);
    };
    await use({ page, api, project, go });
    api.close();
  },
});

export { expect };
