// Flattening of gradients / trainable weights into one Float32Array (in trainableNames() order).
import * as tf from '@tensorflow/tfjs';
import type { CausalLM } from '../transformer.js';

function variablesByName(model: CausalLM): Map<string, tf.Variable> {
  return new Map([...model.namedWeights(), ...model.loraWeights()]);
}

export function flatSize(model: CausalLM, names: string[]): number {
  const vars = variablesByName(model);
  return names.reduce((n, k) => n + vars.get(k)!.size, 0);
}

/** Gradients by name -> one array (missing gradients are zeros). */
export function flattenGradients(grads: Map<string, tf.Tensor>, names: string[], model: CausalLM): Float32Array {
  const vars = variablesByName(model);
  const out = new Float32Array(flatSize(model, names));
  let o = 0;
  for (const k of names) {
    const size = vars.get(k)!.size;
    const g = grads.get(k);
    if (g) out.set(g.dataSync() as Float32Array, o);
    o += size;
  }
  return out;
}

/** Current trainable weights -> one array. */
export function flattenWeights(model: CausalLM, names: string[]): Float32Array {
  const vars = variablesByName(model);
  const out = new Float32Array(flatSize(model, names));
  let o = 0;
  for (const k of names) { const v = vars.get(k)!; out.set(v.dataSync() as Float32Array, o); o += v.size; }
  return out;
}

/** One array -> assign the trainable weights. */
export function unflattenInto(model: CausalLM, names: string[], flat: Float32Array): void {
  const vars = variablesByName(model);
  let o = 0;
  for (const k of names) {
    const v = vars.get(k)!;
    tf.tidy(() => v.assign(tf.tensor(flat.subarray(o, o + v.size), v.shape)));
    o += v.size;
  }
  if (o !== flat.length) throw new Error(`trainable weights: expected ${o} values, got ${flat.length}`);
}

/** One array -> gradient tensors by name, scaled. */
export function unflattenGradients(model: CausalLM, names: string[], flat: Float32Array, scale: number): Map<string, tf.Tensor> {
  const vars = variablesByName(model);
  const out = new Map<string, tf.Tensor>();
  let o = 0;
  for (const k of names) {
    const v = vars.get(k)!;
    out.set(k, tf.tidy(() => tf.mul(tf.tensor(flat.subarray(o, o + v.size), v.shape), scale)));
    o += v.size;
  }
  return out;
}
