// @vitest-environment jsdom
// Issue 12 items 7 and 11 in the renderer: tick labels never repeat, smoothing off by default on
// short series, the Run view's chart state round-trips through the URL, stages laid end to end
// with their spans, pinned charts remembered; the System tab's charts (GPU only when present)
// and empty states; the Tokens tab's histogram and empty state.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen, waitFor } from '@testing-library/react';
import {
  DEFAULT_SMOOTHING, DEFAULT_VIEW, SMOOTHING_MIN_POINTS, StageAxis, defaultSmoothing, formatValue, loadPinned, logTicks, paramsToView, savePinned,
  tickLabels, timeSpans, togglePinned, viewToParams, type ChartViewState,
} from '../../renderer/src/charts/chart-view.js';
import { forLogScale, stagesInRange } from '../../renderer/src/charts/MetricChart.js';
import { formatRoute, parseRoute } from '../../renderer/src/routes.js';
import { SystemPanel, systemCharts } from '../../renderer/src/components/SystemPanel.js';
import { HistogramBars, TokensPanel, fieldsWithData } from '../../renderer/src/components/TokensPanel.js';
import type { SystemSample } from '../../core/api/contract.js';
import type { Client } from '../../renderer/src/api/client.js';

// uPlot reads the pixel ratio through matchMedia when it loads; jsdom has none
vi.hoisted(() => {
  const w = globalThis as unknown as { matchMedia?: unknown };
  w.matchMedia ??= () => ({ matches: false, addEventListener() {}, removeEventListener() {}, addListener() {}, removeListener() {} });
});

afterEach(cleanup);

describe('tick labels', () => {
  it('tells narrow-range ticks apart where the compact form would repeat "4.84"', () => {
    const ticks = [4.8385, 4.839, 4.8395, 4.84, 4.8405, 4.841];
    expect(new Set(ticks.map((v) => formatValue(v))).size).toBeLessThan(ticks.length);   // the bug: compact labels repeat
    const labels = tickLabels(ticks);
    expect(new Set(labels).size).toBe(ticks.length);
    expect(labels).toEqual(['4.8385', '4.8390', '4.8395', '4.8400', '4.8405', '4.8410']);
  });

  it('keeps the compact form when it already tells ticks apart, and survives float noise', () => {
    expect(tickLabels([0, 0.25, 0.5, 0.75, 1])).toEqual(['0', '0.25', '0.5', '0.75', '1']);
    expect(tickLabels([1000, 2000, 3000])).toEqual(['1000', '2000', '3000']);
    const noisy = [0.1 + 0.2, 0.30000000000000004 + 1e-7, 0.30000000000000004 + 2e-7];
    const labels = tickLabels(noisy);
    expect(new Set(labels).size).toBe(3);
    for (let i = 1; i < labels.length; i++) expect(labels[i]).not.toBe(labels[i - 1]);
  });

  it('tells apart large values with small spacing and leaves identical values alone', () => {
    const big = [123456.1, 123456.2, 123456.3];
    expect(new Set(tickLabels(big)).size).toBe(3);
    expect(tickLabels([2, 2])).toEqual(['2', '2']);
  });

  it('labels a log axis only as densely as the chart has room for, never "null"', () => {
    const decade = (k: number) => [1, 2, 3, 4, 5, 6, 7, 8, 9].map((m) => Number((m * 10 ** k).toPrecision(12)));
    const oneDecade = [...decade(-1), 1];                                   // 0.1 … 1: ten splits
    expect(logTicks(oneDecade, 12)).toEqual(oneDecade);                     // room for all
    expect(logTicks(oneDecade, 6).filter((v) => v !== null)).toEqual([0.1, 0.2, 0.5, 1]);
    const four = [...decade(-4), ...decade(-3), ...decade(-2), ...decade(-1), 1];
    expect(logTicks(four, 6).filter((v) => v !== null)).toEqual([1e-4, 1e-3, 1e-2, 1e-1, 1]);
    const wide = Array.from({ length: 16 }, (_, i) => Number((10 ** (i - 17)).toPrecision(12)));   // 1e-17 … 1e-2
    const kept = logTicks(wide, 6).filter((v): v is number => v !== null);
    expect(kept.length).toBeLessThanOrEqual(6);
    expect(kept.length).toBeGreaterThanOrEqual(3);
    expect(tickLabels(logTicks([1e-6, 3e-6, 1e-5, 1e-3, 4e-3, 1], 4))).toEqual(['1e-6', '', '1e-5', '0.001', '', '1']);
    expect(tickLabels([null, 4.8395, null, 4.84, 4.8405]).filter((l) => l !== '')).toEqual(['4.8395', '4.8400', '4.8405']);
  });
});

describe('smoothing default', () => {
  it('is off below the threshold and on above it', () => {
    expect(defaultSmoothing(0)).toBe(0);
    expect(defaultSmoothing(11)).toBe(0);
    expect(defaultSmoothing(SMOOTHING_MIN_POINTS - 1)).toBe(0);
    expect(defaultSmoothing(SMOOTHING_MIN_POINTS)).toBe(DEFAULT_SMOOTHING);
    expect(defaultSmoothing(5000)).toBe(DEFAULT_SMOOTHING);
  });
});

describe('chart view state in the URL', () => {
  it('round-trips every setting through the route hash', () => {
    const state: ChartViewState = { tab: 'charts', x: 'episodes', stage: 'rl', smoothing: 0.35, log: true, filter: 'success pass', overlay: ['run b', 'c/d'] };
    const hash = formatRoute({ view: 'run', runId: 'r 1', params: viewToParams(state) });
    const back = parseRoute(hash);
    expect(back.view).toBe('run');
    if (back.view !== 'run') return;
    expect(back.runId).toBe('r 1');
    expect(paramsToView(back.params)).toEqual(state);
  });

  it('leaves defaults out (a plain link stays plain) and keeps an explicit smoothing of 0', () => {
    expect(viewToParams(DEFAULT_VIEW)).toEqual({});
    expect(formatRoute({ view: 'run', runId: 'r1', params: viewToParams(DEFAULT_VIEW) })).toBe('#/run/r1');
    expect(paramsToView(viewToParams({ ...DEFAULT_VIEW, smoothing: 0 })).smoothing).toBe(0);
    expect(paramsToView(viewToParams({ ...DEFAULT_VIEW, tab: 'system' })).tab).toBe('system');
  });

  it('falls back to the defaults on malformed values', () => {
    const v = paramsToView({ tab: 'nope', x: 'sideways', smooth: '7', log: 'yes', overlay: ',a,,a,' });
    expect(v).toEqual({ ...DEFAULT_VIEW, overlay: ['a'] });
    expect(paramsToView({ smooth: 'abc' }).smoothing).toBeNull();
  });
});

describe('stages on the x axis', () => {
  it('lays stages end to end in the order they first log, and live points keep appending', () => {
    const axis = new StageAxis();
    axis.addStage('bootstrap', 59);
    axis.addStage('rl', 3, 1);
    expect(axis.map('bootstrap', 10)).toBe(10);
    expect(axis.map('rl', 1)).toBe(61);
    expect(axis.peek('rl', 4)).toBe(64);
    expect(axis.peek('eval', 0)).toBeNull();
    expect(axis.map('rl', 4)).toBe(64);          // the running stage grows
    expect(axis.map('eval', 0)).toBe(65);        // a later stage starts after it
    expect(axis.spans()).toEqual([{ stage: 'bootstrap', start: 0, end: 59 }, { stage: 'rl', start: 60, end: 64 }, { stage: 'eval', start: 65, end: 65 }]);
  });

  it('marks a chart only when two or more stages hold its points', () => {
    const spans = [{ stage: 'bootstrap', start: 0, end: 1 }, { stage: 'rl', start: 2, end: 3 }, { stage: 'eval', start: 4, end: 4 }];
    expect(stagesInRange(spans, [{ x: [0, 1, 2, 3] }])).toEqual(['bootstrap', 'rl']);
    expect(stagesInRange(spans, [{ x: [2, 3] }])).toEqual([]);
    expect(timeSpans([{ stage: 'b', x: 5 }, { stage: 'a', x: 1 }, { stage: 'a', x: 3 }])).toEqual([{ stage: 'a', start: 1, end: 3 }, { stage: 'b', start: 5, end: 5 }]);
  });

  it('leaves zero and negative values out of a log axis and counts them', () => {
    expect(forLogScale([1, 0, -2, 0.5, null])).toEqual({ y: [1, null, null, 0.5, null], dropped: 2 });
  });
});

describe('pinned charts', () => {
  it('toggle in pin order and are remembered across reloads', () => {
    localStorage.clear();
    expect(loadPinned()).toEqual([]);
    let pins = togglePinned([], 'rl/success');
    pins = togglePinned(pins, 'losses/policy');
    savePinned(pins);
    expect(loadPinned()).toEqual(['rl/success', 'losses/policy']);
    savePinned(togglePinned(loadPinned(), 'rl/success'));
    expect(loadPinned()).toEqual(['losses/policy']);
    localStorage.setItem('spa-workbench.pinned-charts', '{not json');
    expect(loadPinned()).toEqual([]);
  });
});

const sample = (t: number, extra: Partial<SystemSample> = {}): SystemSample => ({
  time: 1_000_000 + t * 1000, stage: 'rl', cpuPercent: 50 + t, rssMb: 300, heapMb: 40, memUsedMb: 9000, memTotalMb: 24000, loadAvg: 1.5, ...extra,
});

describe('System tab', () => {
  it('charts CPU and memory over seconds since the first sample; GPU charts only when a sample has a GPU reading', () => {
    const cpuOnly = systemCharts([sample(0), sample(5)]);
    expect(cpuOnly.map((c) => c.name)).toEqual(['engine CPU (% of one core)', 'engine memory (MB)', 'machine memory (MB)', 'machine load (1-minute average)']);
    expect(cpuOnly[0]!.series[0]!.x).toEqual([0, 5]);
    expect(cpuOnly[0]!.series[0]!.y).toEqual([50, 55]);
    const gpu = systemCharts([sample(0), sample(2, { gpuPercent: 80, gpuMemMb: 5000, gpuMemTotalMb: 80000 })]);
    expect(gpu.map((c) => c.name)).toContain('GPU utilisation (%)');
    expect(gpu.find((c) => c.name === 'GPU memory (MB)')!.series[0]!.x).toEqual([2]);   // only the sample that had it
  });

  it('says why there is nothing for a run recorded before system samples existed', async () => {
    const client = { inspect: { systemMetrics: async () => ({ samples: [], total: 0 }) } } as unknown as Client;
    render(<SystemPanel client={client} runId="r1" active={false} theme="light" />);
    await waitFor(() => expect(screen.getByTestId('system-empty').textContent).toMatch(/runs before this version did not record them/));
  });
});

describe('Tokens tab', () => {
  const hist = { edges: [-1, 0, 1], counts: [3, 7], count: 10, mean: 0.2, min: -1, max: 1 };
  it('draws one bar per bin and lists only the fields with tokens', () => {
    render(<HistogramBars histogram={hist} color="#123456" label="advantages" />);
    const svg = screen.getByTestId('token-histogram');
    expect(svg.getAttribute('data-bins')).toBe('2');
    expect(svg.querySelectorAll('rect')).toHaveLength(2);
    const steps = [{ step: 0, episodes: 2, histograms: { advantages: hist, logprobs: null, values: { ...hist, count: 0, counts: [0, 0] } } }];
    expect(fieldsWithData(steps)).toEqual(['advantages']);
  });

  it('explains an empty stage', async () => {
    const client = { inspect: { tokenHistograms: async () => ({ steps: [], range: {} }) } } as unknown as Client;
    render(<TokensPanel client={client} runId="r1" stages={['selfplay', 'sft']} active={false} theme="light" />);
    await waitFor(() => expect(screen.getByTestId('tokens-empty').textContent).toMatch(/stored with RL \(PPO\) episodes only/));
  });
});
