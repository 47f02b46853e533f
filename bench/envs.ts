// Environment throughput: steps per second and levels generated per second for each env,
// median of several repeats, printed as JSON. Run: node bin/run-ts.mjs bench/envs.ts [--repeats 5]
import { createEnv, listEnvs } from '../core/envs/index.js';
import { Rng } from '../core/util/rng.js';
import { EpisodeSession, getTemplatePreset, randomWellFormedResponse } from '../core/prompts/index.js';

const repeatsArg = process.argv.indexOf('--repeats');
const REPEATS = repeatsArg > 0 ? Number(process.argv[repeatsArg + 1]) : 5;

const CONFIGS: Record<string, Record<string, unknown>[]> = {
  sokoban: [{}, { numBoxes: 2 }, { width: 8, height: 8, numBoxes: 2 }, { width: 10, height: 10, numBoxes: 2 }],
  frozenlake: [{}, { size: 8 }],
  sudoku: [{}, { size: 9, difficulty: 'medium' }],
};

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** Run `fn` repeatedly for about `ms` milliseconds; return operations per second. */
function rate(fn: () => number, ms: number): number {
  const start = performance.now();
  let ops = 0;
  while (performance.now() - start < ms) ops += fn();
  return (ops * 1000) / (performance.now() - start);
}

const results: Record<string, unknown>[] = [];
for (const id of listEnvs()) {
  for (const options of CONFIGS[id] ?? [{}]) {
    const env = createEnv(id, options);
    let seed = 0;
    const levels = median(Array.from({ length: REPEATS }, () => rate(() => { env.reset({ seed: seed++ }); return 1; }, 300)));
    const rng = new Rng(1);
    const actions = env.legalActions();
    env.reset({ seed: 0 });
    const steps = median(Array.from({ length: REPEATS }, () => rate(() => {
      // 100 random steps, resetting (same level, cheap for explicit state restore) when the episode ends
      const state = env.getState();
      let n = 0;
      for (let i = 0; i < 100; i++) {
        const r = env.step(actions[rng.int(actions.length)]);
        n++;
        if (r.terminated || r.truncated) env.setState(state);
      }
      return n;
    }, 300)));
    const session = median(Array.from({ length: REPEATS }, () => rate(() => {
      const s = new EpisodeSession(createEnv(id, options), getTemplatePreset('spa'), { seed: seed++ });
      let turns = 0;
      while (!s.done) { s.applyResponse(randomWellFormedResponse(s, rng)); turns++; }
      return turns;
    }, 300)));
    results.push({ env: id, options, levelsPerSecond: Math.round(levels * 10) / 10, stepsPerSecond: Math.round(steps), sessionTurnsPerSecond: Math.round(session) });
  }
}
console.log(JSON.stringify({ bench: 'envs', repeats: REPEATS, node: process.version, results }, null, 2));
