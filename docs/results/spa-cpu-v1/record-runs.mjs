#!/usr/bin/env node
// Records each completed run of a study into docs/results: one JSON per run (eval summary with
// perPuzzle, world model beside the base, gate, wall time per stage, config, RL curves), written once
// and never overwritten, so a study resumed on a fresh machine can see which cells are already
// recorded (`--missing` prints the cells still to run as `method env seed` lines), and the table can
// be built from the records alone (`spa-workbench study table --records DIR`).
//
// A thin wrapper: the logic is `spa-workbench study record` (core/eval/study-records.ts), called with
// the same arguments.
//
//   node docs/results/spa-cpu-v1/record-runs.mjs --project DIR --name STUDY --out docs/results/spa-cpu-v1/<variant>
//   node docs/results/spa-cpu-v1/record-runs.mjs --project DIR --name STUDY --out ... --missing
//   node docs/results/spa-cpu-v1/record-runs.mjs --project DIR --name STUDY --out ... --add-curves
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (name) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1] : undefined; };
if (!opt('project') || !opt('name') || !opt('out')) {
  console.error('usage: record-runs.mjs --project DIR --name STUDY --out DIR [--missing | --add-curves]');
  process.exit(2);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const result = spawnSync(process.execPath, [path.join(root, 'bin', 'spa-workbench.mjs'), 'study', 'record', ...args], { stdio: 'inherit' });
if (result.error) { console.error(`record-runs.mjs: could not start the CLI: ${result.error.message}`); process.exit(1); }
process.exit(result.status ?? 1);
