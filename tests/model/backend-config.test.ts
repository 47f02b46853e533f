// Backend selection report and config validation.
import { describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { initBackend, parseBackendRequest } from '../../core/model/backend.js';
import { countParameters, parseModelConfig, presetConfig, PRESETS } from '../../core/model/config.js';

describe('backend', () => {
  it('auto picks the best loadable backend and says why better ones were not used', async () => {
    const report = await initBackend({ backend: 'auto', ignoreEnv: true });
    expect(['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu']).toContain(report.backend);
    expect(tf.getBackend()).toBe(report.tfBackend);
    const index = report.attempts.findIndex((a) => a.ok);
    expect(report.attempts[index]!.name).toBe(report.backend);
    for (const failed of report.attempts.slice(0, index)) {
      expect(failed.reason).toMatch(/\S/);
      expect(report.summary).toContain(failed.name);
    }
  });

  it('an explicit request that cannot load is an error, not a fallback', async () => {
    const auto = await initBackend({ backend: 'auto', ignoreEnv: true });
    const unavailable = auto.attempts.find((a) => !a.ok);
    if (unavailable) {
      await expect(initBackend({ backend: unavailable.name, ignoreEnv: true })).rejects.toThrow(new RegExp(`Backend '${unavailable.name}' was requested .* could not be loaded`));
    }
    const wasm = await initBackend({ backend: 'wasm', ignoreEnv: true });
    expect(wasm.backend).toBe('wasm');
    expect(wasm.source).toBe('config');
    expect(() => parseBackendRequest('gpu', 'SPA_BACKEND')).toThrow(/SPA_BACKEND: expected one of auto, tensorflow-gpu, tensorflow, wasm, cpu, got "gpu"/);
  });

  it('SPA_BACKEND overrides the config', async () => {
    const previous = process.env.SPA_BACKEND;
    process.env.SPA_BACKEND = 'cpu';
    try {
      const report = await initBackend({ backend: 'wasm' });
      expect(report.backend).toBe('cpu');
      expect(report.source).toBe('env:SPA_BACKEND');
    } finally {
      if (previous === undefined) delete process.env.SPA_BACKEND; else process.env.SPA_BACKEND = previous;
    }
  });
});

describe('model config', () => {
  it('presets have the advertised sizes', () => {
    const sizes = Object.fromEntries(Object.keys(PRESETS).map((name) => [name, countParameters(presetConfig(name))]));
    expect(sizes.tiny).toBeGreaterThan(0.5e6); expect(sizes.tiny).toBeLessThan(1.5e6);
    expect(sizes.small).toBeGreaterThan(7e6); expect(sizes.small).toBeLessThan(13e6);
    expect(sizes.base).toBeGreaterThan(40e6); expect(sizes.base).toBeLessThan(60e6);
  });

  it('accepts a real Qwen2.5 config.json (extra fields kept) and rejects bad ones clearly', () => {
    const qwen = {
      architectures: ['Qwen2ForCausalLM'], attention_dropout: 0, bos_token_id: 151643, eos_token_id: 151645, hidden_act: 'silu',
      hidden_size: 896, initializer_range: 0.02, intermediate_size: 4864, max_position_embeddings: 32768, max_window_layers: 21,
      model_type: 'qwen2', num_attention_heads: 14, num_hidden_layers: 24, num_key_value_heads: 2, rms_norm_eps: 1e-6,
      rope_theta: 1000000, sliding_window: 32768, tie_word_embeddings: true, torch_dtype: 'bfloat16', transformers_version: '4.43.1',
      use_cache: true, use_sliding_window: false, vocab_size: 151936,
    };
    const c = parseModelConfig(qwen, 'config.json');
    expect(c.num_key_value_heads).toBe(2);
    expect((c as Record<string, unknown>).transformers_version).toBe('4.43.1');
    expect(countParameters(c)).toBeGreaterThan(490e6);
    expect(countParameters(c)).toBeLessThan(500e6);
    expect(() => parseModelConfig({ ...qwen, num_key_value_heads: 3 }, 'config.json')).toThrow(/config.json: invalid model config: num_attention_heads \(14\) must be a multiple of num_key_value_heads \(3\)/);
    expect(() => parseModelConfig({ ...qwen, hidden_size: 'big' }, 'config.json')).toThrow(/config.json: invalid model config: hidden_size: /);
    expect(() => parseModelConfig({ ...qwen, hidden_act: 'gelu' }, 'config.json')).toThrow(/hidden_act/);
    expect(() => presetConfig('huge')).toThrow(/unknown model preset "huge": expected one of tiny, small, base/);
  });
});
