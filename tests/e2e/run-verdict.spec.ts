// The Run view states its result in words (issue 37): two fixture runs, one whose Pass@1 interval
// lies wholly below the chance row (24 puzzles: 5.0% [0.0, 12.5] vs chance 30.1%) and one wholly
// above it (8 puzzles: the bootstrap is widened to Wilson's, as the Studies table does), each with eval/final.json as the eval stage writes it and the eval metrics in
// run.json (as the engine leaves them at the end of a run), so no 10-minute training is needed.
// Then Compare on the pair (chance/oracle rows, the given-the-action column, n/a, the warning
// when sizes and k differ) and the Runs table at 1280 px with Pass@2 and Pass@4 columns and tags.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkbenchClient } from '../../core/api/contract.js';
import { clippedTexts, expect, expectNoSidewaysScroll, shot, test } from './helpers.js';

interface Fixture {
  name: string; size: string; k: number[]; puzzles: number;
  passAt: Record<string, { mean: number; low: number; high: number }>;
  chance: Record<string, number>; oracle: Record<string, number>;
  wm: { model: number; base: number; changed: number; turns: number; wmTurns: number; predExact: number };
  tags?: string[];
}

const BELOW: Fixture = {
  name: 'below chance run', size: 'quick', k: [1, 4], puzzles: 24,
  passAt: { '1': { mean: 0.05, low: 0, high: 0.125 }, '4': { mean: 0.175, low: 0.083, high: 0.292 } },
  chance: { '1': 0.3013, '4': 0.62 }, oracle: { '1': 0.9691, '4': 1 },
  wm: { model: 0.6, base: 0, changed: 45, turns: 64, wmTurns: 140, predExact: 0.2741 }, tags: ['review'],
};
const ABOVE: Fixture = {
  name: 'above chance run', size: 'smoke', k: [1, 2], puzzles: 8,
  passAt: { '1': { mean: 0.72, low: 0.6, high: 0.84 }, '2': { mean: 0.85, low: 0.74, high: 0.95 } },
  chance: { '1': 0.3013, '2': 0.45 }, oracle: { '1': 0.9691, '2': 1 },
  wm: { model: 0.1, base: 0.08, changed: 20, turns: 32, wmTurns: 0, predExact: 0 },
};

async function fixtureRun(api: WorkbenchClient, projectPath: string, f: Fixture): Promise<string> {
  const run = await api.runs.create({ preset: 'sft-only', size: 'smoke', name: f.name, start: false });
  const dir = join(projectPath, 'runs', run.id);
  const rec = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as Record<string, unknown> & { stages: Array<Record<string, unknown>> };
  const latest: Record<string, number> = {
    'eval/success': f.passAt['1']!.mean, 'eval/wmTurns': f.wm.wmTurns,
    'eval/wmCheck/conditionedExact': f.wm.model, 'eval/wmCheck/baseConditionedExact': f.wm.base,
    'eval/wmCheck/observationExact': 1, 'eval/wmCheck/predictionExact': 0.47, 'eval/wmCheck/baseObservationExact': 0.9, 'eval/wmCheck/basePredictionExact': 0.05,
    'eval/wmCheck/conditionedChance': 0, 'eval/wmCheck/conditionedOracle': 0.8889,
    ...(f.wm.wmTurns > 0 ? { 'eval/wmPredictionExact': f.wm.predExact, 'eval/wmObservationExact': 0.607, 'eval/wmPredictionCellAccuracy': 0.86 } : {}),
  };
  for (const [k, v] of Object.entries(f.passAt)) latest[`eval/passAt${k}`] = v.mean;
  for (const [k, v] of Object.entries(f.chance)) latest[`eval/chance/passAt${k}`] = v;
  for (const [k, v] of Object.entries(f.oracle)) latest[`eval/oracle/passAt${k}`] = v;
  const t = Date.now();
  writeFileSync(join(dir, 'run.json'), JSON.stringify({
    ...rec, size: f.size, status: 'completed', startedAt: t - 245_000, finishedAt: t, durationMs: 245_000, attempts: 1, latest, tags: f.tags ?? [],
    stages: rec.stages.map((s) => ({ ...s, status: 'completed', startedAt: t - 245_000, finishedAt: t })),
  }, null, 2));
  const puzzles = f.puzzles, samples = Math.max(...f.k);
  mkdirSync(join(dir, 'eval'), { recursive: true });
  writeFileSync(join(dir, 'eval', 'final.json'), JSON.stringify({
    kind: 'eval', stage: 'eval', step: 0, k: f.k, episodes: puzzles * samples, puzzles, samplesPerPuzzle: samples,
    success: { mean: f.passAt['1']!.mean, low: 0.05, high: 0.28, level: 0.95, method: 'wilson' },
    passAtK: Object.fromEntries(Object.entries(f.passAt).map(([k, v]) => [k, { ...v, level: 0.95, method: 'bootstrap over puzzles' }])),
    wm: { prediction: { turns: f.wm.wmTurns, exact: f.wm.predExact, cellAccuracy: 0.86 }, observation: { turns: f.wm.wmTurns, exact: 0.607 } },
    worldModelVersusBase: {
      model: { turns: f.wm.turns, conditioned: { exactChanged: f.wm.model, changedTurns: f.wm.changed, counterfactualExactChanged: 0 } },
      base: { turns: f.wm.turns, conditioned: { exactChanged: f.wm.base, changedTurns: f.wm.changed, counterfactualExactChanged: 0, oracleExactChanged: 0.8889 } },
    },
    reference: [
      { kind: 'chance', label: 'chance (random, well-formed)', how: 'exact DP', puzzles, passAt: f.chance },
      { kind: 'oracle', label: 'oracle (optimal)', how: 'BFS plan', puzzles, passAt: f.oracle },
    ],
  }, null, 2));
  return run.id;
}

test('the Run view states below / above chance and the world model against the base, with n; Compare and Runs follow', async ({ workbench, consoleProblems }) => {
  const { page, api, project, go } = workbench;
  const below = await fixtureRun(api, project.path, BELOW);
  const above = await fixtureRun(api, project.path, ABOVE);
  // reopen the project: its run index is rebuilt from the run folders' run.json (the source of truth)
  await api.projects.close({});
  await api.projects.open({ path: project.path });
  await page.reload();
  await expect(page.getByTestId('current-project')).toContainText('e2e project');

  for (const width of [1280, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    await go(`#/run/${below}`);
    const verdict = page.getByTestId('final-verdict');
    await expect(verdict).toBeVisible();
    await expect(page.getByTestId('verdict-pass')).toHaveText('Plays below chance. Pass@1 5.0% [0.0, 12.5] on 24 puzzles × 4 = 96 episodes; chance 30.1%; oracle 96.9%');
    await expect(page.getByTestId('verdict-wm')).toHaveText(/^World model learned\. prediction given the action 60\.0% \[45\.\d, 73\.\d\] vs the base's 0\.0%, n = 45 state-changing turns$/);
    await expect(page.getByTestId('headline-wm')).toHaveText(/^prediction exact, eval episodes 27\.4% \(n = 140 well-formed turns\)$/);
    await expect(page.getByTestId('final-pass-4')).toContainText('(n = 24 puzzles)');
    await expect(page.getByTestId('headline-success')).toHaveText('Success (eval) 5.0% (n = 96 episodes)');
    await expect(page.getByTestId('headline-pass1')).toHaveText('Pass@1 (eval) 5.0% (n = 24 puzzles)');
    await expect(page.getByTestId('wm-table').locator('thead')).toContainText('n = 45 state-changing turns');
    await shot(page, `run-verdict-below-${width}`);
  }

  await page.setViewportSize({ width: 1280, height: 900 });
  await go(`#/run/${above}`);
  await expect(page.getByTestId('verdict-pass')).toHaveText(/^Plays above chance\. Pass@1 72\.0% \[3\d\.\d, 9\d\.\d\] \(Wilson over the puzzles: few puzzles\) on 8 puzzles × 2 = 16 episodes; chance 30\.1%; oracle 96\.9%$/);
  await expect(page.getByTestId('verdict-wm')).toHaveText(/^World model not learned\. .* vs the base's 8\.0%, n = 20 state-changing turns$/);
  await expect(page.getByTestId('headline-wm')).toContainText('n/a (0 well-formed turns)');
  await shot(page, 'run-verdict-above-1280');

  // Compare: chance / oracle rows, the given-the-action column, n/a for the run with no well-formed turn, the mismatch warning
  await go(`#/compare/${below},${above}`);
  const table = page.getByTestId('compare-table');
  await expect(table.getByTestId('compare-row')).toHaveCount(2);
  await expect(table.locator('thead')).toContainText('prediction given the action');
  await expect(table.getByTestId('compare-chance')).toHaveCount(2);       // the two runs played different puzzle sets (8 × 4 vs 8 × 2)
  await expect(table.getByTestId('compare-oracle').first()).toContainText('96.9');
  const aboveRow = table.getByTestId('compare-row').filter({ hasText: 'above chance run' });
  await expect(aboveRow.getByTestId('compare-wm-exact')).toHaveText('n/a');
  await expect(aboveRow.getByTestId('compare-given-action')).toHaveText('10.0');
  await expect(aboveRow).toContainText(/72\.0 \[3\d\.\d, 9\d\.\d\]/);   // 8 puzzles: the interval widened to Wilson's (the verdict's rule), not hidden
  const warn = page.getByTestId('compare-mismatch');
  await expect(warn).toContainText('sizes differ');
  await expect(warn).toContainText('k differs');
  await expectNoSidewaysScroll(page);
  expect(await clippedTexts(page, '[data-testid="compare-table"] th'), 'clipped headers at 1280px').toEqual([]);
  await shot(page, 'compare-verdict-1280');
  await page.setViewportSize({ width: 1440, height: 900 });
  await shot(page, 'compare-verdict-1440');

  // the Runs table: Pass@2 and Pass@4 columns and a tag column, no sideways scroll at 1280
  for (const width of [1280, 1440]) {
    await page.setViewportSize({ width, height: 800 });
    await go('#/runs');
    await expect(page.getByTestId('runs-table').locator('thead')).toContainText('Pass@4');
    await expect(page.getByTestId('runs-table').locator('thead')).toContainText('Pass@2');
    await expect(page.getByTestId('runs-table').locator('thead')).toContainText('prediction exact, eval episodes');
    await expectNoSidewaysScroll(page, '.dt-scroll');
    // every header and number shows whole (names may ellipsise by design: the full name is one click away)
    const cut = await page.locator('[data-testid=runs-table] th, [data-testid=runs-table] td.num').evaluateAll((els) => els
      .filter((el) => { const r = el.ownerDocument.createRange(); r.selectNodeContents(el); return r.getBoundingClientRect().width > el.clientWidth - 12 + 1 || el.scrollHeight > el.clientHeight + 2; })
      .map((el) => (el.textContent ?? '').trim()));
    expect(cut, `clipped at ${width}px`).toEqual([]);
    await shot(page, `runs-table-verdict-${width}`);
  }
  expect(consoleProblems).toEqual([]);
});
