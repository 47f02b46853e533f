// Loading a local Hugging Face folder of the Qwen2 / Qwen2.5, Qwen3 or Llama (3.x, SmolLM2) family
// (and our own checkpoints, which use the same layout): config.json, model.safetensors or shards + model.safetensors.index.json,
// tokenizer.json (+ tokenizer_config.json), generation_config.json.
//
// Everything is validated before any weight is read: the config is mapped to ModelConfig,
// every safetensors header is parsed, and the tensor names and shapes the config implies are
// checked against them, so a bad folder fails fast with an error naming the file and the key.
// Weights are then streamed one tensor at a time into the model's variables (a 1.5B model
// never has a second full copy of its weights in JS memory).
import * as tf from '@tensorflow/tfjs';
import { existsSync, statSync } from 'node:fs';
import { FileTooLargeError, NotRegularFileError, readRegularText } from '../util/regular-file.js';
import { join } from 'node:path';
import { hfTensorSpecs, MODEL_FAMILIES, parseModelConfig, tfjsUnsupported, type ModelConfig, type ModelFamily } from './config.js';
import { CausalLM, type CausalLMOptions } from './transformer.js';
import { wasmFitProblem } from './memory.js';
import { SafetensorsReader, type SafetensorsDtype } from './safetensors.js';
import { loadTokenizer, type Tokenizer } from './tokenizer.js';

export class ModelFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelFolderError';
  }
}

/** Sampling defaults from generation_config.json (all optional). */
export interface GenerationDefaults {
  eosTokenIds?: number[];
  padTokenId?: number;
  bosTokenId?: number;
  doSample?: boolean;
  temperature?: number;
  topP?: number;
  topK?: number;
  maxNewTokens?: number;
  repetitionPenalty?: number;
}

export interface StoredTensor { file: string; storedName: string; dtype: SafetensorsDtype; shape: number[] }

/** Where each tensor lives and what the folder holds (headers only; no weights read). */
export interface HfFolderInfo {
  dir: string;
  config: ModelConfig;
  /** config.json as written (unknown keys kept). */
  rawConfig: Record<string, unknown>;
  /** Weight files, relative to dir. */
  weightFiles: string[];
  sharded: boolean;
  /** Tensor by canonical HF key → where it is stored (file, name in that file), dtype and shape. */
  tensors: Map<string, StoredTensor>;
  /** Storage dtypes found, with counts. */
  dtypes: Record<string, number>;
  /** Bytes of all weight files. */
  weightBytes: number;
  parameterCount: number;
  hasTokenizer: boolean;
  generation: GenerationDefaults | null;
}

/**
 * Size limits of a model folder's JSON files (bytes), checked before they are read: real config.json
 * and generation_config.json files are 1-2 KB, the index of a 405B model's shards ~100 KB.
 */
export const MODEL_JSON_MAX_BYTES = { config: 1024 ** 2, generation: 1024 ** 2, index: 64 * 1024 ** 2 } as const;

/**
 * A model folder's JSON file: a regular file (a FIFO or device is refused unopened, never read:
 * core/util/regular-file.ts) of at most `maxBytes`, parsed to an object; null when missing and not required.
 */
async function readJson(path: string, what: string, required: boolean, maxBytes: number): Promise<Record<string, unknown> | null> {
  if (!existsSync(path)) {
    if (!required) return null;
    throw new ModelFolderError(`${path}: missing ${what}`);
  }
  let text: string;
  try {
    text = await readRegularText(path, { maxBytes, what: `a model folder's ${what}` });
  } catch (err) {
    if (err instanceof NotRegularFileError || err instanceof FileTooLargeError) throw new ModelFolderError(err.message);
    throw new ModelFolderError(`${path}: cannot read ${what} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ModelFolderError(`${path}: ${what} is not valid JSON (${(err as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ModelFolderError(`${path}: ${what} must be a JSON object, got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}`);
  }
  return value as Record<string, unknown>;
}

/** Per family: the architectures names transformers uses, and the defaults of its config class that differ from ours. */
const FAMILY: Record<ModelFamily, { architecture: string; pattern: RegExp; defaults: Record<string, unknown> }> = {
  // Qwen2Config: tie false, qkv bias always, max positions 32768
  qwen2: { architecture: 'Qwen2ForCausalLM', pattern: /^Qwen2(ForCausalLM|Model)$/,
    defaults: { max_position_embeddings: 32768, rope_theta: 10000, rms_norm_eps: 1e-6, tie_word_embeddings: false, attention_bias: true } },
  // Qwen3Config: no qkv bias, head_dim 128, per-head q/k RMSNorm
  qwen3: { architecture: 'Qwen3ForCausalLM', pattern: /^Qwen3(ForCausalLM|Model)$/,
    defaults: { max_position_embeddings: 32768, rope_theta: 10000, rms_norm_eps: 1e-6, tie_word_embeddings: false, attention_bias: false, head_dim: 128 } },
  // LlamaConfig (Llama 2/3.x, SmolLM2): no bias, max positions 2048
  llama: { architecture: 'LlamaForCausalLM', pattern: /^Llama(ForCausalLM|Model)$/,
    defaults: { max_position_embeddings: 2048, rope_theta: 10000, rms_norm_eps: 1e-6, tie_word_embeddings: false, attention_bias: false } },
};

/**
 * Maps a Hugging Face config.json object (model_type qwen2, qwen3 or llama) to ModelConfig, filling
 * the defaults of that family's transformers config class (which differ from our presets: e.g.
 * tie_word_embeddings false). Anything this code does not run is refused naming the key and value.
 */
export function hfConfigToModelConfig(raw: Record<string, unknown>, source = 'config.json'): ModelConfig {
  const bad = (key: string, expected: string): never => {
    throw new ModelFolderError(`${source}: key "${key}": expected ${expected}, got ${JSON.stringify(raw[key])}`);
  };
  const architectures = raw.architectures;
  if (architectures !== undefined && (!Array.isArray(architectures) || !architectures.every((a) => typeof a === 'string'))) {
    bad('architectures', 'an array of strings such as ["Qwen2ForCausalLM"]');
  }
  let family: ModelFamily;
  if (raw.model_type === undefined) {
    // older configs: the family from architectures, else Qwen2
    const arch = Array.isArray(architectures) ? (architectures as string[]) : [];
    family = MODEL_FAMILIES.find((f) => arch.some((a) => FAMILY[f].pattern.test(a))) ?? 'qwen2';
  } else if (typeof raw.model_type === 'string' && (MODEL_FAMILIES as readonly string[]).includes(raw.model_type)) {
    family = raw.model_type as ModelFamily;
  } else {
    return bad('model_type', `one of ${MODEL_FAMILIES.map((f) => `"${f}"`).join(', ')} ` +
      '(Qwen2 / Qwen2.5, Qwen3, Llama 2/3.x and SmolLM2 decoders load; other families do not)');
  }
  const fam = FAMILY[family];
  if (Array.isArray(architectures) && architectures.length && !architectures.some((a) => fam.pattern.test(a as string))) {
    bad('architectures', `to contain "${fam.architecture}" (model_type is "${family}")`);
  }
  for (const key of ['hidden_size', 'num_hidden_layers', 'num_attention_heads', 'vocab_size', 'intermediate_size']) {
    if (raw[key] === undefined) throw new ModelFolderError(`${source}: missing required key "${key}"`);
    if (!Number.isInteger(raw[key]) || (raw[key] as number) <= 0) bad(key, 'a positive integer');
  }
  // Python writes float('nan') as NaN (not JSON) and None as null: a null here would silently become the family's default
  for (const key of ['rope_theta', 'rms_norm_eps']) if (raw[key] === null) bad(key, 'a positive number');
  let ropeScaling: Record<string, unknown> | null = null;
  if (raw.rope_scaling !== undefined && raw.rope_scaling !== null) {
    const rs = raw.rope_scaling as Record<string, unknown>;
    const kind = typeof rs === 'object' && !Array.isArray(rs) ? (rs.rope_type ?? rs.type) : undefined;
    if (kind === 'default') ropeScaling = null;
    else if (kind === 'llama3' && family === 'llama') {
      for (const k of ['factor', 'low_freq_factor', 'high_freq_factor', 'original_max_position_embeddings']) {
        if (typeof rs[k] !== 'number' || !((rs[k] as number) > 0)) {
          throw new ModelFolderError(`${source}: key "rope_scaling.${k}": expected a positive number, got ${JSON.stringify(rs[k])}`);
        }
      }
      ropeScaling = { ...rs, rope_type: 'llama3' };
      delete ropeScaling.type;
    } else {
      throw new ModelFolderError(`${source}: key "rope_scaling": rope_type ${JSON.stringify(kind)} is not supported for model_type "${family}" ` +
        '(supported: null, "default", and "llama3" on Llama; YaRN, linear and dynamic scaling are not)');
    }
  }
  if (raw.hidden_act !== undefined && raw.hidden_act !== 'silu') bad('hidden_act', '"silu"');
  if (raw.mlp_bias !== undefined && raw.mlp_bias !== false) bad('mlp_bias', 'false (MLP projections with bias are not supported)');
  if (raw.pretraining_tp !== undefined && raw.pretraining_tp !== 1 && raw.pretraining_tp !== null) bad('pretraining_tp', '1');
  const dtype = raw.torch_dtype ?? raw.dtype;
  const d = fam.defaults;
  const mapped: Record<string, unknown> = {
    ...raw,
    architectures: [fam.architecture],
    model_type: family,
    num_key_value_heads: raw.num_key_value_heads ?? raw.num_attention_heads,
    max_position_embeddings: raw.max_position_embeddings ?? d.max_position_embeddings,
    rope_theta: raw.rope_theta ?? d.rope_theta,
    rms_norm_eps: raw.rms_norm_eps ?? d.rms_norm_eps,
    tie_word_embeddings: raw.tie_word_embeddings ?? d.tie_word_embeddings,
    attention_bias: family === 'qwen2' ? true : (raw.attention_bias ?? d.attention_bias),   // Qwen2's q/k/v always carry a bias
    torch_dtype: dtype === 'float16' || dtype === 'bfloat16' ? dtype : 'float32',
    use_sliding_window: raw.use_sliding_window ?? false,
  };
  if (raw.head_dim !== undefined && raw.head_dim !== null) mapped.head_dim = raw.head_dim;
  else if (d.head_dim !== undefined) mapped.head_dim = d.head_dim;
  else delete mapped.head_dim;
  delete mapped.dtype;
  if (ropeScaling) mapped.rope_scaling = ropeScaling;
  else delete mapped.rope_scaling;
  try {
    return parseModelConfig(mapped, source);
  } catch (err) {
    throw new ModelFolderError((err as Error).message);
  }
}

/** Reads generation_config.json (validated) into GenerationDefaults. */
export function parseGenerationConfig(raw: Record<string, unknown>, source: string): GenerationDefaults {
  const out: GenerationDefaults = {};
  const num = (key: string, check: (v: number) => boolean, expected: string): number | undefined => {
    const v = raw[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !check(v)) throw new ModelFolderError(`${source}: key "${key}": expected ${expected}, got ${JSON.stringify(v)}`);
    return v;
  };
  const eos = raw.eos_token_id;
  if (eos !== undefined && eos !== null) {
    const list = Array.isArray(eos) ? eos : [eos];
    if (!list.every((x) => Number.isInteger(x) && x >= 0))
      throw new ModelFolderError(`${source}: key "eos_token_id": expected a token id or a list of ids, got ${JSON.stringify(eos)}`);
    out.eosTokenIds = list as number[];
  }
  const isId = (v: number) => Number.isInteger(v) && v >= 0;
  out.padTokenId = num('pad_token_id', isId, 'a token id');
  out.bosTokenId = num('bos_token_id', isId, 'a token id');
  out.temperature = num('temperature', (v) => v >= 0, 'a number >= 0');
  out.topP = num('top_p', (v) => v > 0 && v <= 1, 'a number in (0, 1]');
  out.topK = num('top_k', (v) => Number.isInteger(v) && v >= 0, 'an integer >= 0');
  out.maxNewTokens = num('max_new_tokens', (v) => Number.isInteger(v) && v > 0, 'a positive integer');
  out.repetitionPenalty = num('repetition_penalty', (v) => v > 0, 'a number > 0');
  if (raw.do_sample !== undefined) {
    if (typeof raw.do_sample !== 'boolean')
      throw new ModelFolderError(`${source}: key "do_sample": expected true or false, got ${JSON.stringify(raw.do_sample)}`);
    out.doSample = raw.do_sample;
  }
  for (const k of Object.keys(out) as (keyof GenerationDefaults)[]) if (out[k] === undefined) delete out[k];
  return out;
}

/** The tensor names and shapes a config implies (HF keys, HF layout). */
export function expectedTensors(config: ModelConfig): Map<string, number[]> {
  return hfTensorSpecs(config);
}

/** Normalises stored tensor names: bare Qwen2Model keys (`layers.0...`) get the `model.` prefix. */
function canonicalName(name: string, hasModelPrefix: boolean): string {
  if (hasModelPrefix || name === 'lm_head.weight' || name.startsWith('value_head.') || name.startsWith('model.')) return name;
  return `model.${name}`;
}

/** The folder's weight files: the shards of model.safetensors.index.json (each checked to exist), or model.safetensors. */
async function weightFilesOf(dir: string): Promise<{ indexPath: string; singlePath: string; weightFiles: string[]; weightMap: Record<string, string> | null }> {
  const indexPath = join(dir, 'model.safetensors.index.json');
  const singlePath = join(dir, 'model.safetensors');
  let weightFiles: string[];
  let weightMap: Record<string, string> | null = null;
  if (existsSync(indexPath)) {
    const index = (await readJson(indexPath, 'safetensors index', true, MODEL_JSON_MAX_BYTES.index))!;
    const map = index.weight_map;
    if (!map || typeof map !== 'object' || Array.isArray(map)) {
      throw new ModelFolderError(`${indexPath}: key "weight_map": expected an object of tensor name → shard file, got ${JSON.stringify(map)?.slice(0, 80)}`);
    }
    for (const [name, file] of Object.entries(map as Record<string, unknown>)) {
      if (typeof file !== 'string' || file.includes('/') || file.includes('\\') || !file.endsWith('.safetensors')) {
        throw new ModelFolderError(`${indexPath}: key "weight_map.${name}": expected a .safetensors file name in this folder, got ${JSON.stringify(file)}`);
      }
    }
    weightMap = map as Record<string, string>;
    weightFiles = [...new Set(Object.values(weightMap))].sort();
    for (const f of weightFiles) {
      if (!existsSync(join(dir, f))) {
        const example = Object.entries(weightMap).find(([, file]) => file === f)![0];
        throw new ModelFolderError(`${join(dir, f)}: missing shard listed in ${indexPath} (e.g. for "weight_map.${example}")`);
      }
    }
  } else if (existsSync(singlePath)) {
    weightFiles = ['model.safetensors'];
  } else {
    const hasBin = existsSync(join(dir, 'pytorch_model.bin')) || existsSync(join(dir, 'pytorch_model.bin.index.json'));
    throw new ModelFolderError(`${singlePath}: missing weights: expected model.safetensors or model.safetensors.index.json with shards` +
      (hasBin ? '; found PyTorch .bin weights, which are not supported: re-save them with save_pretrained(..., safe_serialization=True)' : ''));
  }

  return { indexPath, singlePath, weightFiles, weightMap };
}

/** Names, shapes and dtypes of the stored tensors against what config.json implies; all problems in one error. */
function checkTensorsAgainstConfig(
  dir: string, config: ReturnType<typeof hfConfigToModelConfig>, tensors: Map<string, StoredTensor>, where: string,
): ReturnType<typeof expectedTensors> {
  // Names and shapes against the config.
  const expected = expectedTensors(config);
  const problems: string[] = [];
  for (const [name, shape] of expected) {
    const have = tensors.get(name);
    if (!have) {
      if (name.startsWith('value_head.')) continue;                     // a fresh value head is initialised
      if (name.endsWith('_proj.bias') && !config.attention_bias) continue;
      problems.push(`${where}: missing tensor "${name}" (shape [${shape.join(', ')}])` +
        (name === 'lm_head.weight' ? ' — config.json says tie_word_embeddings: false; set it to true if the head shares the embeddings' : ''));
      continue;
    }
    if (have.shape.join(',') !== shape.join(',')) {
      problems.push(`${join(dir, have.file)}: tensor "${name}" has shape [${have.shape.join(', ')}] but config.json implies [${shape.join(', ')}]`);
    }
    if (!['F32', 'F16', 'BF16', 'F64'].includes(have.dtype)) {
      problems.push(`${join(dir, have.file)}: tensor "${name}" has dtype ${have.dtype}; expected F32, F16, BF16 or F64 (quantised weights are not supported)`);
    }
  }
  if (problems.length) {
    throw new ModelFolderError(problems.slice(0, 6).join('; ') + (problems.length > 6 ? `; and ${problems.length - 6} more` : '') +
      '. Check that config.json belongs to these weights.');
  }

  return expected;
}

/**
 * config.json's num_hidden_layers against the layers the weights hold (`model.layers.<i>.*`), before
 * anything per layer is built from it (a config claiming 2^20 layers over a 1-layer file is refused here).
 */
function checkLayerCount(config: ModelConfig, tensors: Map<string, StoredTensor>, configPath: string): void {
  let stored = 0;
  for (const name of tensors.keys()) {
    const m = /^model\.layers\.(\d+)\./.exec(name);
    if (m) stored = Math.max(stored, Number(m[1]) + 1);
  }
  if (config.num_hidden_layers > stored) {
    throw new ModelFolderError(`${configPath}: key "num_hidden_layers" is ${config.num_hidden_layers} but the weights hold ${stored} layer(s) ` +
      '(model.layers.<i>.*). Check that config.json belongs to these weights.');
  }
}

/** Validates a model folder and indexes its tensors, reading only JSON files and safetensors headers. */
export async function inspectHfFolder(dir: string): Promise<HfFolderInfo> {
  if (!existsSync(dir)) throw new ModelFolderError(`${dir}: model folder does not exist`);
  if (!statSync(dir).isDirectory()) throw new ModelFolderError(`${dir}: expected a model folder (config.json, model.safetensors, tokenizer.json), got a file`);
  const configPath = join(dir, 'config.json');
  const rawConfig = (await readJson(configPath, 'config.json (the model configuration; every Hugging Face model folder has one)', true,
    MODEL_JSON_MAX_BYTES.config))!;
  const config = hfConfigToModelConfig(rawConfig, configPath);

  const { indexPath, singlePath, weightFiles, weightMap } = await weightFilesOf(dir);

  const stored = new Map<string, StoredTensor>();
  let weightBytes = 0;
  for (const file of weightFiles) {
    const path = join(dir, file);
    const reader = await SafetensorsReader.open(path);
    await reader.close();
    weightBytes += statSync(path).size;
    for (const info of reader.header.tensors.values()) {
      if (weightMap && weightMap[info.name] !== undefined && weightMap[info.name] !== file) continue; // the index decides
      stored.set(info.name, { file, storedName: info.name, dtype: info.dtype, shape: info.shape });
    }
  }
  if (weightMap) {
    for (const [name, file] of Object.entries(weightMap)) {
      if (!stored.has(name))
        throw new ModelFolderError(`${join(dir, file)}: tensor "${name}" is listed in model.safetensors.index.json but not stored in this shard`);
    }
  }
  // Canonical names (bare Qwen2Model checkpoints lack the "model." prefix).
  const hasModelPrefix = stored.has('model.embed_tokens.weight');
  const tensors = new Map<string, StoredTensor>();
  for (const [name, entry] of stored) tensors.set(canonicalName(name, hasModelPrefix), entry);

  checkLayerCount(config, tensors, configPath);
  const expected = checkTensorsAgainstConfig(dir, config, tensors, weightMap ? `${indexPath} / shards` : singlePath);

  const dtypes: Record<string, number> = {};
  let parameterCount = 0;
  for (const [name, t] of tensors) {
    if (!expected.has(name)) continue;
    dtypes[t.dtype] = (dtypes[t.dtype] ?? 0) + 1;
    parameterCount += t.shape.reduce((a, b) => a * b, 1);
  }
  const generationPath = join(dir, 'generation_config.json');
  const generationRaw = await readJson(generationPath, 'generation config', false, MODEL_JSON_MAX_BYTES.generation);
  return {
    dir, config, rawConfig, weightFiles, sharded: weightMap !== null, tensors, dtypes, weightBytes, parameterCount,
    hasTokenizer: existsSync(join(dir, 'tokenizer.json')),
    generation: generationRaw ? parseGenerationConfig(generationRaw, generationPath) : null,
  };
}

export interface LoadHfOptions {
  /** Options for the CausalLM (trainable, attention, seed of a fresh value head). */
  model?: Omit<CausalLMOptions, 'init'>;
  /** Add a value head (config value_head) if the folder has none (PPO on the policy trunk). */
  valueHead?: boolean;
  /** Load the tokenizer too (default true). */
  tokenizer?: boolean;
}

export interface LoadedModel {
  model: CausalLM;
  tokenizer: Tokenizer | null;
  info: HfFolderInfo;
  /** Weights that were not in the folder and start at zero (e.g. a new value head). */
  initialised: string[];
}

/**
 * Streams a validated folder's weights into the model's variables, one tensor at a time.
 * Tensors the model does not have (e.g. `lm_head.weight` of a tied model, rotary buffers) are skipped.
 */
export async function streamWeightsInto(model: CausalLM, info: HfFolderInfo): Promise<{ loaded: string[]; initialised: string[] }> {
  const variables = model.namedWeights();
  const byFile = new Map<string, string[]>();
  for (const name of variables.keys()) {
    const t = info.tensors.get(name);
    if (!t) continue;
    const list = byFile.get(t.file) ?? [];
    list.push(name);
    byFile.set(t.file, list);
  }
  const loaded: string[] = [];
  for (const [file, names] of byFile) {
    const reader = await SafetensorsReader.open(join(info.dir, file));
    try {
      for (const name of names) {
        const { data, shape } = await reader.readTensor(info.tensors.get(name)!.storedName);
        const variable = variables.get(name)!;
        tf.tidy(() => variable.assign(tf.tensor(data, shape, 'float32')));
        loaded.push(name);
      }
    } finally {
      await reader.close();
    }
  }
  const initialised = [...variables.keys()].filter((n) => !loaded.includes(n));
  for (const name of initialised) {
    if (name.endsWith('_proj.bias')) continue;                           // zeros: a bias-free checkpoint
    if (!name.startsWith('value_head.'))
      throw new ModelFolderError(`${info.dir}: weight "${name}" was not loaded (internal: validation should have caught this)`);
  }
  return { loaded, initialised };
}

/**
 * Largest RoPE table pair the TF.js model may build (bytes). CausalLM allocates cos and sin for every position of
 * max_position_embeddings when it is constructed: 2^22 positions cost 674 MB and 15.7 s for a 54k-parameter model
 * (issue 37 N2). 256 MiB covers 131072 positions (Llama 3.1) at head size 128.
 */
export const TFJS_ROPE_TABLE_MAX_BYTES = 256 * 1024 ** 2;

/** Bytes of the TF.js RoPE tables a config implies: cos and sin, float32, max_position_embeddings x head size each. */
export function ropeTableBytes(config: ModelConfig): number {
  const hd = config.head_dim ?? config.hidden_size / config.num_attention_heads;
  return config.max_position_embeddings * hd * 4 * 2;
}

/** Loads a Qwen2 folder (Hugging Face or our checkpoint) into a CausalLM, with its tokenizer. */
export async function loadHfModel(dir: string, options: LoadHfOptions = {}): Promise<LoadedModel> {
  const info = await inspectHfFolder(dir);
  const unsupported = tfjsUnsupported(info.config);
  if (unsupported.length) {
    throw new ModelFolderError(`${join(dir, 'config.json')}: the TF.js backends do not implement ${unsupported.join(', ')}; ` +
      "run this model on the torch backend (backend: 'torch')");
  }
  const ropeBytes = ropeTableBytes(info.config);
  if (ropeBytes > TFJS_ROPE_TABLE_MAX_BYTES) {
    throw new ModelFolderError(`${join(dir, 'config.json')}: key "max_position_embeddings" is ${info.config.max_position_embeddings}; the TF.js ` +
      `model builds its RoPE tables for every position up front (${(ropeBytes / 1024 ** 2).toFixed(0)} MiB: positions x head size x 8 bytes), ` +
      `over the ${TFJS_ROPE_TABLE_MAX_BYTES / 1024 ** 2} MiB the TF.js backends allow; set it to the context the runs use, or run on torch`);
  }
  if (tf.getBackend() === 'wasm') {
    const problem = wasmFitProblem(info.config, { trainable: options.model?.trainable ?? true });
    if (problem) throw new ModelFolderError(`${dir}: ${problem}`);
  }
  let tokenizer: Tokenizer | null = null;
  if (options.tokenizer ?? true) {
    if (!info.hasTokenizer) throw new ModelFolderError(`${join(dir, 'tokenizer.json')}: missing tokenizer.json (pass tokenizer: false to load weights only)`);
    tokenizer = await loadTokenizer(dir);
    if (tokenizer.vocabSize > info.config.vocab_size) {
      throw new ModelFolderError(
        `${join(dir, 'tokenizer.json')}: the tokenizer has ${tokenizer.vocabSize} tokens but config.json "vocab_size" is ` +
          `${info.config.vocab_size}; ids past the embedding table would crash the model`,
      );
    }
  }
  const config = options.valueHead && !info.config.value_head ? { ...info.config, value_head: true } : info.config;
  const model = new CausalLM(config, { ...options.model, init: 'zeros' });
  try {
    // A value head the folder lacks stays at zero (values start at 0; its weight still gets
    // gradients, so it learns; random weights would only add noise to the first advantages).
    const { initialised } = await streamWeightsInto(model, info);
    return { model, tokenizer, info: { ...info, config }, initialised };
  } catch (err) {
    model.dispose();
    throw err;
  }
}

