// Numerical parity with PyTorch: tiny random Qwen2 checkpoints written by
// tests/fixtures/make_parity_fixture.py (a plain-torch transcription of transformers'
// modeling_qwen2.py, float64) load through hf-load and give the same logits here.
// Variants: F32 untied + GQA 4:2; BF16 tied + GQA 4:1 + rope_theta 1e6; F16 sharded MHA.
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { initBackend } from '../../core/model/backend.js';
import { loadHfModel } from '../../core/model/hf-load.js';
import { readSafetensors } from '../../core/model/safetensors.js';

const ROOT = join(import.meta.dirname, '../fixtures/model/parity');

async function compare(name: string, attention: 'fast' | 'reference'): Promise<{ maxAbs: number; scale: number }> {
  const dir = join(ROOT, name);
  const { model, info } = await loadHfModel(dir, { model: { attention, trainable: false } });
  try {
    const { input_ids: ids } = JSON.parse(readFileSync(join(dir, 'inputs.json'), 'utf8')) as { input_ids: number[][] };
    const expected = (await readSafetensors(join(dir, 'expected.safetensors'))).get('logits')!;
    const logits = tf.tidy(() => model.forward(ids).logits!);
    expect(logits.shape).toEqual(expected.shape);
    expect(expected.shape).toEqual([ids.length, ids[0].length, info.config.vocab_size]);
    const got = logits.dataSync();
    logits.dispose();
    let maxAbs = 0;
    let scale = 0;
    for (let i = 0; i < got.length; i++) {
      maxAbs = Math.max(maxAbs, Math.abs(got[i] - expected.data[i]));
      scale = Math.max(scale, Math.abs(expected.data[i]));
    }
    return { maxAbs, scale };
  } finally {
    model.dispose();
  }
}

describe('parity with the PyTorch Qwen2 reference', () => {
  beforeAll(async () => { await initBackend({ ignoreEnv: true }); });

  for (const name of ['qwen2-f32', 'qwen2-tied-bf16', 'qwen2-sharded-f16']) {
    it(`${name}: logits match within 1e-4 (relative to the largest logit)`, async () => {
      for (const attention of ['fast', 'reference'] as const) {
        const { maxAbs, scale } = await compare(name, attention);
        expect(scale).toBeGreaterThan(1);                       // the fixture is not trivially zero
        expect(maxAbs / scale).toBeLessThan(1e-4);
      }
    });
  }

  it('the fixture reports its layout (sharded, dtypes, tied head)', async () => {
    const sharded = await loadHfModel(join(ROOT, 'qwen2-sharded-f16'));
    expect(sharded.info.sharded).toBe(true);
    expect(sharded.info.weightFiles).toHaveLength(2);
    expect(Object.keys(sharded.info.dtypes)).toEqual(['F16']);
    expect(sharded.info.generation?.eosTokenIds).toEqual([282, 280]);
    sharded.model.dispose();
    const tied = await loadHfModel(join(ROOT, 'qwen2-tied-bf16'));
    expect(tied.info.config.tie_word_embeddings).toBe(true);
    expect(tied.info.config.num_key_value_heads).toBe(1);
    expect(tied.info.dtypes).toEqual({ BF16: tied.info.tensors.size });
    tied.model.dispose();
  });
});
