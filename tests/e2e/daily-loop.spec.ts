// The researcher's daily loop, end to end with real processes: a run launched from the terminal
// (`spa-workbench run`) watched live and read-only in the browser through a second `serve` on the
// same project, and stopped from there; `start --run` opening the browser on its run, Ctrl-C
// stopping that run gracefully (stopped, not failed) and a second `start` resuming it instead of
// making another run.
import { expect, test } from '@playwright/test';
import { test as wbTest } from './helpers.js';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDispatcher } from '../../core/host/dispatcher.js';
import { cli, freshProjectDir, killAll, runJson, shot, urlOf, watchConsole, type Cli } from './helpers.js';

const cleanup: Cli[] = [];
test.afterEach(() => killAll(cleanup));

test('a run launched from the terminal is watched live, read-only, in the browser, and stopped from there', async ({ page }) => {
  const problems = watchConsole(page);
  const home = mkdtempSync(join(tmpdir(), 'spa-e2e-watch-'));
  const project = freshProjectDir('watch');
  const run = cli(['run', 'diagnostic', '--size', 'quick', '--project', project, '--name', 'terminal run',
    '--set', 'stages.diag-wait.steps=4000', '--set', 'stages.diag-wait.delayMs=30'], home);
  cleanup.push(run);
  await expect.poll(() => { try { return runJson(project).status; } catch { return 'not yet'; } }, { timeout: 120_000 }).toBe('running');
  const runId = runJson(project).id;

  const serve = cli(['serve', '--project', project, '--port', '0', '--no-open'], home);
  cleanup.push(serve);
  const url = await urlOf(serve);
  expect(serve.output()).toMatch(/holds the project: serving it read-only/);

  await page.goto(`${url}#/run/${runId}`);
  await expect(page.getByTestId('read-only-banner')).toContainText(`process ${run.child.pid} (cli run)`);
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'running');
  await expect(page.getByTestId('run-name')).toHaveText('terminal run');
  // live: the stage counter moves, fed from the run's files
  const counter = page.getByTestId('stage-diag-wait').getByTestId('stage-count');
  const first = Number((await counter.textContent())!.split('/')[0]);
  await expect.poll(async () => Number((await counter.textContent())!.split('/')[0]), { timeout: 120_000 }).toBeGreaterThan(first + 5);
  await expect(page.getByTestId('resume-run')).toHaveCount(0);
  await expect(page.getByTestId('add-tag')).toHaveCount(0);          // no editing in a watched project
  await expect(page.getByTestId('charts')).toBeVisible();
  await shot(page, 'watch-read-only', { docs: true });

  // Stop from the browser: the same mechanism as `spa-workbench stop` (SIGINT to the terminal's run)
  await page.getByTestId('stop-run').click();
  expect(await run.exited).toBe(130);
  expect(runJson(project).status).toBe('stopped');
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'stopped', { timeout: 120_000 });
  await expect(page.getByTestId('run-time')).not.toContainText('ran 0s');
  expect(run.output()).toContain('stopping after the current step');
  serve.ctrlC();
  expect(await serve.exited).toBe(0);
  await expect(page.getByTestId('connection-state')).toBeVisible();          // the tab notices the server is gone

  // the server again, now the only user of the project: the same link (token and port remembered),
  // and the open tab reconnects by itself, no longer read-only
  const again = cli(['serve', '--project', project, '--no-open'], home);
  cleanup.push(again);
  expect((await urlOf(again)).split('#')[0]).toBe(url.split('#')[0]);
  await expect(page.getByTestId('statusbar')).toContainText('open', { timeout: 120_000 });
  await expect(page.getByTestId('read-only-banner')).toHaveCount(0, { timeout: 120_000 });
  await expect(page.getByTestId('resume-run')).toBeVisible();
  again.ctrlC();
  expect(await again.exited).toBe(0);
  expect(problems.filter((p) => !/WebSocket|ERR_CONNECTION_REFUSED|ConnectionLost/.test(p))).toEqual([]);
});

test('start --run opens the browser on its run; Ctrl-C stops it gracefully; a second start resumes it', async ({ page }) => {
  const home = mkdtempSync(join(tmpdir(), 'spa-e2e-start-'));
  const project = freshProjectDir('start');
  // the demo run, created (not started) with slow settings so that it is still running when Ctrl-C comes
  const d = createDispatcher({ host: 'cli' });
  await d.api.projects.create({ path: project });
  const created = await d.api.runs.create({ preset: 'diagnostic', size: 'quick', set: { 'stages.diag-wait.steps': 4000, 'stages.diag-wait.delayMs': 30 } });
  await d.dispose();

  const start = cli(['start', '--project', project, '--run', 'diagnostic', '--size', 'quick', '--no-open', '--port', '0'], home);
  cleanup.push(start);
  const url = await urlOf(start);
  expect(url).toContain(`#/run/${created.id}`);
  expect(start.output()).toContain(`started run ${created.id} (created earlier, never started)`);
  await page.goto(url);
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'running');
  await expect(page.getByTestId('run-eta')).toBeVisible();
  await shot(page, 'start-opens-run');

  start.ctrlC();
  start.ctrlC();                                       // npm's forwarded copy of the same key press
  expect(await start.exited).toBe(0);
  const stopped = runJson(project, created.id);
  expect(stopped.status, start.output()).toBe('stopped');
  expect(stopped.reason).toBe('stopped by the user');
  expect(stopped.durationMs).toBeGreaterThan(0);

  const again = cli(['start', '--project', project, '--run', 'diagnostic', '--size', 'quick', '--no-open'], home);
  cleanup.push(again);
  const url2 = await urlOf(again);
  expect(url2).toContain(`#/run/${created.id}`);
  expect(again.output()).toContain(`resumed the unfinished run ${created.id}`);
  expect(readdirSync(join(project, 'runs'))).toEqual([created.id]);       // no second run
  again.ctrlC();
  expect(await again.exited).toBe(0);
  expect(runJson(project, created.id).status).toBe('stopped');
});

test('start --run prints its run\'s end as `run` does and keeps serving', async () => {
  const home = mkdtempSync(join(tmpdir(), 'spa-e2e-start-end-'));
  const project = freshProjectDir('start-end');
  const start = cli(['start', '--project', project, '--run', 'diagnostic', '--size', 'smoke', '--no-open', '--port', '0'], home);
  cleanup.push(start);
  await urlOf(start);
  await expect.poll(() => start.output(), { timeout: 120_000 }).toContain('the workbench stays open on it');
  const id = runJson(project).id;
  expect(start.output()).toMatch(new RegExp(`\\n${id}: completed in \\S+\\n`));   // printRunEnd: status and time ...
  expect(start.output()).toContain(`folder: ${join(project, 'runs', id)}`);         // ... and the run's folder
  expect(start.child.exitCode).toBeNull();                                            // the server is still up
  start.ctrlC();
  expect(await start.exited).toBe(0);
});

wbTest('organise runs: tags, notes and rename in the run view; grouped with mean ± sd; Pass@k by k; samples and honest headline numbers', async ({ workbench, consoleProblems }) => {
  const { page, api, go } = workbench;
  const ids: string[] = [];
  for (const seed of [0, 1, 2]) {
    const r = await api.runs.create({ preset: 'sft-only', size: 'smoke', name: `sft seed ${seed}`, set: { 'seeds.base': seed, 'stages.plan.order': ['selfplay', 'sft', 'eval'], 'stages.sft.batchSize': 1 }, start: true });
    ids.push(r.id);
  }
  for (const id of ids) await expect.poll(async () => (await api.runs.get({ runId: id })).status, { timeout: 180_000 }).toBe('completed');
  await api.runs.update({ runId: ids[0]!, tags: ['baseline'] });
  await api.runs.update({ runId: ids[1]!, tags: ['baseline'] });

  // the run view: rename, add a tag, write notes; headline numbers say what they are
  await go(`#/run/${ids[2]}`);
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'completed');
  await page.getByTestId('run-name').click();
  await page.getByTestId('run-name-input').fill('sft, lr default');
  await page.getByTestId('run-name-input').press('Enter');
  await expect(page.getByTestId('run-name')).toHaveText('sft, lr default');
  await page.getByTestId('add-tag').fill('candidate');
  await page.getByTestId('add-tag').press('Enter');
  await expect(page.getByTestId('run-tag')).toHaveText(['candidate ✕']);
  await page.getByText('notes (none)').click();
  await page.getByTestId('run-notes').fill('third seed; compare with the baseline pair');
  await page.getByTestId('run-notes').blur();
  await expect.poll(async () => (await api.runs.get({ runId: ids[2]! })).notes).toBe('third seed; compare with the baseline pair');
  await expect(page.getByTestId('headline-success')).toContainText('(eval)');
  await expect(page.getByTestId('headline-wm')).toContainText(/n\/a \(0 well-formed turns\)|%/);
  await shot(page, 'run-view-labels', { docs: true });
  await page.getByRole('tab', { name: 'Samples' }).click();
  await expect(page.getByTestId('stage-sample').first()).toBeVisible();
  await shot(page, 'run-view-samples', { docs: true });

  // the run table: tags column, Pass@2 column (k kept apart), grouped by tag with mean ± sd
  await go('#/runs');
  await expect(page.getByTestId('runs-table')).toContainText('sft, lr default');
  await expect(page.getByTestId('runs-table')).toContainText('Pass@2');
  // a config column from the column picker (config values that differ from the defaults)
  const table = page.getByTestId('runs-table');
  await table.getByRole('button', { name: /Columns/ }).click();
  await table.getByRole('dialog', { name: 'Column picker' }).getByLabel('seeds.base', { exact: true }).check();
  await page.keyboard.press('Escape');
  await page.getByRole('heading', { name: 'Runs' }).click();
  await expect(table.locator('th', { hasText: 'seeds.base' })).toBeVisible();
  await page.getByTestId('group-by').selectOption('tag');
  const groups = page.getByTestId('run-group');
  await expect(groups).toHaveCount(2);
  await expect(groups.nth(0)).toContainText('baseline');
  await expect(groups.nth(0)).toContainText('n=2');
  await shot(page, 'runs-grouped', { docs: true });
  expect(consoleProblems).toEqual([]);
});
