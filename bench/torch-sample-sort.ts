// The torch worker's CPU sampler with numpy's values-only sort (worker.py sorted_descending + stable_rank_token, the default)
// against torch.sort(stable=True) (SPA_TORCH_SAMPLE_SORT=torch, read when the worker starts): two workers on the same model
// with the same LoRA adapters, the same 8 rows of a multi-turn history (48 new tokens a turn, T = 1, cache keys as rollouts
// send them), the two alternating turn by turn. Wall seconds per turn, their medians and ratio, and whether every turn's
// tokens were the same. Writes bench/results/torch-sample-sort.json.
//   SPA_TORCH_THREADS=1 node bin/run-ts.mjs bench/torch-sample-sort.ts --model DIR (a LoRA checkpoint or an imported folder:
//     fresh adapters are added) [--turns 6]
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
if (!model) throw new Error('usage: bench/torch-sample-sort.ts --model DIR [--turns 6]');
const turns = Number(arg('--turns') ?? 6);
await useBackend(RunConfigSchema.parse({ backend: 'torch' }));

async function runtime(sort: 'numpy' | 'torch'): Promise<ModelRuntime> {
  process.env.SPA_TORCH_SAMPLE_SORT = sort;   // the worker reads it when it starts
  const rt = await loadRuntime(resolve(model!), { trainable: false });
  if (!existsSync(join(resolve(model!), 'adapter_config.json'))) {
    await (rt as unknown as { enableLora: (l: object, o: object) => Promise<void> }).enableLora(
      { rank: 16, alpha: 32, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] }, { seed: 1 });
  }
  return rt;
}
const fast = await runtime('numpy'), slow = await runtime('torch');
const user = (i: number, lead: string): ChatMessage => ({ role: 'user', content: `${lead}Player (P) is at (1,${i % 4}); hole (O) is at (0,0); goal (G) is at (2,2).\n` });
const chats: ChatMessage[][] = Array.from({ length: 8 }, (_, i) => [user(i, 'Reach G, avoid O. Actions: Left, Down, Right, Up. Write your move.\n')]);
const secondsNumpy: number[] = [], secondsTorch: number[] = [];
let sameTokens = true, newTokens = 0, promptTokens = 0;
for (let t = 0; t < turns; t++) {
  const prompts = chats.map((c) => fast.encodePrompt(c, '<think>', 2000));
  promptTokens = Math.max(...prompts.map((p) => p.length));
  const opts = (k: string) => ({ maxNewTokens: 48, temperature: 1, topK: 0, topP: 1, seed: 7 + t, cacheKeys: chats.map((_, i) => `${k}${i}`) });
  // the order alternates (numpy first on even turns) so neither mode always runs second on a warmed cache
  const order: Array<['numpy' | 'torch', ModelRuntime]> = t % 2 === 0 ? [['numpy', fast], ['torch', slow]] : [['torch', slow], ['numpy', fast]];
  const out: Record<string, Awaited<ReturnType<ModelRuntime['generate']>>> = {};
  for (const [name, rt] of order) {
    const started = performance.now();
    out[name] = await rt.generate(prompts, opts(name));
    (name === 'numpy' ? secondsNumpy : secondsTorch).push((performance.now() - started) / 1000);
  }
  const a = out.numpy!, b = out.torch!;
  sameTokens &&= a.every((g, i) => JSON.stringify(g.ids) === JSON.stringify(b[i]!.ids));
  newTokens += a.reduce((s, g) => s + g.ids.length, 0);
  console.log(`turn ${t}: prompt up to ${promptTokens} tokens; numpy sort ${secondsNumpy[t]!.toFixed(1)} s, torch sort ${secondsTorch[t]!.toFixed(1)} s`);
  a.forEach((g, i) => chats[i]!.push({ role: 'assistant', content: `<think>${g.text}` }, user(i, 'Invalid format. ')));
}
await fast.dispose();
await slow.dispose();
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const result = {
  what: 'torch generation on the CPU, 8 rows, 48 new tokens a turn at T = 1 with cache keys, multi-turn history, LoRA; the sampler\'s sort: numpy values + stable rank (default) vs torch.sort(stable=True); 1 thread',
  model: resolve(model), turns, newTokensPerMode: newTokens, longestPrompt: promptTokens, threads: process.env.SPA_TORCH_THREADS ?? 'all cores',
  loadavg: loadavg().map((x) => Number(x.toFixed(2))),
  secondsNumpySort: secondsNumpy.map((x) => Number(x.toFixed(2))), secondsTorchSort: secondsTorch.map((x) => Number(x.toFixed(2))),
  medianNumpySort: Number(median(secondsNumpy).toFixed(2)), medianTorchSort: Number(median(secondsTorch).toFixed(2)),
  speedup: Number((median(secondsTorch) / median(secondsNumpy)).toFixed(2)), sameTokens,
};
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', 'torch-sample-sort.json'), `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
process.exit(0);
