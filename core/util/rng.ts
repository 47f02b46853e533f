// The one seeded pseudo-random number generator of the workbench (sfc32, seeded through
// splitmix32). Envs own one each (its whole state is four 32-bit words, so it serialises into an
// env's getState()/setState()); the pipeline uses it for shuffles, splits, subsampling and
// bootstrap intervals, the model for token sampling. Never Math.random: a fixed seed gives
// identical runs. Pure, and importable from every core/ folder (core/util is the bottom layer).

/** The serialisable state of an Rng: four unsigned 32-bit words. */
export interface RngState { a: number; b: number; c: number; d: number }

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export class Rng {
  private a = 0;
  private b = 0;
  private c = 0;
  private d = 0;

  constructor(seed = 0) {
    this.seed(seed);
  }

  /** Re-seed from any finite number (non-integers and negatives are folded into 32 bits). */
  seed(seed: number): void {
    if (!Number.isFinite(seed)) throw new Error(`Rng.seed: expected a finite number, received ${String(seed)}`);
    const lo = seed >>> 0;
    const hi = Math.floor(seed / 4294967296) >>> 0;
    const mix = splitmix32(lo ^ Math.imul(hi, 0x27d4eb2d));
    this.a = mix(); this.b = mix(); this.c = mix(); this.d = (mix() | 1) >>> 0;
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  static fromState(state: RngState): Rng {
    const rng = new Rng(0);
    rng.setState(state);
    return rng;
  }

  getState(): RngState {
    return { a: this.a, b: this.b, c: this.c, d: this.d };
  }

  setState(state: RngState): void {
    for (const key of ['a', 'b', 'c', 'd'] as const) {
      const v = state?.[key];
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) {
        throw new Error(`Rng.setState: expected { a, b, c, d } unsigned 32-bit integers, received ${JSON.stringify(state)}`);
      }
    }
    this.a = state.a; this.b = state.b; this.c = state.c; this.d = state.d;
  }

  /** Next unsigned 32-bit integer (sfc32). */
  nextUint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = (this.b ^ (this.b >>> 9)) >>> 0;
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    if (!Number.isInteger(n) || n <= 0) throw new Error(`Rng.int: expected a positive integer bound, received ${n}`);
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi] inclusive. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick: expected a non-empty array, received an empty one');
    return items[this.int(items.length)];
  }

  /** Fisher-Yates shuffle in place; returns the same array. */
  shuffle<T>(items: T[]): T[] {
    return shuffleInPlace(items, () => this.next());
  }
}

/** A seeded uniform [0, 1) stream as a function (an Rng's next), for code that only draws floats. */
export function createRng(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.next();
}

/** Fisher-Yates shuffle in place with a uniform [0, 1) stream; returns the same array. */
export function shuffleInPlace<T>(items: T[], next: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    const tmp = items[i] as T;
    items[i] = items[j] as T;
    items[j] = tmp;
  }
  return items;
}

/** FNV-1a 32-bit hash of a string: a stable seed derived from text (e.g. a rendered state). */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
