// Seeded random numbers for the pipeline (sampling seeds, shuffles, bootstrap). Never Math.random:
// a fixed run seed must give identical runs.

/** mulberry32: small, fast, good enough for shuffles and bootstrap resampling. Returns [0, 1). */
export function createRng(seed: number): () => number {
  let state = (seed >>> 0) ^ 0x9e3779b9;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Derive a child seed from a parent seed and labels (stable hash), e.g. deriveSeed(base, 'rl', step). */
export function deriveSeed(base: number, ...labels: Array<string | number>): number {
  let h = (base >>> 0) ^ 0x811c9dc5;
  for (const label of labels) {
    const text = String(label);
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    h ^= 0xff;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Fisher–Yates shuffle (in place) with a seeded RNG. */
export function shuffleInPlace<T>(items: T[], rng: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    const tmp = items[i] as T;
    items[i] = items[j] as T;
    items[j] = tmp;
  }
  return items;
}
