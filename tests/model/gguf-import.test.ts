// `model import FILE.gguf` (issue 20 item 2): llama GGUF files written by llama.cpp's own Python writer
// (PyPI `gguf`), one per tensor type (F32, F16, BF16, Q8_0, Q4_0, Q4_1), from a transformers
// LlamaForCausalLM (tests/model/gguf-fixtures.py). Checks: every tensor equals gguf's own dequantisation
// with convert_hf_to_gguf's q/k permutation undone; the F32 import gives transformers exactly the original
// model's logits; the tokenizer and chat template agree with transformers; bad files fail with an error
// naming the type or key and leave nothing behind. The reference is SPA_TEST_HF_PYTHON, else /usr/bin/python3
// (.ci/install-models.sh installs gguf there); skipped loudly only when it cannot import gguf/transformers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GgufError, dequantize, importGguf, readGguf, unpermuteRows } from '../../core/model/gguf.js';
import { SafetensorsReader } from '../../core/model/safetensors.js';
import { loadTokenizer } from '../../core/model/tokenizer.js';
import { formatChat } from '../../core/model/chat.js';

const python = process.env.SPA_TEST_HF_PYTHON ?? '/usr/bin/python3';
const script = fileURLToPath(new URL('./gguf-fixtures.py', import.meta.url));
const TYPES = ['F32', 'F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_1'];
let root = '';
let skip = '';

function py(mode: string): Record<string, unknown> {
  const run = spawnSync(python, [script, mode, root], { encoding: 'utf8', timeout: 120_000 });
  if (run.status !== 0) throw new Error(`${script} ${mode} failed: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'gguf-import-'));
  if (!existsSync(python) && python.startsWith('/')) { skip = `${python} not found`; return; }
  const out = py('write');
  if (out.skip) skip = String(out.skip);
}, 150_000);
afterAll(() => { if (root) rmSync(root, { recursive: true, force: true }); });

function warnSkip(): boolean {
  if (!skip) return false;
  console.warn(`\n*** SKIPPED GGUF import vs llama.cpp's gguf package and transformers: ${skip}. ` +
    `Install them: ${python} -m pip install --break-system-packages --no-deps 'gguf==0.17.1'; transformers 4.40.2 ***\n`);
  return true;
}

describe('model import of GGUF files written by the gguf package', () => {
  it('each tensor type imports to the dequantised, un-permuted weights (F16/BF16 kept, quantised types as F32)', async () => {
    if (warnSkip()) return;
    for (const type of TYPES) {
      const out = join(root, `out-${type}`);
      const result = await importGguf(join(root, `${type}.gguf`), out);
      expect(result.config.model_type).toBe('llama');
      expect(result.config.tie_word_embeddings).toBe(type !== 'F32');
      const got = await SafetensorsReader.open(join(out, 'model.safetensors'));
      const want = await SafetensorsReader.open(join(root, `${type}.expected.safetensors`));
      try {
        const names = [...want.header.tensors.keys()].sort();
        expect(names.length, type).toBeGreaterThan(15);
        expect([...got.header.tensors.keys()].sort(), type).toEqual(names);
        for (const name of names) {
          const info = got.info(name);
          const twoD = info.shape.length === 2;
          expect(info.dtype, `${type} ${name}`).toBe(twoD && (type === 'F16' || type === 'BF16') ? type : 'F32');
          const a = (await got.readTensor(name)).data;
          const b = (await want.readTensor(name)).data;
          expect(a.length).toBe(b.length);
          let diff = 0;
          for (let i = 0; i < a.length; i++) diff = Math.max(diff, Math.abs(a[i]! - b[i]!));
          expect(diff, `${type} ${name}`).toBe(0);
        }
      } finally {
        await got.close();
        await want.close();
      }
    }
  }, 180_000);

  it('transformers gets the original model from the F32 import; tokenizer and chat template agree with transformers', async () => {
    if (warnSkip()) return;
    if (!existsSync(join(root, 'out-Q4_1'))) await importGguf(join(root, 'Q4_1.gguf'), join(root, 'out-Q4_1'));
    if (!existsSync(join(root, 'out-F32'))) await importGguf(join(root, 'F32.gguf'), join(root, 'out-F32'));
    const check = py('check') as { maxLogitDiff: number; ids: number[]; tokens: string[]; chat: string };
    expect(check.maxLogitDiff).toBeLessThan(1e-5);                        // q/k un-permuted: RoPE sees HF's layout
    const tokenizer = await loadTokenizer(join(root, 'out-Q4_1'));
    expect(tokenizer.encode('the them 1234 <|im_end|>')).toEqual(check.ids);
    expect(check.tokens).toContain('Ġthem');                               // the merges are used
    expect(check.tokens.filter((t) => /^\d$/.test(t))).toHaveLength(4);    // smollm pre-tokenizer: single digits
    const chat = formatChat([{ role: 'user', content: 'hi' }], tokenizer, { addGenerationPrompt: true });
    expect(chat.text).toBe(check.chat);
    expect(tokenizer.stopTokenIds).toContain(2);
    const generation = JSON.parse(readFileSync(join(root, 'out-Q4_1', 'generation_config.json'), 'utf8'));
    expect(generation).toEqual({ bos_token_id: 1, eos_token_id: 2, pad_token_id: 2 });
  }, 120_000);

  it('bad or unsupported files fail naming the tensor type or key, and nothing is written', async () => {
    if (warnSkip()) return;
    const cases: [string, RegExp][] = [
      ['bad-q4k.gguf', /tensor "token_embd.weight" has type Q4_K.*supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1/],
      ['bad-arch.gguf', /general.architecture is "gemma"/],
      ['bad-spm.gguf', /"tokenizer.ggml.model" is "llama"/],
    ];
    const bytes = readFileSync(join(root, 'Q8_0.gguf'));
    writeFileSync(join(root, 'truncated.gguf'), bytes.subarray(0, bytes.length - 1000));
    cases.push(['truncated.gguf', /past the end of the file.*truncated/]);
    writeFileSync(join(root, 'short.gguf'), bytes.subarray(0, 3000));
    cases.push(['short.gguf', /the file ends at byte 3000 while reading/]);
    writeFileSync(join(root, 'notgguf.gguf'), Buffer.from('PK\u0003\u0004 a zip, not a gguf'));
    cases.push(['notgguf.gguf', /not a GGUF file/]);
    const parent = join(root, 'errors');
    mkdirSync(parent);
    for (const [file, message] of cases) {
      await expect(importGguf(join(root, file), join(parent, 'out')), file).rejects.toThrow(message);
      await expect(importGguf(join(root, file), join(parent, 'out'))).rejects.toBeInstanceOf(GgufError);
      expect(readdirSync(parent), file).toEqual([]);                       // no folder, no temporary left behind
    }
    // an existing folder is never replaced without force
    copyFileSync(join(root, 'F32.gguf'), join(parent, 'a.gguf'));
    mkdirSync(join(parent, 'taken'));
    await expect(importGguf(join(parent, 'a.gguf'), join(parent, 'taken'))).rejects.toThrow(/already exists/);
  });
});

describe('ggml block formats (hand-made blocks)', () => {
  it('Q8_0, Q4_0 and Q4_1 dequantise as ggml does; q/k rows un-permute per head', () => {
    const q8 = new Uint8Array(34);
    new DataView(q8.buffer).setUint16(0, 0x3800, true);                   // d = 0.5
    for (let j = 0; j < 32; j++) q8[2 + j] = (j - 16) & 0xff;
    expect([...dequantize('Q8_0', q8, 32)]).toEqual(Array.from({ length: 32 }, (_, j) => 0.5 * (j - 16)));
    const q4 = new Uint8Array(18);
    new DataView(q4.buffer).setUint16(0, 0x4000, true);                   // d = 2
    for (let j = 0; j < 16; j++) q4[2 + j] = (j & 0x0f) | ((15 - j) << 4);
    const v0 = dequantize('Q4_0', q4, 32);
    expect(v0[0]).toBe(-16); expect(v0[15]).toBe(14); expect(v0[16]).toBe(14); expect(v0[31]).toBe(-16);
    const q41 = new Uint8Array(20);
    new DataView(q41.buffer).setUint16(0, 0x3c00, true);                  // d = 1
    new DataView(q41.buffer).setUint16(2, 0xbc00, true);                  // m = -1
    q41[4] = 0x52;
    const v1 = dequantize('Q4_1', q41, 32);
    expect(v1[0]).toBe(1); expect(v1[16]).toBe(4); expect(v1[1]).toBe(-1);
    expect(() => dequantize('Q4_K', q41, 32)).toThrow(/Q4_K is not supported/);
    // one head of 4 rows: GGUF rows [r0, r2, r1, r3] (interleaved halves) back to [r0, r1, r2, r3]
    const rows = unpermuteRows(new Float32Array([0, 2, 1, 3]), 4, 1, 1);
    expect([...rows]).toEqual([0, 1, 2, 3]);
    expect(() => readGguf(join(tmpdir(), 'does-not-exist.gguf'))).toThrow(/cannot open \(ENOENT\)/);
  });
});
