// A whole run through the engine on a GPU: `spa` at the GPU sizes (gpu-24g, gpu-80g) on Qwen2.5-0.5B / 1.5B stand-ins
// (the published config.json, random BF16 weights, the real Qwen BPE tokenizer), resolved exactly as `spa-workbench run spa
// --size gpu-24g --set model.path=…` resolves it, with the counts cut so each run takes minutes (one chunk of rollout rows,
// one SFT epoch over that self-play, one PPO step, a small eval). The shapes that set memory stay the size's: the context
// (2,048), new tokens per turn (400), the token budget per micro-batch, the rows per generation chunk, gradient
// checkpointing, bf16 frozen weights, the separate critic. Device memory is read with nvidia-smi (the whole card's used
// memory, every process on it: the measure of core/engine/memory-model.ts), polled every 250 ms and kept per stage, beside
// the memory model's estimate of each stage for the same config.
//
//   node bin/run-ts.mjs bench/gpu-engine-run.ts --models DIR [--out FILE] [--budget-s S] [--case NAME ...]
//
// --models: a folder holding one stand-in folder per model (qwen25-05b, qwen25-15b), made by bench/gpu_standins.py.
// --set key=json: a setting over every case's (e.g. stages.rollout.maxNewTokens=16 for a quick plumbing check on a CPU).
// --case: cases to run, in order (default: every case below); a case that cannot finish inside --budget-s is skipped.
// The report is rewritten after every stage (a stopped run keeps what it measured). On a GPU machine without node,
// bench/gpu-engine-bundle.mjs bundles this file with its engine into one .mjs that needs node alone.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseSetArgs, resolveRunConfig } from '../core/engine/config.js';
import '../core/engine/presets.js';
import { executeRun } from '../core/engine/runner.js';
import { loadStage } from '../core/engine/stages.js';
import { CUDA_PATH, ENGINE_STAGE_PEAKS, STAGE_TITLES, gib, planFromConfig, shapeFromHfConfig, stagePeaks } from '../core/engine/memory-model.js';
import type { RunEvent } from '../core/api/records.js';

const args = process.argv.slice(2);
const arg = (name: string): string | undefined => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
const models = arg('--models');
if (!models) throw new Error('--models DIR is required (stand-in folders made by bench/gpu_standins.py)');
const out = arg('--out') ?? 'gpu-engine-run.json';
const budgetS = Number(arg('--budget-s') ?? 570);
const LORA = { rank: 16, alpha: 32, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] };

interface Case { name: string; model: string; size: 'gpu-24g' | 'gpu-80g'; lora: boolean; rows: number; estimateS: number }
// estimateS: seconds on an H200 with random weights (every turn runs to 400 tokens): the 0.5B case's self-play took 144 s and
// its SFT 71 s (bench/results/gpu-engine-run-h200.json); RL (its rollout and updates) and eval are guessed from those, and the
// 1.5B cases scaled by their decoding cost: unmeasured
const CASES: Case[] = [
  { name: '0.5b-gpu24g-full', model: 'qwen25-05b', size: 'gpu-24g', lora: false, rows: 32, estimateS: 520 },
  { name: '1.5b-gpu80g-full', model: 'qwen25-15b', size: 'gpu-80g', lora: false, rows: 64, estimateS: 900 },
  { name: '1.5b-gpu24g-lora', model: 'qwen25-15b', size: 'gpu-24g', lora: true, rows: 32, estimateS: 650 },
];
const wanted = args.flatMap((a, i) => (a === '--case' ? [args[i + 1]!] : []));
for (const w of wanted) if (!CASES.some((c) => c.name === w)) throw new Error(`unknown --case ${w}; cases: ${CASES.map((c) => c.name).join(', ')}`);
const extraSets = parseSetArgs(args.flatMap((a, i) => (a === '--set' ? [args[i + 1] ?? ''] : [])));

const cases = wanted.length > 0 ? CASES.filter((c) => wanted.includes(c.name)) : CASES;

/** The counts cut to minutes; every memory-setting shape stays the size's. */
function cutSettings(c: Case, modelDir: string): Record<string, unknown> {
  return {
    'model.path': modelDir,
    ...(c.lora ? { 'model.lora': LORA } : {}),
    'stages.rollout.batchSize': c.rows,
    'stages.selfplay.games': c.rows,
    // random weights never write a well-formed turn, so self-play keeps none: one-action drills (well-formed by construction,
    // ground truth replaced) give SFT its rows; the self-play rollout itself still runs on the model
    'stages.selfplay.drills': 64,
    'stages.sft.epochs': 1,
    'stages.rl.steps': 1,
    'stages.rl.groups': c.rows / 8,
    'stages.rl.groupSize': 8,
    // off: Pass@k tracking runs at step 0 too (passAtKPuzzles held-out games), which alone outlasted 4 minutes of device time
    'stages.rl.passAtKEvery': 0,
    'stages.eval.puzzles': 8,
    'stages.eval.samples': 1,
    'stages.eval.k': [1],
    'stages.eval.perplexityRows': 16,
    ...extraSets,
  };
}

/** The card's used memory (MiB) and the compute processes nvidia-smi lists (empty inside some containers). */
function smi(): Promise<{ usedMiB: number; processes: Array<{ pid: number; usedMiB: number }> } | null> {
  const q = (a: string[]): Promise<string | null> => new Promise((res) => {
    execFile('nvidia-smi', a, { timeout: 5000 }, (err, stdout) => res(err ? null : stdout));
  });
  return Promise.all([
    q(['--query-gpu=memory.used', '--format=csv,noheader,nounits']),
    q(['--query-compute-apps=pid,used_memory', '--format=csv,noheader,nounits']),
  ]).then(([gpu, apps]) => {
    if (gpu === null) return null;
    const processes = (apps ?? '').split('\n').filter((l) => l.includes(',')).map((l) => {
      const [pid, used] = l.split(',').map((s) => Number(s.trim()));
      return { pid: pid!, usedMiB: used! };
    });
    return { usedMiB: Number(gpu.trim().split('\n')[0]), processes };
  });
}

interface StageRecord { stage: string; seconds: number; peakUsedMiB: number; peakProcesses: number; samples: number; peakAt: string }
const report: Record<string, unknown> & { cases: Array<Record<string, unknown>> } = {
  bench: 'gpu-engine-run',
  command: `node bin/run-ts.mjs bench/gpu-engine-run.ts --models DIR${wanted.map((w) => ` --case ${w}`).join('')}` +
    Object.entries(extraSets).map(([k, v]) => ` --set ${k}=${JSON.stringify(v)}`).join(''),
  when: new Date().toISOString(),
  machine: { cpus: availableParallelism(), node: process.version, torchDevice: process.env.SPA_TORCH_DEVICE ?? 'auto' },
  fields: {
    peakUsedMiB: "largest memory.used of the card (nvidia-smi, every process on it) seen during the stage, polled every 250 ms, MiB",
    peakAt: "the engine's latest progress or log line when that peak was read (where in the stage it came)",
    baselineUsedMiB: 'memory.used before the case started (another process, or nothing)',
    estimateGiB: "core/engine/memory-model.ts's stagePeaks for the run's own (cut) config and the stand-in's config.json, GiB",
    ratio: 'measured peak (less the baseline) / the estimate of the matching stage (selfplay: self-play rollout; sft: SFT step; ' +
      'rl: the largest of RL rollout, RL actor update and critic update); above 1 the model under-counts',
  },
  cases: [],
};
const write = (): void => { mkdirSync(dirname(out) || '.', { recursive: true }); writeFileSync(out, JSON.stringify(report, null, 2) + '\n'); };

const started = Date.now();
for (const c of cases) {
  const left = budgetS - (Date.now() - started) / 1000;
  const modelDir = join(models, c.model);
  if (left < c.estimateS) { report.cases.push({ name: c.name, skipped: `${left.toFixed(0)} s of the budget left, the case needs ~${c.estimateS} s` }); write(); continue; }
  if (!existsSync(join(modelDir, 'config.json'))) { report.cases.push({ name: c.name, skipped: `no stand-in at ${modelDir}` }); write(); continue; }
  const resolved = resolveRunConfig({ preset: 'spa', size: c.size, set: cutSettings(c, modelDir) });
  if (!resolved.ok || !resolved.config) throw new Error(`${c.name}: the config does not resolve: ${JSON.stringify(resolved.issues)}`);
  const config = resolved.config;
  const hf = JSON.parse(readFileSync(join(modelDir, 'config.json'), 'utf8')) as Record<string, unknown>;
  const shape = shapeFromHfConfig(hf, c.model);
  if (!shape) throw new Error(`${c.name}: ${modelDir}/config.json is not a shape the memory model reads`);
  const peaks = stagePeaks(shape, planFromConfig(config), CUDA_PATH);
  const estimate: Record<string, number> = Object.fromEntries(Object.entries(peaks).map(([k, v]) => [k, Number(gib(v.bytes).toFixed(2))]));
  const baseline = (await smi())?.usedMiB ?? null;
  const stages: StageRecord[] = [];
  let current: StageRecord | null = null;
  let stageStart = Date.now();
  const entry: Record<string, unknown> = {
    name: c.name, model: c.model, size: c.size, lora: c.lora, parameters: null, settings: cutSettings(c, modelDir),
    memory: config.model.memory, criticMode: config.model.criticMode, env: config.env, stagesPlanned: resolved.stages,
    baselineUsedMiB: baseline, estimateGiB: estimate, stageTitles: STAGE_TITLES, stages, outcome: { status: 'running' }, logs: [] as string[],
  };
  report.cases.push(entry);
  const logs = entry.logs as string[];
  let polling = false;
  let lastMessage = '';   // the engine's latest progress or log line: where in the stage the peak came (e.g. the RL rollout or update)
  const timer = setInterval(() => {
    if (polling || !current) return;
    polling = true;
    void smi().then((s) => {
      polling = false;
      if (!s || !current) return;
      current.samples++;
      if (s.usedMiB > current.peakUsedMiB) Object.assign(current, { peakUsedMiB: s.usedMiB, peakProcesses: s.processes.length, peakAt: lastMessage });
    });
  }, 250);
  const closeStage = (): void => {
    if (!current) return;
    current.seconds = (Date.now() - stageStart) / 1000;
    const keys = ENGINE_STAGE_PEAKS[current.stage];
    const est = keys ? Math.max(...keys.map((k) => estimate[k] ?? 0)) : null;
    Object.assign(current, {
      peakGiB: Number((current.peakUsedMiB / 1024).toFixed(2)),
      estimateGiB: est,
      ratio: est && baseline !== null ? Number(((current.peakUsedMiB - baseline) / 1024 / est).toFixed(3)) : null,
    });
  };
  const runDir = join(mkdtempSync(join(tmpdir(), `gpu-run-${c.name}-`)), 'run');
  const t0 = Date.now();
  console.error(`[${new Date().toISOString()}] ${c.name}: stages ${resolved.stages.join(' → ')}; estimate ${JSON.stringify(estimate)}`);
  try {
    entry.outcome = await executeRun({
      runId: c.name, runDir, config, stages: resolved.stages, attempt: 1, signal: new AbortController().signal, loadStage,
      send: (e: RunEvent) => {
        if (e.type === 'stage' && e.status === 'running') {
          closeStage();
          write();
          current = { stage: e.stage, seconds: 0, peakUsedMiB: 0, peakProcesses: 0, samples: 0, peakAt: '' };
          lastMessage = `${e.stage} started`;
          stages.push(current);
          stageStart = Date.now();
          console.error(`[${new Date().toISOString()}] ${c.name}: stage ${e.stage}`);
        }
        if (e.type === 'progress' && e.message) lastMessage = e.message.slice(0, 160);
        if (e.type === 'log' && e.level !== 'debug') {
          lastMessage = e.message.slice(0, 160);
          const line = `${e.level}: ${e.message.slice(0, 300)}`;
          if (logs.length < 200) logs.push(line);
          console.error(`  ${line}`);
          const m = /(\d[\d,]*) parameters/.exec(e.message);
          if (m && entry.parameters === null) entry.parameters = Number(m[1]!.replace(/,/g, ''));
        }
      },
    });
  } catch (err) {
    entry.outcome = { status: 'threw', error: (err as Error).stack ?? String(err) };
  }
  await new Promise((r) => setTimeout(r, 300));
  closeStage();
  current = null;
  clearInterval(timer);
  entry.totalSeconds = (Date.now() - t0) / 1000;
  report.loadAverageAtEnd = loadavg();
  write();
  console.error(`[${new Date().toISOString()}] ${c.name}: ${JSON.stringify(entry.outcome).slice(0, 300)}; ` +
    stages.map((s) => `${s.stage} ${(s.peakUsedMiB / 1024).toFixed(1)} GiB`).join(', '));
}
write();
console.log(JSON.stringify(report.cases.map((c) => ({ name: c.name, outcome: c.outcome, skipped: c.skipped, stages: c.stages })), null, 1));
