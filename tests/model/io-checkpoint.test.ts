// Checkpoints: save → load gives identical logits (F32), close logits (BF16), optimizer state
// and LoRA adapters survive, writes are atomic and verified, damaged files are named, and a
// checkpoint written here gives the same logits in PyTorch (pure-torch Qwen2 reference of
// tests/fixtures/make_parity_fixture.py; skipped where /usr/bin/python3 has no torch).
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '../../core/model/backend.js';
import { parseModelConfig } from '../../core/model/config.js';
import { CausalLM } from '../../core/model/transformer.js';
import { AdamW } from '../../core/model/optim.js';
import { buildCharTokenizer } from '../../core/model/tokenizer.js';
import { loadCheckpoint, readManifest, saveCheckpoint, verifyCheckpoint } from '../../core/model/checkpoint.js';
import { readSafetensors } from '../../core/model/safetensors.js';

const tokenizer = buildCharTokenizer();
const IDS = [tokenizer.encode('#_P√#\n#_XO#\n<answer>Up || Left</answer>'), tokenizer.encode('Player (P) is at (1,2); box (X) at (2,2).')];

function tinyModel(overrides: Record<string, unknown> = {}, seed = 1): CausalLM {
  const config = parseModelConfig({
    hidden_size: 32, intermediate_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2,
    vocab_size: tokenizer.vocabSize + 3, max_position_embeddings: 64, initializer_range: 0.2, ...overrides,
  });
  const model = new CausalLM(config, { seed });
  // Non-trivial norms and biases (they start at ones / zeros).
  for (const [name, v] of model.namedWeights()) {
    if (/norm|bias/.test(name)) tf.tidy(() => v.assign(tf.add(v, tf.randomNormal(v.shape, 0, 0.1, 'float32', name.length))));
  }
  return model;
}

function logitsOf(model: CausalLM, ids: number[][] = IDS.map((r) => r.slice(0, 20))): Float32Array {
  return tf.tidy(() => model.forward(ids).logits!.dataSync() as Float32Array);
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

const hasTorch = spawnSync('/usr/bin/python3', ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;

describe('checkpoints', () => {
  beforeAll(async () => { await initBackend({ ignoreEnv: true }); });

  it('save → load gives identical logits, tokenizer, manifest and optimizer state', async () => {
    const model = tinyModel({ value_head: true });
    const optimizer = new AdamW(model.trainableNames().map((name, i) => ({ name, variable: model.trainableVariables()[i] })));
    const grads = new Map(model.trainableNames().map((n, i) => [n, tf.onesLike(model.trainableVariables()[i])] as [string, tf.Tensor]));
    optimizer.apply(grads, 1e-3);
    for (const g of grads.values()) g.dispose();
    const before = logitsOf(model);
    const dir = join(mkdtempSync(join(tmpdir(), 'ckpt-')), 'sft-10');
    const manifest = await saveCheckpoint(dir, { model, tokenizer, optimizer, manifest: { parent: 'init-0', step: 10, stage: 'sft', metrics: { 'losses/sft': 1.25 } } });
    expect(manifest.weights.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(readdirSync(dir).sort()).toEqual(['config.json', 'generation_config.json', 'manifest.json', 'model.safetensors', 'optimizer.json',
      'optimizer.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(config.architectures).toEqual(['Qwen2ForCausalLM']);
    expect(config.value_head).toBe(true);
    const stored = await readSafetensors(join(dir, 'model.safetensors'));
    expect(stored.has('value_head.weight')).toBe(true);

    const loaded = await loadCheckpoint(dir);
    expect(maxAbsDiff(logitsOf(loaded.model), before)).toBe(0);
    const v1 = tf.tidy(() => model.forward(IDS.map((r) => r.slice(0, 20))).values!.dataSync());
    const v2 = tf.tidy(() => loaded.model.forward(IDS.map((r) => r.slice(0, 20))).values!.dataSync());
    expect(Array.from(v2)).toEqual(Array.from(v1));
    expect(loaded.tokenizer.encode('√ <think>')).toEqual(tokenizer.encode('√ <think>'));
    expect(loaded.manifest).toMatchObject({ parent: 'init-0', step: 10, stage: 'sft', metrics: { 'losses/sft': 1.25 }, optimizerStep: 1 });
    const original = optimizer.getState();
    expect(loaded.optimizerState!.step).toBe(1);
    for (const [k, t] of original.tensors) expect(Array.from(loaded.optimizerState!.tensors.get(k)!.data)).toEqual(Array.from(t.data));
    const resumed = new AdamW(loaded.model.trainableNames().map((name, i) => ({ name, variable: loaded.model.trainableVariables()[i] })));
    resumed.setState(loaded.optimizerState!);
    expect(resumed.step).toBe(1);
    for (const m of [model, loaded.model]) m.dispose();
    optimizer.dispose();
    resumed.dispose();
  });

  it('BF16 and F16 storage give close logits; a bias-free model is written with zero biases', async () => {
    const model = tinyModel({ attention_bias: false, tie_word_embeddings: false });
    const before = logitsOf(model);
    for (const dtype of ['BF16', 'F16'] as const) {
      const dir = join(mkdtempSync(join(tmpdir(), 'ckpt-')), dtype);
      await saveCheckpoint(dir, { model, tokenizer, dtype, manifest: { step: 0, stage: 'init' } });
      const stored = await readSafetensors(join(dir, 'model.safetensors'));
      expect(Array.from(stored.get('model.layers.0.self_attn.q_proj.bias')!.data).every((x) => x === 0)).toBe(true);
      expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).torch_dtype).toBe(dtype === 'BF16' ? 'bfloat16' : 'float16');
      const loaded = await loadCheckpoint(dir);
      // a qwen2 folder always carries q/k/v biases (HF Qwen2Attention has bias=True); the zeros written keep the logits
      expect(loaded.model.config.attention_bias).toBe(true);
      expect(Array.from(stored.get('model.layers.0.self_attn.k_proj.bias')!.data).every((x) => x === 0)).toBe(true);
      const diff = maxAbsDiff(logitsOf(loaded.model), before);
      expect(diff).toBeGreaterThan(0);
      expect(diff).toBeLessThan(dtype === 'BF16' ? 0.1 : 0.01);
      loaded.model.dispose();
    }
    model.dispose();
  });

  it('LoRA adapters are saved in PEFT layout and reload; a merged export equals the adapter forward', async () => {
    const model = tinyModel();
    model.enableLora({ rank: 2, alpha: 4, targetModules: ['q_proj', 'v_proj', 'down_proj'] }, 3);
    for (const [name, v] of model.loraWeights()) if (name.endsWith('lora_B.weight')) tf.tidy(() => v.assign(tf.randomNormal(v.shape, 0, 0.3, 'float32', 9)));
    const withAdapters = logitsOf(model);
    const root = mkdtempSync(join(tmpdir(), 'ckpt-'));
    await saveCheckpoint(join(root, 'lora'), { model, tokenizer, manifest: { step: 5, stage: 'rl' } });
    expect(JSON.parse(readFileSync(join(root, 'lora', 'adapter_config.json'), 'utf8'))).toMatchObject({ peft_type: 'LORA', r: 2, lora_alpha: 4 });
    const adapterKeys = [...(await readSafetensors(join(root, 'lora', 'adapter_model.safetensors'))).keys()];
    expect(adapterKeys).toContain('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight');
    const reloaded = await loadCheckpoint(join(root, 'lora'));
    expect(reloaded.model.getLoraConfig()).toEqual({ rank: 2, alpha: 4, targetModules: ['q_proj', 'v_proj', 'down_proj'] });
    expect(maxAbsDiff(logitsOf(reloaded.model), withAdapters)).toBe(0);
    await saveCheckpoint(join(root, 'merged'), { model, tokenizer, mergeLora: true, manifest: { step: 5, stage: 'export' } });
    expect(existsSync(join(root, 'merged', 'adapter_config.json'))).toBe(false);
    const merged = await loadCheckpoint(join(root, 'merged'));
    expect(merged.model.getLoraConfig()).toBeNull();
    expect(maxAbsDiff(logitsOf(merged.model), withAdapters)).toBeLessThan(1e-4);
    for (const m of [model, reloaded.model, merged.model]) m.dispose();
  });

  it('replaces a previous checkpoint atomically and keeps it when the new write fails', async () => {
    const model = tinyModel();
    const dir = join(mkdtempSync(join(tmpdir(), 'ckpt-')), 'latest');
    await saveCheckpoint(dir, { model, tokenizer, manifest: { step: 1, stage: 'sft' } });
    await saveCheckpoint(dir, { model, tokenizer, manifest: { step: 2, stage: 'sft', parent: 'x' } });
    expect((await readManifest(dir))!.step).toBe(2);
    const failing = Object.create(tokenizer, { save: { value: async () => { throw new Error('disk full'); } } });
    await expect(saveCheckpoint(dir, { model, tokenizer: failing, manifest: { step: 3, stage: 'sft' } })).rejects.toThrow(/disk full/);
    expect((await readManifest(dir))!.step).toBe(2);
    expect(await verifyCheckpoint(dir)).toEqual([]);
    expect(readdirSync(join(dir, '..'))).toEqual(['latest']);           // no temp folders left behind
    model.dispose();
  });

  it('names the damaged file when a checkpoint was modified', async () => {
    const model = tinyModel();
    const dir = join(mkdtempSync(join(tmpdir(), 'ckpt-')), 'c');
    await saveCheckpoint(dir, { model, tokenizer, manifest: { step: 1, stage: 'sft' } });
    model.dispose();
    const path = join(dir, 'model.safetensors');
    const bytes = readFileSync(path);
    bytes[bytes.length - 1] ^= 0xff;
    writeFileSync(path, bytes);
    await expect(loadCheckpoint(dir)).rejects.toThrow(/model\.safetensors: sha-256 .* does not match manifest\.json/);
    const unverified = await loadCheckpoint(dir, { verify: false });
    unverified.model.dispose();
  });

  it.skipIf(!hasTorch)('a checkpoint written here gives the same logits in the PyTorch Qwen2 reference', async () => {
    const variants = [{ tie_word_embeddings: true }, { tie_word_embeddings: false, attention_bias: false, value_head: true }];
    const root = mkdtempSync(join(tmpdir(), 'ckpt-torch-'));
    const ids = IDS.map((r) => r.slice(0, 20));
    writeFileSync(join(root, 'ids.json'), JSON.stringify({ input_ids: ids }));
    const models = variants.map((overrides, i) => ({ overrides, model: tinyModel(overrides, 7 + i), dir: join(root, `c${i}`), out: join(root, `out${i}.json`) }));
    for (const { model, dir } of models) await saveCheckpoint(dir, { model, tokenizer, manifest: { step: 0, stage: 'init' } });
    // One python process for all variants (importing torch takes seconds).
    execFileSync('/usr/bin/python3', [join(import.meta.dirname, '../fixtures/make_parity_fixture.py'), '--forward',
      ...models.flatMap(({ dir, out }) => [dir, join(root, 'ids.json'), out])]);
    for (const { overrides, model, out: outPath } of models) {
      const out = JSON.parse(readFileSync(outPath, 'utf8')) as { logits: number[]; shape: number[]; missing: string[]; unused: string[] };
      expect(out.missing).toEqual([]);
      expect(out.unused).toEqual('value_head' in overrides ? ['value_head.bias', 'value_head.weight'] : []);
      expect(out.shape).toEqual([2, 20, model.config.vocab_size]);
      expect(maxAbsDiff(logitsOf(model), Float32Array.from(out.logits))).toBeLessThan(1e-4);
      model.dispose();
    }
  });
});
