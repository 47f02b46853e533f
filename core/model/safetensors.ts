// safetensors read/write (https://huggingface.co/docs/safetensors): the weights format of
// Hugging Face checkpoints. Layout: an 8-byte little-endian header length N, N bytes of JSON
// header `{ "__metadata__": {..}, name: { dtype, shape, data_offsets: [begin, end] }, ... }`,
// then the raw little-endian tensor bytes (offsets are relative to the end of the header).
//
// Reads are memory-efficient: `SafetensorsReader` reads the header first, then each tensor's
// own byte range on demand, so a multi-GB file is never held in memory at once. Floating
// dtypes F32 / F16 / BF16 / F64 are converted to Float32Array; writes are F32 (default), F16
// or BF16. Every validation error names the file and the tensor key.
import { createHash } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { NotRegularFileError, openRegularFile } from '../util/regular-file.js';

/** All dtypes the safetensors format defines (a header naming anything else is rejected). */
export const SAFETENSORS_DTYPES = {
  BOOL: 1, U8: 1, I8: 1, F8_E5M2: 1, F8_E4M3: 1, I16: 2, U16: 2, F16: 2, BF16: 2,
  I32: 4, U32: 4, F32: 4, F64: 8, I64: 8, U64: 8,
} as const;
export type SafetensorsDtype = keyof typeof SAFETENSORS_DTYPES;
/** Dtypes this module converts to float32 on read. */
export const READABLE_DTYPES: readonly SafetensorsDtype[] = ['F32', 'F16', 'BF16', 'F64'];
/** Dtypes this module can write. */
export type WritableDtype = 'F32' | 'F16' | 'BF16';

/** A tensor as plain data: row-major float32 values and their shape. */
export interface TensorData { shape: number[]; data: Float32Array }

export interface TensorInfo {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  /** Byte range relative to the start of the data section: [begin, end). */
  dataOffsets: [number, number];
}

export interface SafetensorsHeader {
  metadata: Record<string, string>;
  tensors: Map<string, TensorInfo>;
  /** Absolute file offset of the data section (8 + header length). */
  dataStart: number;
  /** Byte length of the data section. */
  dataLength: number;
}

/** Headers larger than this are treated as corrupt (real headers are a few hundred KB at most). */
const MAX_HEADER_BYTES = 100 * 1024 * 1024;

export class SafetensorsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SafetensorsError';
  }
}

function fail(source: string, message: string): never {
  throw new SafetensorsError(`${source}: ${message}`);
}

function numel(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/**
 * Parses and validates the JSON header. `headerBytes` is the N bytes after the length prefix;
 * `dataLength` is the byte length of everything after the header (file size - 8 - N).
 */
/**
 * The first tensor name that appears twice at the top level of a header's JSON text, or null. JSON.parse keeps the
 * last of repeated keys, so a header naming a tensor twice would load one of two byte ranges silently (issue 37:
 * duplicate names are refused, as for GGUF). One pass over the text, strings skipped.
 */
export function duplicateHeaderKey(text: string): string | null {
  const seen = new Set<string>();
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {                                            // a string: find its end
      const start = i;
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++; else if (s === 0x22) break;
      }
      if (depth !== 1) continue;
      let j = i + 1;
      while (j < text.length && (text[j] === ' ' || text[j] === '\n' || text[j] === '\r' || text[j] === '\t')) j++;
      if (text[j] !== ':') continue;                             // a value, not a key
      const key = JSON.parse(text.slice(start, i + 1)) as string;
      if (seen.has(key)) return key;
      seen.add(key);
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return null;
}

export function parseSafetensorsHeader(headerBytes: Uint8Array, dataLength: number, source: string): SafetensorsHeader {
  let json: unknown;
  let text = '';
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(headerBytes);
    json = JSON.parse(text);
  } catch (err) {
    fail(source, `header is not valid UTF-8 JSON (${(err as Error).message}); the file is corrupt or not a safetensors file`);
  }
  const repeated = duplicateHeaderKey(text);
  if (repeated !== null) fail(source, `header names tensor "${repeated}" twice; the file is corrupt (which entry would be meant is unknown)`);
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    fail(source, `header must be a JSON object of tensors, got ${Array.isArray(json) ? 'an array' : typeof json}`);
  }
  const metadata: Record<string, string> = {};
  const tensors = new Map<string, TensorInfo>();
  for (const [name, raw] of Object.entries(json as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail(source, `"__metadata__" must be an object of strings`);
      for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
        if (typeof v !== 'string') fail(source, `"__metadata__.${k}" must be a string, got ${typeof v}`);
        metadata[k] = v;
      }
      continue;
    }
    const where = `tensor "${name}"`;
    if (raw === null || typeof raw !== 'object') fail(source, `${where}: expected { dtype, shape, data_offsets }, got ${JSON.stringify(raw)}`);
    const entry = raw as Record<string, unknown>;
    const dtype = entry.dtype;
    if (typeof dtype !== 'string' || !(dtype in SAFETENSORS_DTYPES)) {
      fail(source, `${where}: unknown dtype ${JSON.stringify(dtype)}; expected one of ${Object.keys(SAFETENSORS_DTYPES).join(', ')}`);
    }
    const shape = entry.shape;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && (d as number) >= 0)) {
      fail(source, `${where}: shape must be an array of non-negative integers, got ${JSON.stringify(shape)}`);
    }
    const offsets = entry.data_offsets;
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && (o as number) >= 0)) {
      fail(source, `${where}: data_offsets must be [begin, end] non-negative integers, got ${JSON.stringify(offsets)}`);
    }
    const [begin, end] = offsets as [number, number];
    if (end < begin) fail(source, `${where}: data_offsets end ${end} < begin ${begin}`);
    if (end > dataLength) {
      fail(source, `${where}: data_offsets [${begin}, ${end}] run past the end of the data section (${dataLength} bytes); the file is truncated or corrupt`);
    }
    const expectedBytes = numel(shape as number[]) * SAFETENSORS_DTYPES[dtype as SafetensorsDtype];
    if (end - begin !== expectedBytes) {
      fail(source, `${where}: shape ${JSON.stringify(shape)} of ${dtype} needs ${expectedBytes} bytes but data_offsets [${begin}, ${end}] hold ${end - begin}`);
    }
    tensors.set(name, { name, dtype: dtype as SafetensorsDtype, shape: [...(shape as number[])], dataOffsets: [begin, end] });
  }
  // Tensors must not overlap (the format also requires them to cover the buffer; we only warn-free check overlap).
  const sorted = [...tensors.values()].sort((a, b) => a.dataOffsets[0] - b.dataOffsets[0]);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].dataOffsets[0] < sorted[i - 1].dataOffsets[1]) {
      fail(
        source,
        `tensor "${sorted[i].name}" overlaps tensor "${sorted[i - 1].name}" (data_offsets ${JSON.stringify(sorted[i].dataOffsets)} vs ` +
          `${JSON.stringify(sorted[i - 1].dataOffsets)})`,
      );
    }
  }
  return { metadata, tensors, dataStart: 8 + headerBytes.length, dataLength };
}

/** Validates the 8-byte length prefix against the total size and returns the header length. */
function checkHeaderLength(prefix: Uint8Array, totalSize: number, source: string): number {
  if (totalSize < 8) fail(source, `file is ${totalSize} bytes, too short for a safetensors header (needs at least 8)`);
  const view = new DataView(prefix.buffer, prefix.byteOffset, 8);
  const n = view.getBigUint64(0, true);
  if (n > BigInt(MAX_HEADER_BYTES) || Number(n) > totalSize - 8) {
    fail(
      source,
      `bad header length ${n} (file has ${totalSize - 8} bytes after the length prefix, limit ${MAX_HEADER_BYTES}); the file is corrupt or not a ` +
        `safetensors file`,
    );
  }
  if (n === 0n) fail(source, 'header length is 0; expected a JSON header');
  return Number(n);
}

// ---------- dtype conversion ----------

/** IEEE half → float32, for one 16-bit value. */
export function f16ToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;                 // zero / subnormal
  if (exp === 0x1f) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** float32 → IEEE half bits, round to nearest even, overflow to ±Infinity. */
export function f32ToF16(value: number): number {
  f32Scratch[0] = value;
  const x = u32Scratch[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);   // Inf / NaN
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;                           // overflow
  if (e <= 0) {                                                  // subnormal half or zero
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rem > mid || (rem === mid && (half & 1))) half++;
    return sign | half;
  }
  let half = sign | (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (half & 1))) half++;    // may carry into exponent: correct
  return half;
}

/** float32 → bfloat16 bits, round to nearest even. */
export function f32ToBf16(value: number): number {
  f32Scratch[0] = value;
  const x = u32Scratch[0];
  if ((x & 0x7f800000) === 0x7f800000 && (x & 0x7fffff)) return (x >>> 16) | 0x40; // keep NaN a NaN
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}

let f16Table: Float32Array | undefined;
function halfTable(): Float32Array {
  if (!f16Table) {
    f16Table = new Float32Array(65536);
    for (let i = 0; i < 65536; i++) f16Table[i] = f16ToF32(i);
  }
  return f16Table;
}

/** Converts raw little-endian bytes of `dtype` into float32 values. */
export function bytesToFloat32(bytes: Uint8Array, dtype: SafetensorsDtype, source: string, name: string): Float32Array {
  const aligned = bytes.byteOffset % 8 === 0 ? bytes : bytes.slice();
  switch (dtype) {
    case 'F32': {
      const view = new Float32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 4);
      // A buffer we own outright (SafetensorsReader.readBytes) is wrapped, anything else copied.
      return aligned.byteOffset === 0 && aligned.byteLength === aligned.buffer.byteLength ? view : view.slice();
    }
    case 'F64':
      return Float32Array.from(new Float64Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 8));
    case 'F16': {
      const u16 = new Uint16Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 2);
      const table = halfTable();
      const out = new Float32Array(u16.length);
      for (let i = 0; i < u16.length; i++) out[i] = table[u16[i]];
      return out;
    }
    case 'BF16': {
      const u16 = new Uint16Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 2);
      const out = new Float32Array(u16.length);
      const u32 = new Uint32Array(out.buffer);
      for (let i = 0; i < u16.length; i++) u32[i] = u16[i] << 16;
      return out;
    }
    default:
      return fail(source, `tensor "${name}": dtype ${dtype} cannot be read as floating point weights; supported: ${READABLE_DTYPES.join(', ')}`);
  }
}

/** Converts float32 values to the little-endian bytes of `dtype`. */
export function float32ToBytes(data: Float32Array, dtype: WritableDtype): Uint8Array {
  switch (dtype) {
    case 'F32':
      return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    case 'F16': {
      const out = new Uint16Array(data.length);
      for (let i = 0; i < data.length; i++) out[i] = f32ToF16(data[i]);
      return new Uint8Array(out.buffer);
    }
    case 'BF16': {
      const out = new Uint16Array(data.length);
      for (let i = 0; i < data.length; i++) out[i] = f32ToBf16(data[i]);
      return new Uint8Array(out.buffer);
    }
  }
}

// ---------- reading ----------

/** Random-access reader: the header up front, each tensor's bytes on demand. Call close(). */
export class SafetensorsReader {
  private constructor(private readonly handle: FileHandle, readonly path: string, readonly header: SafetensorsHeader) {}

  static async open(path: string): Promise<SafetensorsReader> {
    let handle: FileHandle;
    let size: number;
    try {
      // a regular file only: a FIFO or device named model.safetensors is refused unopened (core/util/regular-file.ts)
      ({ handle, size } = await openRegularFile(path));
    } catch (err) {
      if (err instanceof NotRegularFileError) throw new SafetensorsError(`${path}: is ${err.kind}, not a safetensors file; nothing was read from it`);
      const code = (err as NodeJS.ErrnoException).code;
      throw new SafetensorsError(`${path}: cannot open safetensors file (${code ?? (err as Error).message})`);
    }
    try {
      if (size < 8) fail(path, `file is ${size} bytes, too short for a safetensors header (needs at least 8)`);
      const prefix = new Uint8Array(8);
      await readExactly(handle, prefix, 0, path);
      const n = checkHeaderLength(prefix, size, path);
      const headerBytes = new Uint8Array(n);
      await readExactly(handle, headerBytes, 8, path);
      const header = parseSafetensorsHeader(headerBytes, size - 8 - n, path);
      return new SafetensorsReader(handle, path, header);
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  get names(): string[] { return [...this.header.tensors.keys()]; }

  info(name: string): TensorInfo {
    const info = this.header.tensors.get(name);
    if (!info)
      throw new SafetensorsError(
        `${this.path}: no tensor named "${name}" (the file has ${this.header.tensors.size}: ` +
          `${this.names.slice(0, 8).join(', ')}${this.header.tensors.size > 8 ? ', ...' : ''})`,
      );
    return info;
  }

  /** Raw bytes of one tensor (a fresh, 8-aligned buffer). */
  async readBytes(name: string): Promise<Uint8Array> {
    const { dataOffsets } = this.info(name);
    const bytes = new Uint8Array(dataOffsets[1] - dataOffsets[0]);
    await readExactly(this.handle, bytes, this.header.dataStart + dataOffsets[0], this.path);
    return bytes;
  }

  /** One tensor converted to float32. */
  async readTensor(name: string): Promise<TensorData> {
    const info = this.info(name);
    const bytes = await this.readBytes(name);
    return { shape: [...info.shape], data: bytesToFloat32(bytes, info.dtype, this.path, name) };
  }

  async close(): Promise<void> { await this.handle.close(); }
}

async function readExactly(handle: FileHandle, into: Uint8Array, position: number, source: string): Promise<void> {
  let done = 0;
  while (done < into.length) {
    const { bytesRead } = await handle.read(into, done, Math.min(into.length - done, 1 << 30), position + done);
    if (bytesRead === 0) fail(source, `unexpected end of file at byte ${position + done} (wanted ${into.length} bytes from ${position})`);
    done += bytesRead;
  }
}

/** Reads all (or the selected) tensors of a file as float32. */
export async function readSafetensors(path: string, names?: readonly string[]): Promise<Map<string, TensorData>> {
  const reader = await SafetensorsReader.open(path);
  try {
    const out = new Map<string, TensorData>();
    for (const name of names ?? reader.names) out.set(name, await reader.readTensor(name));
    return out;
  } finally {
    await reader.close();
  }
}

/** Decodes an in-memory safetensors buffer (small files, tests). */
export function decodeSafetensors(bytes: Uint8Array, source = '<buffer>'): { header: SafetensorsHeader; tensors: Map<string, TensorData> } {
  const n = checkHeaderLength(bytes.subarray(0, 8), bytes.length, source);
  const header = parseSafetensorsHeader(bytes.subarray(8, 8 + n), bytes.length - 8 - n, source);
  const tensors = new Map<string, TensorData>();
  for (const info of header.tensors.values()) {
    const slice = bytes.slice(header.dataStart + info.dataOffsets[0], header.dataStart + info.dataOffsets[1]);
    tensors.set(info.name, { shape: [...info.shape], data: bytesToFloat32(slice, info.dtype, source, info.name) });
  }
  return { header, tensors };
}

// ---------- writing ----------

export interface WriteOptions {
  /** Storage dtype of every tensor (default F32). */
  dtype?: WritableDtype;
  /** String metadata stored under "__metadata__" (default { format: "pt" }, which transformers expects). */
  metadata?: Record<string, string>;
}

/** A tensor whose values are produced only when written (e.g. read back from the GPU one at a time). */
export interface LazyTensorData { shape: number[]; read: () => Float32Array }
type AnyTensor = TensorData | LazyTensorData;
type TensorSource = Map<string, AnyTensor> | Record<string, AnyTensor>;

function entriesOf(tensors: TensorSource): [string, AnyTensor][] {
  return tensors instanceof Map ? [...tensors.entries()] : Object.entries(tensors);
}

function valuesOf(name: string, t: AnyTensor): Float32Array {
  const data = 'data' in t ? t.data : t.read();
  if (data.length !== numel(t.shape)) {
    throw new SafetensorsError(`tensor "${name}": shape ${JSON.stringify(t.shape)} needs ${numel(t.shape)} values but data has ${data.length}`);
  }
  return data;
}

function buildHeader(entries: [string, AnyTensor][], dtype: WritableDtype, metadata: Record<string, string>): Uint8Array {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  const width = SAFETENSORS_DTYPES[dtype];
  for (const [name, t] of entries) {
    if ('data' in t) valuesOf(name, t);
    const bytes = numel(t.shape) * width;
    header[name] = { dtype, shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  const pad = (8 - (Buffer.byteLength(json) % 8)) % 8;          // align the data section to 8 bytes
  json += ' '.repeat(pad);
  const jsonBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + jsonBytes.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(jsonBytes.length), true);
  out.set(jsonBytes, 8);
  return out;
}

/** Encodes tensors into one in-memory buffer (small models, tests). */
export function encodeSafetensors(tensors: TensorSource, options: WriteOptions = {}): Uint8Array {
  const dtype = options.dtype ?? 'F32';
  const entries = entriesOf(tensors);
  const head = buildHeader(entries, dtype, options.metadata ?? { format: 'pt' });
  const parts = entries.map(([name, t]) => float32ToBytes(valuesOf(name, t), dtype));
  const out = new Uint8Array(head.length + parts.reduce((s, p) => s + p.length, 0));
  out.set(head, 0);
  let at = head.length;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

/**
 * Writes tensors to `path` one at a time (never the whole file in memory), atomically:
 * into `path.tmp-<pid>` first, then renamed over `path`. Returns the sha-256 and size of the
 * bytes written (compare with a hash of the file read back to verify the write).
 */
export async function writeSafetensors(path: string, tensors: TensorSource, options: WriteOptions = {}): Promise<{ sha256: string; bytes: number }> {
  const dtype = options.dtype ?? 'F32';
  const entries = entriesOf(tensors);
  const head = buildHeader(entries, dtype, options.metadata ?? { format: 'pt' });
  const tmp = `${path}.tmp-${process.pid}`;
  const handle = await open(tmp, 'w');
  const hash = createHash('sha256');                              // of the bytes as sent, to verify what lands on disk
  let bytes = 0;
  try {
    const put = async (chunk: Uint8Array): Promise<void> => {
      hash.update(chunk);
      bytes += chunk.length;
      await handle.write(chunk);
    };
    await put(head);
    for (const [name, t] of entries) await put(float32ToBytes(valuesOf(name, t), dtype));
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  await rename(tmp, path);
  return { sha256: hash.digest('hex'), bytes };
}
