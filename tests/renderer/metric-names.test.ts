// One name per number: the on-screen names (renderer/src/components/metric-names.ts) are the table
// "Names on screen" of docs/metrics.md, no two metrics share a name, and the views that show
// headline numbers hold none of the old ambiguous labels ("WM accuracy", "WM exact", "WM cell",
// a bare "observation exact"/"prediction exact" string) outside the names module.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { METRIC_NAMES, nameOf } from '../../renderer/src/components/metric-names.js';

function namesTable(markdown: string): Array<{ name: string; metric: string }> {
  const start = markdown.indexOf('## Names on screen');
  expect(start, 'docs/metrics.md has a "Names on screen" section').toBeGreaterThan(0);
  const section = markdown.slice(start, markdown.indexOf('\n## ', start + 5));
  return section.split('\n').filter((l) => /^\| [^`|-][^|]*\| `[^`]+` \|/.test(l)).map((l) => {
    const cells = l.split('|').map((c) => c.trim());
    return { name: cells[1]!, metric: /`([^`]+)`/.exec(cells[2]!)![1]! };
  });
}

const VIEWS = [
  'renderer/src/components/FinalEvalPanel.tsx', 'renderer/src/components/final-eval.ts', 'renderer/src/views/RunView.tsx',
  'renderer/src/views/RunsView.tsx', 'renderer/src/components/run-groups.tsx', 'renderer/src/views/CompareView.tsx',
];

describe('names on screen', () => {
  it('are the table of docs/metrics.md, both ways', () => {
    const doc = namesTable(readFileSync('docs/metrics.md', 'utf8'));
    expect(doc.length).toBeGreaterThanOrEqual(10);
    expect(Object.fromEntries(doc.map((r) => [r.metric, r.name]))).toEqual(METRIC_NAMES);
  });

  it('give each metric its own name (distinct names where the denominators differ)', () => {
    const names = Object.values(METRIC_NAMES);
    expect(new Set(names).size).toBe(names.length);
    expect(nameOf('eval/wmPredictionCellAccuracy')).not.toBe(nameOf('rollout/wmPredictionCellAccuracy'));
    expect(nameOf('eval/wmPredictionExact')).not.toBe(nameOf('eval/wmCheck/predictionExact'));
    expect(nameOf('eval/passAt4')).toBe('Pass@4');
    expect(() => nameOf('eval/nothing' as never)).toThrow(/no on-screen name for eval\/nothing/);
  });

  it('are the only world-model labels in the views that show headline numbers', () => {
    for (const file of VIEWS) {
      const src = readFileSync(file, 'utf8').split('\n').filter((l) => !/^\s*(\/\/|\*|\/\*)/.test(l)).join('\n');
      expect(src, file).not.toMatch(/WM (accuracy|exact|cell|prediction)/);
      // a label literal naming a WM measure without its denominator: '…exact' / '…accuracy' closing a string or JSX text
      expect(src, file).not.toMatch(/['">](observation|prediction) (exact|cell accuracy)( given the action)?['"<]/);
    }
  });
});
