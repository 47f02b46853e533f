// Optimiser, gradient clipping and learning-rate schedules. AdamW as in PyTorch (decoupled
// weight decay, bias correction); its state is named Float32Arrays for checkpoints.
import * as tf from '@tensorflow/tfjs';

export interface AdamWOptions {
  beta1?: number;          // first-moment decay (0.9)
  beta2?: number;          // second-moment decay (0.999; 0.95 is common for LMs)
  eps?: number;            // denominator epsilon (1e-8)
  weightDecay?: number;    // decoupled weight decay (0.01)
  /** Which parameters decay (default: matrices only, not norms, biases or 1-D weights). */
  decay?: (name: string, variable: tf.Variable) => boolean;
}

export interface OptimizerState {
  step: number;
  /** `${name}.exp_avg` and `${name}.exp_avg_sq` -> data, with shapes. */
  tensors: Map<string, { shape: number[]; data: Float32Array }>;
}

interface Slot { name: string; variable: tf.Variable; m: tf.Variable; v: tf.Variable; decay: boolean }

export class AdamW {
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  step = 0;
  private readonly slots = new Map<string, Slot>();

  constructor(params: Array<{ name: string; variable: tf.Variable }>, options: AdamWOptions = {}) {
    this.beta1 = options.beta1 ?? 0.9;
    this.beta2 = options.beta2 ?? 0.999;
    this.eps = options.eps ?? 1e-8;
    this.weightDecay = options.weightDecay ?? 0.01;
    const decay = options.decay ?? ((_n: string, v: tf.Variable) => v.rank >= 2);
    for (const { name, variable } of params) {
      if (this.slots.has(name)) throw new Error(`AdamW: parameter ${name} given twice`);
      const zeros = tf.zerosLike(variable);
      this.slots.set(name, {
        name, variable, decay: decay(name, variable),
        m: tf.variable(zeros, false),
        v: tf.variable(zeros, false),
      });
      zeros.dispose(); // the variables hold their own references to the data
    }
  }

  names(): string[] { return [...this.slots.keys()]; }

  /** One update with gradients by parameter name (missing names are skipped). */
  apply(grads: Map<string, tf.Tensor>, lr: number): void {
    this.step++;
    const t = this.step;
    const bc1 = 1 - Math.pow(this.beta1, t);
    const bc2 = 1 - Math.pow(this.beta2, t);
    const stepSize = lr / bc1;
    const sqrtBc2 = Math.sqrt(bc2);
    for (const slot of this.slots.values()) {
      const g = grads.get(slot.name);
      if (!g) continue;
      tf.tidy(() => {
        const m = tf.add(tf.mul(slot.m, this.beta1), tf.mul(g, 1 - this.beta1));
        const v = tf.add(tf.mul(slot.v, this.beta2), tf.mul(tf.square(g), 1 - this.beta2));
        slot.m.assign(m);
        slot.v.assign(v);
        const denom = tf.add(tf.div(tf.sqrt(v), sqrtBc2), this.eps);
        let p: tf.Tensor = slot.variable;
        if (slot.decay && this.weightDecay > 0) p = tf.mul(p, 1 - lr * this.weightDecay);
        slot.variable.assign(tf.sub(p, tf.mul(tf.div(m, denom), stepSize)));
      });
    }
  }

  getState(): OptimizerState {
    const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
    for (const s of this.slots.values()) {
      tensors.set(`${s.name}.exp_avg`, { shape: [...s.m.shape], data: s.m.dataSync() as Float32Array });
      tensors.set(`${s.name}.exp_avg_sq`, { shape: [...s.v.shape], data: s.v.dataSync() as Float32Array });
    }
    return { step: this.step, tensors };
  }

  setState(state: OptimizerState): void {
    const problems: string[] = [];
    for (const s of this.slots.values()) {
      for (const [suffix, target] of [['exp_avg', s.m], ['exp_avg_sq', s.v]] as const) {
        const key = `${s.name}.${suffix}`;
        const t = state.tensors.get(key);
        if (!t) { problems.push(`missing ${key}`); continue; }
        if (t.shape.join(',') !== target.shape.join(',')) {
          problems.push(`${key}: expected shape [${target.shape.join(', ')}], got [${t.shape.join(', ')}]`);
          continue;
        }
      }
    }
    if (problems.length) throw new Error(`optimizer state does not match the parameters: ${problems.slice(0, 10).join('; ')}`);
    for (const s of this.slots.values()) {
      const m = state.tensors.get(`${s.name}.exp_avg`)!;
      const v = state.tensors.get(`${s.name}.exp_avg_sq`)!;
      tf.tidy(() => { s.m.assign(tf.tensor(m.data, m.shape)); s.v.assign(tf.tensor(v.data, v.shape)); });
    }
    this.step = state.step;
  }

  dispose(): void {
    for (const s of this.slots.values()) { s.m.dispose(); s.v.dispose(); }
    this.slots.clear();
  }
}

/** Global L2 norm of the gradients; scales them in place (returns new tensors) when above maxNorm. */
export function clipByGlobalNorm(grads: Map<string, tf.Tensor>, maxNorm: number): { grads: Map<string, tf.Tensor>; norm: number } {
  const sumSquares = tf.tidy(() => tf.addN([...grads.values()].map((g) => tf.sum(tf.square(g)))));
  const norm = Math.sqrt(sumSquares.dataSync()[0]!);
  sumSquares.dispose();
  if (!(maxNorm > 0) || !Number.isFinite(norm) || norm <= maxNorm) return { grads, norm };
  const scale = maxNorm / (norm + 1e-6);
  const out = new Map<string, tf.Tensor>();
  for (const [k, g] of grads) { out.set(k, tf.mul(g, scale)); g.dispose(); }
  return { grads: out, norm };
}

export interface ScheduleOptions {
  lr: number;                  // peak learning rate
  warmupSteps?: number;        // linear warmup from 0 (0)
  totalSteps?: number;         // schedule length; cosine decays to minLrRatio*lr at the end (required for cosine)
  minLrRatio?: number;         // floor of the cosine, as a fraction of lr (0.1)
  kind?: 'cosine' | 'constant' | 'linear';
}

/** Learning rate at a 0-based step: linear warmup, then cosine (or linear, or constant) decay. */
export function learningRate(step: number, s: ScheduleOptions): number {
  const warm = s.warmupSteps ?? 0;
  if (warm > 0 && step < warm) return s.lr * (step + 1) / warm;
  const kind = s.kind ?? 'cosine';
  if (kind === 'constant' || !s.totalSteps) return s.lr;
  const minLr = s.lr * (s.minLrRatio ?? 0.1);
  const progress = Math.min(1, Math.max(0, (step - warm) / Math.max(1, s.totalSteps - warm)));
  if (kind === 'linear') return s.lr + (minLr - s.lr) * progress;
  return minLr + 0.5 * (s.lr - minLr) * (1 + Math.cos(Math.PI * progress));
}
