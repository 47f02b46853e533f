// The Run view's final-eval panel: the world-model table's rows from eval metrics, headlines in
// exact match, the rest folded, and every tooltip from the one glossary (docs/metrics.md).
// @vitest-environment jsdom
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cleanup, render, screen, within } from '@testing-library/react';
import { finalEval } from '../../renderer/src/components/final-eval.js';
import { GLOSSARY, lookupIn, metricMeaning, parseGlossary } from '../../renderer/src/components/metric-glossary.js';
import { FinalEvalPanel } from '../../renderer/src/components/FinalEvalPanel.js';
import { finalVerdict, passVerdictText, worldModelVerdictText } from '../../renderer/src/components/final-eval.js';

const LATEST: Record<string, number> = {
  'eval/success': 0.25, 'eval/passAt1': 0.2, 'eval/passAt4': 0.5,
  'eval/wmPredictionCellAccuracy': 0.702, 'eval/wmPredictionExact': 0.019, 'eval/wmObservationExact': 0.6, 'eval/wmTurns': 40,
  'eval/wmCheck/observationExact': 0.9, 'eval/wmCheck/predictionExact': 0.3, 'eval/wmCheck/conditionedExact': 0.4,
  'eval/wmCheck/baseObservationExact': 0.8, 'eval/wmCheck/basePredictionExact': 0.031, 'eval/wmCheck/baseConditionedExact': 0.1,
  'eval/wmCheck/conditionedChance': 0.05, 'eval/wmCheck/conditionedOracle': 1,
  'eval/formatErrorRate': 0.1, 'eval/collapse/distinctResponseRatio': 0.7, 'eval/statePerplexity/spa_coordinates': 3.2,
};

describe('finalEval', () => {
  it('builds the world-model table model / base / chance / oracle from the eval metrics', () => {
    const fe = finalEval(LATEST);
    expect(fe.worldModel).toEqual([
      { name: 'this model', observationExact: 0.9, predictionExact: 0.3, givenAction: 0.4 },
      { name: 'base', observationExact: 0.8, predictionExact: 0.031, givenAction: 0.1 },
      { name: 'chance', observationExact: null, predictionExact: null, givenAction: 0.05 },
      { name: 'oracle', observationExact: null, predictionExact: null, givenAction: 1 },
    ]);
    expect(fe.passAt).toEqual([{ k: 1, value: 0.2 }, { k: 4, value: 0.5 }]);
  });

  it('headlines exact match, not cell accuracy, where exact match exists; the rest is folded', () => {
    const fe = finalEval(LATEST);
    expect(fe.headline.map((h) => h.metric)).toEqual(['eval/success', 'eval/wmObservationExact', 'eval/wmPredictionExact']);
    expect(fe.other.map((o) => o.metric)).toContain('eval/wmPredictionCellAccuracy');
    expect(fe.other.map((o) => o.metric)).not.toContain('eval/wmCheck/conditionedOracle');
    // cell accuracy heads only when no exact measure was logged
    expect(finalEval({ 'eval/wmPredictionCellAccuracy': 0.5 }).headline.map((h) => h.metric)).toEqual(['eval/wmPredictionCellAccuracy']);
  });

  it('reads the eval stage\'s Pass@k chance and oracle rows (same puzzles) and keeps them out of the folded metrics', () => {
    const fe = finalEval({ ...LATEST, 'eval/chance/passAt1': 0.06, 'eval/chance/passAt4': 0.2, 'eval/oracle/passAt1': 0.9, 'eval/oracle/passAt4': 0.99 });
    expect(fe.passAtReference).toEqual([{ name: 'chance', values: { 1: 0.06, 4: 0.2 } }, { name: 'oracle', values: { 1: 0.9, 4: 0.99 } }]);
    expect(fe.other.map((o) => o.metric).filter((m) => /chance|oracle/.test(m))).toEqual([]);
    expect(finalEval(LATEST).passAtReference).toEqual([]);
    render(<FinalEvalPanel latest={{ ...LATEST, 'eval/chance/passAt1': 0.06, 'eval/oracle/passAt1': 0.9 }} />);
    const table = screen.getByTestId('passat-table');
    expect(within(table).getByTestId('passat-row-this-model').textContent).toBe('this model20.0%50.0%');
    expect(within(table).getByTestId('passat-row-chance').textContent).toBe('chance6.0%–');
    expect(within(table).getByTestId('passat-row-oracle').textContent).toBe('oracle90.0%–');
    expect(within(table).getByTestId('passat-row-chance').querySelector('td')!.getAttribute('title')).toContain('uniform random policy');
    cleanup();
  });

  it('has no table without a world-model check', () => {
    expect(finalEval({ 'eval/success': 1 }).worldModel).toEqual([]);
  });
});

describe('metric glossary', () => {
  it('is docs/metrics.md: every backticked metric row of the document is in it, with that row\'s meaning', () => {
    const doc = readFileSync('docs/metrics.md', 'utf8');
    expect(GLOSSARY).toEqual(parseGlossary(doc));
    const rows = doc.split('\n').filter((l) => /^\|\s*`/.test(l));
    expect(rows.length).toBeGreaterThan(30);
    for (const row of rows) {
      const name = /`([^`]+)`/.exec(row)![1]!;
      expect(metricMeaning(name), name).not.toBeNull();
      expect(row.replace(/`/g, '').replace(/\\\|/g, '|')).toContain(metricMeaning(name)!.slice(0, 40));
    }
  });

  it('resolves patterned names and every metric the panel shows', () => {
    expect(lookupIn(parseGlossary('| `eval/passAt<k>` | pass at k |'), 'eval/passAt8')).toBe('pass at k');
    expect(lookupIn(parseGlossary('| `eval/passAt<k>` | pass at k |'), 'eval/other')).toBeNull();
    for (const m of Object.keys(LATEST)) expect(metricMeaning(m), m).not.toBeNull();
  });
});

describe('FinalEvalPanel', () => {
  it('renders the table rows and a tooltip from the glossary', () => {
    render(<FinalEvalPanel latest={LATEST} />);
    const table = screen.getByTestId('wm-table');
    expect(within(table).getAllByRole('row').map((r) => r.textContent)).toEqual([
      'world model (n unknown)observation exact, first turnsprediction exact, first turnsprediction given the action (n unknown)',
      'this model90.0%30.0%40.0%', 'base80.0%3.1%10.0%', 'chance––5.0%', 'oracle––100.0%',
    ]);
    expect(screen.getByTestId('final-headline-eval/wmPredictionExact').getAttribute('title')).toBe(metricMeaning('eval/wmPredictionExact'));
    expect(screen.getByTestId('final-other').textContent).toContain('eval/formatErrorRate');
  });
});

// eval/final.json as the eval stage writes it (core/eval/evaluate.ts), trimmed to what the verdict reads:
// the review's run (ux-review-3 §2): Pass@1 12.5% [3.1, 25.0] (bootstrap over 8 puzzles) on 8 × 4,
// chance 30.1%, oracle 96.9%; prediction given the action 60.0% vs the base's 0.0% on 45 state-changing turns.
const FINAL_REVIEW = {
  episodes: 32, puzzles: 8, samplesPerPuzzle: 4,
  passAtK: { '1': { mean: 0.125, low: 0.03125, high: 0.25, level: 0.95, method: 'bootstrap over puzzles' } },
  wm: { prediction: { turns: 140, exact: 0.2741 } },
  reference: [{ kind: 'chance', label: 'chance (random, well-formed)', passAt: { '1': 0.3013 } }, { kind: 'oracle', label: 'oracle (optimal)', passAt: { '1': 0.9691 } }],
  worldModelVersusBase: { model: { turns: 64, conditioned: { exactChanged: 0.6, changedTurns: 45 } }, base: { turns: 64, conditioned: { exactChanged: 0, changedTurns: 45 } } },
};
// the same on 24 puzzles (no small-n widening): 5.0% [0.0, 12.5] lies wholly under chance
const FINAL_BELOW = { ...FINAL_REVIEW, episodes: 96, puzzles: 24, passAtK: { '1': { mean: 0.05, low: 0, high: 0.125 } } };

describe('the verdict line (the Studies table\'s rule, core/api/verdict.ts)', () => {
  it('says below chance when the whole Pass@1 interval is under the chance row, and the world model learned against the base, with n', () => {
    cleanup();
    const v = finalVerdict(LATEST, FINAL_BELOW);
    expect(v.pass!.verdict).toBe('below chance');
    expect(v.pass!.widened).toBe(false);
    expect(passVerdictText(v.pass!)).toBe('Pass@1 5.0% [0.0, 12.5] on 24 puzzles × 4 = 96 episodes; chance 30.1%; oracle 96.9%');
    expect(v.worldModel!.verdict).toBe('learned');
    expect(worldModelVerdictText(v.worldModel!)).toMatch(/^prediction given the action 60\.0% \[45\.\d, 73\.\d\] vs the base's 0\.0%, n = 45 state-changing turns$/);
    render(<FinalEvalPanel latest={LATEST} final={FINAL_BELOW} />);
    expect(screen.getByTestId('verdict-pass').textContent).toContain('Plays below chance.');
    expect(screen.getByTestId('verdict-wm').textContent).toContain('World model learned.');
    expect(screen.getByTestId('final-headline-eval/wmPredictionExact').textContent).toContain('n = 140 well-formed turns');
    expect(screen.getByTestId('wm-table').textContent).toContain('n = 45 state-changing turns');
    cleanup();
  });

  it('widens a bootstrap over few puzzles to Wilson\'s as the Studies table does: the review\'s 8-puzzle run is not shown to be below chance', () => {
    const v = finalVerdict(LATEST, FINAL_REVIEW);
    expect(v.pass!.widened).toBe(true);
    expect(v.pass!.verdict).toBe('indistinguishable from chance');    // Wilson over 8 puzzles at 12.5%: [2.2, 47.1] holds 30.1%
    expect(passVerdictText(v.pass!)).toBe('Pass@1 12.5% [2.2, 47.1] (Wilson over the puzzles: few puzzles) on 8 puzzles × 4 = 32 episodes; chance 30.1%; oracle 96.9%');
  });

  it('says above / indistinguishable / not learned by the same rule, and states no verdict without an interval or n', () => {
    const above = { ...FINAL_REVIEW, passAtK: { '1': { mean: 0.75, low: 0.6, high: 0.9 } } };   // Wilson over 8: [40.9, 92.9]
    expect(finalVerdict(LATEST, above).pass!.verdict).toBe('above chance');
    const overlap = { ...FINAL_BELOW, passAtK: { '1': { mean: 0.25, low: 0.1, high: 0.4 } } };
    expect(finalVerdict(LATEST, overlap).pass!.verdict).toBe('indistinguishable from chance');
    const weak = { ...FINAL_REVIEW, worldModelVersusBase: { model: { conditioned: { exactChanged: 0.2, changedTurns: 10 } }, base: { conditioned: { exactChanged: 0.1 } } } };
    expect(finalVerdict(LATEST, weak).worldModel!.verdict).toBe('not learned');  // Wilson [5.7, 51.0] holds the base's 10%
    // no final.json: the means from the metrics, no verdict (never a verdict from a mean alone)
    const bare = finalVerdict({ ...LATEST, 'eval/chance/passAt1': 0.3 }, null);
    expect(bare.pass!.verdict).toBeNull();
    expect(passVerdictText(bare.pass!)).toBe('Pass@1 20.0% (n unknown): no interval recorded, no verdict (chance 30.0%)');
    expect(bare.worldModel!.verdict).toBeNull();
    expect(worldModelVerdictText(bare.worldModel!)).toBe('prediction given the action 40.0% vs the base\'s 10.0% (n unknown, no verdict)');
  });
});
