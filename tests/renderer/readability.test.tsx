// @vitest-environment jsdom
// Readability fixes found by looking at the 1280×800 screenshots: long metric and entity names
// get line-break opportunities instead of being cut, rates read as percentages in the number
// tiles, whole-number x axes (steps, episodes) get whole-number ticks.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render } from '@testing-library/react';
// uPlot (imported by the chart modules) asks matchMedia for the pixel ratio when it loads; jsdom has none
vi.hoisted(() => {
  const w = globalThis as unknown as { matchMedia?: unknown };
  w.matchMedia ??= () => ({ matches: false, addListener() {}, removeListener() {}, addEventListener() {}, removeEventListener() {} });
});
import { breakable } from '../../renderer/src/components/widgets.js';
import { isFractionMetric, tileValue } from '../../renderer/src/charts/ChartGroups.js';
import { isIntegerAxis } from '../../renderer/src/charts/MetricChart.js';

afterEach(cleanup);

describe('breakable names', () => {
  it('keeps the text and adds <wbr> between camelCase words and after / - _ .', () => {
    const { container } = render(<div>{breakable('collapse/distinctResponseRatio')}</div>);
    expect(container.textContent).toBe('collapse/distinctResponseRatio');
    expect(container.querySelectorAll('wbr')).toHaveLength(3);   // collapse/ | distinct | Response | Ratio
  });
  it('leaves a short plain word alone', () => {
    const { container } = render(<div>{breakable('success')}</div>);
    expect(container.innerHTML).toBe('<div>success</div>');
  });
  it('breaks entity kinds such as playerOnTarget and state-perplexity names', () => {
    const { container } = render(<div>{breakable('statePerplexity/tiny-raw-grid')}</div>);
    expect(container.textContent).toBe('statePerplexity/tiny-raw-grid');
    expect(container.querySelectorAll('wbr').length).toBeGreaterThanOrEqual(3);
  });
});

describe('number tiles', () => {
  it('shows rates and accuracies as percentages', () => {
    expect(tileValue('eval/success', 0.25)).toBe('25.0%');
    expect(tileValue('eval/passAt1', 0)).toBe('0.0%');
    expect(tileValue('eval/formatErrorRate', 1)).toBe('100.0%');
    expect(tileValue('eval/wmObservationCellAccuracy', 0.5)).toBe('50.0%');
    expect(tileValue('eval/wmPredictionExact', 0.125)).toBe('12.5%');
  });
  it('keeps other numbers as logged', () => {
    expect(isFractionMetric('eval/statePerplexity/tiny-spa')).toBe(false);
    expect(tileValue('eval/statePerplexity/tiny-spa', 112.9)).toBe('112.9');
    expect(tileValue('eval/avgActions', 3)).toBe('3');
    expect(tileValue('eval/wmObservationEntityF1', 0.5)).toBe('0.5');
    expect(tileValue('eval/success', 3)).toBe('3');                  // not a fraction: shown as it is
    expect(tileValue('eval/success', undefined)).toBe('–');
  });
});

describe('chart x axis', () => {
  it('steps and episodes are whole numbers, wall time is not', () => {
    expect(isIntegerAxis('step')).toBe(true);
    expect(isIntegerAxis('episodes')).toBe(true);
    expect(isIntegerAxis('wall time (s)')).toBe(false);
  });
});
