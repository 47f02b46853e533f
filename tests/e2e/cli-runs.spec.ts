// Three runs in a row from the terminal, each watched live in the browser, the last one stopped
// from there (issue 24's done-when), in both ways a terminal and a browser share a project:
// - `serve` holds the project (writable): each `spa-workbench run` asks the server to start its
//   run and follows it; Stop in the UI ends the run and the terminal's command (exit 130);
// - a `serve` opened while a CLI run held the project watches it read-only: the watcher follows
//   each next CLI process that takes the project, and Stop reaches the current one (not a dead one).
// Real processes and the real engine; the diagnostic preset (a counted wait) keeps it to minutes.
import { expect, test, type Page } from '@playwright/test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDispatcher } from '../../core/host/dispatcher.js';
import { cli, freshProjectDir, killAll, runJson, shot, urlOf, watchConsole, type Cli } from './helpers.js';

const cleanup: Cli[] = [];
test.afterEach(() => killAll(cleanup));

const RUNS = 3;
/** Short runs end by themselves in ~10 s of counting; the last one would count for minutes unless stopped. */
const steps = (i: number) => (i < RUNS - 1 ? 300 : 6000);

function cliRun(project: string, home: string, i: number): Cli {
  const p = cli(['run', 'diagnostic', '--size', 'quick', '--project', project, '--name', `terminal run ${i + 1}`,
    '--set', `stages.diag-wait.steps=${steps(i)}`, '--set', 'stages.diag-wait.delayMs=30'], home);
  cleanup.push(p);
  return p;
}

async function go(page: Page, hash: string): Promise<void> {
  await page.evaluate((h) => { (globalThis as unknown as { location: { hash: string } }).location.hash = h; }, hash);
}

/** From the run list, open the run by its name (as a user would) and see it counting live. */
async function watchLive(page: Page, name: string): Promise<string> {
  await go(page, '#/runs');
  const link = page.getByTestId('run-link').filter({ hasText: new RegExp(`^${name}$`) });
  await expect(link).toHaveCount(1, { timeout: 120_000 });
  await link.click();
  await expect(page.getByTestId('run-name')).toHaveText(name);
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'running', { timeout: 120_000 });
  const counter = page.getByTestId('stage-diag-wait').getByTestId('stage-count');
  await expect(counter).toHaveText(/^\d+\/\d+$/);
  const first = Number((await counter.textContent())!.split('/')[0]);
  await expect.poll(async () => Number((await counter.textContent())!.split('/')[0]), { timeout: 120_000, message: `${name}: the live counter` })
    .toBeGreaterThan(first + 5);
  return page.url().split('#/run/')[1]!;
}

test('serve holds the project: three CLI runs in a row start in it, each watched live; the last stopped from the UI', async ({ page }) => {
  test.setTimeout(300_000);
  const problems = watchConsole(page);
  const home = mkdtempSync(join(tmpdir(), 'spa-e2e-cli3-'));
  const project = freshProjectDir('cli3');
  const d = createDispatcher({ host: 'cli' });
  await d.api.projects.create({ path: project });
  await d.dispose();
  const serve = cli(['serve', '--project', project, '--port', '0', '--no-open'], home);
  cleanup.push(serve);
  await page.goto(`${await urlOf(serve)}#/runs`);
  await expect(page.getByTestId('statusbar')).toContainText('open');
  await expect(page.getByTestId('read-only-banner')).toHaveCount(0);

  for (let i = 0; i < RUNS; i++) {
    const name = `terminal run ${i + 1}`;
    const run = cliRun(project, home, i);
    const runId = await watchLive(page, name);
    expect(run.output()).toMatch(/runs in the serve process \d+ that holds the project/);
    if (i < RUNS - 1) {
      await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'completed', { timeout: 120_000 });
      expect(await run.exited, run.output()).toBe(0);
      expect(run.output()).toContain(`${runId}: completed`);
    } else {
      await shot(page, 'cli-run-in-serve');
      await page.getByTestId('stop-run').click();
      await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'stopped', { timeout: 120_000 });
      expect(await run.exited, run.output()).toBe(130);                 // the terminal's command ends with the run
      expect(run.output()).toContain(`${runId}: stopped`);
      expect(runJson(project, runId).status).toBe('stopped');
      await expect(page.getByTestId('resume-run')).toBeVisible();       // writable: the run can go on
    }
  }
  await go(page, '#/runs');
  await expect(page.getByTestId('run-link')).toHaveCount(RUNS);
  serve.ctrlC();
  expect(await serve.exited).toBe(0);
  expect(problems.filter((p) => !/WebSocket|ERR_CONNECTION_REFUSED|ConnectionLost/.test(p))).toEqual([]);
});

test('serve watching read-only follows three CLI runs in a row, each live; Stop reaches the third process', async ({ page }) => {
  test.setTimeout(300_000);
  const problems = watchConsole(page);
  const home = mkdtempSync(join(tmpdir(), 'spa-e2e-watch3-'));
  const project = freshProjectDir('watch3');
  let run = cliRun(project, home, 0);
  await expect.poll(() => { try { return runJson(project).status; } catch { return 'not yet'; } }, { timeout: 120_000 }).toBe('running');
  const serve = cli(['serve', '--project', project, '--port', '0', '--no-open'], home);
  cleanup.push(serve);
  const url = await urlOf(serve);
  expect(serve.output()).toMatch(/holds the project: serving it read-only/);
  await page.goto(`${url}#/runs`);

  for (let i = 0; i < RUNS; i++) {
    const name = `terminal run ${i + 1}`;
    if (i > 0) run = cliRun(project, home, i);
    const runId = await watchLive(page, name);
    // the banner names the process that holds the project now, not the first (dead) one
    await expect(page.getByTestId('read-only-banner')).toContainText(`process ${run.child.pid} (cli run)`, { timeout: 120_000 });
    if (i < RUNS - 1) {
      await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'completed', { timeout: 120_000 });
      expect(await run.exited, run.output()).toBe(0);
    } else {
      await shot(page, 'watch-third-cli-run');
      await page.getByTestId('stop-run').click();
      expect(await run.exited, run.output()).toBe(130);
      expect(run.output()).toContain('stopping after the current step');
      expect(runJson(project, runId).status).toBe('stopped');
      await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'stopped', { timeout: 120_000 });
    }
  }
  await go(page, '#/runs');
  await expect(page.getByTestId('run-link')).toHaveCount(RUNS);
  serve.ctrlC();
  expect(await serve.exited).toBe(0);
  expect(problems.filter((p) => !/WebSocket|ERR_CONNECTION_REFUSED|ConnectionLost/.test(p))).toEqual([]);
});
