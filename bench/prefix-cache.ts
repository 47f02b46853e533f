// The torch worker's generation prefix cache (issue 23: multi-turn rollouts re-prefilled their whole history at every turn)
// on the eval stage of the study size: the same checkpoint, puzzles and seeds with the cache on and off
// (SPA_TORCH_PREFIX_CACHE_MB), alternating, wall seconds per run, their medians and ratio, and how many episodes came out
// identical (every turn's reply the same). Writes bench/results/prefix-cache.json.
//   node bin/run-ts.mjs bench/prefix-cache.ts [--checkpoint DIR (default: the shipped FrozenLake base)] [--puzzles 16] [--reps 1]
// SPA_TORCH_PREFIX_CACHE_MB is read at every generate call (the engine sends it to the worker with the cache keys).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunConfigSchema, type RunConfigInput } from '../core/api/run-config.js';
import { mergeConfig, presetConfig } from '../core/train/presets.js';
import { executeRun } from '../core/engine/runner.js';
import { loadStage, planStages } from '../core/engine/stages.js';

const arg = (name: string): string | undefined => { const i = process.argv.indexOf(name); return i >= 0 ? process.argv[i + 1] : undefined; };
const here = dirname(fileURLToPath(import.meta.url));
const checkpoint = resolve(arg('--checkpoint') ?? join(here, '..', 'resources', 'bases', 'frozenlake-compact'));
const puzzles = Number(arg('--puzzles') ?? 16);
const reps = Number(arg('--reps') ?? 1);
const overrides: RunConfigInput = {
  backend: 'torch', env: { id: 'frozenlake', options: { isSlippery: false } }, model: { source: 'checkpoint', path: checkpoint },
  stages: { plan: { order: ['eval'] }, eval: { puzzles, samples: 8, k: [1, 8], perplexityRows: 0, worldModelTurns: 0 } },
};
const config = RunConfigSchema.parse(mergeConfig(presetConfig('spa', 'standard', overrides) as Record<string, unknown>, overrides));

async function evalOnce(mb: number): Promise<{ wall: number; replies: Map<string, string[]>; promptTokens: number }> {
  process.env.SPA_TORCH_PREFIX_CACHE_MB = String(mb);
  const project = mkdtempSync(join(tmpdir(), `spa-bench-prefix-${mb}-`));
  const runDir = join(project, 'runs', 'bench');
  const started = performance.now();
  const outcome = await executeRun({ runId: 'bench', runDir, config, stages: planStages(config), attempt: 1, signal: new AbortController().signal,
    loadStage, send: () => {} });
  const wall = (performance.now() - started) / 1000;
  if (outcome.status !== 'completed') throw new Error(`eval with SPA_TORCH_PREFIX_CACHE_MB=${mb}: ${JSON.stringify(outcome)}`);
  const replies = new Map<string, string[]>();
  let promptTokens = 0;
  for (const f of readdirSync(join(runDir, 'rollouts')).filter((n) => n.startsWith('eval'))) {
    for (const line of readFileSync(join(runDir, 'rollouts', f), 'utf8').split('\n').filter(Boolean)) {
      const e = JSON.parse(line) as { id: string; turns?: Array<{ response: string; tokens: { prompt: number } }> };
      if (!e.turns) continue;
      replies.set(e.id, e.turns.map((t) => t.response));
      promptTokens += e.turns.reduce((a, t) => a + t.tokens.prompt, 0);
    }
  }
  return { wall, replies, promptTokens };
}

const on: number[] = [], off: number[] = [];
let identical = Infinity, episodes = 0, promptTokens = 0;   // identical: the fewest identical episodes over the reps
for (let r = 0; r < reps; r++) {
  const a = await evalOnce(2048);
  const b = await evalOnce(0);
  on.push(a.wall); off.push(b.wall);
  episodes = a.replies.size; promptTokens = a.promptTokens;
  const same = [...a.replies].filter(([id, rs]) => JSON.stringify(rs) === JSON.stringify(b.replies.get(id))).length;
  identical = Math.min(identical, same);
  console.log(`rep ${r}: cache on ${a.wall.toFixed(1)} s, off ${b.wall.toFixed(1)} s; ${same}/${episodes} episodes identical`);
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const result = {
  what: 'eval stage, study size (standard): 10 turns of one action, the multi-turn history in every prompt; torch worker, 1 thread',
  checkpoint, template: config.template, rollout: config.stages.rollout, puzzles, samples: 8, episodes, promptTokens, reps, loadavg: loadavg().map((x) => Number(x.toFixed(2))),
  wallSecondsCacheOn: on, wallSecondsCacheOff: off, medianOn: median(on), medianOff: median(off),
  speedup: Number((median(off) / median(on)).toFixed(2)), identicalEpisodes: identical,
};
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', 'prefix-cache.json'), `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
