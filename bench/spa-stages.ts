// One SPA run end to end on each backend, wall time per stage. Writes bench/results/spa-stages.json
// (smoke on sokoban) or spa-stages-<size>-<env>.json, or --out NAME.
//   node bin/run-ts.mjs bench/spa-stages.ts [--size smoke|quick (default quick)] [--backends wasm@0,wasm,torch] [--env sokoban]
// A backend `name@N` runs with N data-parallel worker threads (the run config's `workers`; wasm only),
// plain `wasm` with the default (auto: one per further core).
// Each backend runs in its own fresh project (no shared bootstrap cache); the same seeds, so the
// same work up to the backends' different samplers. Stage times come from the run's own events.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunConfigSchema, type RunConfig } from '../core/api/run-config.js';
import { mergeConfig, presetConfig } from '../core/train/presets.js';
import { executeRun } from '../core/engine/runner.js';
import { loadStage, planStages } from '../core/engine/stages.js';
import type { RunEvent } from '../core/api/records.js';

const arg = (name: string): string | undefined => { const i = process.argv.indexOf(name); return i >= 0 ? process.argv[i + 1] : undefined; };
const size = (arg('--size') ?? 'quick') as 'smoke' | 'quick';
const backends = (arg('--backends') ?? 'wasm,torch').split(',');
const env = arg('--env') ?? 'sokoban';
const out = arg('--out') ?? (size === 'smoke' && env === 'sokoban' ? 'spa-stages.json' : `spa-stages-${size}-${env}.json`);
const here = dirname(fileURLToPath(import.meta.url));

const results: Record<string, unknown> = {};
for (const spec of backends) {
  const [backend, workers] = spec.split('@') as [string, string | undefined];
  if (workers !== undefined && !/^\d+$/.test(workers)) throw new Error(`--backends: ${spec}: expected name or name@workers`);
  const overrides = { env: { id: env }, backend: backend as RunConfig['backend'], ...(workers !== undefined ? { workers: Number(workers) } : {}) };
  const config = RunConfigSchema.parse(mergeConfig(presetConfig('spa', size, overrides) as Record<string, unknown>, overrides));
  const project = mkdtempSync(join(tmpdir(), `spa-bench-${backend}-`));
  const events: RunEvent[] = [];
  const started = Date.now();
  const outcome = await executeRun({
    runId: `bench-${backend}`, runDir: join(project, 'runs', `bench-${backend}`), config, stages: planStages(config), attempt: 1,
    signal: new AbortController().signal, loadStage, send: (e) => { events.push(e); },
  });
  const stageStart: Record<string, number> = {};
  const stages: Record<string, number> = {};
  for (const e of events) {
    if (e.type !== 'stage') continue;
    if (e.status === 'running') stageStart[e.stage] = e.time;
    else if (e.status === 'completed' && stageStart[e.stage] !== undefined) stages[e.stage] = (e.time - stageStart[e.stage]!) / 1000;
  }
  const line = events.find((e) => e.type === 'log' && /^Compute backend/.test(e.message));
  results[spec] = { outcome, totalSeconds: (Date.now() - started) / 1000, stageSeconds: stages, computeLine: line && line.type === 'log' ? line.message : null };
  console.error(`${spec}: ${JSON.stringify(results[spec])}`);
  write();   // after each backend: a stopped bench keeps what it measured
}
console.log(JSON.stringify(write(), null, 2));

function write(): Record<string, unknown> {
  const report = {
    bench: 'spa-stages', when: new Date().toISOString(), preset: 'spa', size, env, cpus: availableParallelism(), loadAverage: loadavg(),
    note: 'wall seconds per stage on a shared 2-core machine (load moves them)', results,
  };
  mkdirSync(join(here, 'results'), { recursive: true });
  writeFileSync(join(here, 'results', out), JSON.stringify(report, null, 2) + '\n');
  return report;
}
