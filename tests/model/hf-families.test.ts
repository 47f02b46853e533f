// Which config.json families load (hfConfigToModelConfig) with which defaults, what is refused
// naming the key and value, and what the TF.js backends refuse before loading (features they do
// not implement; a model that cannot fit wasm's memory, with the sizes).
import { describe, expect, it } from 'vitest';
import { hfConfigToModelConfig, ModelFolderError } from '../../core/model/hf-load.js';
import { countParameters, hfTensorSpecs, tfjsUnsupported } from '../../core/model/config.js';
import { wasmFitProblem } from '../../core/model/memory.js';

const base = { hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, vocab_size: 300, intermediate_size: 96 };
const qwen25_05b = {
  model_type: 'qwen2', hidden_size: 896, num_hidden_layers: 24, num_attention_heads: 14, num_key_value_heads: 2, vocab_size: 151936,
  intermediate_size: 4864, tie_word_embeddings: true, rope_theta: 1e6,
};

describe('model families in config.json', () => {
  it('llama (SmolLM2): LlamaConfig defaults, no qkv bias, untied unless said', () => {
    const c = hfConfigToModelConfig({ ...base, model_type: 'llama', rope_theta: 1e5, tie_word_embeddings: true });
    expect(c.model_type).toBe('llama');
    expect(c.architectures).toEqual(['LlamaForCausalLM']);
    expect(c.attention_bias).toBe(false);
    expect(c.tie_word_embeddings).toBe(true);
    expect(c.rope_theta).toBe(1e5);
    expect(hfConfigToModelConfig({ ...base, model_type: 'llama' }).tie_word_embeddings).toBe(false);
    expect([...hfTensorSpecs(c).keys()].some((k) => k.endsWith('q_proj.bias'))).toBe(false);
  });

  it('llama 3.x rope_scaling llama3 is kept; other scalings are refused naming the key and value', () => {
    const rs = { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 };
    expect(hfConfigToModelConfig({ ...base, model_type: 'llama', rope_scaling: rs }).rope_scaling).toMatchObject(rs);
    expect(() => hfConfigToModelConfig({ ...base, model_type: 'qwen2', rope_scaling: { type: 'yarn', factor: 4 } })).toThrow(/rope_scaling.*"yarn"/);
    expect(() => hfConfigToModelConfig({ ...base, model_type: 'llama', rope_scaling: { ...rs, factor: 'x' } })).toThrow(/rope_scaling\.factor/);
  });

  it('qwen3: head_dim (default 128), q/k norm tensors, no qkv bias', () => {
    const c = hfConfigToModelConfig({ ...base, model_type: 'qwen3', head_dim: 32 });
    expect(c.head_dim).toBe(32);
    expect(c.attention_bias).toBe(false);
    const specs = hfTensorSpecs(c);
    expect(specs.get('model.layers.0.self_attn.q_proj.weight')).toEqual([128, 64]);
    expect(specs.get('model.layers.0.self_attn.o_proj.weight')).toEqual([64, 128]);
    expect(specs.get('model.layers.1.self_attn.k_norm.weight')).toEqual([32]);
    expect(hfConfigToModelConfig({ ...base, model_type: 'qwen3' }).head_dim).toBe(128);
    const n = [...specs.values()].reduce((a, s) => a + s.reduce((x, y) => x * y, 1), 0);
    expect(countParameters(c)).toBe(n);
    expect(tfjsUnsupported(c).join(' ')).toMatch(/qwen3.*head_dim 32/);
  });

  it('qwen2 keeps its defaults (qkv bias, untied)', () => {
    const c = hfConfigToModelConfig({ ...base, model_type: 'qwen2' });
    expect(c.attention_bias).toBe(true);
    expect(c.tie_word_embeddings).toBe(false);
    expect(tfjsUnsupported(c)).toEqual([]);
  });

  it('other families and features are refused naming the field and value', () => {
    expect(() => hfConfigToModelConfig({ ...base, model_type: 'mistral' })).toThrow(ModelFolderError);
    expect(() => hfConfigToModelConfig({ ...base, model_type: 'mistral' })).toThrow(/"model_type".*"mistral"/);
    expect(() => hfConfigToModelConfig({ ...base, model_type: 'llama', mlp_bias: true })).toThrow(/"mlp_bias".*true/);
    expect(() => hfConfigToModelConfig({ ...base, model_type: 'llama', hidden_act: 'gelu' })).toThrow(/"hidden_act".*"gelu"/);
    expect(() => hfConfigToModelConfig({ ...base, model_type: 'llama', architectures: ['Qwen2ForCausalLM'] })).toThrow(/architectures.*LlamaForCausalLM/);
  });
});

describe('wasm memory check', () => {
  it('refuses a 150k-vocabulary model for training with the sizes and the fix', () => {
    const c = hfConfigToModelConfig(qwen25_05b);
    const problem = wasmFitProblem(c, { trainable: true, tokenBudget: 6144 });
    expect(problem).toMatch(/4\.3 GB of memory/);
    expect(problem).toMatch(/494,032,768 parameters/);
    expect(problem).toMatch(/151936\] log-softmax/);
    expect(problem).toMatch(/torch backend/);
  });

  it('a small model with a big vocabulary fits once the token budget is small, and says which budget', () => {
    const micro = hfConfigToModelConfig({ ...qwen25_05b, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, intermediate_size: 128 });
    const problem = wasmFitProblem(micro, { trainable: true, tokenBudget: 6144 });
    const budget = Number(/tokensPerMicroBatch to (\d+)/.exec(problem ?? '')?.[1]);
    expect(budget).toBeGreaterThan(64);
    expect(wasmFitProblem(micro, { trainable: true, tokenBudget: budget })).toBeNull();
    expect(wasmFitProblem(hfConfigToModelConfig({ ...base, model_type: 'qwen2' }), { trainable: true, tokenBudget: 6144 })).toBeNull();
  });
});
