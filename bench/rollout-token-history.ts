// rollout.history 'text' (the release: each prompt re-rendered from the chat's text) against 'tokens' (token in, token out:
// the last prompt and its sampled ids continued) on a real model, the same episodes in one run: one group of 8 episodes of
// a run config's RL rollouts (default: study v4's vanilla RL, cpu-real, deterministic lake), the same sampling seeds, one mode
// after the other (the seconds are indicative on a loaded machine). Per mode: wall seconds, the turns whose prompt does not
// start with the previous turn's prompt and sampled ids (a broken chain: chainBreaks), the update rows left after merging
// chains (rl.updateRows 'episode': prefixCarriers), and the prompt tokens. Writes bench/results/rollout-token-history.json.
//   SPA_TORCH_THREADS=1 node bin/run-ts.mjs bench/rollout-token-history.ts --model DIR (e.g. an imported SmolLM2 folder)
//     [--preset vanilla-rl] [--size cpu-real] [--episodes 8]
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveRunConfig } from '../core/engine/config.js';
import { RUN_SIZES, type Size } from '../core/api/run-config.js';
import { loadRuntime, useBackend } from '../core/train/runtime.js';
import { rolloutDeps } from '../core/train/episodes.js';
import { chainBreaks, groupSpecs, playEpisodes, type RolloutResult } from '../core/train/rollout.js';
import { prefixCarriers, turnSamples } from '../core/train/ppo.js';

const arg = (name: string): string | undefined => { const i = process.argv.indexOf(name); return i >= 0 ? process.argv[i + 1] : undefined; };
const here = dirname(fileURLToPath(import.meta.url));
const model = arg('--model');
if (!model) throw new Error('usage: bench/rollout-token-history.ts --model DIR [--preset vanilla-rl] [--size cpu-real] [--episodes 8]');
const preset = arg('--preset') ?? 'vanilla-rl', episodes = Number(arg('--episodes') ?? 8);
const size = (arg('--size') ?? 'cpu-real') as Size;
if (!RUN_SIZES.some((s) => s.id === size)) throw new Error(`--size ${size}: one of ${RUN_SIZES.map((s) => s.id).join(', ')}`);
const resolved = resolveRunConfig({
  preset, size,
  set: { 'model.path': resolve(model), backend: 'torch', 'env.options.isSlippery': false, 'model.memory.generationRows': 8, 'stages.rollout.batchSize': episodes },
});
if (!resolved.config) throw new Error(`run config: ${JSON.stringify(resolved.issues)}`);
const config = resolved.config;
await useBackend(config);
const runtime = await loadRuntime(resolve(model), { trainable: false });

const modes = ['text', 'tokens'] as const;
const out: Record<string, unknown> = {};
const played: Partial<Record<(typeof modes)[number], RolloutResult[]>> = {};
for (const mode of modes) {
  const limits = { ...config.stages.rollout, history: mode };
  const specs = groupSpecs(`bench-${mode}`, config.seeds.rlStart, 0, 1, episodes);
  const deps = rolloutDeps(config, runtime, limits, { runId: 'bench', stage: 'rl', step: 0 });
  const started = performance.now();
  const results = await playEpisodes(specs, limits, config.seeds.base * 1_000_003, deps);
  const seconds = (performance.now() - started) / 1000;
  played[mode] = results;
  const turns = results.reduce((s, r) => s + r.tokens.length, 0);
  const samples = turnSamples(results, () => true);
  out[mode] = {
    seconds: Number(seconds.toFixed(1)), turns, brokenChains: chainBreaks(results).breaks, updateRows: new Set(prefixCarriers(samples)).size,
    promptTokens: results.reduce((s, r) => s + r.tokens.reduce((a, t) => a + t.promptIds.length, 0), 0),
    longestPrompt: Math.max(...results.flatMap((r) => r.tokens.map((t) => t.promptIds.length))),
    episodeRowTokens: results.reduce((s, r) => s + (r.tokens.length ? r.tokens.at(-1)!.promptIds.length + r.tokens.at(-1)!.responseIds.length : 0), 0),
    formatErrors: results.reduce((s, r) => s + r.record.turns.filter((t) => t.flags.formatError).length, 0),
    successes: results.filter((r) => r.record.success).length,
  };
  console.log(mode, JSON.stringify(out[mode]));
}
// the first turn has no history: the two modes' prompts and replies there must be the same
const firstTurnSame = played.text!.every((r, i) => JSON.stringify(r.tokens[0]) === JSON.stringify(played.tokens![i]!.tokens[0]));
await runtime.dispose();
const result = {
  what: `rollout.history text vs tokens: ${episodes} episodes of one puzzle (${preset} ${size}, deterministic lake), the same sampling seeds`,
  model: resolve(model), preset, size, episodes, maxTurns: config.stages.rollout.maxTurns ?? null, maxNewTokens: config.stages.rollout.maxNewTokens,
  threads: process.env.SPA_TORCH_THREADS ?? 'all cores', loadavg: loadavg().map((x) => Number(x.toFixed(2))),
  firstTurnSame, ...out,
};
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', 'rollout-token-history.json'), `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
process.exit(0);
