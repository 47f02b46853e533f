// Loading Hugging Face Qwen2 folders: config mapping, sharded index, and clear errors naming
// the file and key for every kind of missing or bad file.
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '../../core/model/backend.js';
import { expectedTensors, hfConfigToModelConfig, inspectHfFolder, loadHfModel } from '../../core/model/hf-load.js';
import { readSafetensors, writeSafetensors } from '../../core/model/safetensors.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/model/parity');

function copyFixture(name: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'hf-')), name);
  cpSync(join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

function editJson(path: string, edit: (j: Record<string, unknown>) => void): void {
  const json = JSON.parse(readFileSync(path, 'utf8'));
  edit(json);
  writeFileSync(path, JSON.stringify(json));
}

describe('Hugging Face folder loading', () => {
  beforeAll(async () => { await initBackend({ ignoreEnv: true }); });

  it('maps config.json with transformers defaults (untied head, GQA from num_key_value_heads)', () => {
    const c = hfConfigToModelConfig({ hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, vocab_size: 100, intermediate_size: 128, torch_dtype: 'bfloat16' });
    expect(c.tie_word_embeddings).toBe(false);
    expect(c.num_key_value_heads).toBe(4);
    expect(c.max_position_embeddings).toBe(32768);
    expect(c.torch_dtype).toBe('bfloat16');
    expect(() => hfConfigToModelConfig({ model_type: 'gpt2', hidden_size: 8 }, 'x/config.json')).toThrow(/x\/config\.json: key "model_type": expected one of "qwen2", "qwen3", "llama".*got "gpt2"/);
    expect(() => hfConfigToModelConfig({ hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, vocab_size: 100 }, 'c.json')).toThrow(/c\.json: missing required key "intermediate_size"/);
    expect(() => hfConfigToModelConfig({ hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, vocab_size: 100, intermediate_size: 8, rope_scaling: { type: 'yarn' } }, 'c.json')).toThrow(/key "rope_scaling"/);
    expect(() => hfConfigToModelConfig({ hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 3, vocab_size: 100, intermediate_size: 8 }, 'c.json')).toThrow(/c\.json: invalid model config: hidden_size \(64\) must be divisible/);
  });

  it('maps the published Qwen2.5-0.5B / 1.5B configs to exactly their published parameter counts', () => {
    const q05 = {
      architectures: ['Qwen2ForCausalLM'], attention_dropout: 0.0, bos_token_id: 151643, eos_token_id: 151645, hidden_act: 'silu',
      hidden_size: 896, initializer_range: 0.02, intermediate_size: 4864, max_position_embeddings: 32768, max_window_layers: 21,
      model_type: 'qwen2', num_attention_heads: 14, num_hidden_layers: 24, num_key_value_heads: 2, rms_norm_eps: 1e-6,
      rope_theta: 1000000.0, sliding_window: 32768, tie_word_embeddings: true, torch_dtype: 'bfloat16', transformers_version: '4.43.1',
      use_cache: true, use_sliding_window: false, vocab_size: 151936,
    };
    const q15 = { ...q05, hidden_size: 1536, intermediate_size: 8960, num_attention_heads: 12, num_hidden_layers: 28 };
    const count = (raw: Record<string, unknown>) => [...expectedTensors(hfConfigToModelConfig(raw)).values()].reduce((n, s) => n + s.reduce((a, b) => a * b, 1), 0);
    expect(count(q05)).toBe(494_032_768);
    expect(count(q15)).toBe(1_543_714_304);
    const c = hfConfigToModelConfig(q05);
    expect([c.rope_theta, c.num_key_value_heads, c.tie_word_embeddings, c.attention_bias, c.torch_dtype]).toEqual([1e6, 2, true, true, 'bfloat16']);
  });

  it('loads a sharded folder through model.safetensors.index.json', async () => {
    const info = await inspectHfFolder(join(FIXTURES, 'qwen2-sharded-f16'));
    expect(info.sharded).toBe(true);
    expect(info.weightFiles).toEqual(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
    expect(new Set([...info.tensors.values()].map((t) => t.file)).size).toBe(2);
    expect(info.parameterCount).toBe(36960);
  });

  it('loads checkpoints whose keys lack the "model." prefix (bare Qwen2Model) to the same logits', async () => {
    const dir = copyFixture('qwen2-f32');
    const weights = await readSafetensors(join(dir, 'model.safetensors'));
    const renamed = new Map([...weights].map(([k, v]) => [k === 'lm_head.weight' ? k : k.replace(/^model\./, ''), v]));
    await writeSafetensors(join(dir, 'model.safetensors'), renamed);
    const ids = [[1, 2, 3, 4, 5, 280, 281]];
    const a = await loadHfModel(dir);
    const b = await loadHfModel(join(FIXTURES, 'qwen2-f32'));
    const la = tf.tidy(() => a.model.forward(ids).logits!.dataSync());
    const lb = tf.tidy(() => b.model.forward(ids).logits!.dataSync());
    expect(Array.from(la)).toEqual(Array.from(lb));
    a.model.dispose();
    b.model.dispose();
  });

  it('adds a fresh value head (zero output) on request', async () => {
    const { model, initialised, info } = await loadHfModel(join(FIXTURES, 'qwen2-f32'), { valueHead: true });
    expect(initialised.sort()).toEqual(['value_head.bias', 'value_head.weight']);
    expect(info.config.value_head).toBe(true);
    const values = tf.tidy(() => model.forward([[1, 2, 3]]).values!.dataSync());
    expect(Array.from(values)).toEqual([0, 0, 0]);
    model.dispose();
  });

  const cases: [string, string, (dir: string) => void, RegExp][] = [
    ['missing config.json', 'qwen2-f32', (d) => rmSync(join(d, 'config.json')), /qwen2-f32\/config\.json: missing config\.json/],
    ['config.json not JSON', 'qwen2-f32', (d) => writeFileSync(join(d, 'config.json'), '{"hidden_size": 32,'), /qwen2-f32\/config\.json: config\.json .* is not valid JSON/],
    ['config.json missing a key', 'qwen2-f32', (d) => editJson(join(d, 'config.json'), (j) => { delete j.num_hidden_layers; }), /config\.json: missing required key "num_hidden_layers"/],
    ['config.json with a wrong type', 'qwen2-f32', (d) => editJson(join(d, 'config.json'), (j) => { j.hidden_size = '32'; }), /config\.json: key "hidden_size": expected a positive integer, got "32"/],
    ['no weights', 'qwen2-f32', (d) => rmSync(join(d, 'model.safetensors')), /qwen2-f32\/model\.safetensors: missing weights/],
    ['only PyTorch .bin weights', 'qwen2-f32', (d) => { rmSync(join(d, 'model.safetensors')); writeFileSync(join(d, 'pytorch_model.bin'), 'x'); }, /PyTorch \.bin weights, which are not supported/],
    ['a truncated weights file', 'qwen2-f32', (d) => { const b = readFileSync(join(d, 'model.safetensors')); writeFileSync(join(d, 'model.safetensors'), b.subarray(0, b.length - 100)); }, /model\.safetensors: tensor ".*": data_offsets .* run past the end/],
    ['shapes that disagree with config.json', 'qwen2-f32', (d) => editJson(join(d, 'config.json'), (j) => { j.intermediate_size = 64; }), /model\.safetensors: tensor "model\.layers\.0\.mlp\.gate_proj\.weight" has shape \[48, 32\] but config\.json implies \[64, 32\]/],
    ['an untied config without lm_head', 'qwen2-tied-bf16', (d) => editJson(join(d, 'config.json'), (j) => { j.tie_word_embeddings = false; }), /model\.safetensors: missing tensor "lm_head\.weight".*tie_word_embeddings/],
    ['a missing shard', 'qwen2-sharded-f16', (d) => rmSync(join(d, 'model-00002-of-00002.safetensors')), /model-00002-of-00002\.safetensors: missing shard listed in .*model\.safetensors\.index\.json \(e\.g\. for "weight_map\./],
    ['an index naming a tensor the shard lacks', 'qwen2-sharded-f16', (d) => editJson(join(d, 'model.safetensors.index.json'), (j) => { (j.weight_map as Record<string, string>)['model.extra.weight'] = 'model-00001-of-00002.safetensors'; }), /model-00001-of-00002\.safetensors: tensor "model\.extra\.weight" is listed in model\.safetensors\.index\.json but not stored/],
    ['an index without weight_map', 'qwen2-sharded-f16', (d) => writeFileSync(join(d, 'model.safetensors.index.json'), '{"metadata": {}}'), /model\.safetensors\.index\.json: key "weight_map": expected an object/],
    ['a bad generation_config.json', 'qwen2-f32', (d) => editJson(join(d, 'generation_config.json'), (j) => { j.top_p = 2; }), /generation_config\.json: key "top_p": expected a number in \(0, 1\], got 2/],
    ['a missing tokenizer.json', 'qwen2-f32', (d) => rmSync(join(d, 'tokenizer.json')), /qwen2-f32\/tokenizer\.json: missing tokenizer\.json/],
    ['a tokenizer larger than the vocabulary', 'qwen2-f32', (d) => editJson(join(d, 'tokenizer.json'), (j) => { (j.added_tokens as unknown[]).push({ id: 400, content: '<|extra|>', special: true, normalized: false, lstrip: false, rstrip: false, single_word: false }); }), /tokenizer\.json: the tokenizer has 401 tokens but config\.json "vocab_size" is 300/],
  ];
  for (const [what, fixture, damage, pattern] of cases) {
    it(`reports ${what} naming the file and key`, async () => {
      const dir = copyFixture(fixture);
      damage(dir);
      await expect(loadHfModel(dir)).rejects.toThrow(pattern);
    });
  }

  it('reports a folder that does not exist or is a file', async () => {
    await expect(loadHfModel('/nonexistent/model')).rejects.toThrow(/\/nonexistent\/model: model folder does not exist/);
    await expect(loadHfModel(join(FIXTURES, 'qwen2-f32', 'config.json'))).rejects.toThrow(/expected a model folder/);
  });
});
