#!/usr/bin/env node
// The examples-vs-exact-match curve of one SmolLM2 world-model run (docs/results/smollm2-wm/README.md), as markdown:
//   node docs/results/smollm2-wm/curve.mjs RUN_DIR [CHECK.json ...]
// RUN_DIR: the run folder (its metrics.jsonl: SFT loss per step; run.json: the SFT batch size). Each CHECK.json is the output
// of `spa-workbench probe --check --out` on one SFT checkpoint of that run (the eval's world-model check beside the imported
// base); its file name must end in `-step<N>.json` (the SFT step of the checkpoint: sft-epoch-k is step k x steps per epoch).
// Prints (1) the SFT loss by 25-step window with the examples seen and the CPU-free wall time, (2) one row per check:
// examples seen, observation exact, prediction exact, prediction given the action on changed turns, and the base's and the
// chance/oracle rows of the same turns. Errors: a missing RUN_DIR/metrics.jsonl or a check without `-step<N>` in its name.
import { readFileSync, existsSync } from 'node:fs';
import { basename, join } from 'node:path';

const [runDir, ...checks] = process.argv.slice(2);
if (!runDir || !existsSync(join(runDir, 'metrics.jsonl'))) {
  console.error('usage: curve.mjs RUN_DIR [CHECK-step<N>.json ...]  (RUN_DIR must hold metrics.jsonl)');
  process.exit(2);
}
const run = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8'));
const batch = run.config?.stages?.sft?.batchSize;
if (!Number.isInteger(batch)) { console.error(`${runDir}/run.json: no config.stages.sft.batchSize`); process.exit(2); }
const rows = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  .filter((m) => m.stage === 'sft' && typeof m.values?.['losses/sft'] === 'number');
const pct = (x) => (typeof x === 'number' ? `${(100 * x).toFixed(0)}%` : '–');

console.log(`SFT loss (batch ${batch}; step k has seen ${batch}·(k+1) examples), mean per 25-step window:\n`);
console.log('| steps | examples seen (end) | mean SFT loss | wall minutes (end, from step 0) |');
console.log('|---|---|---|---|');
const t0 = rows[0]?.time;
for (let i = 0; i < rows.length; i += 25) {
  const w = rows.slice(i, i + 25);
  const last = w[w.length - 1];
  const mean = w.reduce((a, m) => a + m.values['losses/sft'], 0) / w.length;
  console.log(`| ${w[0].step}–${last.step} | ${batch * (last.step + 1)} | ${mean.toFixed(3)} | ${((last.time - t0) / 60000).toFixed(0)} |`);
}
if (checks.length) {
  console.log('\nThe eval\'s world-model check (first turns of the eval puzzles, beside the imported base):\n');
  console.log('| examples seen | checkpoint step | observation exact | prediction exact | given the action (changed turns) | base: observation / given the action | chance / oracle (given the action) |');
  console.log('|---|---|---|---|---|---|---|');
  for (const file of checks) {
    const m = /-step(\d+)\.json$/.exec(basename(file));
    if (!m) { console.error(`${file}: the name must end in -step<N>.json`); process.exit(2); }
    const step = Number(m[1]);
    const raw = JSON.parse(readFileSync(file, 'utf8')); const v = raw.versusBase ?? raw;   // probe --out writes the check under versusBase
    const c = v.model?.conditioned, b = v.base;
    console.log(`| ${batch * step} | ${step} | ${pct(v.model?.observationExact)} | ${pct(v.model?.predictionExact)} | ` +
      `${pct(c?.exactChanged)} (${c?.changedTurns ?? '–'}) | ${pct(b?.observationExact)} / ${pct(b?.conditioned?.exactChanged)} | ` +
      `${pct(c?.counterfactualExactChanged)} / ${pct(c?.oracleExactChanged)} |`);
  }
}
