// LoRA: base weights frozen while adapters train; merged export equals the adapter forward.
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { CausalLM } from '../../core/model/transformer.js';
import { Trainer } from '../../core/model/trainer.js';
import { maxAbsDiff, randomIds, tinyConfig, useTestBackend } from './helpers.js';

beforeAll(useTestBackend);

describe('LoRA', () => {
  it('trains adapters only (base unchanged) and merges into an equal plain model', () => {
    const model = new CausalLM(tinyConfig(), { seed: 12 });
    const base = new Map([...model.namedWeights()].map(([k, v]) => [k, v.dataSync().slice()]));
    model.enableLora({ rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj', 'down_proj'] });
    expect(model.trainableNames()).toHaveLength(2 * 2 * 3);
    expect(model.trainableNames()[0]).toBe('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight');
    const ids = randomIds(3, 8, 17, 4);
    // With B = 0 the adapters start as the identity.
    const plainLogits = tf.tidy(() => model.forward(ids).logits!.arraySync());
    const trainer = new Trainer(model, { schedule: { lr: 2e-2, kind: 'constant' } });
    const lossMask = ids.map((r) => r.map((_, t) => (t > 0 ? 1 : 0)));
    const first = trainer.step({ lossName: 'sft', batch: { inputIds: ids, lossMask } });
    let last = first;
    for (let i = 0; i < 5; i++) last = trainer.step({ lossName: 'sft', batch: { inputIds: ids, lossMask } });
    expect(last.loss).toBeLessThan(first.loss);
    for (const [k, v] of model.namedWeights()) expect(v.dataSync()).toEqual(base.get(k));
    const adapted = tf.tidy(() => model.forward(ids).logits!);
    expect(maxAbsDiff(adapted, tf.tensor(plainLogits))).toBeGreaterThan(1e-4); // the adapters changed the function
    const unmergedClone = model.clone();
    model.mergeLora();
    expect(model.loraWeights().size).toBe(0);
    expect(model.trainableVariables().length).toBe(model.namedWeights().size);
    tf.tidy(() => {
      expect(maxAbsDiff(model.forward(ids).logits!, adapted)).toBeLessThan(1e-4);
      expect(maxAbsDiff(unmergedClone.forward(ids).logits!, adapted)).toBeLessThan(1e-5);
    });
    adapted.dispose();
    trainer.dispose(); model.dispose(); unmergedClone.dispose();
  });

  it('rejects bad settings', () => {
    const model = new CausalLM(tinyConfig(), { seed: 1 });
    expect(() => model.enableLora({ rank: 0, alpha: 8, targetModules: ['q_proj'] })).toThrow(/rank/);
    expect(() => model.enableLora({ rank: 2, alpha: 8, targetModules: ['qproj'] })).toThrow(/targetModules: expected a non-empty subset of q_proj/);
    model.dispose();
  });
});
