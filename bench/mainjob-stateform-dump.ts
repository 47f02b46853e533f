// Dumps the main job's first-turn boards (quick's FrozenLake: 4x4, random start and goal, holes, success rate 0.8) as the
// product encodes them, for a behaviour-cloning check of the decision outside the product's trainer
// (bench/mainjob-stateform-bc.py). Issue 34 item 5, session 8: does the state form (the grid, the SPA coordinate line, or
// both) let the 2 x 64 base learn a *generalising* move (held-out boards), where curve (a)'s 48 boards could be memorised?
// One JSON line per board: { seed, template, prompt (text), ids (the prompt's token ids with the generation prefix,
// runtime.encodePrompt), lead (ids of the reply up to the move: "I will try " in the plain reply; with a world-model template
// "<observation>\n{true state}\n</observation>\nI will try "), moves (the first token id of Left, Down, Right, Up), best
// (indices of the moves the lookahead rule ranks first: frozen-lake.ts lookaheadChoice, goal > nearer ice > ice > edge >
// hole), cells (each move's landing cell: G, O, _, #), closer (each move lowers the distance to the goal) }.
// Usage: node bin/run-ts.mjs bench/mainjob-stateform-dump.ts --template tiny-compact-plain --from 5000000 --count 8192
//        [--base DIR] --out FILE.jsonl
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RunConfigSchema } from '../core/api/run-config.js';
import { mergeConfig, presetConfig } from '../core/train/presets.js';
import { loadRuntime } from '../core/train/runtime.js';
import { sessionFactory, runTemplate } from '../core/train/episodes.js';
import { frozenLakeLookahead } from '../core/envs/frozen-lake.js';

const ACTIONS = ['Left', 'Down', 'Right', 'Up'] as const;

function args(argv: string[]) {
  const out: Record<string, string> = {
    template: 'tiny-compact-plain', from: '5000000', count: '4096', out: '',
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
    backend: 'wasm', template: { preset: a.template }, model: { source: 'checkpoint', path: a.base },
  };
  // the main job's env as `spa --size quick` resolves it (random start and goal, success rate 0.8)
  const config = RunConfigSchema.parse(mergeConfig(presetConfig('spa', 'quick', overrides) as Record<string, unknown>, overrides));
  const runtime = await loadRuntime(config.model.path!, { valueHead: false });
  const make = sessionFactory(config, runTemplate(config), config.stages.rollout);
  const moves = ACTIONS.map((m) => runtime.tokenizer.encode(m)[0]!);
  const rank = (cell: string, closer: boolean) => (cell === 'G' ? 0 : cell === '_' ? (closer ? 1 : 2) : cell === '#' ? 3 : 4);
  const lines: string[] = [];
  for (let k = 0; k < Number(a.count); k++) {
    const seed = Number(a.from) + k;
    const session = make({ seed, group: 0, sample: 0, id: `dump-${seed}` });
    const outcomes = frozenLakeLookahead(session.env.board());
    const ranks = outcomes.map((o) => rank(o.cell, o.closer));
    const best = ranks.flatMap((r, i) => (r === Math.min(...ranks) ? [i] : []));
    const leadText = session.responseFormat === 'world-model'
      ? `<observation>\n${session.stateText()}\n</observation>\nI will try ` : 'I will try ';
    const ids = runtime.encodePrompt(session.messages(), session.generationPrefix(), 4096);
    lines.push(JSON.stringify({
      seed, template: a.template, prompt: runtime.tokenizer.decode(ids), ids, lead: runtime.tokenizer.encode(leadText), moves, best,
      cells: outcomes.map((o) => o.cell), closer: outcomes.map((o) => o.closer),
    }));
  }
  writeFileSync(a.out, `${lines.join('\n')}\n`);
  runtime.dispose();
  process.stderr.write(`wrote ${lines.length} boards to ${a.out}\n`);
}

await main();
