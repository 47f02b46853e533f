// backend 'auto' never lands on a backend that cannot hold the model (issue 20): with no Python with torch, a run on a
// model with Qwen2.5's 151,936-token vocabulary is refused when the backend is chosen, naming why torch was not taken
// and the sizes; a tiny preset model still falls back to wasm; explicit requests are not second-guessed.
import { afterEach, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunConfigSchema } from '../../core/api/run-config.js';
import { autoBackendProblem, runModelConfig } from '../../core/train/auto-backend.js';
import { useBackend } from '../../core/train/runtime.js';
import { resetTorchProbe } from '../../core/model/torch/worker-client.js';

const saved = { python: process.env.SPA_PYTHON, backend: process.env.SPA_BACKEND };
afterEach(() => {
  if (saved.python === undefined) delete process.env.SPA_PYTHON; else process.env.SPA_PYTHON = saved.python;
  if (saved.backend === undefined) delete process.env.SPA_BACKEND; else process.env.SPA_BACKEND = saved.backend;
  resetTorchProbe();
});

/** A folder with Qwen2.5-0.5B-Instruct's config.json only (the check reads the config, not the weights). */
function qwenFolder(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-auto-backend-'));
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({
    architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', hidden_size: 896, intermediate_size: 4864, num_hidden_layers: 24,
    num_attention_heads: 14, num_key_value_heads: 2, vocab_size: 151936, max_position_embeddings: 32768, rope_theta: 1000000,
    rms_norm_eps: 1e-6, tie_word_embeddings: true, torch_dtype: 'bfloat16', hidden_act: 'silu',
  }));
  return dir;
}

const noTorch = { ok: false, reason: 'no Python with torch >= 1.13 (/nonexistent/python3: not found)' };

describe("backend 'auto' and the model's size", () => {
  it('refuses wasm for a 151,936-token-vocabulary model, with the reason torch was not taken and the sizes', () => {
    const config = RunConfigSchema.parse({ model: { source: 'hf-folder', path: qwenFolder() } });
    expect(runModelConfig(config)!.vocab_size).toBe(151936);
    const problem = autoBackendProblem(config, { requested: 'auto', backend: 'wasm', torch: noTorch });
    expect(problem).toMatch(/backend "auto" will not run .*spa-auto-backend-.* on TF\.js wasm/);
    expect(problem).toMatch(/torch is not available \(no Python with torch >= 1\.13 \(\/nonexistent\/python3: not found\)\)/);
    expect(problem).toMatch(/does not fit the wasm backend's 4\.3 GB of memory: it needs about \d+\.\d GB/);
    expect(problem).toMatch(/494,032,768 parameters/);
    expect(problem).toMatch(/\[tokens x 151936\]/);
  });

  it('lets a tiny preset model fall back to wasm, and judges only the automatic choice', () => {
    const tiny = RunConfigSchema.parse({});
    expect(autoBackendProblem(tiny, { requested: 'auto', backend: 'wasm', torch: noTorch })).toBeNull();
    const qwen = RunConfigSchema.parse({ model: { source: 'hf-folder', path: qwenFolder() } });
    expect(autoBackendProblem(qwen, { requested: 'wasm', backend: 'wasm', torch: null })).toBeNull();       // explicit: the loader refuses it
    expect(autoBackendProblem(qwen, { requested: 'auto', backend: 'torch', torch: { ok: true } })).toBeNull();
    expect(autoBackendProblem(qwen, { requested: 'auto', backend: 'tensorflow', torch: noTorch })).toBeNull(); // native TF.js: no 4 GiB heap
  });

  it('a bad config.json is named', () => {
    const dir = qwenFolder();
    fs.writeFileSync(path.join(dir, 'config.json'), '{ not json');
    const config = RunConfigSchema.parse({ model: { source: 'hf-folder', path: dir } });
    expect(() => runModelConfig(config)).toThrow(new RegExp(`${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/config\\.json: not valid JSON`));
  });

  it('a run with backend auto and no torch fails when its backend is chosen (useBackend), before loading the model', async () => {
    process.env.SPA_PYTHON = '/nonexistent/python3';
    delete process.env.SPA_BACKEND;
    resetTorchProbe();
    const config = RunConfigSchema.parse({ backend: 'auto', model: { source: 'hf-folder', path: qwenFolder() } });
    await expect(useBackend(config)).rejects.toThrow(/backend "auto" will not run .* on TF\.js wasm: torch is not available .*nonexistent.*does not fit/);
    // the same machine runs the tiny preset on wasm
    await expect(useBackend(RunConfigSchema.parse({ backend: 'auto' }))).resolves.toMatch(/Compute backend: TF\.js wasm/);
  });
});
