// The System tab leads with the torch worker's figures (the process that computes) when the
// samples carry them, and says which process and how much.
// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import type { SystemSample } from '../../core/api/contract.js';
import type { Client } from '../../renderer/src/api/client.js';
import { SystemPanel, systemCharts } from '../../renderer/src/components/SystemPanel.js';

// uPlot reads the pixel ratio through matchMedia when it loads; jsdom has none
vi.hoisted(() => {
  const w = globalThis as unknown as { matchMedia?: unknown };
  w.matchMedia ??= () => ({ matches: false, addEventListener() {}, removeEventListener() {}, addListener() {}, removeListener() {} });
  const g = globalThis as unknown as { ResizeObserver?: unknown };
  g.ResizeObserver ??= class { observe() {} unobserve() {} disconnect() {} };
});

const sample = (t: number, extra: Partial<SystemSample> = {}): SystemSample => ({
  time: 1_000_000 + t * 1000, stage: 'rl', cpuPercent: 0.5, rssMb: 166, heapMb: 40, memUsedMb: 9000, memTotalMb: 24000, loadAvg: 1.5, ...extra,
});

afterEach(cleanup);

describe('System tab: the torch worker', () => {
  it('charts the worker CPU and RSS first when samples have them, not otherwise', () => {
    const s = [sample(0, { workerCpuPercent: 30, workerRssMb: 350, workerPids: [4242] }), sample(5, { workerCpuPercent: 33, workerRssMb: 364, workerPids: [4242] })];
    const charts = systemCharts(s);
    expect(charts.slice(0, 2).map((c) => c.name)).toEqual(['torch worker CPU (% of one core)', 'torch worker memory (MB)']);
    expect(charts[0]!.series[0]!.y).toEqual([30, 33]);
    expect(systemCharts([sample(0), sample(5)]).map((c) => c.name)).not.toContain('torch worker CPU (% of one core)');
  });

  it('shows the worker line with its pid', async () => {
    const samples = [sample(0, { workerCpuPercent: 33, workerRssMb: 364, workerPids: [4242] })];
    const client = { inspect: { systemMetrics: async () => ({ samples, total: 1 }) } } as unknown as Client;
    render(<SystemPanel client={client} runId="r1" active={false} theme="light" />);
    const panel = await screen.findByTestId('system-panel');
    expect(panel.textContent).toContain('torch worker');
    expect(panel.textContent).toMatch(/CPU 33(\.0)? % now .* RSS 364(\.0)? MB .* pid 4242/);
  });
});
