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

const TORCH = { backend: 'torch', device: 'CPU (2 threads)', codeVersion: 'git:abc' };
const WASM = { backend: 'wasm', device: 'CPU (2 threads, SIMD)', codeVersion: 'package:0.1.0' };

describe('System tab: the process that computes', () => {
  it('charts the child processes first, named the torch worker only on a torch run, CPU as a share of the machine\'s cores', () => {
    const s = [sample(0, { workerCpuPercent: 30, workerRssMb: 350, workerPids: [4242], cores: 2 }), sample(5, { workerCpuPercent: 180, workerRssMb: 364, workerPids: [4242], cores: 2 })];
    const charts = systemCharts(s, TORCH);
    expect(charts.slice(0, 3).map((c) => c.name)).toEqual(['torch worker CPU (% of the machine\'s 2 cores)', 'torch worker memory (MB)', 'engine CPU (% of the machine\'s 2 cores)']);
    expect(charts[0]!.series[0]!.y).toEqual([15, 90]);
    expect(systemCharts(s, WASM)[0]!.name).toBe('engine child processes CPU (% of the machine\'s 2 cores)');
    expect(systemCharts(s, null)[0]!.name).toBe('engine child processes CPU (% of the machine\'s 2 cores)');
    expect(systemCharts([sample(0), sample(5)]).map((c) => c.name)).not.toContain('engine child processes CPU (% of one core)');
  });

  it('leaves out the first child-CPU reading of an older run (no core count): a window of a few ms read as 5,982%', () => {
    const s = [sample(0, { workerCpuPercent: 5982.3, workerRssMb: 17, workerPids: [3309] }), sample(5, { workerCpuPercent: 0.2, workerRssMb: 17, workerPids: [3309] })];
    const charts = systemCharts(s, null);
    expect(charts[0]!.name).toBe('engine child processes CPU (% of one core)');
    expect(charts[0]!.series[0]!.y).toEqual([0.2]);
  });

  it('says what ran (backend, device, code) from the run record, and "at the end" for a finished run', async () => {
    const samples = [sample(0, { workerRssMb: 350, workerPids: [4242], cores: 2 }), sample(5, { workerCpuPercent: 66, workerRssMb: 364, workerPids: [4242], cores: 2 })];
    const client = { inspect: { systemMetrics: async () => ({ samples, total: 2 }) } } as unknown as Client;
    render(<SystemPanel client={client} runId="r1" active={false} theme="light" ranOn={WASM} />);
    const panel = await screen.findByTestId('system-panel');
    expect(screen.getByTestId('system-ran-on').textContent).toBe('wasm · CPU (2 threads, SIMD) · code package:0.1.0');
    expect(panel.textContent).toContain('engine child processes');
    expect(panel.textContent).not.toContain('torch worker');
    expect(screen.getByTestId('system-children').textContent).toMatch(/^CPU 33(\.0)? % of 2 cores at the end \(peak 33(\.0)? % of 2 cores\) · RSS 364(\.0)? MB .* pid 4242$/);
    expect(screen.getByTestId('system-engine-cpu').textContent).toMatch(/^0\.25 % of 2 cores at the end/);
    cleanup();
    render(<SystemPanel client={client} runId="r1" active={false} theme="light" />);
    expect((await screen.findByTestId('system-ran-on')).textContent).toMatch(/^not recorded/);
  });
});
