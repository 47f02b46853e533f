// Issue 37 item 5, the Hugging Face folder cases of the fault retest (../shared/reference/reliability-retest-2.md
// HC2, HC3, HC5, G15, H-T8): config.json sizes are checked against sane bounds and the weights before
// anything is built from them (N2); a null rope_theta (Python's NaN written as null) is refused, not
// defaulted (N8); a FIFO as config.json, model.safetensors, tokenizer.json or chat_template.jinja is
// refused without opening it for reading (N11), and an oversized config.json is refused unread.
// The folder is the tiny llama of tests/model/gguf-writer.ts, imported with `model import`'s code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { closeSync, constants, cpSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importGguf } from '../../core/model/gguf.js';
import { inspectHfFolder, loadHfModel, ModelFolderError } from '../../core/model/hf-load.js';
import { loadTokenizer } from '../../core/model/tokenizer.js';
import { readAdapterConfig, readManifest, sha256File } from '../../core/model/checkpoint.js';
import { duplicateHeaderKey, SafetensorsReader } from '../../core/model/safetensors.js';
import { tinyGguf } from './gguf-writer.js';

let root = '';
let base = '';
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hf-faults-'));
  writeFileSync(join(root, 'tiny.gguf'), tinyGguf());
  base = join(root, 'base');
  await importGguf(join(root, 'tiny.gguf'), base);
});
afterAll(() => { if (root) rmSync(root, { recursive: true, force: true }); });

let n = 0;
/** A copy of the tiny folder with config.json changed. */
function withConfig(change: Record<string, unknown>): string {
  const dir = join(root, `case-${++n}`);
  cpSync(base, dir, { recursive: true });
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, ...change }));
  return dir;
}

describe('config.json sizes against bounds and weights, before allocating (N2, N8)', () => {
  it('the unchanged folder loads', async () => {
    expect((await inspectHfFolder(base)).config.num_hidden_layers).toBe(1);
  });

  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['num_hidden_layers 2^20', { num_hidden_layers: 2 ** 20 }, /num_hidden_layers: expected at most 1024/],
    ['num_hidden_layers 10^9', { num_hidden_layers: 1e9 }, /num_hidden_layers: expected at most 1024/],
    ['num_hidden_layers 3 over 1 stored layer', { num_hidden_layers: 3 }, /"num_hidden_layers" is 3 but the weights hold 1 layer/],
    ['max_position_embeddings 2^26', { max_position_embeddings: 2 ** 26 }, /max_position_embeddings: expected at most 16777216/],
    ['rope_theta null (NaN as Python writes it, through JSON)', { rope_theta: null }, /key "rope_theta": expected a positive number, got null/],
    ['rms_norm_eps -1', { rms_norm_eps: -1 }, /rms_norm_eps/],
    ['num_attention_heads -4', { num_attention_heads: -4 }, /num_attention_heads": expected a positive integer/],
  ];
  for (const [what, change, message] of cases) {
    it(`${what}: a named ModelFolderError`, async () => {
      const err = await inspectHfFolder(withConfig(change)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ModelFolderError);
      expect((err as Error).message).toMatch(message);
    });
  }

  it('max_position_embeddings 2^22 (within the bound): the TF.js load refuses its 512 MiB RoPE tables before building them (HC6)', async () => {
    const dir = withConfig({ max_position_embeddings: 2 ** 22 });
    expect((await inspectHfFolder(dir)).config.max_position_embeddings).toBe(2 ** 22);   // the folder itself is valid
    const tok = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ ...tok, eos_token: 'Z' }));
    await expect(loadHfModel(dir)).rejects.toThrow(/"max_position_embeddings" is 4194304; the TF\.js model builds its RoPE tables .* \(512 MiB/);
    const ok = await loadHfModel(withConfig({ max_position_embeddings: 256 }), { tokenizer: false });
    ok.model.dispose();
  });

  it('a safetensors header naming a tensor twice is refused (JSON.parse would keep the last silently)', async () => {
    const dir = withConfig({});
    const file = join(dir, 'model.safetensors');
    const bytes = readFileSync(file);
    const n = Number(bytes.readBigUInt64LE(0));
    const header = bytes.subarray(8, 8 + n).toString('utf8').trimEnd();
    const norm = /"model\.norm\.weight":\{[^}]*\}/.exec(header)![0];
    const twice = header.replace(/\}$/, `,${norm}}`);
    const padded = twice + ' '.repeat((8 - (Buffer.byteLength(twice) % 8)) % 8);
    const length = Buffer.alloc(8); length.writeBigUInt64LE(BigInt(Buffer.byteLength(padded)));
    writeFileSync(file, Buffer.concat([length, Buffer.from(padded), bytes.subarray(8 + n)]));
    await expect(SafetensorsReader.open(file)).rejects.toThrow(/header names tensor "model\.norm\.weight" twice/);
    expect(duplicateHeaderKey('{"a":{"b":1,"b":2},"c":"a","d":1}')).toBe(null);   // only top-level keys; values are not keys
    expect(duplicateHeaderKey('{"a\\"x":1, "a\\"x" :2}')).toBe('a"x');
  });

  it('a 2 MB config.json is refused from its size, unread', async () => {
    const dir = withConfig({ padding: 'x'.repeat(2 * 1024 * 1024) });
    await expect(inspectHfFolder(dir)).rejects.toThrow(/config\.json: is 2\.0 MiB, over the 1\.0 MiB limit/);
  });
});

/**
 * Runs `load` on a folder where `name` is a FIFO. If the loader opened the FIFO for reading it would block
 * (an async open waits in libuv's pool); a guard then opens the FIFO's write end to release it, and
 * the test fails on `released`. A loader that refuses the FIFO unopened never needs the guard.
 */
async function withFifo(name: string, load: (dir: string) => Promise<unknown>): Promise<{ error: unknown; released: boolean }> {
  const dir = join(root, `fifo-${++n}`);
  cpSync(base, dir, { recursive: true });
  rmSync(join(dir, name), { force: true });
  const made = spawnSync('mkfifo', [join(dir, name)]);
  if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr}`);
  let released = false;
  const guard = setTimeout(() => {
    released = true;
    try { closeSync(openSync(join(dir, name), constants.O_WRONLY | constants.O_NONBLOCK)); } catch { /* no reader: nothing to release */ }
  }, 3000);
  try {
    const error = await load(dir).then(() => null, (e: unknown) => e);
    return { error, released };
  } finally {
    clearTimeout(guard);
  }
}

describe('special files in a model folder (N11, N3)', () => {
  for (const name of ['config.json', 'model.safetensors']) {
    it(`${name} as a FIFO: refused unopened by inspectHfFolder`, async () => {
      const { error, released } = await withFifo(name, (dir) => inspectHfFolder(dir));
      expect(released).toBe(false);
      expect(String(error)).toMatch(new RegExp(`${name.replace('.', '\\.')}: is a FIFO \\(named pipe\\)`));
    }, 10_000);
  }
  it('a checkpoint\'s manifest.json, adapter_config.json or a hashed file as a FIFO: refused unopened', async () => {
    for (const [name, load] of [['manifest.json', (dir: string) => readManifest(dir)],
      ['adapter_config.json', (dir: string) => readAdapterConfig(join(dir, 'adapter_config.json'))],
      ['model.safetensors', (dir: string) => sha256File(join(dir, 'model.safetensors'))]] as const) {
      const { error, released } = await withFifo(name, load);
      expect(released, name).toBe(false);
      expect(String(error), name).toMatch(new RegExp(`${name.replace('.', '\\.')}: is a FIFO \\(named pipe\\)`));
    }
  }, 30_000);

  for (const name of ['tokenizer.json', 'chat_template.jinja']) {
    it(`${name} as a FIFO: refused unopened by loadTokenizer`, async () => {
      const { error, released } = await withFifo(name, (dir) => loadTokenizer(dir));
      expect(released).toBe(false);
      expect(String(error)).toMatch(new RegExp(`${name.replace('.', '\\.')}: is a FIFO \\(named pipe\\)`));
    }, 10_000);
  }
});
