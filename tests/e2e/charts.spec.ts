// Issue 12 items 7 and 11 in a real browser against the real engine: after two short RL runs,
// the Run view's charts start unsmoothed (few points), mark the stages on the shared step axis,
// switch to a log scale, keep overlay / filter / smoothing / x axis / log in the URL (a fresh
// page opened on that link shows the same view), pin a chart to the top (remembered after a
// reload); the System tab charts the engine's CPU and memory, and the Tokens tab shows the
// per-RL-step histograms. Screenshots: docs/screenshots/charts-*.png, run-system.png, run-tokens.png.
import type { WorkbenchClient } from '../../core/api/contract.js';
import type { RunStatus } from '../../core/api/records.js';
import { expect, expectNoSidewaysScroll, openApp, setTheme, shot, test } from './helpers.js';

async function waitDone(api: WorkbenchClient, run: { id: string; status: RunStatus }, name: string): Promise<string> {
  const deadline = Date.now() + 300_000;
  let status: RunStatus = run.status;
  while (Date.now() < deadline) {
    status = (await api.runs.get({ runId: run.id })).status;
    if (status === 'completed' || status === 'failed' || status === 'stopped') break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  expect(status, `run ${name}`).toBe('completed');
  return run.id;
}

async function finishedRun(api: WorkbenchClient, name: string, seed: number): Promise<string> {
  // three RL steps: the Tokens tab has steps to pick from
  return waitDone(api, await api.runs.create({ preset: 'vanilla-rl', size: 'smoke', name, set: { 'seeds.base': seed, 'stages.rl.steps': 3 }, start: true }), name);
}

test('charts: smoothing default, stage marks, log scale, view state in the URL, pinned charts; System and Tokens tabs', async ({ workbench, consoleProblems, browser }) => {
  test.setTimeout(420_000);
  const { page, api, go } = workbench;
  // a run that lasts ~20 s (mostly waiting) so that the engine records a few system samples (every 5 s)
  const waitRun = await api.runs.create({ preset: 'diagnostic', size: 'quick', name: 'system samples', set: { 'stages.diag-wait.steps': 400, 'stages.diag-wait.delayMs': 50 }, start: true });
  const a = await finishedRun(api, 'charts run a', 1);
  const b = await finishedRun(api, 'charts run b', 2);
  await setTheme(page, 'light');
  await page.evaluate(() => (globalThis as unknown as { localStorage: { removeItem(k: string): void } }).localStorage.removeItem('spa-workbench.pinned-charts'));

  await go(`#/run/${encodeURIComponent(a)}`);
  await expect(page.getByTestId('run-view')).toHaveAttribute('data-run-status', 'completed');
  await expect(page.getByTestId('charts')).toBeVisible();
  await page.locator('section[data-group="charts"] .chart-group-head').click();      // collapsed by default
  const lr = page.getByTestId('chart-charts/lr');
  await expect(lr.locator('canvas')).toBeVisible();


  // ── a smoke run logs a few points: smoothing starts off ("auto"), so markers sit on the raw values ──
  await expect(page.getByTestId('smoothing-value')).toHaveText('0.00');
  await expect(page.getByTestId('smoothing-auto')).toBeVisible();
  // charts/lr is logged by the bootstrap and by RL: both stages marked on the shared step axis
  await expect(lr).toHaveAttribute('data-stage-marks', 'bootstrap,rl');
  await lr.scrollIntoViewIfNeeded();
  await shot(page, 'charts-stages', { docs: true });

  // ── log scale, filter, overlay, smoothing, x axis: all in the URL ──
  await page.getByTestId('log-scale').check();
  await expect(lr).toHaveAttribute('data-log', '1');
  await page.getByTestId('metric-filter').fill('charts/');
  await page.getByTestId('overlay-select').selectOption(b);
  await page.getByTestId('smoothing').fill('0.3');
  await page.getByTestId('x-mode').selectOption('episodes');
  await page.getByTestId('x-mode').selectOption('step');
  await expect.poll(() => decodeURIComponent(page.url())).toContain(`overlay=${b}`);
  const url = page.url();
  const query = decodeURIComponent(url.slice(url.indexOf('?')));
  expect(query).toContain('log=1');
  expect(query).toContain('smooth=0.3');
  expect(query).toContain('filter=charts/');
  await expect(page.getByTestId('smoothing-value')).toHaveText('0.30');
  await expect(page.getByTestId('chart-rl/success')).toHaveCount(0);          // filtered out
  // the cursor read-out gives the logged value first, the smoothed one beside it
  const lrCard = page.getByTestId('chart-charts/lr');
  await lrCard.scrollIntoViewIfNeeded();
  await expect(lrCard).toHaveAttribute('data-log', '1');
  const readout = lrCard.locator('.chart-legend .mono');
  await expect.poll(async () => {
    const over = lrCard.locator('.u-over');
    const box = (await over.boundingBox())!;
    await over.hover({ position: { x: box.width / 2, y: box.height / 2 } });
    await over.hover({ position: { x: box.width - 3, y: box.height / 2 } });
    return (await readout.textContent()) ?? '';
  }).toMatch(/charts run a: [-0-9.e]+ \(smoothed [-0-9.e]+\)/);
  await shot(page, 'charts-log-readout', { docs: true });

  // ── pin a chart: it moves to the top, and stays pinned after a reload ──
  const gradNorm = page.getByTestId('chart-charts/gradNorm');
  await gradNorm.getByTestId('pin-chart').click();
  const pinnedSection = page.getByTestId('pinned-charts');
  await expect(pinnedSection.getByTestId('chart-charts/gradNorm')).toBeVisible();
  await expectNoSidewaysScroll(page);
  await shot(page, 'charts-pinned-log-overlay', { docs: true });

  // ── the link reproduces the view in a fresh page (its own browser context: no shared storage) ──
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const fresh = await context.newPage();
  await openApp(fresh, url.slice(url.indexOf('#')));
  await expect(fresh.getByTestId('run-view')).toBeVisible();
  await expect(fresh.getByTestId('log-scale')).toBeChecked();
  await expect(fresh.getByTestId('metric-filter')).toHaveValue('charts/');
  await expect(fresh.getByTestId('smoothing-value')).toHaveText('0.30');
  await expect(fresh.getByTestId('x-mode')).toHaveValue('step');
  await expect(fresh.getByText('charts run b', { exact: false }).first()).toBeVisible();   // the overlay badge
  await expect(fresh.getByTestId('chart-charts/lr')).toHaveAttribute('data-log', '1');
  await expect(fresh.getByTestId('pinned-charts')).toHaveCount(0);            // pins belong to the browser that pinned
  await context.close();

  await page.reload();
  await expect(page.getByTestId('pinned-charts').getByTestId('chart-charts/gradNorm')).toBeVisible();
  await expect(page.getByTestId('log-scale')).toBeChecked();

  // ── System tab: CPU and memory over the run's time; no GPU chart on this machine ──
  const w = await waitDone(api, waitRun, 'system samples');
  await go(`#/run/${encodeURIComponent(w)}?tab=system`);
  await expect(page.getByTestId('system-panel')).toBeVisible();
  // new runs record the core count: the chart reads CPU as a share of the machine's cores (issue 37.3)
  await expect(page.locator('[data-testid^="chart-engine CPU (% of the machine\'s "]').locator('canvas')).toBeVisible();
  await expect(page.getByTestId('chart-engine memory (MB)')).toBeVisible();
  const samples = await api.inspect.systemMetrics({ runId: w, maxPoints: 2000 });
  expect(samples.total).toBeGreaterThan(1);
  if (!samples.samples.some((s) => s.gpuPercent !== undefined)) await expect(page.getByTestId('chart-GPU utilisation (%)')).toHaveCount(0);
  await expectNoSidewaysScroll(page);
  await shot(page, 'run-system', { docs: true });

  // ── Tokens tab: histograms of the RL episodes' per-token statistics ──
  await go(`#/run/${encodeURIComponent(a)}?tab=tokens`);
  await expect(page.getByTestId('tokens-panel')).toBeVisible();
  await expect(page.getByTestId('token-histogram')).toBeVisible();
  const hist = await api.inspect.tokenHistograms({ runId: a, stage: 'rl', fields: ['advantages', 'logprobs'], bins: 30 });
  expect(hist.steps.length).toBeGreaterThan(0);
  await page.getByTestId('tokens-field').selectOption('logprobs');
  await expect(page.getByTestId('tokens-summary')).toContainText(`${hist.steps[hist.steps.length - 1]!.histograms['logprobs']!.count.toLocaleString('en-US')} tokens`);
  expect(hist.steps.length).toBeGreaterThan(1);
  const firstStep = hist.steps[0]!;
  await page.getByTestId('tokens-step').fill('0');                                    // the first RL step
  await expect(page.getByTestId('tokens-step-value')).toHaveText(String(firstStep.step));
  await expect(page.getByTestId('tokens-summary')).toContainText(`${firstStep.histograms['logprobs']!.count.toLocaleString('en-US')} tokens from ${firstStep.episodes} episodes`);
  expect(page.url()).toContain('tab=tokens');
  await expectNoSidewaysScroll(page);
  await shot(page, 'run-tokens', { docs: true });
  expect(consoleProblems).toEqual([]);
});
