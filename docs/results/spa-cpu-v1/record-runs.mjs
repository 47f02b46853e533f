#!/usr/bin/env node
// Records each completed run of a study into docs/results: one JSON per run (eval summary,
// world model beside the base, gate, wall time per stage, config), written once and never
// overwritten, so a study resumed on a fresh machine can see which cells are already recorded
// (`--missing` prints the cells still to run as `method env seed` lines).
//
//   node docs/results/spa-cpu-v1/record-runs.mjs --project DIR --name STUDY --out docs/results/spa-cpu-v1/<variant>
//   node docs/results/spa-cpu-v1/record-runs.mjs --project DIR --name STUDY --out ... --missing
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const opt = (name) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1] : undefined; };
const project = opt('project'), name = opt('name'), out = opt('out');
if (!project || !name || !out) { console.error('usage: record-runs.mjs --project DIR --name STUDY --out DIR [--missing]'); process.exit(2); }
const readJson = (p) => (fs.existsSync(p) ? JSON.parse(fs.readFileSync(p, 'utf8')) : null);

const runsDir = path.join(project, 'runs');
const recordDir = path.join(out, 'runs');
fs.mkdirSync(recordDir, { recursive: true });
const recorded = new Set(fs.readdirSync(recordDir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)));

if (args.includes('--missing')) {
  const spec = readJson(path.join(project, 'studies', name, 'spec.json'));
  if (!spec) { console.error(`no study ${name} in ${project}`); process.exit(2); }
  for (const seed of spec.seeds) for (const env of spec.envs) for (const method of spec.methods) {
    if (!recorded.has(`${method}-${env}-s${seed}`)) console.log(`${method} ${env} ${seed}`);
  }
  process.exit(0);
}

let wrote = 0;
for (const id of fs.existsSync(runsDir) ? fs.readdirSync(runsDir) : []) {
  const run = readJson(path.join(runsDir, id, 'run.json'));
  if (!run || run.status !== 'completed' || !String(run.name ?? '').startsWith(`study:${name}:`)) continue;
  const [, , method, env, s] = run.name.split(':');
  const key = `${method}-${env}-${s}`;
  if (recorded.has(key)) continue;
  const dir = path.join(runsDir, id);
  const stages = Object.fromEntries(run.stages.map((st) => {
    const done = readJson(path.join(dir, 'stages', st.name, 'done.json'));
    return [st.name, { wallSeconds: done?.output?.wallSeconds ?? null, shipped: done?.output?.shipped ?? null, cached: done?.output?.cached ?? null }];
  }));
  const ev = readJson(path.join(dir, 'eval', 'final.json'));
  const record = {
    study: name, method, env, seed: Number(s.slice(1)), runId: id, size: run.size, durationSeconds: Math.round(run.durationMs / 1000), stages,
    gate: readJson(path.join(dir, 'bootstrap', 'gate.json')),
    filter: readJson(path.join(dir, 'datasets', 'filter-report.json')),
    eval: ev && {
      puzzles: ev.puzzles, samplesPerPuzzle: ev.samplesPerPuzzle, success: ev.success, passAtK: ev.passAtK, formatErrorRate: ev.formatErrorRate,
      invalidActionRate: ev.invalidActionRate, avgActions: ev.avgActions, wm: ev.wm, worldModelVersusBase: ev.worldModelVersusBase ?? null, perPuzzle: ev.perPuzzle,
    },
    config: run.config,
  };
  fs.writeFileSync(path.join(recordDir, `${key}.json`), `${JSON.stringify(record, null, 2)}\n`);
  wrote++;
  console.log(`recorded ${key} (${id})`);
}
console.log(`${wrote} new run(s) recorded in ${recordDir}`);
