// The Run view's final-evaluation panel in the browser: the world-model table (this model / base /
// chance / oracle), Pass@k, headlines in exact match, the other eval metrics folded, tooltips from
// docs/metrics.md. The run's record carries the eval metrics a finished run logs (written into its
// run.json, as the engine does at the end of a run), so the test needs no 10-minute training.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, shot, test } from './helpers.js';

const EVAL: Record<string, number> = {
  'eval/success': 0.281, 'eval/passAt1': 0.281, 'eval/passAt4': 0.52, 'eval/avgActions': 4.6,
  'eval/formatErrorRate': 0.034, 'eval/invalidActionRate': 0.012, 'eval/wmTurns': 118,
  'eval/wmObservationExact': 0.712, 'eval/wmPredictionExact': 0.019, 'eval/wmObservationCellAccuracy': 0.95, 'eval/wmPredictionCellAccuracy': 0.702,
  'eval/wmObservationEntityF1': 0.9, 'eval/wmPredictionEntityF1': 0.61,
  'eval/wmCheck/observationExact': 0.75, 'eval/wmCheck/predictionExact': 0.0625, 'eval/wmCheck/conditionedExact': 0.3125,
  'eval/wmCheck/baseObservationExact': 0.6875, 'eval/wmCheck/basePredictionExact': 0.031, 'eval/wmCheck/baseConditionedExact': 0.125,
  'eval/wmCheck/conditionedChance': 0.0625, 'eval/wmCheck/conditionedOracle': 1,
  'eval/collapse/distinctResponseRatio': 0.84, 'eval/collapse/inputDependence': 0.97,
};

test('final-eval panel: world-model table, Pass@k, folded metrics, glossary tooltips', async ({ workbench }) => {
  const { page, api, project } = workbench;
  const run = await api.runs.create({ preset: 'sft-only', size: 'smoke', name: 'final eval panel', start: false });
  const file = join(project.path, 'runs', run.id, 'run.json');
  const rec = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown> & { stages: Array<Record<string, unknown>> };
  const t = Date.now();
  writeFileSync(file, JSON.stringify({
    ...rec, status: 'completed', startedAt: t - 600_000, finishedAt: t, durationMs: 600_000, attempts: 1, latest: EVAL,
    stages: rec.stages.map((s) => ({ ...s, status: 'completed', startedAt: t - 600_000, finishedAt: t })),
  }, null, 2));
  await workbench.go(`#/run/${run.id}`);
  const panel = page.getByTestId('final-eval');
  await expect(panel).toBeVisible();
  const rows = panel.getByTestId('wm-table').locator('tbody tr');
  await expect(rows).toHaveText([/^this model\s*75\.0%\s*6\.3%\s*31\.3%$/, /^base\s*68\.8%\s*3\.1%\s*12\.5%$/, /^chance–\s*–\s*6\.3%$/, /^oracle–\s*–\s*100\.0%$/]);
  await expect(page.getByTestId('headline-wm')).toContainText('prediction exact');
  await expect(page.getByTestId('headline-wm')).toContainText('1.9%');
  await expect(panel.getByTestId('final-pass-4')).toContainText('52.0%');
  await expect(panel.getByTestId('final-pass-4')).toHaveAttribute('title', /unbiased Pass@k/);
  await expect(panel.getByTestId('final-other')).not.toHaveAttribute('open', '');
  await expect(panel.getByTestId('final-other')).toContainText('other eval metrics');
  await panel.scrollIntoViewIfNeeded();
  await shot(page, 'run-final-eval-record');       // docs' run-final-eval.png is a real run's (docs/ui.md)
});
