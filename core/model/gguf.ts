// GGUF files (llama.cpp's format) read and turned into a Hugging Face model folder:
// `spa-workbench model import FILE.gguf --out DIR` (core/cli/model-commands.ts).
//
// What is supported: general.architecture "llama" (Llama 2/3 layouts, SmolLM2, TinyLlama: RMSNorm,
// SiLU MLP, RoPE, GQA, no biases), tensors of type F32, F16, BF16, Q8_0, Q4_0 and Q4_1 (quantised ones
// are dequantised to F32 exactly as ggml does: Q8_0 d·q, Q4_0 d·(q−8), Q4_1 d·q + m; F16/BF16/F32 are
// copied as they are), and a GPT-2-style byte-level BPE tokenizer ("tokenizer.ggml.model" = "gpt2", as
// SmolLM2, Llama 3 and Qwen have). Anything else is refused with an error naming the key or the tensor
// and its type (K-quants, I-quants, SentencePiece "llama" vocabularies, MoE, RoPE scaling tensors).
//
// llama.cpp's convert_hf_to_gguf.py permutes the rows of q_proj and k_proj (each head's rotary halves
// interleaved, for ggml's RoPE); the import undoes that permutation so the folder is the Hugging Face layout.
//
// The folder: config.json (LlamaForCausalLM), model.safetensors, tokenizer.json (built from the
// tokenizer.ggml.* metadata), tokenizer_config.json (special tokens and the chat template from
// tokenizer.chat_template), generation_config.json (bos/eos ids). It is written into a temporary folder
// beside DIR and renamed into place at the end, so a failure never leaves a half-written folder.
import { closeSync, readSync } from 'node:fs';
import { mkdir, open, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { MODEL_SIZE_LIMITS } from './config.js';
import { NotRegularFileError, openRegularFileSync } from '../util/regular-file.js';

export class GgufError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GgufError';
  }
}

/** ggml tensor types by id (the ones this file can name; only some are supported). */
export const GGML_TYPES: Record<number, string> = {
  0: 'F32', 1: 'F16', 2: 'Q4_0', 3: 'Q4_1', 6: 'Q5_0', 7: 'Q5_1', 8: 'Q8_0', 9: 'Q8_1', 10: 'Q2_K', 11: 'Q3_K', 12: 'Q4_K', 13: 'Q5_K',
  14: 'Q6_K', 15: 'Q8_K', 16: 'IQ2_XXS', 17: 'IQ2_XS', 18: 'IQ3_XXS', 19: 'IQ1_S', 20: 'IQ4_NL', 21: 'IQ3_S', 22: 'IQ2_S', 23: 'IQ4_XS',
  24: 'I8', 25: 'I16', 26: 'I32', 27: 'I64', 28: 'F64', 29: 'IQ1_M', 30: 'BF16', 34: 'TQ1_0', 35: 'TQ2_0',
};
const SUPPORTED_TYPES = ['F32', 'F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_1'];
/** [elements per block, bytes per block] of the supported types. */
const BLOCK: Record<string, [number, number]> = { F32: [1, 4], F16: [1, 2], BF16: [1, 2], Q8_0: [32, 34], Q4_0: [32, 18], Q4_1: [32, 20] };

/**
 * A metadata array the import does not read, left unread in the file (its bytes skipped, not
 * materialised: an unused 100 MB array costs nothing). `itemType` is the GGUF value type id.
 */
export interface GgufSkippedArray { skipped: true; itemType: number; length: number }

export type GgufValue = number | bigint | boolean | string | GgufValue[] | GgufSkippedArray;

/** The metadata arrays the import reads (tokenizer.json is built from them); every other array is skipped unread. */
export const GGUF_ARRAYS_READ: ReadonlySet<string> = new Set(['tokenizer.ggml.tokens', 'tokenizer.ggml.merges', 'tokenizer.ggml.token_type']);
/** Deepest nesting of metadata arrays (real files nest 1 deep; 100,000 deep overflowed the stack). */
const MAX_ARRAY_DEPTH = 8;
/** Byte sizes of the fixed-size GGUF value types (by type id), for skipping arrays of them. */
const VALUE_BYTES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

export interface GgufTensorInfo {
  name: string;
  /** ggml order: dims[0] is the fastest-varying (a [out, in] matrix has dims [in, out]). */
  dims: number[];
  type: number;
  typeName: string;
  /** Absolute byte offset in the file. */
  offset: number;
  byteLength: number;
}

export interface GgufFile {
  path: string;
  version: number;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensorInfo[];
  fileSize: number;
}

/** Sequential reader over a file descriptor with a read-ahead window (the metadata can be megabytes). */
class Cursor {
  private buf = Buffer.alloc(0);
  private bufStart = 0;
  pos = 0;
  constructor(private readonly fd: number, readonly size: number, private readonly path: string) {}

  private ensure(n: number, what: string): void {
    if (this.pos + n > this.size) {
      throw new GgufError(`${this.path}: the file ends at byte ${this.size} while reading ${what} at byte ${this.pos} (truncated or not a GGUF file)`);
    }
    if (this.pos >= this.bufStart && this.pos + n <= this.bufStart + this.buf.length) return;
    const length = Math.min(Math.max(n, 1 << 20), this.size - this.pos);
    this.buf = Buffer.alloc(length);
    readSync(this.fd, this.buf, 0, length, this.pos);
    this.bufStart = this.pos;
  }
  private at(n: number, what: string): number { this.ensure(n, what); const o = this.pos - this.bufStart; this.pos += n; return o; }
  u8(what: string): number { const o = this.at(1, what); return this.buf.readUInt8(o); }
  i8(what: string): number { const o = this.at(1, what); return this.buf.readInt8(o); }
  u16(what: string): number { const o = this.at(2, what); return this.buf.readUInt16LE(o); }
  i16(what: string): number { const o = this.at(2, what); return this.buf.readInt16LE(o); }
  u32(what: string): number { const o = this.at(4, what); return this.buf.readUInt32LE(o); }
  i32(what: string): number { const o = this.at(4, what); return this.buf.readInt32LE(o); }
  f32(what: string): number { const o = this.at(4, what); return this.buf.readFloatLE(o); }
  f64(what: string): number { const o = this.at(8, what); return this.buf.readDoubleLE(o); }
  u64(what: string): bigint { const o = this.at(8, what); return this.buf.readBigUInt64LE(o); }
  i64(what: string): bigint { const o = this.at(8, what); return this.buf.readBigInt64LE(o); }
  /** A u64 that must fit a JS number (counts, lengths, offsets). */
  count(what: string, max = Number.MAX_SAFE_INTEGER): number {
    const v = this.u64(what);
    if (v > BigInt(max)) throw new GgufError(`${this.path}: ${what} is ${v}, more than ${max} (corrupt file?)`);
    return Number(v);
  }
  /** Moves past `n` bytes without reading them (bounds-checked against the file size). */
  skip(n: number, what: string): void {
    if (this.pos + n > this.size) {
      throw new GgufError(`${this.path}: the file ends at byte ${this.size} while reading ${what} at byte ${this.pos} (truncated or not a GGUF file)`);
    }
    this.pos += n;
  }
  str(what: string): string {
    const n = this.count(`the length of ${what}`, this.size);
    const o = this.at(n, what);
    return this.buf.toString('utf8', o, o + n);
  }
}


/** Moves past one value of `type` without materialising it (strings and nested arrays are walked by their lengths only). */
function skipValue(c: Cursor, type: number, key: string, path: string, depth: number): void {
  const fixed = VALUE_BYTES[type];
  if (fixed !== undefined) { c.skip(fixed, key); return; }
  if (type === 8) { c.skip(c.count(`the length of ${key}`, c.size), key); return; }
  if (type === 9) { skipArray(c, key, path, depth + 1); return; }
  throw new GgufError(`${path}: metadata key "${key}" has value type ${type}, which is not a GGUF type (expected 0-12; corrupt file?)`);
}

function checkDepth(depth: number, key: string, path: string): void {
  if (depth > MAX_ARRAY_DEPTH) {
    throw new GgufError(`${path}: metadata key "${key}" nests arrays more than ${MAX_ARRAY_DEPTH} deep (GGUF files nest 1 deep; corrupt file?)`);
  }
}

/** Skips an array value (after its type tag): items of a fixed size in one step, others one by one. */
function skipArray(c: Cursor, key: string, path: string, depth: number): GgufSkippedArray {
  checkDepth(depth, key, path);
  const itemType = c.u32(`the item type of ${key}`);
  const length = c.count(`the length of ${key}`, c.size);
  const fixed = VALUE_BYTES[itemType];
  if (fixed !== undefined) c.skip(length * fixed, key);
  else for (let i = 0; i < length; i++) skipValue(c, itemType, key, path, depth);
  return { skipped: true, itemType, length };
}

function readValue(c: Cursor, type: number, key: string, path: string, depth = 0): GgufValue {
  switch (type) {
    case 0: return c.u8(key);
    case 1: return c.i8(key);
    case 2: return c.u16(key);
    case 3: return c.i16(key);
    case 4: return c.u32(key);
    case 5: return c.i32(key);
    case 6: return c.f32(key);
    case 7: return c.u8(key) !== 0;
    case 8: return c.str(key);
    case 9: {
      if (!GGUF_ARRAYS_READ.has(key)) return skipArray(c, key, path, depth + 1);
      checkDepth(depth + 1, key, path);
      const itemType = c.u32(`the item type of ${key}`);
      const n = c.count(`the length of ${key}`, c.size);
      const out: GgufValue[] = [];
      for (let i = 0; i < n; i++) out.push(readValue(c, itemType, key, path, depth + 1));
      return out;
    }
    case 10: return c.u64(key);
    case 11: return c.i64(key);
    case 12: return c.f64(key);
    default:
      throw new GgufError(`${path}: metadata key "${key}" has value type ${type}, which is not a GGUF type (expected 0-12; corrupt file?)`);
  }
}

/** Parses a GGUF file's header, metadata and tensor table (no tensor data is read). */
export function readGguf(path: string): GgufFile {
  let fd: number;
  let size: number;
  try {
    ({ fd, size } = openRegularFileSync(path));   // a FIFO or device is refused unopened (core/util/regular-file.ts)
  } catch (err) {
    if (err instanceof NotRegularFileError) throw new GgufError(`${path}: is ${err.kind}, not a GGUF file; nothing was read from it`);
    throw new GgufError(`${path}: cannot open (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  try {
    const c = new Cursor(fd, size, path);
    if (size < 4 || c.u32('the magic') !== 0x46554747) throw new GgufError(`${path}: not a GGUF file (it does not start with the bytes "GGUF")`);
    const version = c.u32('the version');
    if (version !== 2 && version !== 3) {
      throw new GgufError(`${path}: GGUF version ${version} is not supported (versions 2 and 3 are; re-convert the model with a current llama.cpp)`);
    }
    const tensorCount = c.count('the tensor count', size);
    const kvCount = c.count('the metadata count', size);
    const metadata = new Map<string, GgufValue>();
    for (let i = 0; i < kvCount; i++) {
      const key = c.str(`metadata key ${i}`);
      const type = c.u32(`the value type of "${key}"`);
      // llama.cpp refuses a repeated key; taking the last one silently would import a different model than llama.cpp runs
      if (metadata.has(key)) throw new GgufError(`${path}: metadata key "${key}" appears twice (llama.cpp refuses such files; corrupt file?)`);
      metadata.set(key, readValue(c, type, key, path));
    }
    const infos: Omit<GgufTensorInfo, 'offset' | 'byteLength'>[] = [];
    const relative: number[] = [];
    const names = new Set<string>();
    for (let i = 0; i < tensorCount; i++) {
      const name = c.str(`tensor name ${i}`);
      // llama.cpp refuses duplicate tensor names; the last copy winning silently replaced a weight (an all-zero q_proj)
      if (names.has(name)) throw new GgufError(`${path}: tensor "${name}" appears twice in the tensor table (llama.cpp refuses such files; corrupt file?)`);
      names.add(name);
      const nDims = c.u32(`the dimension count of tensor "${name}"`);
      if (nDims < 1 || nDims > 4) throw new GgufError(`${path}: tensor "${name}" has ${nDims} dimensions (GGUF allows 1-4; corrupt file?)`);
      const dims: number[] = [];
      for (let d = 0; d < nDims; d++) dims.push(c.count(`dimension ${d} of tensor "${name}"`, 2 ** 40));
      const type = c.u32(`the type of tensor "${name}"`);
      relative.push(c.count(`the offset of tensor "${name}"`, size));
      infos.push({ name, dims, type, typeName: GGML_TYPES[type] ?? `type ${type}` });
    }
    const alignmentValue = metadata.get('general.alignment') ?? 32;
    const alignment = Number(alignmentValue);
    if (!Number.isInteger(alignment) || alignment <= 0) {
      throw new GgufError(`${path}: key "general.alignment" is ${String(alignmentValue)}; expected a positive integer`);
    }
    const dataStart = Math.ceil(c.pos / alignment) * alignment;
    const tensors = infos.map((t, i) => {
      const elements = t.dims.reduce((a, b) => a * b, 1);
      const block = BLOCK[t.typeName];
      const byteLength = block ? (elements / block[0]) * block[1] : NaN;
      const offset = dataStart + relative[i];
      if (block && (t.dims[0] % block[0] !== 0)) {
        throw new GgufError(`${path}: tensor "${t.name}" (${t.typeName}) has a first dimension ${t.dims[0]} ` +
          `that is not a multiple of its block size ${block[0]}`);
      }
      if (block && offset + byteLength > size) {
        throw new GgufError(`${path}: tensor "${t.name}" (${t.typeName}, dims ${t.dims.join('x')}) ends at byte ` +
          `${offset + byteLength}, past the end of the file (${size} bytes): truncated`);
      }
      return { ...t, offset, byteLength };
    });
    return { path, version, metadata, tensors, fileSize: size };
  } finally {
    closeSync(fd);
  }
}

// ---------------------------------------------------------------------------------------------
// Dequantisation (ggml's reference formulas; every block has its scale(s) as f16 first).

const f16Table = (() => {
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const s = h & 0x8000 ? -1 : 1;
    const e = (h >> 10) & 0x1f;
    const m = h & 0x3ff;
    t[h] = e === 0 ? s * m * 2 ** -24 : e === 31 ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (e - 15);
  }
  return t;
})();

/** Dequantises `count` elements of a Q8_0 / Q4_0 / Q4_1 buffer to f32 (exactly as ggml's dequantize_row_*). */
export function dequantize(typeName: string, bytes: Uint8Array, count: number): Float32Array {
  const out = new Float32Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const blocks = count / 32;
  if (typeName === 'Q8_0') {
    for (let b = 0; b < blocks; b++) {
      const o = b * 34;
      const d = f16Table[view.getUint16(o, true)];
      for (let j = 0; j < 32; j++) out[b * 32 + j] = d * view.getInt8(o + 2 + j);
    }
  } else if (typeName === 'Q4_0') {
    for (let b = 0; b < blocks; b++) {
      const o = b * 18;
      const d = f16Table[view.getUint16(o, true)];
      for (let j = 0; j < 16; j++) {
        const q = bytes[o + 2 + j];
        out[b * 32 + j] = d * ((q & 0x0f) - 8);
        out[b * 32 + j + 16] = d * ((q >> 4) - 8);
      }
    }
  } else if (typeName === 'Q4_1') {
    for (let b = 0; b < blocks; b++) {
      const o = b * 20;
      const d = f16Table[view.getUint16(o, true)];
      const m = f16Table[view.getUint16(o + 2, true)];
      for (let j = 0; j < 16; j++) {
        const q = bytes[o + 4 + j];
        out[b * 32 + j] = Math.fround(d * (q & 0x0f)) + m;
        out[b * 32 + j + 16] = Math.fround(d * (q >> 4)) + m;
      }
    }
  } else {
    throw new GgufError(`dequantize: type ${typeName} is not supported (supported: Q8_0, Q4_0, Q4_1)`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Metadata → config.json, tokenizer.json, tokenizer_config.json, generation_config.json

function meta(file: GgufFile, key: string): GgufValue | undefined { return file.metadata.get(key); }

function num(file: GgufFile, key: string, fallback?: number): number {
  const v = meta(file, key);
  if (v === undefined) {
    if (fallback !== undefined) return fallback;
    throw new GgufError(`${file.path}: metadata key "${key}" is missing (needed for the model's config)`);
  }
  if (typeof v !== 'number' && typeof v !== 'bigint') throw new GgufError(`${file.path}: metadata key "${key}" must be a number, got ${typeof v}`);
  return Number(v);
}

/**
 * A size from the metadata: a positive integer of at most `max` (MODEL_SIZE_LIMITS), checked before
 * anything is built from it (an i32 head count of -4, or a context length of 2^26, is refused naming the key).
 */
function sizeOf(file: GgufFile, key: string, max: number, fallback?: number): number {
  const v = num(file, key, fallback);
  if (!Number.isSafeInteger(v) || v <= 0) throw new GgufError(`${file.path}: metadata key "${key}" is ${v}; expected a positive integer`);
  if (v > max) {
    throw new GgufError(`${file.path}: metadata key "${key}" is ${v}, more than ${max} (MODEL_SIZE_LIMITS: no released model is larger; corrupt file?)`);
  }
  return v;
}

/** A positive, finite float from the metadata (RMSNorm epsilon, RoPE base): NaN, infinities, zero and negatives are refused. */
function positiveFloat(file: GgufFile, key: string, fallback: number): number {
  const v = num(file, key, fallback);
  if (!Number.isFinite(v) || v <= 0) throw new GgufError(`${file.path}: metadata key "${key}" is ${v}; expected a positive finite number`);
  return v;
}

function str(file: GgufFile, key: string): string | undefined {
  const v = meta(file, key);
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new GgufError(`${file.path}: metadata key "${key}" must be a string, got ${typeof v}`);
  return v;
}

function strList(file: GgufFile, key: string): string[] {
  const v = meta(file, key);
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) {
    throw new GgufError(`${file.path}: metadata key "${key}" is ${v === undefined ? 'missing' : 'not a list of strings'} (needed for tokenizer.json)`);
  }
  return v as string[];
}

/** Pre-tokenizers of the byte-level BPE vocabularies llama.cpp names in "tokenizer.ggml.pre". */
const LLAMA3_SPLIT = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN2_SPLIT = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const byteLevel = (useRegex: boolean) => ({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: useRegex });
const split = (regex: string) => ({ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false });
const PRE_TOKENIZERS: Record<string, { pre: unknown; normalizer?: unknown; ignoreMerges?: boolean }> = {
  default: { pre: byteLevel(true) },
  gpt2: { pre: byteLevel(true) },
  // SmolLM / StarCoder: single digits, then GPT-2's regex (llama.cpp's LLAMA_VOCAB_PRE_TYPE_SMOLLM/STARCODER)
  smollm: { pre: { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, byteLevel(true)] } },
  starcoder: { pre: { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, byteLevel(true)] } },
  'llama-bpe': { pre: { type: 'Sequence', pretokenizers: [split(LLAMA3_SPLIT), byteLevel(false)] }, ignoreMerges: true },
  qwen2: { pre: { type: 'Sequence', pretokenizers: [split(QWEN2_SPLIT), byteLevel(false)] }, normalizer: { type: 'NFC' } },
};

export interface HfFolderFromGguf {
  config: Record<string, unknown>;
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  generationConfig: Record<string, unknown>;
  /** HF tensor name → the GGUF tensor and whether its rows are un-permuted (q/k) with that many heads. */
  tensors: { hfName: string; tensor: GgufTensorInfo; shape: number[]; unpermuteHeads?: number }[];
}

interface LlamaShape { layers: number; hidden: number; heads: number; kvHeads: number; ffn: number; headDim: number }

/** The llama architecture's sizes from the GGUF metadata (refusing other architectures, MoE and RoPE scaling). */
function llamaShape(file: GgufFile): LlamaShape {
  const arch = str(file, 'general.architecture');
  if (arch === undefined) throw new GgufError(`${file.path}: metadata key "general.architecture" is missing`);
  if (arch !== 'llama') {
    throw new GgufError(`${file.path}: general.architecture is "${arch}"; model import supports "llama" (Llama 2/3, SmolLM2, TinyLlama) GGUF files only`);
  }
  if (meta(file, 'llama.expert_count') !== undefined && num(file, 'llama.expert_count') > 0) {
    throw new GgufError(`${file.path}: metadata key "llama.expert_count" says this is a mixture-of-experts model, which model import does not support`);
  }
  const scaling = str(file, 'llama.rope.scaling.type');
  if (scaling !== undefined && scaling !== 'none') {
    throw new GgufError(`${file.path}: metadata key "llama.rope.scaling.type" is "${scaling}"; RoPE scaling is not supported`);
  }
  const L = MODEL_SIZE_LIMITS;
  const layers = sizeOf(file, 'llama.block_count', L.num_hidden_layers);
  const hidden = sizeOf(file, 'llama.embedding_length', L.hidden_size);
  const heads = sizeOf(file, 'llama.attention.head_count', L.num_attention_heads);
  const kvHeads = sizeOf(file, 'llama.attention.head_count_kv', L.num_key_value_heads, heads);
  const ffn = sizeOf(file, 'llama.feed_forward_length', L.intermediate_size);
  const headDim = num(file, 'llama.attention.key_length', num(file, 'llama.rope.dimension_count', hidden / heads));
  if (headDim > L.head_dim) throw new GgufError(`${file.path}: the head size ${headDim} is more than ${L.head_dim} (MODEL_SIZE_LIMITS; corrupt file?)`);
  if (!Number.isInteger(headDim) || headDim % 2 !== 0) {
    throw new GgufError(`${file.path}: the head size ${headDim} (llama.attention.key_length / llama.rope.dimension_count) must be an even integer`);
  }
  if (heads % kvHeads !== 0) {
    throw new GgufError(`${file.path}: llama.attention.head_count ${heads} is not a multiple of llama.attention.head_count_kv ${kvHeads}`);
  }

  return { layers, hidden, heads, kvHeads, ffn, headDim };
}

interface GgufTokenizer {
  tokens: string[]; bos?: number; eos?: number; maxLength: number;
  tokenizerJson: Record<string, unknown>; tokenizerConfig: Record<string, unknown>; generationConfig: Record<string, unknown>;
}

/** tokenizer.json, tokenizer_config.json (with the chat template) and generation_config.json from the GGUF's tokenizer metadata. */
function ggufTokenizer(file: GgufFile): GgufTokenizer {
  const tokModel = str(file, 'tokenizer.ggml.model');
  if (tokModel !== 'gpt2') {
    throw new GgufError(
      `${file.path}: metadata key "tokenizer.ggml.model" is ${JSON.stringify(tokModel)}; model import builds tokenizer.json for byte-level BPE ` +
        '("gpt2": SmolLM2, Llama 3, Qwen) only (SentencePiece "llama" vocabularies are not supported)',
    );
  }
  const preName = str(file, 'tokenizer.ggml.pre') ?? 'default';
  const pre = PRE_TOKENIZERS[preName];
  if (!pre) {
    throw new GgufError(`${file.path}: metadata key "tokenizer.ggml.pre" is "${preName}", a pre-tokenizer model import does not know ` +
      `(known: ${Object.keys(PRE_TOKENIZERS).join(', ')})`);
  }
  const tokens = strList(file, 'tokenizer.ggml.tokens');
  const merges = strList(file, 'tokenizer.ggml.merges');
  const typesValue = meta(file, 'tokenizer.ggml.token_type');
  const types = Array.isArray(typesValue) ? typesValue.map(Number) : tokens.map(() => 1);
  if (types.length !== tokens.length) throw new GgufError(`${file.path}: "tokenizer.ggml.token_type" has ${types.length} entries for ${tokens.length} tokens`);
  const vocab: Record<string, number> = {};
  tokens.forEach((t, id) => { if (!(t in vocab)) vocab[t] = id; });
  // control tokens (type 3) are special; user-defined ones (4) are added but not special (as llama.cpp's converter marks them)
  const added = tokens.flatMap((content, id) => (types[id] === 3 || types[id] === 4
    ? [{ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: types[id] === 3 }]
    : []));
  const tokenizerJson: Record<string, unknown> = {
    version: '1.0', truncation: null, padding: null, added_tokens: added, normalizer: pre.normalizer ?? null, pre_tokenizer: pre.pre,
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false,
      ...(pre.ignoreMerges ? { ignore_merges: true } : {}), vocab, merges,
    },
  };
  const tokenId = (key: string): number | undefined => {
    if (meta(file, key) === undefined) return undefined;
    const id = num(file, key);
    if (!Number.isInteger(id) || id < 0 || id >= tokens.length) {
      throw new GgufError(`${file.path}: metadata key "${key}" is ${id}, not a token id (the vocabulary has ${tokens.length})`);
    }
    return id;
  };
  const bos = tokenId('tokenizer.ggml.bos_token_id');
  const eos = tokenId('tokenizer.ggml.eos_token_id');
  const eot = tokenId('tokenizer.ggml.eot_token_id');
  const pad = tokenId('tokenizer.ggml.padding_token_id');
  const unk = tokenId('tokenizer.ggml.unknown_token_id');
  const maxLength = sizeOf(file, 'llama.context_length', MODEL_SIZE_LIMITS.max_position_embeddings, 2048);
  const chatTemplate = str(file, 'tokenizer.chat_template');
  const tokenizerConfig: Record<string, unknown> = {
    tokenizer_class: 'PreTrainedTokenizerFast',
    ...(bos !== undefined ? { bos_token: tokens[bos] } : {}),
    ...(eos !== undefined ? { eos_token: tokens[eos] } : {}),
    ...(pad !== undefined ? { pad_token: tokens[pad] } : {}),
    ...(unk !== undefined ? { unk_token: tokens[unk] } : {}),
    add_bos_token: meta(file, 'tokenizer.ggml.add_bos_token') === true,
    add_eos_token: meta(file, 'tokenizer.ggml.add_eos_token') === true,
    clean_up_tokenization_spaces: false,
    model_max_length: maxLength,
    ...(chatTemplate !== undefined ? { chat_template: chatTemplate } : {}),
  };
  const eosIds = [...new Set([eos, eot].filter((x): x is number => x !== undefined))];
  const generationConfig: Record<string, unknown> = {
    ...(bos !== undefined ? { bos_token_id: bos } : {}),
    ...(eosIds.length ? { eos_token_id: eosIds.length === 1 ? eosIds[0] : eosIds } : {}),
    ...(pad !== undefined ? { pad_token_id: pad } : {}),
  };

  return { tokens, bos, eos, maxLength, tokenizerJson, tokenizerConfig, generationConfig };
}

/** The HF tensors of a plain llama model, each checked against the shape the metadata implies; any other tensor is refused. */
function llamaTensors(file: GgufFile, shape: LlamaShape, vocabTokens: number): { tensors: HfFolderFromGguf['tensors']; vocabSize: number; tied: boolean } {
  const { layers, hidden, heads, kvHeads, ffn, headDim } = shape;
  const byName = new Map(file.tensors.map((t) => [t.name, t]));
  for (const t of file.tensors) {
    if (!SUPPORTED_TYPES.includes(t.typeName)) {
      throw new GgufError(
        `${file.path}: tensor "${t.name}" has type ${t.typeName}, which model import does not dequantise (supported: ${SUPPORTED_TYPES.join(', ')}); ` +
          'convert the model to one of those (e.g. llama-quantize --allow-requantize FILE OUT Q8_0, or an F16 GGUF)',
      );
    }
  }
  const embedding = byName.get('token_embd.weight');
  if (!embedding) throw new GgufError(`${file.path}: tensor "token_embd.weight" is missing`);
  const vocabSize = embedding.dims[1] ?? 0;
  if (vocabSize > MODEL_SIZE_LIMITS.vocab_size) {
    throw new GgufError(`${file.path}: token_embd.weight has ${vocabSize} rows, more than ${MODEL_SIZE_LIMITS.vocab_size} (MODEL_SIZE_LIMITS)`);
  }
  if (vocabSize < vocabTokens) throw new GgufError(`${file.path}: token_embd.weight has ${vocabSize} rows but the vocabulary has ${vocabTokens} tokens`);
  const tied = !byName.has('output.weight');
  const out: HfFolderFromGguf['tensors'] = [];
  const used = new Set<string>();
  const take = (gguf: string, hfName: string, shape: number[], unpermuteHeads?: number) => {
    const t = byName.get(gguf);
    if (!t) throw new GgufError(`${file.path}: tensor "${gguf}" is missing (a llama model with ${layers} layers has it)`);
    const want = [...shape].reverse();
    if (t.dims.length !== want.length || t.dims.some((d, i) => d !== want[i])) {
      throw new GgufError(`${file.path}: tensor "${gguf}" has dims ${t.dims.join('x')}, expected ${want.join('x')} from the metadata (ggml order)`);
    }
    used.add(gguf);
    out.push({ hfName, tensor: t, shape, unpermuteHeads });
  };
  take('token_embd.weight', 'model.embed_tokens.weight', [vocabSize, hidden]);
  take('output_norm.weight', 'model.norm.weight', [hidden]);
  if (!tied) take('output.weight', 'lm_head.weight', [vocabSize, hidden]);
  for (let l = 0; l < layers; l++) {
    const p = `model.layers.${l}`;
    take(`blk.${l}.attn_norm.weight`, `${p}.input_layernorm.weight`, [hidden]);
    take(`blk.${l}.attn_q.weight`, `${p}.self_attn.q_proj.weight`, [heads * headDim, hidden], heads);
    take(`blk.${l}.attn_k.weight`, `${p}.self_attn.k_proj.weight`, [kvHeads * headDim, hidden], kvHeads);
    take(`blk.${l}.attn_v.weight`, `${p}.self_attn.v_proj.weight`, [kvHeads * headDim, hidden]);
    take(`blk.${l}.attn_output.weight`, `${p}.self_attn.o_proj.weight`, [hidden, heads * headDim]);
    take(`blk.${l}.ffn_norm.weight`, `${p}.post_attention_layernorm.weight`, [hidden]);
    take(`blk.${l}.ffn_gate.weight`, `${p}.mlp.gate_proj.weight`, [ffn, hidden]);
    take(`blk.${l}.ffn_up.weight`, `${p}.mlp.up_proj.weight`, [ffn, hidden]);
    take(`blk.${l}.ffn_down.weight`, `${p}.mlp.down_proj.weight`, [hidden, ffn]);
  }
  const extra = file.tensors.filter((t) => !used.has(t.name));
  if (extra.length) {
    throw new GgufError(
      `${file.path}: tensor "${extra[0].name}" is not part of a plain llama model${extra.length > 1 ? ` (and ${extra.length - 1} more)` : ''}; ` +
        'model import does not support it (e.g. rope_freqs: Llama 3.1 RoPE scaling; biases)',
    );
  }
  return { tensors: out, vocabSize, tied };
}

/** Maps a parsed llama GGUF to the HF folder's JSON files and tensor list (validating everything first). */
export function planHfFolder(file: GgufFile): HfFolderFromGguf {
  const shape = llamaShape(file);
  const { layers, hidden, heads, kvHeads, ffn, headDim } = shape;
  const { tokens, bos, eos, maxLength, tokenizerJson, tokenizerConfig, generationConfig } = ggufTokenizer(file);
  const { tensors, vocabSize, tied } = llamaTensors(file, shape, tokens.length);
  const config: Record<string, unknown> = {
    architectures: ['LlamaForCausalLM'], model_type: 'llama',
    hidden_size: hidden, intermediate_size: ffn, num_hidden_layers: layers, num_attention_heads: heads, num_key_value_heads: kvHeads,
    ...(headDim !== hidden / heads ? { head_dim: headDim } : {}),
    max_position_embeddings: maxLength, rms_norm_eps: positiveFloat(file, 'llama.attention.layer_norm_rms_epsilon', 1e-5),
    rope_theta: positiveFloat(file, 'llama.rope.freq_base', 10000), rope_scaling: null, hidden_act: 'silu', attention_bias: false, mlp_bias: false,
    tie_word_embeddings: tied, vocab_size: vocabSize, initializer_range: 0.02, use_cache: true, torch_dtype: 'float32',
    ...(bos !== undefined ? { bos_token_id: bos } : {}), ...(eos !== undefined ? { eos_token_id: eos } : {}),
  };
  return { config, tokenizerJson, tokenizerConfig, generationConfig, tensors };
}

/** Undoes convert_hf_to_gguf's q/k permutation: GGUF row h·D + 2i + j holds HF row h·D + j·D/2 + i. */
export function unpermuteRows<T extends Float32Array | Uint16Array>(data: T, rows: number, cols: number, heads: number): T {
  const headDim = rows / heads;
  const half = headDim / 2;
  const out = new (data.constructor as new (n: number) => T)(data.length);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < half; i++) {
      for (let j = 0; j < 2; j++) {
        const src = (h * headDim + 2 * i + j) * cols;
        const dst = (h * headDim + j * half + i) * cols;
        out.set(data.subarray(src, src + cols), dst);
      }
    }
  }
  return out;
}

export interface ImportOptions {
  /** Replace an existing output folder. */
  force?: boolean;
  onProgress?: (message: string) => void;
  /**
   * Cleans what imports killed earlier left in the folder `out` is written into (the CLI passes
   * core/storage/temp-files.ts cleanImportLeftovers); returns one message per folder removed or restored.
   */
  cleanLeftovers?: (dir: string) => string[];
}

export interface ImportResult {
  out: string;
  config: Record<string, unknown>;
  tensorTypes: Record<string, number>;
  parameters: number;
  bytes: number;
}

/** Reads one tensor's bytes from the file. */
async function readTensorBytes(path: string, t: GgufTensorInfo): Promise<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    const buf = new Uint8Array(t.byteLength);
    const { bytesRead } = await handle.read(buf, 0, t.byteLength, t.offset);
    if (bytesRead !== t.byteLength) throw new GgufError(`${path}: tensor "${t.name}" is truncated (${bytesRead} of ${t.byteLength} bytes)`);
    return buf;
  } finally {
    await handle.close();
  }
}

/** The output dtype and data of one tensor (quantised → F32; F32/F16/BF16 kept), q/k rows un-permuted. */
async function tensorData(path: string, entry: HfFolderFromGguf['tensors'][number]): Promise<{ dtype: string; data: Uint8Array }> {
  const t = entry.tensor;
  const count = t.dims.reduce((a, b) => a * b, 1);
  const raw = await readTensorBytes(path, t);
  let values: Float32Array | Uint16Array;
  let dtype: string;
  if (t.typeName === 'F32') { values = new Float32Array(raw.buffer, raw.byteOffset, count); dtype = 'F32'; }
  else if (t.typeName === 'F16' || t.typeName === 'BF16') { values = new Uint16Array(raw.buffer, raw.byteOffset, count); dtype = t.typeName; }
  else { values = dequantize(t.typeName, raw, count); dtype = 'F32'; }
  if (entry.unpermuteHeads) values = unpermuteRows(values, entry.shape[0], entry.shape[1], entry.unpermuteHeads);
  return { dtype, data: new Uint8Array(values.buffer, values.byteOffset, values.byteLength) };
}

/**
 * Turns a llama GGUF into a Hugging Face folder at `out` (see the header comment). The folder is
 * written under a temporary name beside `out` and renamed into place once complete.
 */
export async function importGguf(path: string, out: string, options: ImportOptions = {}): Promise<ImportResult> {
  const file = readGguf(path);
  const plan = planHfFolder(file);
  if (existsSync(out) && !options.force) throw new GgufError(`${out} already exists; choose another --out or pass --force to replace it`);
  await mkdir(dirname(out), { recursive: true });
  // what an import killed earlier (kill -9, power loss) left beside `out`: its unfinished copy is removed, a cut swap restored
  for (const message of options.cleanLeftovers?.(dirname(out)) ?? []) options.onProgress?.(message);
  const tmp = join(dirname(out), `.${basename(out)}.import-${process.pid}-${Date.now()}`);
  await mkdir(tmp);
  try {
    const writeJson = (name: string, value: unknown) => writeFile(join(tmp, name), JSON.stringify(value, null, 2) + '\n');
    await writeJson('config.json', plan.config);
    await writeFile(join(tmp, 'tokenizer.json'), JSON.stringify(plan.tokenizerJson));
    await writeJson('tokenizer_config.json', plan.tokenizerConfig);
    await writeJson('generation_config.json', plan.generationConfig);
    // safetensors: the header first (dtypes and sizes are known from the plan), then each tensor's data
    const outDtype = (t: GgufTensorInfo) => (t.typeName === 'F16' || t.typeName === 'BF16' ? t.typeName : 'F32');
    const sorted = [...plan.tensors].sort((a, b) => (a.hfName < b.hfName ? -1 : 1));
    const header: Record<string, unknown> = { __metadata__: { format: 'pt', source: `gguf:${basename(path)}` } };
    let offset = 0;
    for (const e of sorted) {
      const bytes = e.shape.reduce((a, b) => a * b, 1) * (outDtype(e.tensor) === 'F32' ? 4 : 2);
      header[e.hfName] = { dtype: outDtype(e.tensor), shape: e.shape, data_offsets: [offset, offset + bytes] };
      offset += bytes;
    }
    let headerText = JSON.stringify(header);
    headerText += ' '.repeat((8 - (Buffer.byteLength(headerText) % 8)) % 8);
    const handle = await open(join(tmp, 'model.safetensors'), 'w');
    const tensorTypes: Record<string, number> = {};
    let parameters = 0;
    try {
      const length = Buffer.alloc(8);
      length.writeBigUInt64LE(BigInt(Buffer.byteLength(headerText)));
      await handle.write(length);
      await handle.write(Buffer.from(headerText));
      for (const [k, e] of sorted.entries()) {
        const { data } = await tensorData(path, e);
        await handle.write(data);
        tensorTypes[e.tensor.typeName] = (tensorTypes[e.tensor.typeName] ?? 0) + 1;
        parameters += e.shape.reduce((a, b) => a * b, 1);
        if (k % 20 === 0) options.onProgress?.(`tensor ${k + 1}/${sorted.length}: ${e.hfName} (${e.tensor.typeName})`);
      }
    } finally {
      await handle.close();
    }
    if (existsSync(out)) {
      const old = `${tmp}.old`;
      await rename(out, old);
      await rename(tmp, out);
      await rm(old, { recursive: true, force: true });
    } else {
      await rename(tmp, out);
    }
    return { out, config: plan.config, tensorTypes, parameters, bytes: 8 + Buffer.byteLength(headerText) + offset };
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}
