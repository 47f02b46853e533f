// The world-model probe of a model folder on FrozenLake (issue 20 item 8): the model writes the first turn of N eval
// puzzles (observation exact, prediction exact) and, forced open with the true observation and "I will try A." for a
// random action A, predicts the next state (exact on turns A changes), beside the chance and oracle rows
// (core/train/bootstrap.ts worldModelCheck: the same measure as the eval stage's table).
// Usage: npx tsx docs/results/real-model/probe.ts MODEL_DIR OUT.json [turns] [--set key=json ...]
// Runs on the torch backend (SPA_PYTHON or the default search).
import { writeFileSync } from 'node:fs';
import { RunConfigSchema, type RunConfigInput } from '../../../core/api/run-config.js';
import { mergeConfig, presetConfig } from '../../../core/train/presets.js';
import { setPath } from '../../../core/engine/config.js';
import { worldModelCheck } from '../../../core/train/world-model-check.js';
import { TorchRuntime } from '../../../core/model/torch/runtime.js';
import { probeTorch } from '../../../core/model/torch/worker-client.js';

const [dir, out, turnsArg, ...rest] = process.argv.slice(2);
if (!dir || !out) throw new Error('usage: probe.ts MODEL_DIR OUT.json [turns] [--set key=json ...]');
const turns = Number(turnsArg ?? 16);
const overrides: Record<string, unknown> = { env: { id: 'frozenlake' }, backend: 'torch', model: { source: 'hf-folder', path: dir } };
for (let i = 0; i < rest.length; i++) {
  if (rest[i] !== '--set') continue;
  const [k, v] = rest[++i]!.split(/=(.*)/s);
  setPath(overrides, k!, JSON.parse(v!));
}
const config = RunConfigSchema.parse(mergeConfig(presetConfig('spa', 'smoke', overrides as RunConfigInput) as Record<string, unknown>, overrides));
const probe = probeTorch();
if (!probe.ok) throw new Error(`torch: ${probe.reason}`);
const started = Date.now();
const runtime = await TorchRuntime.fromFolder(dir, { probe, threads: 2 });
try {
  const check = await worldModelCheck(config, runtime, [config.template.preset], turns, config.seeds.evalStart);
  const result = { model: dir, template: config.template.preset, rollout: config.stages.rollout, turns, check, wallSeconds: (Date.now() - started) / 1000 };
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
  console.log(JSON.stringify(result, null, 2));
} finally {
  await runtime.dispose();
}
