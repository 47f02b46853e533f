// Issue 6: create a project, configure and start a run from the New-run form (field-level
// validation), watch its progress advance live, see charts and the log, stop and resume,
// the run table (sort, filter, select), compare two runs (table, curves, config differences).
import { readFileSync } from 'node:fs';
import type { Download } from '@playwright/test';
import type { RunSummary, WorkbenchClient } from '../../core/api/contract.js';
import { clippedTexts, expect, expectNoSidewaysScroll, shot, shotBothThemes, test } from './helpers.js';

async function readDownloadBytes(d: Download): Promise<Buffer> {
  const path = await d.path();
  return readFileSync(path);
}
async function readDownload(d: Download): Promise<string> {
  return (await readDownloadBytes(d)).toString('utf8');
}

async function waitForStatus(api: WorkbenchClient, runId: string, statuses: string[], timeoutMs = 180_000): Promise<string> {
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
  // the form as a researcher first sees it: the SPA preset, its environment preview and the compute backends
  await expect(page.getByTestId('preset-spa')).toHaveClass(/active/);
  await expect(page.getByTestId('env-preview').locator('svg').first()).toBeVisible();
  await expect(page.getByTestId('preview-prompt')).not.toBeEmpty();
  await expect(page.getByTestId('compute-card').locator('li.backend-item').first()).toBeVisible();
  expect(await clippedTexts(page, '[data-testid="compute-card"] .backend-detail'), 'why a backend is (un)available is shown in full').toEqual([]);
  await expectNoSidewaysScroll(page);
  await shotBothThemes(page, 'new-run-form', 'new-run-form-dark', { docs: true });
  // a preset offered at some sizes only (spa-drills: no paper size) lists just those
  await page.getByTestId('preset-spa-drills').click();
  await expect(page.getByTestId('size-select').locator('option')).toHaveText(['quick', 'smoke', 'standard']);
  await expect(page.getByTestId('stage-plan')).toContainText('selfplay');
  await shot(page, 'new-run-spa-drills');
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
  // the side column stays in view: the reason the form is blocked and the Create button are on screen next to the field
  await expect(page.getByTestId('form-invalid')).toBeInViewport();
  await expect(page.getByTestId('create-start')).toBeInViewport();
  await shot(page, 'new-run-validation', { docs: true });
  await seed.fill('7');
  await expect(page.locator('[data-field="seeds.base"] [data-testid="field-error"]')).toHaveCount(0);
  await expect(page.getByTestId('create-start')).toBeEnabled();
  // a local Hugging Face model needs its folder
  await page.locator('select[data-path="model.source"]').selectOption('hf-folder');
  await expect(page.locator('[data-field="model.path"] [data-testid="field-error"]')).toContainText('expected the folder');
  await expect(page.getByTestId('create-start')).toBeDisabled();
  await page.locator('[data-field="model.source"] a.reset').click();
  await expect(page.locator('[data-field="model.path"]')).toHaveCount(0);
  await expect(page.getByTestId('create-start')).toBeEnabled();

  await page.getByTestId('create-start').click();
  await expect(page.getByTestId('run-view')).toBeVisible();
  await expect(page.getByTestId('stage-pipeline')).toBeVisible();
  const stage = page.getByTestId('stage-diag-wait');
  await expect(stage).toBeVisible();
  // progress advances: the counter shows a value, then a larger one (or the stage completes)
  await expect(stage.getByTestId('stage-count')).toHaveText(/^\d+\/\d+$/, { timeout: 120_000 });
  const first = Number((await stage.getByTestId('stage-count').textContent())!.split('/')[0]);
  await expect.poll(async () => {
    const status = await stage.getAttribute('data-stage-status');
    if (status === 'completed') return Number.POSITIVE_INFINITY;
    return Number((await stage.getByTestId('stage-count').textContent())!.split('/')[0]);
  }, { timeout: 120_000 }).toBeGreaterThan(first);
  expect(await clippedTexts(page, '[data-testid="stage-pipeline"] .stage-title')).toEqual([]);
  await shot(page, 'run-view-progress', { docs: true });
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'completed', { timeout: 120_000 });
  await expect(page.getByTestId('charts').locator('.chart-card').first()).toBeVisible();
  await expect(page.getByTestId('charts').locator('canvas').first()).toBeVisible();
  await shotBothThemes(page, 'run-view-completed', 'run-view-completed-dark', { docs: true });
  // synced cursor: hovering one chart moves the readout of the other; drag zooms (re-bucketed), double-click resets
  const cards = page.getByTestId('charts').locator('.chart-card');
  await expect(cards).toHaveCount(2);
  const over = cards.nth(0).locator('.u-over');
  // the chart re-creates its canvas when the completed run's last metrics arrive: wait for a laid-out overlay
  await expect(over).toBeVisible();
  let box = await over.boundingBox();
  await expect.poll(async () => (box = await over.boundingBox()) !== null && box.width > 0).toBe(true);
  if (!box) throw new Error('chart overlay has no box');
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
  await expect(cards.nth(1).locator('.chart-legend .mono')).toContainText('step');
  await page.mouse.move(box.x + box.width * 0.2, box.y + box.height * 0.5);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.5, { steps: 5 });
  await page.mouse.up();
  await expect(cards.nth(0).getByRole('button', { name: 'reset zoom' })).toBeVisible();
  await over.dblclick();
  await expect(cards.nth(0).getByRole('button', { name: 'reset zoom' })).toHaveCount(0);
  // x axis by wall time
  await page.getByTestId('x-mode').selectOption('time');
  await expect(cards.nth(0).locator('canvas')).toBeVisible();
  const timeBox = (await cards.nth(0).locator('.u-over').boundingBox())!;
  await page.mouse.move(timeBox.x + timeBox.width * 0.5, timeBox.y + timeBox.height * 0.5);
  await expect(cards.nth(0).locator('.chart-legend .mono')).toContainText('wall time (s)');   // cursor readout names the x axis
  await page.getByTestId('x-mode').selectOption('step');
  // the downsampling runs in a Web Worker
  await expect.poll(() => page.workers().some((w) => /downsample\.worker/.test(w.url()))).toBe(true);
  // exports: metrics CSV, episodes JSONL, a chart PNG
  const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Metrics CSV' }).click()]);
  const csvText = await readDownload(csv);
  expect(csvText.split('\n')[0]).toBe('run,stage,name,step,value,min,max,count');
  expect(csvText).toContain('diag/value');
  const [jsonl] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Episodes JSONL' }).click()]);
  const episodes = (await readDownload(jsonl)).trim().split('\n').map((l) => JSON.parse(l) as { id: string; turns: unknown[] });
  expect(episodes.length).toBeGreaterThan(0);
  expect(episodes[0]!.turns.length).toBeGreaterThan(0);
  const [png] = await Promise.all([page.waitForEvent('download'), page.getByTestId('charts').locator('.chart-card').first().getByRole('button', { name: 'PNG' }).click()]);
  expect(png.suggestedFilename()).toMatch(/\.png$/);
  expect((await readDownloadBytes(png)).subarray(1, 4).toString('latin1')).toBe('PNG');
  await page.getByRole('tab', { name: /Log/ }).click();
  await expect(page.getByTestId('log-pane')).toContainText('completed');
  await shot(page, 'run-view-log', { docs: true });
  await page.getByRole('tab', { name: 'Config' }).click();
  await expect(page.getByTestId('run-config')).toContainText('"base": 7');
  // the resolved config as a table of fields (the JSON folded under it)
  await expect(page.getByTestId('run-config-table').locator('tr', { hasText: 'seeds.base' })).toContainText('7');
  await expectNoSidewaysScroll(page);
  await shotBothThemes(page, 'run-view-config', 'run-view-config-dark', { docs: true });
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
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'completed', { timeout: 120_000 });
  await expect(page.getByTestId('stage-rl')).toHaveAttribute('data-stage-status', 'completed');
  await expect(page.getByTestId('charts').locator('canvas').first()).toBeVisible();
  // the final evaluation as number tiles: every metric name readable (long camelCase names wrap)
  await expect(page.getByTestId('value-eval/collapse/distinctResponseRatio')).toBeVisible();   // (no eval/wm… accuracies over 0 well-formed turns)
  expect(await clippedTexts(page, '[data-testid="charts"] .value-tile .value-name')).toEqual([]);
  expect(await clippedTexts(page, '[data-testid="stage-pipeline"] .stage-title')).toEqual([]);
  await expectNoSidewaysScroll(page);
  await shotBothThemes(page, 'run-view-spa-smoke', 'run-view-spa-smoke-dark', { docs: true });
  // whole-number x axis: steps get no fractional ticks
  await page.getByTestId('charts').locator('.chart-card').first().scrollIntoViewIfNeeded();
  await shot(page, 'run-view-spa-smoke-charts');
  expect(consoleProblems).toEqual([]);
});

test('stop a running run and resume it', async ({ workbench }) => {
  const { page, api } = workbench;
  const run = await api.runs.create({ preset: 'diagnostic', size: 'quick', set: { 'stages.diag-wait.steps': 400, 'stages.diag-wait.delayMs': 50 }, start: true });
  await workbench.go(`#/run/${run.id}`);
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'running', { timeout: 120_000 });
  await page.getByTestId('stop-run').click();
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'stopped', { timeout: 120_000 });
  await expect(page.getByTestId('resume-run')).toBeVisible();
  await shot(page, 'run-view-stopped', { docs: true });
  await page.getByTestId('resume-run').click();
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', /running|completed/, { timeout: 120_000 });
  await api.runs.stop({ runId: run.id }).catch(() => undefined);
  await waitForStatus(api, run.id, ['stopped', 'completed', 'failed']);
});

test('a run\'s warnings show in a banner above its stages, from the whole run, live and after a reload', async ({ workbench }) => {
  const { page, api } = workbench;
  const warning = 'rl: turns with a format error rose from 4% (first 3 steps) to 29% (last 3)';
  // a slow first part (the warning arrives live), then 600 log lines: after a reload the warning is older than the
  // log pane's history of 500 events, and the banner still shows it
  const run = await api.runs.create({
    preset: 'diagnostic', size: 'smoke',
    set: {
      'stages.plan.order': ['diag-wait', 'diag-wait2'],
      'stages.diag-wait.steps': 40, 'stages.diag-wait.delayMs': 150, 'stages.diag-wait.warnAt': 20, 'stages.diag-wait.warning': warning,
      'stages.diag-wait2.steps': 600, 'stages.diag-wait2.delayMs': 0, 'stages.diag-wait2.logEachStep': true,
    },
    start: true,
  });
  await workbench.go(`#/run/${run.id}`);
  await expect(page.getByTestId('run-warnings')).toContainText(warning, { timeout: 120_000 });
  await waitForStatus(api, run.id, ['completed']);
  expect((await api.runs.events({ runId: run.id, types: ['log', 'stage', 'status', 'checkpoint'], limit: 1 })).total).toBeGreaterThan(600);
  await page.reload();
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'completed', { timeout: 120_000 });
  const banner = page.getByTestId('run-warnings');
  await expect(banner).toContainText('Warning from this run');
  await expect(banner).toContainText(warning);
  await shot(page, 'run-view-warnings');
  await banner.getByText('Open the log').click();
  await expect(page.getByTestId('log-pane')).toContainText('diag-wait2: step 600 of 600');
  await expect(page.getByTestId('log-pane')).not.toContainText(warning);   // older than the pane's history: the banner fetched it
  await page.getByLabel('dismiss warnings').click();
  await expect(page.getByTestId('run-warnings')).toHaveCount(0);
  // a run without warnings has no banner
  const quiet = await api.runs.create({ preset: 'diagnostic', size: 'smoke', start: true });
  await waitForStatus(api, quiet.id, ['completed']);
  await workbench.go(`#/run/${quiet.id}`);
  await expect(page.getByTestId('stage-pipeline')).toBeVisible();
  await expect(page.getByTestId('run-warnings')).toHaveCount(0);
});

test('the run table sorts, filters and selects; an SPA and a vanilla-RL run are compared', async ({ workbench }) => {
  test.setTimeout(300_000);
  const { page, api } = workbench;
  const a = await api.runs.create({ preset: 'spa', size: 'smoke', name: 'alpha run', set: { 'seeds.base': 1 }, start: true });
  await waitForStatus(api, a.id, ['completed']);
  const b = await api.runs.create({ preset: 'vanilla-rl', size: 'smoke', name: 'beta run', set: { 'seeds.base': 2 }, start: true });
  await waitForStatus(api, b.id, ['completed']);
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
  await expectNoSidewaysScroll(page, '[data-testid="runs-table"] .dt-scroll');   // the default columns fit at 1280
  expect(await clippedTexts(page, '[data-testid="runs-table"] input[type="search"]')).toEqual([]);
  await shotBothThemes(page, 'runs-table', 'runs-table-dark', { docs: true });

  await page.getByTestId('compare-selected').click();
  await expect(page.getByTestId('compare-view')).toBeVisible();
  await expect(page.getByTestId('compare-chip')).toHaveCount(2);
  const rows = page.getByTestId('compare-table').getByTestId('compare-row');
  await expect(rows).toHaveCount(2);
  await expect(page.getByTestId('compare-table')).toContainText('Pass@1');
  await expect(rows.first()).toContainText(/\d+\.\d/);      // evaluated numbers, not dashes
  await shotBothThemes(page, 'compare-table', 'compare-table-dark', { docs: true });
  await page.getByRole('tab', { name: 'Curves' }).click();
  await expect(page.getByTestId('compare-charts').locator('canvas').first()).toBeVisible();
  expect(await clippedTexts(page, '[data-testid="compare-charts"] .value-tile :is(.value-name, .value-run)'), 'metric and run names in the tiles').toEqual([]);
  await shotBothThemes(page, 'compare-curves', 'compare-curves-dark', { docs: true });
  await page.getByRole('tab', { name: /Config/ }).click();
  const diff = page.getByTestId('config-diff');
  await expect(diff).toContainText('seeds.base');
  await expect(diff).toContainText('method');
  await expect(diff).not.toContainText('env.id');          // equal fields hidden
  await page.getByTestId('diff-only').uncheck();
  await expect(diff).toContainText('env.id');
  await page.getByTestId('diff-only').check();
  await expect(diff).toContainText('template.hash');
  await expectNoSidewaysScroll(page);                       // 64-character hashes wrap inside the table
  await shotBothThemes(page, 'compare-config-diff', 'compare-config-diff-dark', { docs: true });

  // several runs overlaid in the run view
  await workbench.go(`#/run/${a.id}`);
  await expect(page.getByTestId('run-view')).toBeVisible();
  await page.getByTestId('overlay-select').selectOption(b.id);
  const firstChart = page.getByTestId('charts').locator('.chart-card').first();
  await expect(firstChart.locator('.chart-legend')).toContainText('alpha run');
  await expect(firstChart.locator('.chart-legend')).toContainText('beta run');
  await shot(page, 'run-view-overlay', { docs: true });
});

test('an engine crash is reported, the host keeps serving, and the run resumes', async ({ workbench }) => {
  const { page, api } = workbench;
  const run = await api.runs.create({ preset: 'diagnostic', size: 'smoke', name: 'crashy', set: { 'stages.plan.order': ['diag-crash', 'diag-wait'] }, start: true });
  await workbench.go(`#/run/${run.id}`);
  await expect(page.getByTestId('engine-notice')).toBeVisible({ timeout: 120_000 });
  await expect(page.getByTestId('engine-notice')).toContainText(run.id);
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'failed');
  await expect(page.getByTestId('run-reason')).toContainText(/died|exit|signal/);
  await shotBothThemes(page, 'run-view-engine-crash', 'run-view-engine-crash-dark', { docs: true });
  await workbench.go('#/runs');                                     // the host still answers
  await expect(page.getByTestId('runs-table')).toContainText('crashy');
  await workbench.go(`#/run/${run.id}`);
  await page.getByTestId('resume-run').click();
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'completed', { timeout: 120_000 });
});

test('the run table stays virtualised with 1500 runs', async ({ workbench }) => {
  const { page, api } = workbench;
  const real = await api.runs.create({ preset: 'diagnostic', size: 'smoke', name: 'template run' });
  const template = (await api.runs.list()).runs.find((r) => r.id === real.id)!;
  const many: RunSummary[] = Array.from({ length: 1500 }, (_, i) => ({
    ...template, id: `bulk-${String(i).padStart(4, '0')}`, name: `bulk run ${String(i).padStart(4, '0')}`,
    createdAt: template.createdAt + i * 1000, latest: { 'eval/success': (i % 100) / 100, 'eval/passAt1': (i % 37) / 37, 'eval/passAt4': (i % 41) / 41 },
  }));
  // Answer runs.list with 1500 runs by rewriting the server's reply on the real WebSocket.
  await page.routeWebSocket(/\/api\?token=/, (ws) => {
    const server = ws.connectToServer();
    const listCalls = new Set<number>();
    ws.onMessage((m) => {
      const msg = JSON.parse(String(m)) as { type: string; id: number; method?: string };
      if (msg.type === 'call' && msg.method === 'runs.list') listCalls.add(msg.id);
      server.send(m);
    });
    server.onMessage((m) => {
      const msg = JSON.parse(String(m)) as { type: string; id?: number };
      if (msg.type === 'result' && msg.id !== undefined && listCalls.delete(msg.id)) {
        ws.send(JSON.stringify({ ...msg, result: { runs: many, total: many.length } }));
      } else ws.send(m);
    });
  });
  await page.reload();                                       // reconnect through the route
  await expect(page.getByTestId('statusbar')).toContainText('open');
  const table = page.getByTestId('runs-table');
  await expect(table.getByTestId('row-count')).toHaveText('1500 rows');
  const domRows = await table.locator('tbody tr[data-row-id]').count();
  expect(domRows).toBeGreaterThan(5);
  expect(domRows).toBeLessThan(100);                         // only the visible window is in the DOM
  // newest first by default; sorting by Success puts a 99% run on top
  await expect(table.locator('tbody tr[data-row-id]').first()).toContainText('bulk run 1499');
  const successHeader = table.locator('th', { hasText: 'Success' });
  await successHeader.click();
  if ((await successHeader.getAttribute('aria-sort')) !== 'descending') await successHeader.click();
  await expect(successHeader).toHaveAttribute('aria-sort', 'descending');
  await expect(table.locator('tbody tr[data-row-id]').first()).toContainText('99.0%');
  // scrolling to the end renders the last rows
  await table.locator('.dt-scroll').evaluate((el) => { el.scrollTop = el.scrollHeight; });
  await expect(table.locator('tbody tr[data-row-id]').last()).toContainText('0.0%');
  await table.getByRole('searchbox').fill('bulk run 0042');
  await expect(table.getByTestId('row-count')).toHaveText('1 of 1500 rows');
  await table.getByRole('searchbox').fill('');
  await table.locator('.dt-scroll').evaluate((el) => { el.scrollTop = 0; });
  // the column picker (remembered in localStorage)
  await table.getByRole('button', { name: 'Columns ▾' }).click();
  await expect(table.getByRole('dialog', { name: 'Column picker' })).toBeVisible();
  const picker = table.getByRole('dialog', { name: 'Column picker' });
  await picker.getByLabel('Pass@4').uncheck();                 // one Pass@k column per k
  await picker.getByLabel('Size').check();
  await expect(table.locator('th', { hasText: 'Size' })).toBeVisible();
  await expect(table.locator('th', { hasText: 'Pass@4' })).toHaveCount(0);
  await shotBothThemes(page, 'runs-table-1500', 'runs-table-1500-dark', { docs: true });
});
