// Storage and engine-start benchmark: rollout index appends and paged queries, metric series
// downsampling, and the latency of starting an engine process. Prints JSON (medians of repeats).
// Run: node bin/run-ts.mjs bench/storage.ts [--rows 100000] [--repeats 5]
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JsonlWriter } from '../core/storage/jsonl.js';
import { RunData } from '../core/storage/run-data.js';
import { createDispatcher } from '../core/host/dispatcher.js';
import { createInProcessClient } from '../core/host/in-process.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const rows = arg('rows', 100_000);
const repeats = arg('repeats', 5);
const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!; };
const time = (fn: () => void) => { const t = performance.now(); fn(); return performance.now() - t; };

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-bench-storage-'));
const appendMs = time(() => {
  const w = new JsonlWriter(path.join(dir, 'rollouts/index.jsonl'));
  for (let i = 0; i < rows; i++) {
    w.append([{ id: `e${i}`, stage: i % 2 ? 'rl' : 'eval', step: i >> 6, seed: i, group: i >> 3, sample: i & 7, success: i % 3 === 0, totalReward: (i % 7) / 7, numTurns: 3, formatErrors: i % 5 === 0 ? 1 : 0, invalidActions: 0, file: 'rollouts/x.jsonl', offset: i * 100, length: 99 }]);
  }
  w.close();
});
const mw = new JsonlWriter(path.join(dir, 'metrics.jsonl'));
for (let i = 0; i < rows; i++) mw.append([{ stage: 'rl', step: i, time: i, values: { 'losses/policy': Math.sin(i), 'charts/success': i % 10 } }]);
mw.close();

const firstRead: number[] = [];
const filtered: number[] = [];
const metricFirst: number[] = [];
const metricQuery: number[] = [];
for (let r = 0; r < repeats; r++) {
  const rd = new RunData('bench', dir);   // fresh reader: the first query reads the index from disk
  firstRead.push(time(() => rd.queryRollouts({ outcome: 'all', formatErrors: 'any', sort: 'index', offset: 0, limit: 50 })));
  filtered.push(time(() => rd.queryRollouts({ stage: 'rl', outcome: 'failure', formatErrors: 'some', sort: 'reward-desc', offset: 100, limit: 50 })));
  metricFirst.push(time(() => rd.metricSeries({ names: ['losses/policy', 'charts/success'], x: 'step', maxPoints: 1000 })));
  metricQuery.push(time(() => rd.metricSeries({ names: ['losses/policy', 'charts/success'], x: 'step', maxPoints: 1000 })));
}

// Engine start latency: fork + TypeScript loader until the engine accepts the run.
process.env.SPA_WORKBENCH_HOME = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-bench-home-'));
const d = createDispatcher({ host: 'in-process' });
const api = createInProcessClient(d);
await api.projects.create({ path: path.join(dir, 'project') });
const startMs: number[] = [];
for (let i = 0; i < Math.min(repeats, 3); i++) {
  const run = await api.runs.create({ config: { method: 'sft-only', stages: { plan: { order: ['diag-wait'] }, 'diag-wait': { steps: 1, delayMs: 1 } } } });
  const t = performance.now();
  await api.runs.start({ runId: run.id });
  startMs.push(performance.now() - t);
  await d.waitForRun(run.id);
}
await d.dispose();
fs.rmSync(dir, { recursive: true, force: true });

console.log(JSON.stringify({
  bench: 'storage', rows, repeats,
  indexAppendRowsPerSec: Math.round(rows / appendMs * 1000),
  rolloutFirstReadMsMedian: +median(firstRead).toFixed(1),
  rolloutFilteredQueryMsMedian: +median(filtered).toFixed(1),
  metricsFirstReadMsMedian: +median(metricFirst).toFixed(1),
  metricsQuery2Series1000BucketsMsMedian: +median(metricQuery).toFixed(1),
  engineStartMsMedian: Math.round(median(startMs)),
}, null, 2));
