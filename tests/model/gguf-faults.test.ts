// Issue 37 item 5, the GGUF cases of the fault retest (../shared/reference/reliability-retest-2.md
// G11, G15, G16, G19, G10, G26): `model import` refuses duplicate tensor names and keys, non-positive
// or oversized sizes and non-finite floats naming the key (N8, N2); an unused metadata array is
// skipped, not materialised (N9); nested arrays give a named error; what a killed import left beside
// --out is removed by the next import (N10); a FIFO given as the file is refused without blocking.
// Files come from a raw GGUF v3 writer (tests/model/gguf-writer.ts): no Python needed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GgufError, importGguf, readGguf } from '../../core/model/gguf.js';
import { inspectHfFolder } from '../../core/model/hf-load.js';
import { cleanImportLeftovers, findTempLeftovers } from '../../core/storage/temp-files.js';
import { T, tinyGguf, tinyTensors, type TinyGgufOptions } from './gguf-writer.js';

let root = '';
beforeAll(() => { root = mkdtempSync(join(tmpdir(), 'gguf-faults-')); });
afterAll(() => { if (root) rmSync(root, { recursive: true, force: true }); });

let n = 0;
function file(options: TinyGgufOptions = {}): string {
  const p = join(root, `case-${++n}.gguf`);
  writeFileSync(p, tinyGguf(options));
  return p;
}

/** A pid that is certainly not running: a child that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '0']);
  return r.pid!;
}

describe('model import refuses what llama.cpp refuses or cannot load (N8, N2)', () => {
  it('the unchanged tiny file imports and the folder loads', async () => {
    const out = join(root, 'ok');
    const result = await importGguf(file(), out);
    expect(result.config).toMatchObject({ num_hidden_layers: 1, num_attention_heads: 4, num_key_value_heads: 2, max_position_embeddings: 256 });
    const info = await inspectHfFolder(out);
    expect(info.config.hidden_size).toBe(64);
  });

  const cases: [string, TinyGgufOptions, RegExp][] = [
    ['a tensor named twice (the second copy all zeros)',
      { extraTensors: [{ ...tinyTensors()[3]!, fill: 0 }] }, /tensor "blk\.0\.attn_q\.weight" appears twice/],
    ['a metadata key written twice', { repeatKeys: { 'llama.block_count': { type: T.U32, value: 2 } } }, /key "llama\.block_count" appears twice/],
    ['head_count -4 (i32)', { metadata: { 'llama.attention.head_count': { type: T.I32, value: -4 } } },
      /"llama\.attention\.head_count" is -4; expected a positive integer/],
    ['head_count_kv -2 (i32)', { metadata: { 'llama.attention.head_count_kv': { type: T.I32, value: -2 } } },
      /"llama\.attention\.head_count_kv" is -2; expected a positive integer/],
    ['context_length -5 (i32)', { metadata: { 'llama.context_length': { type: T.I32, value: -5 } } },
      /"llama\.context_length" is -5; expected a positive integer/],
    ['rms epsilon -1', { metadata: { 'llama.attention.layer_norm_rms_epsilon': { type: T.F32, value: -1 } } },
      /"llama\.attention\.layer_norm_rms_epsilon" is -1; expected a positive finite number/],
    ['rope.freq_base NaN', { metadata: { 'llama.rope.freq_base': { type: T.F32, value: NaN } } },
      /"llama\.rope\.freq_base" is NaN; expected a positive finite number/],
    ['context_length 2^26', { metadata: { 'llama.context_length': { type: T.U32, value: 2 ** 26 } } },
      /"llama\.context_length" is 67108864, more than 16777216/],
    ['context_length 2^40 (u64)', { metadata: { 'llama.context_length': { type: T.U64, value: 2 ** 40 } } },
      /"llama\.context_length" is 1099511627776, more than 16777216/],
    ['block_count 2^20', { metadata: { 'llama.block_count': { type: T.U32, value: 2 ** 20 } } }, /"llama\.block_count" is 1048576, more than 1024/],
  ];
  for (const [what, options, message] of cases) {
    it(`${what}: refused naming it, nothing written`, async () => {
      const parent = join(root, `refused-${++n}`);
      mkdirSync(parent);
      const err = await importGguf(file(options), join(parent, 'out')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GgufError);
      expect((err as Error).message).toMatch(message);
      expect(readdirSync(parent)).toEqual([]);
    });
  }
});

describe('metadata the import does not use (N9) and nesting (G10)', () => {
  it('an unused 4 MB u8 array is skipped unread, and the file still imports', async () => {
    const p = file({ metadata: { 'general.unused_blob': { type: 'u8-block', length: 4_000_000 } } });
    const parsed = readGguf(p);
    expect(parsed.metadata.get('general.unused_blob')).toEqual({ skipped: true, itemType: T.U8, length: 4_000_000 });
    expect((parsed.metadata.get('tokenizer.ggml.tokens') as string[]).length).toBe(32);
    const result = await importGguf(p, join(root, 'with-blob'));
    expect(result.config.vocab_size).toBe(32);
  });

  it('an unused array of strings is skipped too; arrays nested 100 deep are a named GgufError, not a stack overflow', () => {
    const strings = readGguf(file({ metadata: { 'general.tags': { type: T.ARRAY, itemType: T.STRING, items: ['a', 'bb', 'ccc'] } } }));
    expect(strings.metadata.get('general.tags')).toEqual({ skipped: true, itemType: T.STRING, length: 3 });
    // hand-made: key "deep" = array of array of … (100 levels), each of length 1, innermost an empty u8 array
    const head = tinyGguf();
    const deep: Buffer[] = [];
    const key = Buffer.from('deep');
    const len = Buffer.alloc(8); len.writeBigUInt64LE(BigInt(key.length));
    deep.push(len, key);
    const u32 = (v: number) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); return b; };
    const u64 = (v: number) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); return b; };
    deep.push(u32(T.ARRAY));
    for (let i = 0; i < 100; i++) deep.push(u32(T.ARRAY), u64(1));
    deep.push(u32(T.U8), u64(0));
    // splice it in as the first metadata entry (after magic, version, tensor count, metadata count + 1)
    const count = head.readBigUInt64LE(16);
    const counts = Buffer.alloc(8); counts.writeBigUInt64LE(count + 1n);
    const p = join(root, 'deep.gguf');
    writeFileSync(p, Buffer.concat([head.subarray(0, 16), counts, ...deep, head.subarray(24)]));
    expect(() => readGguf(p)).toThrow(GgufError);
    expect(() => readGguf(p)).toThrow(/key "deep" nests arrays more than 8 deep/);
  });
});

describe('leftovers and special files (N10, G24)', () => {
  it('a killed import\'s hidden temp folder beside --out is removed by the next import; doctor finds one inside a project', async () => {
    const parent = join(root, 'killed');
    const stale = join(parent, `.smol.import-${deadPid()}-1700000000000`);
    mkdirSync(stale, { recursive: true });
    writeFileSync(join(stale, 'model.safetensors'), Buffer.alloc(1024));
    const live = join(parent, `.other.import-${process.pid}-1700000000000`);   // a running import (this process): kept
    mkdirSync(live);
    const messages: string[] = [];
    await importGguf(file(), join(parent, 'smol'), { onProgress: (m) => messages.push(m), cleanLeftovers: (dir) => cleanImportLeftovers(dir).messages });
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(messages.join('\n')).toMatch(/removed .*\.smol\.import-\d+-1700000000000, left by an interrupted import \(process \d+ is gone\)/);
    expect(readdirSync(parent).sort()).toEqual(['.other.import-' + process.pid + '-1700000000000', 'smol']);
    // inside a project, doctor's walk lists it as a stale leftover to remove
    const project = join(root, 'project');
    const inProject = join(project, 'models', `.m.import-${deadPid()}-1`);
    mkdirSync(inProject, { recursive: true });
    const found = findTempLeftovers(project);
    expect(found.map((t) => [t.relPath, t.kind, t.stale, t.action])).toEqual([[join('models', `.m.import-${found[0]?.pid}-1`), 'import', true, 'remove']]);
  });

  it('a FIFO given as the GGUF file is refused without opening it for reading', () => {
    const fifo = join(root, 'pipe.gguf');
    const made = spawnSync('mkfifo', [fifo]);
    if (made.status !== 0) { console.warn('\n*** SKIPPED FIFO case: mkfifo unavailable ***\n'); return; }
    expect(() => readGguf(fifo)).toThrow(/pipe\.gguf: is a FIFO \(named pipe\), not a GGUF file; nothing was read from it/);
  });
});

it('the writer itself: the metadata the tests change is where readGguf reads it', () => {
  const parsed = readGguf(file({ metadata: { 'llama.context_length': { type: T.U32, value: 77 } } }));
  expect(parsed.metadata.get('llama.context_length')).toBe(77);
  expect(parsed.tensors.length).toBe(11);
  expect(readFileSync(join(root, `case-${n}.gguf`)).subarray(0, 4).toString('latin1')).toBe('GGUF');
});
