// The System tab and the Config tab's provenance say what ran (issue 37 item 3): the backend,
// device and code version from run.json's provenance; the engine's child processes named "torch
// worker" only on a torch run; CPU as a share of the machine's cores. A fixture wasm run whose
// samples carry the core count, and an older run without provenance or core counts whose first
// child-CPU reading is the impossible 5,982% the review saw (left out).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SystemSample } from '../../core/api/contract.js';
import { expect, shot, test } from './helpers.js';

const sample = (t: number, extra: Partial<SystemSample>): SystemSample => ({
  time: Date.now() - 240_000 + t * 5000, stage: t < 20 ? 'sft' : 'eval', cpuPercent: 150, rssMb: 480, heapMb: 120, memUsedMb: 9000, memTotalMb: 16000, loadAvg: 2.1, ...extra,
});

test('System tab: backend and device from the run record, child processes named by the backend, CPU as a share of the cores', async ({ workbench, consoleProblems }) => {
  const { page, api, project, go } = workbench;
  const make = async (name: string, provenance: unknown, samples: SystemSample[]) => {
    const run = await api.runs.create({ preset: 'sft-only', size: 'smoke', name, start: false });
    const dir = join(project.path, 'runs', run.id);
    const rec = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'run.json'), JSON.stringify({ ...rec, status: 'completed', ...(provenance ? { provenance } : {}) }, null, 2));
    writeFileSync(join(dir, 'system.jsonl'), samples.map((s) => JSON.stringify(s)).join('\n') + '\n');
    return run.id;
  };
  const wasm = await make('wasm run', { backend: 'wasm', device: 'CPU (2 threads, SIMD)', codeVersion: 'git:099bfbd0000000000000000000000000000000aa' },
    Array.from({ length: 40 }, (_, i) => sample(i, { cores: 2, cpuPercent: 190, ...(i > 2 && i < 30 ? { workerPids: [3309], workerRssMb: 17, ...(i > 3 ? { workerCpuPercent: 0.4 } : {}) } : {}) })));
  const old = await make('older run', null,
    Array.from({ length: 10 }, (_, i) => sample(i, { workerPids: [3309], workerRssMb: 17, workerCpuPercent: i === 0 ? 5982.3 : 0.2 })));

  await go(`#/run/${wasm}?tab=system`);
  await expect(page.getByTestId('system-ran-on')).toHaveText('wasm · CPU (2 threads, SIMD) · code git:099bfbd0000000000000000000000000000000aa');
  await expect(page.getByTestId('system-panel')).not.toContainText('torch worker');
  await expect(page.getByTestId('system-panel')).toContainText('engine child processes');
  await expect(page.getByTestId('system-engine-cpu')).toHaveText(/^95(\.0)? % of 2 cores at the end · peak 95(\.0)? % of 2 cores$/);
  for (const width of [1280, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    await shot(page, `system-wasm-run-${width}`);
  }
  await go(`#/run/${wasm}?tab=config`);
  await expect(page.getByTestId('provenance-backend')).toHaveText('wasm');
  await expect(page.getByTestId('provenance-device')).toHaveText('CPU (2 threads, SIMD)');

  await go(`#/run/${old}?tab=system`);
  await expect(page.getByTestId('system-ran-on')).toContainText('not recorded');
  await expect(page.getByTestId('system-children')).toContainText('peak 0.2 % of one core');   // the first reading (5,982%) is left out
  await go(`#/run/${old}?tab=config`);
  await expect(page.getByTestId('provenance-backend')).toContainText('not recorded');
  expect(consoleProblems).toEqual([]);
});
