// The pipeline's handle on a model: the runtime interface of core/model/runtime.ts (encode, batched
// KV-cache sampling, token statistics, one training step of a registered loss, checkpoints in the
// Hugging Face layout), created on the backend the run asks for:
//   torch                       the PyTorch worker (core/model/torch): CUDA, Apple MPS or all CPU cores
//   wasm | cpu | tensorflow | tensorflow-gpu   TF.js in this process (core/model/backend.ts)
//   auto                        torch when a Python with torch >= 1.13 answers (SPA_PYTHON, else python3),
//                               else TF.js's best (tensorflow-gpu is never chosen by auto)
// SPA_BACKEND overrides the run config's `backend`. Every choice is reported with the reason each
// better backend was not taken; an explicit request that cannot be met is an error.
// On wasm (one thread per instance) the runtimes also start data-parallel worker threads: the run
// config's `workers` or SPA_WASM_WORKERS, auto = one per further core (at most 3).
import { CausalLM } from '../model/transformer.js';
import { presetConfig } from '../model/config.js';
import { buildCharTokenizer } from '../model/tokenizer.js';
import { loadCheckpoint } from '../model/checkpoint.js';
import { initBackend, type BackendName, type BackendReport } from '../model/backend.js';
import { TfjsRuntime, type ModelRuntime, type RuntimeManifest } from '../model/runtime.js';
import { TorchRuntime } from '../model/torch/runtime.js';
import { probeTorch, type TorchProbe } from '../model/torch/worker-client.js';
import type { RunConfig } from '../api/run-config.js';
import './rl-algorithms.js';   // registers every RL loss (the table's rows), as the worker threads do
import { autoWasmWorkers } from './compute-probe.js';
import { recordCompute } from './compute-record.js';
import { autoBackendProblem } from './auto-backend.js';
import { setMemorySettings, memorySettings } from '../model/memory.js';
import { setChatSettings } from '../model/chat.js';
import { pruneCheckpoints } from '../model/checkpoint.js';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';

export type { ModelRuntime, GenerateOptions, Generated, TrainRow, TokenStat, RuntimeInfo, RuntimeTrainer } from '../model/runtime.js';

export type ComputeBackend = 'torch' | BackendName;
export type ComputeRequest = 'auto' | ComputeBackend;
export const COMPUTE_BACKENDS: readonly ComputeRequest[] = ['auto', 'torch', 'wasm', 'cpu', 'tensorflow', 'tensorflow-gpu'];

export interface ComputeChoice {
  backend: ComputeBackend;
  requested: ComputeRequest;
  source: 'auto' | 'config' | 'env:SPA_BACKEND';
  torch: TorchProbe | null;
  /** The TF.js backend (it also evaluates the loss math when torch computes the model). */
  tfjs: BackendReport;
  /** Data-parallel worker threads of TF.js wasm runtimes (0 on other backends). */
  workers: number;
  /** One line for logs, the CLI and the run view. */
  summary: string;
}

/** Worker threads for a wasm run: SPA_WASM_WORKERS, else the config's `workers`, else auto (autoWasmWorkers: cores - 1, at most 3). */
export function resolveWorkers(configWorkers: number | 'auto' | undefined, opts: { ignoreEnv?: boolean } = {}): number {
  const env = opts.ignoreEnv ? undefined : process.env.SPA_WASM_WORKERS?.trim();
  let request: number | 'auto' = configWorkers ?? 'auto';
  if (env) {
    if (env === 'auto') request = 'auto';
    else if (/^\d+$/.test(env) && Number(env) <= 31) request = Number(env);
    else throw new Error(`environment variable SPA_WASM_WORKERS: expected "auto" or a whole number 0-31, got ${JSON.stringify(env)}`);
  }
  return request === 'auto' ? autoWasmWorkers() : request;
}

let chosen: ComputeChoice | null = null;
let chosenKey = '';

function parseRequest(value: string, where: string): ComputeRequest {
  if ((COMPUTE_BACKENDS as readonly string[]).includes(value)) return value as ComputeRequest;
  throw new Error(`${where}: expected one of ${COMPUTE_BACKENDS.join(', ')}, got ${JSON.stringify(value)}`);
}

/** Choose (once per request) and initialise the run's compute backend; returns the summary line. */
export async function chooseCompute(
  configBackend: string | undefined, opts: { log?: (line: string) => void; ignoreEnv?: boolean; workers?: number | 'auto' } = {},
): Promise<ComputeChoice> {
  const env = opts.ignoreEnv ? undefined : process.env.SPA_BACKEND?.trim();
  const requested = env ? parseRequest(env, 'environment variable SPA_BACKEND') : parseRequest(configBackend ?? 'auto', 'run config "backend"');
  const source: ComputeChoice['source'] = requested === 'auto' ? 'auto' : env ? 'env:SPA_BACKEND' : 'config';
  const workersWanted = resolveWorkers(opts.workers, opts);
  const key = `${requested}|${source}|${process.env.SPA_PYTHON ?? ''}|${workersWanted}`;
  if (chosen && chosenKey === key) return chosen;
  let torch: TorchProbe | null = null;
  let backend: ComputeBackend;
  let tfjs: BackendReport;
  if (requested === 'torch' || requested === 'auto') {
    torch = probeTorch();
    if (requested === 'torch' && !torch.ok) {
      throw new Error(`Backend 'torch' was requested (${source === 'config' ? 'run config "backend"' : source}) but is not available: ${torch.reason}. ` +
        'Install PyTorch for a Python 3 (pip install torch, or apt install python3-torch) and point SPA_PYTHON at it, or use backend "auto" or "wasm".');
    }
  }
  if (torch?.ok) {
    backend = 'torch';
    tfjs = await initBackend({ backend: 'auto', ignoreEnv: true, autoOrder: ['wasm', 'cpu'] });   // the loss math (small tensors)
  } else {
    tfjs = await initBackend({ backend: requested === 'auto' ? 'auto' : (requested as BackendName), ignoreEnv: true });
    backend = tfjs.backend;
  }
  const notTaken: string[] = [];
  if (requested === 'auto' && torch && !torch.ok) notTaken.push(`torch: ${torch.reason}`);
  if (backend !== 'torch') notTaken.push(...tfjs.attempts.filter((a) => !a.ok).map((a) => `${a.name}: ${a.reason}`));
  // auto without torch says so on the info line (the full reasons go to the debug line after "; not used: ")
  const noTorch = requested === 'auto' && torch && !torch.ok ? ': no Python with torch found' : '';
  const how = requested === 'auto' ? `auto${noTorch}` : `requested by ${source === 'config' ? 'the run config' : 'SPA_BACKEND'}`;
  const envThreads = process.env.SPA_TORCH_THREADS?.trim();
  const cpu = envThreads ? `CPU, ${envThreads} thread${envThreads === '1' ? '' : 's'} (SPA_TORCH_THREADS)` : 'CPU, all cores; 1 thread below 10M parameters';
  const what = backend === 'torch'
    ? `torch (${torch!.python}, torch ${torch!.torch}, ${torch!.cuda ? `CUDA ${torch!.device}` : torch!.mps ? 'Apple MPS' : cpu})`
    : tfjs.summary.replace(/^TF\.js backend: /, 'TF.js ').replace(/; not used: .*$/, '');
  const noEntry = backend === 'wasm' && workersWanted > 0 && !dpWorkerEntry();
  const workers = backend === 'wasm' && !noEntry ? workersWanted : 0;
  const threads = backend !== 'wasm' ? '' : `, ${workers + 1} thread${workers ? 's' : ''} (${workers} data-parallel worker${workers === 1 ? '' : 's'}`
    + `${noEntry ? `; ${workersWanted} wanted, but the worker module is missing (core/train/dp-worker-entry.ts or dist-electron/dp-worker.js)` : ''})`;
  const summary = `Compute backend: ${what}${threads} [${how}]${notTaken.length ? `; not used: ${notTaken.join('; ')}` : ''}`;
  chosen = { backend, requested, source, torch, tfjs, workers, summary };
  chosenKey = key;
  // the run's provenance (run.json): what computes the model, on which device
  recordCompute({ backend, device: backend === 'torch' ? (torch!.cuda ? `CUDA ${torch!.device}` : torch!.mps ? 'Apple MPS' : 'CPU')
    : backend === 'tensorflow-gpu' ? 'GPU (libtensorflow CUDA)' : backend === 'wasm' ? `CPU (${workers + 1} thread${workers ? 's' : ''})` : 'CPU' });
  opts.log?.(summary);
  return chosen;
}

/**
 * Initialise the run's backend (stages call this first) and set its memory settings (model.memory: the token budget per
 * micro-batch, gradient checkpointing, generation rows, frozen and checkpoint dtypes, optimizer moments, kept milestones),
 * which the runtimes read when they start a worker, split a training step or write a checkpoint; returns the summary line.
 */
export async function useBackend(config: RunConfig, log?: (line: string) => void): Promise<string> {
  setMemorySettings(config.model.memory);
  setChatSettings(config.model.chat);   // the folder chat's layout and date
  const choice = await chooseCompute(config.backend, { log, workers: config.workers });
  const misfit = autoBackendProblem(config, choice);   // auto never lands on a backend that cannot hold the model (core/train/auto-backend.ts)
  if (misfit) throw new Error(misfit);
  return choice.summary;
}

function onTorch(): TorchProbe | null {
  return chosen?.backend === 'torch' ? chosen.torch : null;
}

function tfjsInfo(): { backend: string; device: string } {
  const r = chosen?.tfjs;
  if (!r) return { backend: 'tfjs', device: 'unknown (useBackend was not called)' };
  const features = Object.entries(r.features).map(([k, v]) => `${k}=${v}`).join(', ');
  const workers = chosen?.workers ?? 0;
  const threads = workers > 0 ? `, ${workers + 1} threads` : '';
  return { backend: r.backend, device: `${r.backend}${features || threads ? ` (${features}${threads})` : ''}` };
}

/**
 * The pipeline's data-parallel worker module (it registers the pipeline's losses): the TypeScript
 * source in a checkout (run through tsx), else the desktop build's bundle next to dist-electron/;
 * null when neither is there.
 */
export function dpWorkerEntry(): string | null {
  const source = new URL('./dp-worker-entry.ts', import.meta.url);
  const bundled = new URL('../../dist-electron/dp-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(source))) return source.href;
  if (existsSync(fileURLToPath(bundled))) return bundled.href;
  return null;
}

/** Data-parallel workers for a TF.js runtime created now (none unless the chosen backend is wasm with workers). */
function tfjsParallel(): { workers: number; lossModules: string[]; entry: string } | null {
  const workers = chosen?.backend === 'wasm' ? chosen.workers : 0;
  const entry = dpWorkerEntry();
  return workers > 0 && entry ? { workers, lossModules: [], entry } : null;
}

/** A fresh model from the run's model preset (tiny models: character tokenizer); the same initial weights on every backend. */
export async function createRuntime(config: RunConfig, opts: { seed: number; valueHead: boolean }): Promise<ModelRuntime> {
  if (config.model.source !== 'preset') throw new Error(`createRuntime: model.source is ${config.model.source}; use loadRuntime for folders`);
  const tokenizer = buildCharTokenizer();
  const modelConfig = presetConfig(config.model.preset, { ...(config.model.overrides ?? {}), vocab_size: tokenizer.vocabSize, value_head: opts.valueHead });
  const model = new CausalLM(modelConfig, { seed: opts.seed });
  const torch = onTorch();
  if (!torch) return new TfjsRuntime(model, tokenizer, tfjsInfo(), true, tfjsParallel());
  try {
    const weights = new Map([...model.namedWeights()].map(([k, v]) => [k, { shape: [...v.shape], data: v.dataSync() as Float32Array }]));
    return await TorchRuntime.fromWeights(modelConfig, tokenizer, weights, { probe: torch, log: (l) => process.stderr.write(`${l}\n`) });
  } finally {
    model.dispose();
  }
}

/**
 * Load a checkpoint or HF folder (hashes verified, HF config defaults, sharded weights; LoRA
 * adapters on TF.js). `valueHead` adds a value head when the folder has none (it starts at zero
 * output, so it adds no noise to the first advantages). `resume` also restores the AdamW moments
 * saved with the checkpoint (and a shared-trunk value step's, which the next valueView takes), for continuing the same stage. Checkpoints are the same files on
 * every backend: one written on wasm resumes on torch and the reverse.
 */
export async function loadRuntime(dir: string, opts: { valueHead?: boolean; trainable?: boolean; resume?: boolean } = {}): Promise<ModelRuntime> {
  const torch = onTorch();
  if (torch) return TorchRuntime.fromFolder(dir, { ...opts, probe: torch, log: (l) => process.stderr.write(`${l}\n`) });
  const loaded = await loadCheckpoint(dir, { valueHead: opts.valueHead, model: { trainable: opts.trainable ?? true }, optimizer: opts.resume ?? false });
  const runtime = new TfjsRuntime(loaded.model, loaded.tokenizer, tfjsInfo(), true, tfjsParallel());
  if (opts.resume) {
    runtime.restoredOptimizerState = loaded.optimizerState;
    runtime.restoredValueOptimizerState = loaded.valueOptimizerState;   // a shared-trunk value step's moments (N6b)
  }
  return runtime;
}

/**
 * Write a checkpoint: weights, HF config, tokenizer, AdamW state and a manifest with hashes;
 * written to a temp folder, verified, and only then swapped in for the previous checkpoint.
 * `resumePoint` (default true): a stage resumes from this checkpoint, so under model.memory.optimizerState 'resume' it
 * carries the AdamW moments and f32 weights; false (a stage's final checkpoint, an RL milestone): weights only, in
 * model.memory.checkpointDtype (docs/checkpoints.md).
 */
export async function saveRuntime(
  runtime: ModelRuntime, dir: string, manifest: Record<string, unknown>, opts: { resumePoint?: boolean } = {},
): Promise<void> {
  const { stage, step, parent, metrics, ...extra } = manifest;
  const numeric = Object.fromEntries(
    Object.entries((metrics ?? {}) as Record<string, unknown>).filter(
      (e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1]),
    ),
  );
  const m: RuntimeManifest = {
    stage: typeof stage === 'string' ? stage : 'unknown',
    step: typeof step === 'number' && Number.isInteger(step) && step >= 0 ? step : 0,
    parent: typeof parent === 'string' ? parent : null,
    metrics: numeric,
    extra: { ...extra, compute: runtime.info },
  };
  await runtime.save(dir, m, { resumePoint: opts.resumePoint ?? true });
}

/**
 * Keep the newest model.memory.keepMilestones milestones `<prefix><n>` in a run's checkpoints folder (null: all); never removes
 * `protect` (the final checkpoint, the one the stage state points at). Returns the names removed.
 */
export async function pruneMilestones(checkpointsDir: string, prefix: string, protect: string[]): Promise<string[]> {
  const keep = memorySettings().keepMilestones;
  if (keep === null) return [];
  return pruneCheckpoints(checkpointsDir, prefix, keep, protect);
}

/** Remove a checkpoint folder that nothing resumes from any more (a finished stage's rl-latest); absent is fine. */
export async function removeCheckpoint(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
