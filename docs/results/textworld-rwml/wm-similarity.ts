// World-model similarity before and after RWML on the same held-out transitions (issue 38 item 4; docs/results/textworld-rwml).
//
//   node bin/run-ts.mjs docs/results/textworld-rwml/wm-similarity.ts --project P --run RUN_ID --model NAME=DIR [--model NAME=DIR …]
//        [--n 24] [--seed-start 4000000] [--out FILE.json] [--cached EARLIER.json] [--action-prefix "go "]
//
// Transitions: for seed seedStart + i (i < n; disjoint from RWML's seeds selfplayStart + 500000 + …, RL's and eval's 3,000,000…),
// the run's env, template and rollout limits; (i mod 3) random well-formed turns are played first (session.ts
// randomWellFormedResponse, rng seeded by the seed), then one legal action is drawn and its true next state computed
// (session.simulate). The prompt is built as RWML builds its examples (core/train/rwml.ts): the chat so far, the last user message
// with actionLine(action), the reply forced to start with RWML_PREFIX and stopped at </prediction>, rwml.maxNewTokens tokens,
// greedy (temperature 0: one prediction per model and transition, so the models differ only by their weights).
// Score: the cosine of all-MiniLM-L6-v2 embeddings of prediction and truth (embeddingRewards, the reward RWML used), plus the
// binarised reward at rwml.threshold and exact match after normalisation (the text env's `exact`).
// Output: per transition the texts and scores of every model, and per model n, mean cosine; per later model the paired
// difference to the first with a 95% t interval (and a paired bootstrap interval, 10,000 resamples, seeded).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RunConfigSchema } from '../../../core/api/run-config.js';
import { setChatSettings } from '../../../core/model/chat.js';
import { setMemorySettings } from '../../../core/model/memory.js';
import { randomWellFormedResponse } from '../../../core/prompts/session.js';
import { runTemplate, sessionFactory } from '../../../core/train/episodes.js';
import { actionLine, embeddingRewards, predictedText, RWML_PREFIX } from '../../../core/train/rwml.js';
import { chooseCompute, loadRuntime } from '../../../core/train/runtime.js';
import { Rng } from '../../../core/util/rng.js';
import { defaultEmbeddingModelDir, sharedSentenceEmbedder } from '../../../core/model/embedding.js';

function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0 && process.argv[i + 1] !== undefined) return process.argv[i + 1]!;
  if (fallback === undefined) throw new Error(`missing --${name}`);
  return fallback;
}
const models = process.argv.flatMap((a, i) => (process.argv[i - 1] === '--model' ? [a] : [])).map((m) => {
  const eq = m.indexOf('=');
  if (eq <= 0) throw new Error(`--model NAME=DIR expected, received ${m}`);
  return { name: m.slice(0, eq), dir: m.slice(eq + 1) };
});
if (models.length === 0) throw new Error('give at least one --model NAME=DIR');

const project = arg('project');
const runId = arg('run');
const n = Number(arg('n', '24'));
const seedStart = Number(arg('seed-start', '4000000'));
const actionPrefix = process.argv.includes('--action-prefix') ? arg('action-prefix') : null;   // e.g. "go " for moves only
const runDir = path.join(project, 'runs', runId);
const out = arg('out', path.join(runDir, 'wm-similarity.json'));
const config = RunConfigSchema.parse((JSON.parse(fs.readFileSync(path.join(runDir, 'run.json'), 'utf8')) as { config: unknown }).config);
setChatSettings(config.model.chat);
setMemorySettings(config.model.memory);   // the run's frozen-weight dtype (its config: f32), so the base computes as in the run
const template = runTemplate(config, runDir);
const limits = config.stages.rollout;
const section = config.stages.rwml;
const normalise = (t: string): string => t.toLowerCase().replace(/\s+/g, ' ').trim();

// 1. the held-out transitions
const makeSession = sessionFactory(config, template, limits);
const items = Array.from({ length: n }, (_, i) => {
  const seed = seedStart + i;
  const session = makeSession({ seed, group: 0, sample: 0, id: `wm-${seed}` });
  const rng = new Rng(seed);
  for (let k = 0; k < i % 3 && !session.done; k++) session.applyResponse(randomWellFormedResponse(session, rng));
  if (session.done) throw new Error(`seed ${seed}: the episode ended during its ${i % 3} warm-up turns`);
  const all = session.legalActions();
  const legal = actionPrefix ? all.filter((a) => a.startsWith(actionPrefix)) : all;
  if (legal.length === 0) throw new Error(`seed ${seed}: no legal action starts with ${JSON.stringify(actionPrefix)} (legal: ${all.join(', ')})`);
  const action = legal[rng.int(legal.length)]!;
  const truth = session.simulate([action]).text;
  const messages = session.messages();
  const last = messages[messages.length - 1]!;
  messages[messages.length - 1] = { ...last, content: last.content + actionLine([action]) };
  return { seed, warmupTurns: i % 3, action, truth, messages };
});

// 2. greedy predictions of each model
await chooseCompute(config.backend);
const maxPrompt = Math.max(16, limits.maxContextTokens - section.maxNewTokens);
const predictions: Record<string, string[]> = {};
const seconds: Record<string, number> = {};
// --cached FILE: an earlier output of this script on the same transitions (same seed start; it may have fewer); the predictions
// of its models are reused where seed, action and truth match (greedy: the same weights write the same text), the rest generated.
const cachedFile = process.argv.includes('--cached') ? arg('cached') : null;
const cached = cachedFile ? JSON.parse(fs.readFileSync(cachedFile, 'utf8')) as {
  items: Array<{ seed: number; action: string; truth: string; predictions: Record<string, { text: string }> }>;
  summary: Array<{ model: string; dir: string }>;
} : null;
for (const m of models) {
  const fromCache = cached?.summary.some((s) => s.model === m.name && s.dir === m.dir) ? cached.items : [];
  const reused = items.map((it, i) => {
    const c = fromCache[i];
    return c && c.seed === it.seed && c.action === it.action && c.truth === it.truth ? c.predictions[m.name]?.text ?? null : null;
  });
  const todo = items.map((_, i) => i).filter((i) => reused[i] === null);
  const started = performance.now();
  const texts = [...reused];
  if (todo.length > 0) {
    const runtime = await loadRuntime(m.dir, { valueHead: false, trainable: false });
    try {
      const prompts = todo.map((i) => runtime.encodePrompt(items[i]!.messages, RWML_PREFIX, maxPrompt));
      const generated = await runtime.generate(prompts, {
        maxNewTokens: section.maxNewTokens, temperature: 0, topP: 1, topK: 0, seed: 0, stop: ['</prediction>'],
      });
      todo.forEach((i, k) => { texts[i] = predictedText(generated[k]!.text); });
    } finally {
      await runtime.dispose();
    }
  }
  predictions[m.name] = texts.map((t) => t!);
  seconds[m.name] = Math.round((performance.now() - started) / 100) / 10;
  console.error(`${m.name}: ${todo.length} predictions generated in ${seconds[m.name]} s, ${n - todo.length} reused from ${cachedFile ?? '-'}`);
}

// 3. scores
const embedder = await sharedSentenceEmbedder(section.embeddingModel ?? defaultEmbeddingModelDir());
const embed = (texts: string[]) => embedder.embed(texts);
const scores: Record<string, { similarity: number[]; reward: number[]; exact: number[] }> = {};
for (const m of models) {
  const r = await embeddingRewards(embed, predictions[m.name]!, items.map((it) => it.truth), section.threshold);
  scores[m.name] = {
    similarity: r.similarities, reward: r.rewards,
    exact: predictions[m.name]!.map((p, i) => (normalise(p) === normalise(items[i]!.truth) ? 1 : 0)),
  };
}
const mean = (xs: number[]): number => xs.reduce((a, c) => a + c, 0) / xs.length;
// two-sided 95% Student t quantiles for df 1..30 (then 1.96)
const T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101,
  2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];
function pairedInterval(d: number[]): { mean: number; low: number; high: number; bootstrapLow: number; bootstrapHigh: number } {
  const m = mean(d);
  const sd = Math.sqrt(d.reduce((a, c) => a + (c - m) ** 2, 0) / Math.max(1, d.length - 1));
  const t = T95[d.length - 2] ?? 1.96;
  const half = (t * sd) / Math.sqrt(d.length);
  const rng = new Rng(12_345);
  const boots = Array.from({ length: 10_000 }, () => mean(d.map(() => d[rng.int(d.length)]!))).sort((a, b) => a - b);
  return { mean: m, low: m - half, high: m + half, bootstrapLow: boots[249]!, bootstrapHigh: boots[9_749]! };
}
const first = models[0]!.name;
const summary = models.map((m) => ({
  model: m.name, dir: m.dir, n, meanSimilarity: mean(scores[m.name]!.similarity), rewardRate: mean(scores[m.name]!.reward),
  exactRate: mean(scores[m.name]!.exact), generationSeconds: seconds[m.name],
  ...(m.name === first ? {} : { pairedVsFirst: pairedInterval(scores[m.name]!.similarity.map((s, i) => s - scores[first]!.similarity[i]!)) }),
}));
const result = {
  runId, env: config.env, template: template.name, actionPrefix, threshold: section.threshold, maxNewTokens: section.maxNewTokens, seedStart, n, summary,
  items: items.map((it, i) => ({
    seed: it.seed, warmupTurns: it.warmupTurns, action: it.action, truth: it.truth,
    predictions: Object.fromEntries(models.map((m) => [m.name, {
      text: predictions[m.name]![i], similarity: scores[m.name]!.similarity[i], reward: scores[m.name]!.reward[i], exact: scores[m.name]!.exact[i],
    }])),
  })),
};
fs.writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
for (const s of summary) console.log(JSON.stringify(s));
console.log(`written: ${out}`);
