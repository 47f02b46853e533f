// Shared e2e helpers: the `workbench` fixture (a page connected to the running server with a
// fresh project open), API access from Node for setup, and screenshots saved under
// test-results/screenshots/ for people to look at.
import { test as base, expect, type Page } from '@playwright/test';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProjectInfo, WorkbenchClient } from '../../core/api/contract.js';
import type { EpisodeRecord, RunStatus } from '../../core/api/records.js';
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

export const DOCS_SCREENSHOT_DIR = join(root, 'docs', 'screenshots');

/**
 * Save a viewport screenshot (1280×800) to test-results/screenshots/<name>.png. With
 * `docs: true` it is one of the curated screenshots of docs/ui.md: when SPA_E2E_DOCS_SCREENSHOTS=1
 * it is also copied to docs/screenshots/<name>.png (so that ordinary test runs leave docs/ alone).
 */
export async function shot(page: Page, name: string, opts: { docs?: boolean } = {}): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false, animations: 'disabled', caret: 'hide' });
  if (opts.docs && process.env['SPA_E2E_DOCS_SCREENSHOTS'] === '1') {
    mkdirSync(DOCS_SCREENSHOT_DIR, { recursive: true });
    copyFileSync(file, join(DOCS_SCREENSHOT_DIR, `${name}.png`));
  }
  return file;
}

/** The same view in both themes: <name>-light / <name>-dark, or <light> and <dark> names given. */
export async function shotBothThemes(page: Page, light: string, dark: string, opts: { docs?: boolean } = {}): Promise<void> {
  await setTheme(page, 'light');
  await shot(page, light, opts);
  await setTheme(page, 'dark');
  await shot(page, dark, opts);
  await setTheme(page, 'light');
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

/**
 * Elements under `selector` whose text does not fit: wider (or, for line-clamped text, taller)
 * than their box. Returns their text, so a failing assertion names what is cut off.
 */
export async function clippedTexts(page: Page, selector: string): Promise<string[]> {
  return page.locator(selector).evaluateAll((els) => els
    .filter((el) => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 2)
    .map((el) => (el.textContent ?? '').trim()));
}

/** The main area must not scroll sideways at 1280 px (a table or a long value pushing it wider). */
export async function expectNoSidewaysScroll(page: Page, selector = 'main, .main'): Promise<void> {
  const widths = await page.locator(selector).first().evaluate((el) => {
    const right = el.getBoundingClientRect().left + el.clientWidth;
    // the outermost elements that stick out on the right, to name in the failure
    const sticking = [...el.querySelectorAll('*')].filter((e) => e.getBoundingClientRect().right > right + 1
      && !(e.parentElement && e.parentElement !== el && e.parentElement.getBoundingClientRect().right > right + 1));
    const describe = (e: (typeof sticking)[number]) => `${e.tagName.toLowerCase()}${e.getAttribute('data-testid') ? `[data-testid=${e.getAttribute('data-testid')}]` : ''}${e.className && typeof e.className === 'string' ? `.${e.className.trim().split(/\s+/).join('.')}` : ''} (right edge ${Math.round(e.getBoundingClientRect().right)})`;
    return { scroll: el.scrollWidth, client: el.clientWidth, sticking: sticking.slice(0, 5).map(describe) };
  });
  expect(widths.scroll, `${selector} is ${widths.scroll}px wide inside ${widths.client}px; sticking out: ${widths.sticking.join(', ')}`).toBeLessThanOrEqual(widths.client + 1);
}

export interface Workbench {
  page: Page;
  api: WorkbenchClient;
  project: ProjectInfo;
  /** Navigate by hash route, e.g. '#/runs'. */
  go(hash: string): Promise<void>;
}

/**
 * Collects uncaught page errors, console errors and CSP violations (Chromium reports those as
 * console errors "Refused to …" and as securitypolicyviolation events) so that tests can assert
 * there were none.
 */
export function watchConsole(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const text = msg.text();
    const where = msg.location().url ? ` (${msg.location().url.replace(/\?token=[^\s)]*/, '')}:${msg.location().lineNumber})` : '';
    problems.push(/Content Security Policy|Refused to/i.test(text) ? `csp: ${text}` : `console.error: ${text}${where}`);
  });
  // a violation report also arrives as a DOM event: surface it as a console error the listener above sees
  void page.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => console.error('Refused by the Content Security Policy: ' + e.violatedDirective + ' ' + e.blockedURI));",
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

/**
 * A short real run, started and awaited (up to 7 minutes): random-action self-play (well-formed turns), SFT on it, then an
 * evaluation of the tiny model. Fails the test unless it completes. Returns the run id.
 */
export async function smokeRun(api: WorkbenchClient, name: string, set: Record<string, unknown> = {}): Promise<string> {
  const run = await api.runs.create({
    preset: 'sft-only', size: 'smoke', name,
    set: { 'stages.selfplay.policy': 'random', 'stages.plan.order': ['selfplay', 'sft', 'eval'], ...set },
    start: true,
  });
  const deadline = Date.now() + 420_000;
  let status: RunStatus = run.status;
  let reason: string | null = null;
  while (Date.now() < deadline) {
    const info = await api.runs.get({ runId: run.id });
    status = info.status;
    reason = info.reason;
    if (status === 'completed' || status === 'failed' || status === 'stopped') break;
    await new Promise((r) => setTimeout(r, 1500));
  }
  expect(status, `smoke run ${run.id} ended ${status}${reason ? `: ${reason}` : ''}`).toBe('completed');
  return run.id;
}

/** A `spa-workbench` CLI process started by a test. */
export interface Cli { child: ChildProcess; output: () => string; exited: Promise<number | null>; ctrlC: () => void }

/** The tokenised URL `serve`/`start` print (with the run's hash route when there is one). */
export const SERVE_URL_RE = /(https?:\/\/[^\s]+[?&]token=[0-9A-Za-z_-]+(?:#\/run\/[\w.-]+)?)/;

/**
 * `node bin/spa-workbench.mjs ARGS` in its own process group, as in a terminal (a Ctrl-C signals
 * the whole group), with SPA_WORKBENCH_HOME=home. Output (stdout and stderr) is collected.
 */
export function cli(args: string[], home: string): Cli {
  const child = spawn(process.execPath, [join(root, 'bin', 'spa-workbench.mjs'), ...args], {
    cwd: root, env: { ...process.env, SPA_WORKBENCH_HOME: home, NO_COLOR: '1' }, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return { child, output: () => out, exited, ctrlC: () => { try { process.kill(-child.pid!, 'SIGINT'); } catch { /* gone */ } } };
}

/** SIGKILL to the process groups of CLI processes still alive (test cleanup). */
export function killAll(procs: Cli[]): void {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) { try { process.kill(-p.child.pid!, 'SIGKILL'); } catch { /* gone */ } }
}

/** The URL a `serve`/`start` process prints, waited for up to 60 s. */
export async function urlOf(p: Cli): Promise<string> {
  await expect.poll(() => SERVE_URL_RE.test(p.output()), { timeout: 120_000, message: `the printed URL; output so far:\n${p.output()}` }).toBe(true);
  return SERVE_URL_RE.exec(p.output())![1]!;
}

/** A run's run.json as written in the project folder (the first run when no id is given). */
export function runJson(project: string, runId?: string): { id: string; name: string; status: string; reason: string | null; durationMs: number } {
  const id = runId ?? readdirSync(join(project, 'runs'))[0]!;
  return JSON.parse(readFileSync(join(project, 'runs', id, 'run.json'), 'utf8'));
}

/** Episodes of a stage, fully loaded (the runs of the e2e specs are tiny). */
export async function episodesOf(api: WorkbenchClient, runId: string, stage: string): Promise<EpisodeRecord[]> {
  const page = await api.rollouts.query({ runId, stage, limit: 50 });
  return Promise.all(page.episodes.map((e) => api.rollouts.get({ runId, id: e.id })));
}

/** Kinds of the cells drawn in a board figure, row by row. */
export async function drawnKinds(page: Page, figure: string): Promise<string[]> {
  return page.locator(`${figure} g.board-cell`).evaluateAll((gs) => gs.map((g) => g.getAttribute('data-cell-kind') ?? ''));
}

/**
 * Steps the open replay (ArrowRight) through an episode from step 0: one frame per executed action (a multi-action turn is
 * several frames), checking the position at every frame and, at the end of each turn, that the board drawn equals the
 * stored true state after it. `onFrame` runs after each frame (turn, action number within the turn). Returns the last step.
 */
export async function walkReplay(page: Page, episode: EpisodeRecord,
  onFrame?: (turn: EpisodeRecord['turns'][number], action: number) => Promise<void>): Promise<number> {
  const last = episode.turns.reduce((n, t) => n + Math.max(1, t.actionsExecuted.length), 0);
  await expect(page.getByTestId('replay-position')).toHaveText(`step 0 / ${last}`);
  expect(await drawnKinds(page, '[data-testid="replay-main"]')).toEqual(episode.turns[0]!.stateBefore.board.cells.flat());
  let k = 0;
  for (const t of episode.turns) {
    for (let a = 1; a <= Math.max(1, t.actionsExecuted.length); a++) {
      await page.keyboard.press('ArrowRight');
      k++;
      await expect(page.getByTestId('replay-position')).toHaveText(`step ${k} / ${last}`);
      await onFrame?.(t, a);
    }
    expect(await drawnKinds(page, '[data-testid="replay-main"]')).toEqual(t.stateAfter.board.cells.flat());
  }
  return last;
}

export { expect };
