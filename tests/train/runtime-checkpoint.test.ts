// Checkpoints written by the pipeline go through core/model/checkpoint: the manifest carries the
// weights hash and the AdamW state, and resuming a stage restores the optimizer moments exactly.
import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-cpu';
import { RunConfigSchema } from '../../core/api/run-config.js';
import { createRuntime, loadRuntime, saveRuntime } from '../../core/train/runtime.js';
import type { TfjsRuntime } from '../../core/model/runtime.js';

await tf.setBackend('cpu');

describe('pipeline checkpoints', () => {
  it('save → resume restores weights and AdamW moments; a plain load starts a fresh optimizer', async () => {
    const config = RunConfigSchema.parse({ model: { source: 'preset', preset: 'tiny', overrides: { num_hidden_layers: 1, hidden_size: 32, intermediate_size: 64, num_attention_heads: 2, num_key_value_heads: 2 } } });
    const runtime = await createRuntime(config, { seed: 7, valueHead: false }) as TfjsRuntime;
    const ids = runtime.tokenizer.encode('<think>Up</think><answer>Up</answer>');
    await runtime.trainStep('sft', [{ ids, arrays: { lossMask: ids.map(() => 1) } }], {}, 1e-2, 1);
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'spa-rt-')), 'checkpoints', 'sft-1');
    await saveRuntime(runtime, dir, { stage: 'sft', step: 1, parent: null, metrics: { 'losses/sft': 1.5, note: 'not a number' } });

    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect(manifest.stage).toBe('sft');
    expect(manifest.step).toBe(1);
    expect(manifest.metrics).toEqual({ 'losses/sft': 1.5 });
    expect(manifest.weights.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.optimizerStep).toBe(1);

    const saved = runtime.trainer!.optimizer.getState();
    const resumed = await loadRuntime(dir, { valueHead: false, resume: true }) as TfjsRuntime;
    const restored = resumed.ensureOptimizer().optimizer.getState();
    expect(restored.step).toBe(saved.step);
    expect([...restored.tensors.keys()].sort()).toEqual([...saved.tensors.keys()].sort());
    for (const [name, t] of saved.tensors) expect(Array.from(restored.tensors.get(name)!.data)).toEqual(Array.from(t.data));
    for (const [name, w] of runtime.model.namedWeights()) {
      expect(Array.from(resumed.model.namedWeights().get(name)!.dataSync()), name).toEqual(Array.from(w.dataSync()));
    }

    const fresh = await loadRuntime(dir, { valueHead: false }) as TfjsRuntime;
    expect(fresh.ensureOptimizer().optimizer.getState().step).toBe(0);
    for (const rt of [runtime, resumed, fresh]) await rt.dispose();
  });
});
