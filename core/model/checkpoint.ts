// Checkpoints in the Hugging Face layout, so PyTorch/transformers read them and we read theirs:
//
//   <dir>/model.safetensors          base weights by HF key (F32 by default; F16/BF16 optional)
//        config.json                Qwen2 config (architectures ["Qwen2ForCausalLM"]); our extension
//                                   keys (value_head) are ignored by transformers
//        tokenizer.json, tokenizer_config.json, generation_config.json
//        adapter_model.safetensors, adapter_config.json   LoRA adapters in PEFT's format (when enabled)
//        optimizer.safetensors, optimizer.json            AdamW moments and step (when given)
//        optimizer.value.safetensors  the shared-trunk value step's own AdamW moments and step (an RL
//                                   resume point of PPO with model.criticMode 'shared'; when given)
//        manifest.json              parent, step, stage, metrics, created, sha-256 of every file
//
// Compatibility details: Qwen2 in transformers always has q/k/v biases, so a model configured
// without them is written with explicit zero biases (identical function); a value head is stored
// as `value_head.weight` / `value_head.bias` in model.safetensors (transformers reports them as
// unused keys and ignores them).
//
// Writes are atomic: everything goes to a temporary sibling folder, is verified (headers, shapes,
// hashes, tokenizer), and only then replaces `dir`; the previous checkpoint is kept until then.
import * as tf from '@tensorflow/tfjs';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { openRegularFile, readRegularText } from '../util/regular-file.js';
import { basename, dirname, join } from 'node:path';
import { configToJson, type ModelConfig } from './config.js';
import { type CausalLM, type CausalLMOptions } from './transformer.js';
import { loraConfigProblems, type LoraConfig } from './lora-config.js';
import type { OptimizerState } from './optim.js';
import { inspectHfFolder, loadHfModel, ModelFolderError, type GenerationDefaults, type HfFolderInfo } from './hf-load.js';
import { readSafetensors, SafetensorsReader, writeSafetensors, type LazyTensorData, type WritableDtype } from './safetensors.js';
import { loadTokenizer, type Tokenizer } from './tokenizer.js';

export const CHECKPOINT_FORMAT = 'spa-workbench-checkpoint';

/** The shared-trunk value step's AdamW moments in a resume point (named optimizer.* so a load without `optimizer` skips its hash). */
export const OPTIMIZER_VALUE_FILE = 'optimizer.value.safetensors';

export interface FileRecord { sha256: string; bytes: number }

export interface CheckpointManifest {
  format: typeof CHECKPOINT_FORMAT;
  version: 1;
  /** The checkpoint this one was trained from (a path or id), null for a fresh init or a pretrained import. */
  parent: string | null;
  step: number;
  stage: string;
  metrics: Record<string, number>;
  /** ISO time of writing. */
  created: string;
  weights: { file: 'model.safetensors'; sha256: string; bytes: number; dtype: WritableDtype; parameters: number };
  /** Every other file of the folder with its hash. */
  files: Record<string, FileRecord>;
  lora: LoraConfig | null;
  optimizerStep: number | null;
  /** The value step's optimizer step when optimizer.value.safetensors is present (absent in checkpoints without it). */
  valueOptimizerStep?: number;
  /** Free-form extras (e.g. the resolved stage config). */
  extra?: Record<string, unknown>;
}

/** Anything with AdamW's getState() (core/model/optim.ts). */
export interface OptimizerStateSource {
  getState(): OptimizerState;
  readonly beta1?: number;
  readonly beta2?: number;
  readonly eps?: number;
  readonly weightDecay?: number;
}

/**
 * Weights held elsewhere (the PyTorch worker): it writes model.safetensors (F32), under LoRA
 * adapter_model.safetensors (F32, PEFT names) and, when it has one, optimizer.safetensors into the
 * temp folder; the rest (config, adapter_config.json, tokenizer, hashes, manifest, verification,
 * the atomic swap) is the same as for a TF.js model.
 */
export interface ExternalWeights {
  config: ModelConfig;
  parameters: number;
  writeFiles(tmp: string): Promise<{
    optimizerStep: number | null;
    /** Set when the files include optimizer.value.safetensors (the value step's moments, SaveCheckpointOptions.valueOptimizer). */
    valueOptimizerStep?: number | null;
    optimizer?: { beta1: number; beta2: number; eps: number; weightDecay: number };
    /** Set when the files include adapter_model.safetensors. */
    lora?: LoraConfig | null;
    /** The dtype model.safetensors was written in (default F32). */
    dtype?: WritableDtype;
  }>;
}

export interface SaveCheckpointOptions {
  /** The TF.js model to write; or `external` (exactly one of the two). */
  model?: CausalLM;
  external?: ExternalWeights;
  tokenizer: Tokenizer;
  optimizer?: OptimizerStateSource;
  /**
   * The second AdamW of a shared-trunk value step (runtime.valueView), written to optimizer.value.safetensors so a resumed RL
   * stage continues the value step's moments and bias correction exactly (N6b). Only with `optimizer`.
   */
  valueOptimizer?: OptimizerStateSource;
  manifest: { parent?: string | null; step: number; stage: string; metrics?: Record<string, number>; extra?: Record<string, unknown> };
  /** Storage dtype of model.safetensors (default F32; optimizer state is always F32). */
  dtype?: WritableDtype;
  /** Write LoRA adapters folded into the base weights (no adapter files): an export for other tools. */
  mergeLora?: boolean;
  /** Sampling defaults for generation_config.json (eos/pad come from the tokenizer). */
  generation?: GenerationDefaults;
}

export class CheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointError';
  }
}

/** sha-256 of a file, streamed. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  // a regular file only: a FIFO listed in a manifest is refused unopened (core/util/regular-file.ts, issue 37 N11)
  const { handle } = await openRegularFile(path);
  try {
    for await (const chunk of handle.createReadStream({ autoClose: false })) hash.update(chunk as Buffer);
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

const TORCH_DTYPE: Record<WritableDtype, 'float32' | 'float16' | 'bfloat16'> = { F32: 'float32', F16: 'float16', BF16: 'bfloat16' };

/** The weights to write, read from the model one tensor at a time. */
function weightEntries(model: CausalLM, mergeLora: boolean): Map<string, LazyTensorData> {
  const out = new Map<string, LazyTensorData>();
  const lora = model.getLoraConfig();
  const adapters = model.loraWeights();
  for (const [name, variable] of model.namedWeights()) {
    const stem = `base_model.model.${name.replace(/\.weight$/, '')}`;
    const a = adapters.get(`${stem}.lora_A.weight`);
    const b = adapters.get(`${stem}.lora_B.weight`);
    if (mergeLora && lora && a && b) {
      const scale = lora.alpha / lora.rank;
      out.set(name, {
        shape: [...variable.shape],
        read: () => tf.tidy(() => tf.add(variable, tf.mul(tf.matMul(b, a), scale)).dataSync() as Float32Array),
      }); // [out, r] x [r, in]
    } else {
      out.set(name, { shape: [...variable.shape], read: () => variable.dataSync() as Float32Array });
    }
  }
  // transformers' Qwen2 always has q/k/v biases: write zeros for a bias-free model.
  if (!model.config.attention_bias) {
    for (const [name, variable] of model.namedWeights()) {
      const m = /^(model\.layers\.\d+\.self_attn\.[qkv]_proj)\.weight$/.exec(name);
      if (m) out.set(`${m[1]}.bias`, { shape: [variable.shape[0]], read: () => new Float32Array(variable.shape[0]) });
    }
  }
  return out;
}

function hfConfigJson(config: ModelConfig, tokenizer: Tokenizer, dtype: WritableDtype): Record<string, unknown> {
  return {
    ...configToJson(config),
    // the family the folder came in (a Llama/SmolLM2 or Qwen3 checkpoint stays one: its bias and norm layout follow model_type)
    ...hfArchitecture((config as { model_type?: string }).model_type ?? 'qwen2'),
    torch_dtype: TORCH_DTYPE[dtype],
    bos_token_id: tokenizer.bosTokenId ?? null,
    eos_token_id: tokenizer.eosTokenId,
    pad_token_id: tokenizer.padTokenId,
    use_cache: true,
    value_head: config.value_head,
  };
}

function hfArchitecture(modelType: string): { architectures: string[]; model_type: string } {
  const names: Record<string, string> = { qwen2: 'Qwen2ForCausalLM', qwen3: 'Qwen3ForCausalLM', llama: 'LlamaForCausalLM' };
  return { architectures: [names[modelType] ?? 'Qwen2ForCausalLM'], model_type: modelType };
}

async function writeJson(path: string, value: unknown): Promise<void> {
  await writeFile(path, JSON.stringify(value, null, 2) + '\n');
}

async function optimizerTensorCount(path: string): Promise<number> {
  const reader = await SafetensorsReader.open(path);
  await reader.close();
  return reader.header.tensors.size;
}

/** Writes a checkpoint into `dir` atomically and returns its manifest. */
export async function saveCheckpoint(dir: string, options: SaveCheckpointOptions): Promise<CheckpointManifest> {
  const { model, tokenizer, external } = options;
  if (!model === !external) throw new CheckpointError('saveCheckpoint: pass exactly one of model and external');
  const config = model ? model.config : external!.config;
  let dtype = options.dtype ?? 'F32';
  if (external && dtype !== 'F32') throw new CheckpointError(`saveCheckpoint: a worker writes its weights in the dtype it reports, not ${dtype}`);
  if (!['F32', 'F16', 'BF16'].includes(dtype)) throw new CheckpointError(`saveCheckpoint: dtype must be F32, F16 or BF16, got ${JSON.stringify(dtype)}`);
  if (!Number.isInteger(options.manifest.step) || options.manifest.step < 0) {
    throw new CheckpointError(`saveCheckpoint: manifest.step must be a non-negative integer, got ${JSON.stringify(options.manifest.step)}`);
  }
  if (tokenizer.vocabSize > config.vocab_size) {
    throw new CheckpointError(`saveCheckpoint: the tokenizer has ${tokenizer.vocabSize} tokens but the model's vocab_size is ${config.vocab_size}`);
  }
  await mkdir(dirname(dir), { recursive: true });
  const tmp = join(dirname(dir), `.${basename(dir)}.tmp-${process.pid}-${Date.now().toString(36)}`);
  await mkdir(tmp);
  try {
    let lora = options.mergeLora || !model ? null : model.getLoraConfig();
    const written = new Map<string, { sha256: string; bytes: number }>();
    let optimizerStep: number | null = null;
    let valueOptimizerStep: number | null = null;
    if (model) {
      const weights = weightEntries(model, options.mergeLora ?? false);
      written.set('model.safetensors', await writeSafetensors(join(tmp, 'model.safetensors'), weights, { dtype, metadata: { format: 'pt' } }));
    } else {
      const r = await external!.writeFiles(tmp);
      optimizerStep = r.optimizerStep;
      valueOptimizerStep = r.valueOptimizerStep ?? null;
      if (valueOptimizerStep !== null && !existsSync(join(tmp, OPTIMIZER_VALUE_FILE)))
        throw new CheckpointError(`saveCheckpoint: the worker reported value-step moments but wrote no ${OPTIMIZER_VALUE_FILE}`);
      lora = r.lora ?? null;
      dtype = r.dtype ?? 'F32';
      if (!['F32', 'F16', 'BF16'].includes(dtype)) throw new CheckpointError(`saveCheckpoint: the worker reported dtype ${JSON.stringify(dtype)}`);
      if (lora && !existsSync(join(tmp, 'adapter_model.safetensors')))
        throw new CheckpointError('saveCheckpoint: the worker reported LoRA adapters but wrote no adapter_model.safetensors');
      if (r.optimizer && optimizerStep !== null) {
        const o = r.optimizer;
        await writeJson(join(tmp, 'optimizer.json'), {
          type: 'AdamW', step: optimizerStep,
          hyperparameters: { beta1: o.beta1, beta2: o.beta2, eps: o.eps, weight_decay: o.weightDecay },
          tensors: await optimizerTensorCount(join(tmp, 'optimizer.safetensors')),
        });
      }
    }
    await writeJson(join(tmp, 'config.json'), hfConfigJson(config, tokenizer, dtype));
    await tokenizer.save(tmp);
    const g = options.generation ?? {};
    await writeJson(join(tmp, 'generation_config.json'), {
      bos_token_id: tokenizer.bosTokenId ?? null,
      eos_token_id: g.eosTokenIds ?? tokenizer.stopTokenIds,
      pad_token_id: g.padTokenId ?? tokenizer.padTokenId,
      do_sample: g.doSample ?? true,
      temperature: g.temperature ?? 1.0,
      ...(g.topP !== undefined ? { top_p: g.topP } : {}),
      ...(g.topK !== undefined ? { top_k: g.topK } : {}),
      ...(g.maxNewTokens !== undefined ? { max_new_tokens: g.maxNewTokens } : {}),
      ...(g.repetitionPenalty !== undefined ? { repetition_penalty: g.repetitionPenalty } : {}),
    });
    if (lora && model) {
      const adapters = new Map<string, LazyTensorData>();
      for (const [name, v] of model.loraWeights()) adapters.set(name, { shape: [...v.shape], read: () => v.dataSync() as Float32Array });
      written.set('adapter_model.safetensors', await writeSafetensors(join(tmp, 'adapter_model.safetensors'), adapters, { dtype: 'F32' }));
    }
    if (lora) {
      await writeJson(join(tmp, 'adapter_config.json'), {
        peft_type: 'LORA', task_type: 'CAUSAL_LM', r: lora.rank, lora_alpha: lora.alpha, target_modules: lora.targetModules,
        lora_dropout: 0, bias: 'none', fan_in_fan_out: false, inference_mode: true, base_model_name_or_path: null,
      });
    }
    if (options.optimizer && model) {
      const state = options.optimizer.getState();
      optimizerStep = state.step;
      written.set(
        'optimizer.safetensors',
        await writeSafetensors(join(tmp, 'optimizer.safetensors'), state.tensors, {
          dtype: 'F32',
          metadata: { format: 'pt', step: String(state.step) },
        }),
      );
      const o = options.optimizer;
      await writeJson(join(tmp, 'optimizer.json'), {
        type: 'AdamW', step: state.step,
        hyperparameters: { beta1: o.beta1, beta2: o.beta2, eps: o.eps, weight_decay: o.weightDecay },
        tensors: state.tensors.size,
      });
      if (options.valueOptimizer) {
        const value = options.valueOptimizer.getState();
        valueOptimizerStep = value.step;
        written.set(OPTIMIZER_VALUE_FILE, await writeSafetensors(join(tmp, OPTIMIZER_VALUE_FILE), value.tensors, {
          dtype: 'F32', metadata: { format: 'pt', step: String(value.step) },
        }));
      }
    }
    // Hashes of everything as read back from disk; binary files must match the bytes we sent.
    const files: Record<string, FileRecord> = {};
    for (const name of (await readdir(tmp)).sort()) {
      const path = join(tmp, name);
      files[name] = { sha256: await sha256File(path), bytes: (await stat(path)).size };
      const sent = written.get(name);
      if (sent && (sent.sha256 !== files[name].sha256 || sent.bytes !== files[name].bytes)) {
        throw new CheckpointError(
          `${path}: verification failed: the file on disk (${files[name].bytes} bytes, sha-256 ${files[name].sha256.slice(0, 12)}…) differs from ` +
            `what was written (${sent.bytes} bytes, ${sent.sha256.slice(0, 12)}…); check the disk`,
        );
      }
    }
    const weightsRecord = files['model.safetensors'];
    delete files['model.safetensors'];
    const manifest: CheckpointManifest = {
      format: CHECKPOINT_FORMAT,
      version: 1,
      parent: options.manifest.parent ?? null,
      step: options.manifest.step,
      stage: options.manifest.stage,
      metrics: options.manifest.metrics ?? {},
      created: new Date().toISOString(),
      weights: {
        file: 'model.safetensors', sha256: weightsRecord.sha256, bytes: weightsRecord.bytes, dtype,
        parameters: model ? model.parameterCount() : external!.parameters,
      },
      files,
      lora,
      optimizerStep,
      ...(valueOptimizerStep !== null ? { valueOptimizerStep } : {}),
      ...(options.manifest.extra ? { extra: options.manifest.extra } : {}),
    };
    await writeJson(join(tmp, 'manifest.json'), manifest);

    // Verify the new folder before it replaces anything: hashes (above), headers, names and
    // shapes against config.json, and the tokenizer loads.
    await inspectHfFolder(tmp);
    await loadTokenizer(tmp);

    // Swap: keep the previous checkpoint until the new one is in place.
    const old = join(dirname(dir), `.${basename(dir)}.old-${process.pid}-${Date.now().toString(36)}`);
    const hadOld = existsSync(dir);
    if (hadOld) await rename(dir, old);
    try {
      await rename(tmp, dir);
    } catch (err) {
      if (hadOld) await rename(old, dir);
      throw err;
    }
    if (hadOld) await rm(old, { recursive: true, force: true });
    return manifest;
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** Reads manifest.json (null when the folder has none, e.g. a plain Hugging Face folder). */
export async function readManifest(dir: string): Promise<CheckpointManifest | null> {
  const path = join(dir, 'manifest.json');
  if (!existsSync(path)) return null;
  let value: unknown;
  // a regular file only (a FIFO in a model folder is refused unopened: core/util/regular-file.ts, issue 37 N11)
  const text = await readRegularText(path, { maxBytes: 64 * 1024 ** 2, what: 'manifest.json' })
    .catch((err: Error) => { throw new CheckpointError(err.message); });
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CheckpointError(`${path}: not valid JSON (${(err as Error).message})`);
  }
  const m = value as Partial<CheckpointManifest>;
  if (!m || m.format !== CHECKPOINT_FORMAT)
    throw new CheckpointError(`${path}: key "format": expected "${CHECKPOINT_FORMAT}", got ${JSON.stringify(m?.format)}`);
  if (!Number.isInteger(m.step)) throw new CheckpointError(`${path}: key "step": expected an integer, got ${JSON.stringify(m.step)}`);
  if (!m.weights || typeof m.weights.sha256 !== 'string')
    throw new CheckpointError(`${path}: key "weights.sha256": expected the hash of model.safetensors, got ${JSON.stringify(m.weights)}`);
  if (!m.files || typeof m.files !== 'object') throw new CheckpointError(`${path}: key "files": expected an object of file → { sha256, bytes }`);
  return m as CheckpointManifest;
}

/**
 * Checks files against manifest.json's hashes (all of them, or those `include` accepts).
 * Returns the problems (empty = intact).
 */
export async function verifyCheckpoint(dir: string, include: (file: string) => boolean = () => true): Promise<string[]> {
  const manifest = await readManifest(dir);
  if (!manifest) return [`${join(dir, 'manifest.json')}: missing manifest`];
  const problems: string[] = [];
  const expected: Record<string, FileRecord> = { ...manifest.files, 'model.safetensors': { sha256: manifest.weights.sha256, bytes: manifest.weights.bytes } };
  for (const [name, record] of Object.entries(expected)) {
    if (!include(name)) continue;
    const path = join(dir, name);
    if (!existsSync(path)) { problems.push(`${path}: missing (listed in manifest.json)`); continue; }
    const hash = await sha256File(path);
    if (hash !== record.sha256)
      problems.push(
        `${path}: sha-256 ${hash.slice(0, 12)}… does not match manifest.json (${record.sha256.slice(0, 12)}…): the file was modified or corrupted`,
      );
  }
  return problems;
}

export interface LoadCheckpointOptions {
  /** Check the hashes of the files read against manifest.json first (default true when a manifest exists). */
  verify?: boolean;
  model?: Omit<CausalLMOptions, 'init'>;
  /** Add a fresh value head when the checkpoint has none. */
  valueHead?: boolean;
  /** Read optimizer.safetensors if present (default true). */
  optimizer?: boolean;
}

export interface LoadedCheckpoint {
  model: CausalLM;
  tokenizer: Tokenizer;
  manifest: CheckpointManifest | null;
  /** For AdamW.setState (null when the checkpoint has no optimizer state). */
  optimizerState: OptimizerState | null;
  /** The shared-trunk value step's moments (optimizer.value.safetensors), for the value view's AdamW; null when absent or not read. */
  valueOptimizerState: OptimizerState | null;
  info: HfFolderInfo;
}

/** Loads a checkpoint written by saveCheckpoint (or any Qwen2 folder, without manifest/optimizer). */
export async function loadCheckpoint(dir: string, options: LoadCheckpointOptions = {}): Promise<LoadedCheckpoint> {
  const manifest = await readManifest(dir);
  if (manifest && (options.verify ?? true)) {
    // Only the files this load reads (the optimizer state can be twice the weights).
    const readsOptimizer = options.optimizer ?? true;
    const problems = await verifyCheckpoint(dir, (file) => readsOptimizer || !file.startsWith('optimizer.'));
    if (problems.length) throw new CheckpointError(`${dir}: checkpoint is damaged: ${problems.join('; ')}`);
  }
  const loaded = await loadHfModel(dir, { model: options.model, valueHead: options.valueHead, tokenizer: true });
  const model = loaded.model;
  try {
    const adapterConfigPath = join(dir, 'adapter_config.json');
    if (existsSync(adapterConfigPath)) await loadAdapters(model, dir, adapterConfigPath, options.model?.seed);
    const readsOptimizer = options.optimizer ?? true;
    const optimizerState = readsOptimizer ? await readOptimizerState(join(dir, 'optimizer.safetensors'), manifest?.optimizerStep) : null;
    const valueOptimizerState = readsOptimizer ? await readOptimizerState(join(dir, OPTIMIZER_VALUE_FILE), manifest?.valueOptimizerStep) : null;
    return { model, tokenizer: loaded.tokenizer!, manifest, optimizerState, valueOptimizerState, info: loaded.info };
  } catch (err) {
    model.dispose();
    throw err;
  }
}

/** AdamW moments and step from an optimizer safetensors file (its `step` metadata, else `fallbackStep`); null when absent. */
async function readOptimizerState(path: string, fallbackStep: number | null | undefined): Promise<OptimizerState | null> {
  if (!existsSync(path)) return null;
  const tensors = await readSafetensors(path);
  const reader = await SafetensorsReader.open(path);
  await reader.close();
  const step = Number(reader.header.metadata.step ?? fallbackStep ?? NaN);
  if (!Number.isInteger(step))
    throw new CheckpointError(
      `${path}: key "__metadata__.step": expected the optimizer step as an integer string, got ${JSON.stringify(reader.header.metadata.step)}`,
    );
  return { step, tensors };
}

/** The LoRA settings of a folder's adapter_config.json (PEFT's keys r, lora_alpha, target_modules), checked. */
export async function readAdapterConfig(configPath: string): Promise<LoraConfig> {
  let raw: Record<string, unknown>;
  const text = await readRegularText(configPath, { maxBytes: 1024 ** 2, what: 'adapter_config.json' })
    .catch((err: Error) => { throw new ModelFolderError(err.message); });
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new ModelFolderError(`${configPath}: not valid JSON (${(err as Error).message})`);
  }
  const rank = raw.r;
  const alpha = raw.lora_alpha;
  const targets = raw.target_modules;
  if (!Number.isInteger(rank) || (rank as number) <= 0)
    throw new ModelFolderError(`${configPath}: key "r": expected a positive integer, got ${JSON.stringify(rank)}`);
  if (typeof alpha !== 'number' || alpha <= 0)
    throw new ModelFolderError(`${configPath}: key "lora_alpha": expected a positive number, got ${JSON.stringify(alpha)}`);
  if (!Array.isArray(targets) || !targets.every((t) => typeof t === 'string'))
    throw new ModelFolderError(`${configPath}: key "target_modules": expected a list of module names, got ${JSON.stringify(targets)}`);
  const lora: LoraConfig = { rank: rank as number, alpha, targetModules: targets as string[] };
  const problems = loraConfigProblems(lora, 'adapter');
  if (problems.length) throw new ModelFolderError(`${configPath}: ${problems.join('; ')}`);
  return lora;
}

async function loadAdapters(model: CausalLM, dir: string, configPath: string, seed?: number): Promise<void> {
  model.enableLora(await readAdapterConfig(configPath), seed ?? 0);
  const weightsPath = join(dir, 'adapter_model.safetensors');
  if (!existsSync(weightsPath)) throw new ModelFolderError(`${weightsPath}: missing (adapter_config.json is present)`);
  const stored = await readSafetensors(weightsPath);
  for (const [name, variable] of model.loraWeights()) {
    const t = stored.get(name);
    if (!t) throw new ModelFolderError(`${weightsPath}: missing tensor "${name}"`);
    if (t.shape.join(',') !== variable.shape.join(','))
      throw new ModelFolderError(`${weightsPath}: tensor "${name}" has shape [${t.shape.join(', ')}], expected [${variable.shape.join(', ')}]`);
    tf.tidy(() => variable.assign(tf.tensor(t.data, t.shape, 'float32')));
  }
}

/**
 * Remove all but the newest `keep` checkpoints named `<prefix><n>` (n a whole number) in `checkpointsDir`, never one named
 * in `protect`; returns the names removed, oldest first. Bounds the milestones a long run leaves on disk.
 */
export async function pruneCheckpoints(checkpointsDir: string, prefix: string, keep: number, protect: string[] = []): Promise<string[]> {
  if (!Number.isInteger(keep) || keep < 0) throw new CheckpointError(`pruneCheckpoints: keep must be a whole number >= 0, got ${JSON.stringify(keep)}`);
  if (!existsSync(checkpointsDir)) return [];
  const pattern = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\d+)$`);
  const kept = new Set(protect.map((p) => basename(p)));
  const milestones = (await readdir(checkpointsDir))
    .map((name) => ({ name, n: Number(pattern.exec(name)?.[1] ?? NaN) }))
    .filter((m) => Number.isFinite(m.n) && !kept.has(m.name))
    .sort((a, b) => a.n - b.n);
  const removed = milestones.slice(0, Math.max(0, milestones.length - keep)).map((m) => m.name);
  for (const name of removed) await rm(join(checkpointsDir, name), { recursive: true, force: true });
  return removed;
}
