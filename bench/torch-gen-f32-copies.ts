// Generation over a frozen bf16 base (LoRA) with and without the f32 copies a generate call holds (the torch worker's
// Decoder.hold_f32_copies; SPA_TORCH_GEN_F32_MB, read when the worker starts): two workers on the same LoRA checkpoint, the
// same 8 rows of a multi-turn history (vanilla RL's malformed replies: 48 new tokens a turn, T = 1, cache keys as rollouts
// send them), the two alternating turn by turn. Wall seconds per turn, their medians and ratio, and whether every turn's tokens
// were the same. Writes bench/results/torch-gen-f32-copies.json.
//   SPA_TORCH_THREADS=1 node bin/run-ts.mjs bench/torch-gen-f32-copies.ts --model DIR (a LoRA checkpoint, e.g. a run's
//     checkpoints/sft-epoch-1, or an imported folder: fresh adapters are added) [--turns 4]
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunConfigSchema } from '../core/api/run-config.js';
import { loadRuntime, useBackend, type ModelRuntime } from '../core/train/runtime.js';
import type { ChatMessage } from '../core/model/chat.js';

const arg = (name: string): string | undefined => { const i = process.argv.indexOf(name); return i >= 0 ? process.argv[i + 1] : undefined; };
const here = dirname(fileURLToPath(import.meta.url));
const model = arg('--model');
if (!model) throw new Error('usage: bench/torch-gen-f32-copies.ts --model DIR [--turns 4]');
const turns = Number(arg('--turns') ?? 4);
await useBackend(RunConfigSchema.parse({ backend: 'torch' }));

async function runtime(mb: number): Promise<ModelRuntime> {
  process.env.SPA_TORCH_GEN_F32_MB = String(mb);   // the worker reads it when it starts
  const rt = await loadRuntime(resolve(model!), { trainable: false });
  if (!existsSync(join(resolve(model!), 'adapter_config.json'))) {
    await (rt as unknown as { enableLora: (l: object, o: object) => Promise<void> }).enableLora(
      { rank: 16, alpha: 32, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] }, { seed: 1 });
  }
  return rt;
}
const held = await runtime(1024), upcast = await runtime(0);
const user = (i: number, lead: string): ChatMessage => ({ role: 'user', content: `${lead}Player (P) is at (1,${i % 4}); hole (O) is at (0,0); goal (G) is at (2,2).\n` });
const chats: ChatMessage[][] = Array.from({ length: 8 }, (_, i) => [user(i, 'Reach G, avoid O. Actions: Left, Down, Right, Up. Write your move.\n')]);
const secondsHeld: number[] = [], secondsUpcast: number[] = [];
let sameTokens = true, newTokens = 0, promptTokens = 0;
for (let t = 0; t < turns; t++) {
  const prompts = chats.map((c) => held.encodePrompt(c, '<think>', 2000));
  promptTokens = Math.max(...prompts.map((p) => p.length));
  const opts = (k: string) => ({ maxNewTokens: 48, temperature: 1, topK: 0, topP: 1, seed: 7 + t, cacheKeys: chats.map((_, i) => `${k}${i}`) });
  let started = performance.now();
  const a = await held.generate(prompts, opts('h'));
  secondsHeld.push((performance.now() - started) / 1000);
  started = performance.now();
  const b = await upcast.generate(prompts, opts('u'));
  secondsUpcast.push((performance.now() - started) / 1000);
  sameTokens &&= a.every((g, i) => JSON.stringify(g.ids) === JSON.stringify(b[i]!.ids));
  newTokens += a.reduce((s, g) => s + g.ids.length, 0);
  console.log(`turn ${t}: prompt up to ${promptTokens} tokens; copies held ${secondsHeld[t]!.toFixed(1)} s, upcast each step ${secondsUpcast[t]!.toFixed(1)} s`);
  a.forEach((g, i) => chats[i]!.push({ role: 'assistant', content: `<think>${g.text}` }, user(i, 'Invalid format. ')));
}
await held.dispose();
await upcast.dispose();
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const result = {
  what: 'torch generation, 8 rows, 48 new tokens a turn at T = 1 with cache keys, multi-turn history; a frozen bf16 base with LoRA; 1 thread',
  model: resolve(model), turns, newTokensPerMode: newTokens, longestPrompt: promptTokens, threads: process.env.SPA_TORCH_THREADS ?? 'all cores',
  loadavg: loadavg().map((x) => Number(x.toFixed(2))),
  secondsCopiesHeld: secondsHeld.map((x) => Number(x.toFixed(2))), secondsUpcastEachStep: secondsUpcast.map((x) => Number(x.toFixed(2))),
  medianHeld: Number(median(secondsHeld).toFixed(2)), medianUpcast: Number(median(secondsUpcast).toFixed(2)),
  speedup: Number((median(secondsUpcast) / median(secondsHeld)).toFixed(2)), sameTokens,
};
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', 'torch-gen-f32-copies.json'), `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
process.exit(0);
