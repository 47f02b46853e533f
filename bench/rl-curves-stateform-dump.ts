// Dumps curve (a)'s puzzles (the 4-armed contextual bandit: FrozenLake 4x4, no holes, the goal next to the start, one move) as
// the product encodes them, for a behaviour-cloning check of the state form outside the product's trainer
// (bench/rl-curves-stateform-bc.py). One JSON line per puzzle: { seed, template, prompt (text), ids (the prompt's token ids
// with the generation prefix, runtime.encodePrompt), lead (ids of "I will try "), moves (the first token id of Left, Down,
// Right, Up), replies (for each move, the ids of the plain reply after the prompt, "I will try X.</think><answer>X</answer>", as
// bench/rl-curves-check.ts --mode bc-reply trains it), correct (index of the one rewarded move, found by simulating each move) }. Issue 34 item 3, session 4.
// Usage: node bin/run-ts.mjs bench/rl-curves-stateform-dump.ts --template tiny-compact-plain --from 2000000 --count 4096
//        [--base DIR] --out FILE.jsonl
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RunConfigSchema } from '../core/api/run-config.js';
import { mergeConfig, presetConfig } from '../core/train/presets.js';
import { loadRuntime } from '../core/train/runtime.js';
import { sessionFactory, runTemplate } from '../core/train/episodes.js';

const ACTIONS = ['Left', 'Down', 'Right', 'Up'] as const;

function args(argv: string[]) {
  const out: Record<string, string> = {
    template: 'tiny-compact-plain', from: '2000000', count: '1024', out: '',
    base: fileURLToPath(new URL('../resources/bases/frozenlake-compact', import.meta.url)),
  };
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i]!.replace(/^--/, '');
    if (!(k in out) || argv[i + 1] === undefined) throw new Error(`unknown or valueless argument ${argv[i]}`);
    out[k] = argv[i + 1]!;
  }
  if (!out.out) throw new Error('--out FILE.jsonl is required');
  return out;
}

async function main(): Promise<void> {
  const a = args(process.argv.slice(2));
  const overrides: Record<string, unknown> = {
    backend: 'wasm',
    template: { preset: a.template },
    env: { id: 'frozenlake', options: { isSlippery: false, p: 1, goalDistance: 1, maxSteps: 1 } },
    model: { source: 'checkpoint', path: a.base },
    stages: { rollout: { maxTurns: 1 } },
  };
  const config = RunConfigSchema.parse(mergeConfig(presetConfig('vanilla-rl', 'quick', overrides) as Record<string, unknown>, overrides));
  const runtime = await loadRuntime(config.model.path!, { valueHead: false });
  const make = sessionFactory(config, runTemplate(config), config.stages.rollout);
  const lead = runtime.tokenizer.encode('I will try ');
  const moves = ACTIONS.map((m) => runtime.tokenizer.encode(m)[0]!);
  const replies = ACTIONS.map((m) => runtime.tokenizer.encode(`I will try ${m}.</think><answer>${m}</answer>`));
  const lines: string[] = [];
  for (let k = 0; k < Number(a.count); k++) {
    const seed = Number(a.from) + k;
    const session = make({ seed, group: 0, sample: 0, id: `dump-${seed}` });
    const rewards = ACTIONS.map((m) => session.simulate([m]).rewards.reduce((x, y) => x + y, 0));
    const correct = rewards.findIndex((r) => r > 0);
    if (correct < 0 || rewards.filter((r) => r > 0).length !== 1) throw new Error(`seed ${seed}: expected one rewarded move, got ${rewards}`);
    const messages = session.messages();
    const ids = runtime.encodePrompt(messages, session.generationPrefix(), 4096);
    lines.push(JSON.stringify({ seed, template: a.template, prompt: runtime.tokenizer.decode(ids), ids, lead, moves, replies, correct }));
  }
  writeFileSync(a.out, `${lines.join('\n')}\n`);
  runtime.dispose();
  process.stderr.write(`wrote ${lines.length} puzzles to ${a.out}\n`);
}

await main();
