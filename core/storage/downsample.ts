// Honest downsampling for charts: points are grouped into equal-width x buckets and each bucket
// keeps its mean, min and max (so a spike is never hidden) and its count. Pure (no Node imports).

export interface Bucketed {
  x: number[]; y: number[]; min: number[]; max: number[]; count: number[];
  totalPoints: number; downsampled: boolean;
}

/** `xs` ascending (ties allowed). With ≤ maxPoints points every point is its own bucket. */
export function downsampleMinMax(xs: readonly number[], ys: readonly number[], maxPoints: number): Bucketed {
  const n = Math.min(xs.length, ys.length);
  if (maxPoints < 1 || !Number.isFinite(maxPoints)) throw new Error(`downsampleMinMax: expected maxPoints ≥ 1, received ${maxPoints}`);
  if (n <= maxPoints) {
    return {
      x: xs.slice(0, n),
      y: ys.slice(0, n),
      min: ys.slice(0, n),
      max: ys.slice(0, n),
      count: new Array<number>(n).fill(1),
      totalPoints: n,
      downsampled: false,
    };
  }
  const x0 = xs[0]!;
  const x1 = xs[n - 1]!;
  const width = (x1 - x0) / maxPoints || 1;
  const out: Bucketed = { x: [], y: [], min: [], max: [], count: [], totalPoints: n, downsampled: true };
  let bucket = -1;
  let sx = 0, sy = 0, mn = Infinity, mx = -Infinity, c = 0;
  const flush = () => {
    if (c === 0) return;
    out.x.push(sx / c); out.y.push(sy / c); out.min.push(mn); out.max.push(mx); out.count.push(c);
  };
  for (let i = 0; i < n; i++) {
    const x = xs[i]!;
    const y = ys[i]!;
    const b = Math.min(maxPoints - 1, Math.floor((x - x0) / width));
    if (b !== bucket) { flush(); bucket = b; sx = 0; sy = 0; mn = Infinity; mx = -Infinity; c = 0; }
    sx += x; sy += y; c++;
    if (y < mn) mn = y;
    if (y > mx) mx = y;
  }
  flush();
  return out;
}
