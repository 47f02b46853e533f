// A raw GGUF v3 writer for malformed-file tests (no Python needed): a tiny llama (1 layer, width 64,
// 4 heads / 2 KV heads, 32 byte-level tokens, F32 tensors) whose metadata and tensor table a test can
// change: override or add keys (typed), repeat a tensor, add arrays. Layout per ggml's gguf.c:
// magic, version, tensor count (u64), metadata count (u64), metadata, tensor infos, padding to
// general.alignment (32), tensor data.

/** GGUF value type ids. */
export const T = { U8: 0, I8: 1, U16: 2, I16: 3, U32: 4, I32: 5, F32: 6, BOOL: 7, STRING: 8, ARRAY: 9, U64: 10, I64: 11, F64: 12 } as const;

export type Typed =
  | { type: typeof T.U32 | typeof T.I32 | typeof T.F32 | typeof T.U8 | typeof T.U64 | typeof T.F64; value: number }
  | { type: typeof T.STRING; value: string }
  | { type: typeof T.ARRAY; itemType: number; items: (number | string)[] }
  /** An array of `length` u8 items, all zero, written without building a JS array (the N9 case). */
  | { type: 'u8-block'; length: number };

export interface TinyTensor { name: string; dims: number[]; fill?: number }

export interface TinyGgufOptions {
  /** Metadata to set (replacing the default of that key) or add, in order after the defaults. */
  metadata?: Record<string, Typed>;
  /** Keys written a second time after all others (the value given here). */
  repeatKeys?: Record<string, Typed>;
  /** Tensors appended to the table (e.g. a second "blk.0.attn_q.weight" filled with zeros). */
  extraTensors?: TinyTensor[];
}

const HIDDEN = 64;
const FFN = 128;
const HEADS = 4;
const KV = 2;
const HEAD_DIM = HIDDEN / HEADS;
export const TINY_TOKENS = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x41 + i));

function defaults(): Record<string, Typed> {
  return {
    'general.architecture': { type: T.STRING, value: 'llama' },
    'llama.block_count': { type: T.U32, value: 1 },
    'llama.context_length': { type: T.U32, value: 256 },
    'llama.embedding_length': { type: T.U32, value: HIDDEN },
    'llama.feed_forward_length': { type: T.U32, value: FFN },
    'llama.attention.head_count': { type: T.U32, value: HEADS },
    'llama.attention.head_count_kv': { type: T.U32, value: KV },
    'llama.attention.layer_norm_rms_epsilon': { type: T.F32, value: 1e-5 },
    'llama.rope.freq_base': { type: T.F32, value: 10000 },
    'tokenizer.ggml.model': { type: T.STRING, value: 'gpt2' },
    'tokenizer.ggml.tokens': { type: T.ARRAY, itemType: T.STRING, items: TINY_TOKENS },
    'tokenizer.ggml.merges': { type: T.ARRAY, itemType: T.STRING, items: [] },
  };
}

export function tinyTensors(): TinyTensor[] {
  const t = (name: string, ...dims: number[]): TinyTensor => ({ name, dims, fill: 0.01 });
  return [
    t('token_embd.weight', HIDDEN, TINY_TOKENS.length),
    t('output_norm.weight', HIDDEN),
    t('blk.0.attn_norm.weight', HIDDEN),
    t('blk.0.attn_q.weight', HIDDEN, HEADS * HEAD_DIM),
    t('blk.0.attn_k.weight', HIDDEN, KV * HEAD_DIM),
    t('blk.0.attn_v.weight', HIDDEN, KV * HEAD_DIM),
    t('blk.0.attn_output.weight', HEADS * HEAD_DIM, HIDDEN),
    t('blk.0.ffn_norm.weight', HIDDEN),
    t('blk.0.ffn_gate.weight', HIDDEN, FFN),
    t('blk.0.ffn_up.weight', HIDDEN, FFN),
    t('blk.0.ffn_down.weight', FFN, HIDDEN),
  ];
}

class Out {
  parts: Buffer[] = [];
  bytes = 0;
  push(b: Buffer): void { this.parts.push(b); this.bytes += b.length; }
  u32(v: number): void { const b = Buffer.alloc(4); b.writeUInt32LE(v); this.push(b); }
  u64(v: number | bigint): void { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.push(b); }
  str(s: string): void { const b = Buffer.from(s, 'utf8'); this.u64(b.length); this.push(b); }
  scalar(type: number, v: number | string): void {
    const b = Buffer.alloc(8);
    switch (type) {
      case T.U8: b.writeUInt8(v as number); this.push(b.subarray(0, 1)); break;
      case T.U32: b.writeUInt32LE(v as number); this.push(b.subarray(0, 4)); break;
      case T.I32: b.writeInt32LE(v as number); this.push(b.subarray(0, 4)); break;
      case T.F32: b.writeFloatLE(v as number); this.push(b.subarray(0, 4)); break;
      case T.U64: b.writeBigUInt64LE(BigInt(v)); this.push(b); break;
      case T.F64: b.writeDoubleLE(v as number); this.push(b); break;
      case T.STRING: this.str(v as string); break;
      default: throw new Error(`gguf-writer: type ${type} not written`);
    }
  }
  value(v: Typed): void {
    if (v.type === 'u8-block') { this.u32(T.ARRAY); this.u32(T.U8); this.u64(v.length); this.push(Buffer.alloc(v.length)); return; }
    this.u32(v.type);
    if (v.type === T.ARRAY) { this.u32(v.itemType); this.u64(v.items.length); for (const x of v.items) this.scalar(v.itemType, x); return; }
    this.scalar(v.type, v.value);
  }
}

/** The bytes of a tiny llama GGUF v3 file with the test's changes. */
export function tinyGguf(options: TinyGgufOptions = {}): Buffer {
  const meta = { ...defaults(), ...options.metadata };
  const repeats = Object.entries(options.repeatKeys ?? {});
  const tensors = [...tinyTensors(), ...(options.extraTensors ?? [])];
  const o = new Out();
  o.push(Buffer.from('GGUF', 'latin1'));
  o.u32(3);
  o.u64(tensors.length);
  o.u64(Object.keys(meta).length + repeats.length);
  for (const [key, v] of [...Object.entries(meta), ...repeats]) { o.str(key); o.value(v); }
  let offset = 0;
  const data: Buffer[] = [];
  for (const t of tensors) {
    o.str(t.name);
    o.u32(t.dims.length);
    for (const d of t.dims) o.u64(d);
    o.u32(0);                                   // F32
    o.u64(offset);
    const n = t.dims.reduce((a, b) => a * b, 1);
    const buf = Buffer.alloc(n * 4);
    for (let i = 0; i < n; i++) buf.writeFloatLE(t.fill ?? 0, i * 4);
    const padded = Buffer.alloc(Math.ceil(buf.length / 32) * 32);
    buf.copy(padded);
    data.push(padded);
    offset += padded.length;
  }
  o.push(Buffer.alloc((32 - (o.bytes % 32)) % 32));
  for (const d of data) o.push(d);
  return Buffer.concat(o.parts);
}
