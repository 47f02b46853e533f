// Cost of RWML's embedding reward (core/model/embedding.ts, all-MiniLM-L6-v2 in TF.js): load time, and milliseconds per
// reward = embedding one predicted and one true next state and taking their cosine, for TextWorld-length states
// (~60-120 tokens) and short grid-length ones, one reward at a time and in RWML's batches (--batch pairs per embed call).
// Median of --repeats runs, printed as JSON and written to bench/results/embedding-reward.json.
// Run: node bin/run-ts.mjs bench/embedding-reward.ts [--backend wasm|tensorflow|cpu] [--repeats 5] [--batch 8]
// Needs the model in the cache (.ci/install-envs.sh). The load average is recorded: a busy machine inflates every number.
import { writeFileSync, mkdirSync } from 'node:fs';
import { loadavg, cpus } from 'node:os';
import { initBackend, parseBackendRequest } from '../core/model/backend.js';
import { cosineSimilarity, defaultEmbeddingModelDir, loadSentenceEmbedder } from '../core/model/embedding.js';

const arg = (name: string, fallback: string) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1]! : fallback; };
const REPEATS = Number(arg('--repeats', '5'));
const BATCH = Number(arg('--batch', '8'));          // pairs per embed call: RWML scores examples × groupSize pairs in one call
const backend = await initBackend({ backend: parseBackendRequest(arg('--backend', 'wasm'), '--backend'), ignoreEnv: true });

const TEXTWORLD_STATE = `-= Studio =-
You've just walked into a studio. The room is well lit. You can see a table. On the table you can make out a red key and a
cookbook. There is an unblocked exit to the west. You don't like doors? Why not try going north, that entranceway is unguarded.

There is a coin on the floor.

Admissible commands: examine coin, examine cookbook, go north, go west, inventory, look, take coin, take cookbook from table`;
const TEXTWORLD_PREDICTION = TEXTWORLD_STATE.replace('coin on the floor', 'lamp on the floor').replace('go north, ', '');
const GRID_STATE = '#####\n#_P_#\n#_X_#\n#_O_#\n#####';
const GRID_PREDICTION = '#####\n#__P#\n#_X_#\n#_O_#\n#####';

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2; };

const loadStart = performance.now();
const embedder = await loadSentenceEmbedder(defaultEmbeddingModelDir());
const loadMs = performance.now() - loadStart;

/** Wall and CPU milliseconds per reward (CPU time: this process's user + system, less sensitive to other load on the machine). */
async function perReward(pairs: number, truth: string, prediction: string): Promise<{ wallMs: number; cpuMs: number }> {
  const texts = Array.from({ length: pairs }, (_, i) => [`${prediction} ${i}`, truth]).flat();   // distinct predictions, as in a group
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < REPEATS + 1; r++) {
    const t = performance.now();
    const c = process.cpuUsage();
    const v = await embedder.embed(texts);
    for (let i = 0; i < pairs; i++) cosineSimilarity(v[2 * i]!, v[2 * i + 1]!);
    const used = process.cpuUsage(c);
    if (r > 0) {                                                     // the first run warms the kernels
      wall.push((performance.now() - t) / pairs);
      cpu.push((used.user + used.system) / 1000 / pairs);
    }
  }
  return { wallMs: Math.round(median(wall)), cpuMs: Math.round(median(cpu)) };
}

const result = {
  bench: 'embedding-reward',
  model: embedder.source,
  backend: backend.backend,
  cpus: cpus().length,
  loadAverageAtStart: loadavg()[0],
  repeats: REPEATS,
  pairsPerBatch: BATCH,
  tokens: { textworldState: embedder.tokenize(TEXTWORLD_STATE).length, gridState: embedder.tokenize(GRID_STATE).length },
  loadMs: Math.round(loadMs),
  perReward: {
    textworldOneAtATime: await perReward(1, TEXTWORLD_STATE, TEXTWORLD_PREDICTION),
    textworldBatched: await perReward(BATCH, TEXTWORLD_STATE, TEXTWORLD_PREDICTION),
    gridOneAtATime: await perReward(1, GRID_STATE, GRID_PREDICTION),
    gridBatched: await perReward(BATCH, GRID_STATE, GRID_PREDICTION),
  },
  loadAverageAtEnd: loadavg()[0],
  command: `node bin/run-ts.mjs bench/embedding-reward.ts --backend ${arg('--backend', 'wasm')} --repeats ${REPEATS} --batch ${BATCH}`,
  date: new Date().toISOString(),
};
embedder.dispose();
console.log(JSON.stringify(result, null, 2));
mkdirSync('bench/results', { recursive: true });
writeFileSync(`bench/results/embedding-reward${backend.backend === 'wasm' ? '' : `-${backend.backend}`}.json`, `${JSON.stringify(result, null, 2)}\n`);
