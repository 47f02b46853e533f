// One SPA run end to end on each backend, wall time per stage. Writes bench/results/spa-stages.json.
//   node bin/run-ts.mjs bench/spa-stages.ts [--size smoke|quick (default quick)] [--backends wasm,torch] [--env sokoban]
// Each backend runs in its own fresh project (no shared bootstrap cache); the same seeds, so the
// same work up to the backends' different samplers. Stage times come from the run's own events.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
const here = dirname(fileURLToPath(import.meta.url));

const results: Record<string, unknown> = {};
for (const backend of backends) {
  const overrides = { env: { id: env }, backend: backend as RunConfig['backend'] };
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
  results[backend] = { outcome, totalSeconds: (Date.now() - started) / 1000, stageSeconds: stages, computeLine: line && line.type === 'log' ? line.message : null };
  console.error(`${backend}: ${JSON.stringify(results[backend])}`);
}
const report = { bench: 'spa-stages', when: new Date().toISOString(), preset: 'spa', size, env, note: 'wall seconds per stage on a shared 2-core machine (load moves them)', results };
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', 'spa-stages.json'), JSON.stringify(report, null, 2) + '\n');
console.log(JSON.stringify(report, null, 2));
