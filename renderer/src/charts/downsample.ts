// Honest downsampling and smoothing for metric charts. Pure functions (no DOM): run in the
// chart Web Worker (downsample.worker.ts) and in unit tests.
//
// - m4Downsample: x-range buckets; per bucket keep the first, min, max and last point (M4).
//   The min and max of every bucket survive, so a single-step spike is never dropped, however
//   many points fall in its bucket (random or stride sampling hides them — a top complaint).
// - emaSmooth: TensorBoard-style exponential moving average, debiased so that the first
//   points are not pulled towards zero; computed on the FULL data before downsampling.

export interface XY { x: number[]; y: number[] }

/** Debiased EMA. weight in [0, 1): 0 = no smoothing. Non-finite values stay as gaps (NaN). */
export function emaSmooth(y: ArrayLike<number>, weight: number): number[] {
  if (!(weight >= 0 && weight < 1)) throw new RangeError(`smoothing weight must be in [0, 1), got ${weight}`);
  const out = new Array<number>(y.length);
  let last = 0;
  let n = 0;
  for (let i = 0; i < y.length; i++) {
    const v = y[i]!;
    if (!Number.isFinite(v)) { out[i] = Number.NaN; continue; }
    last = last * weight + (1 - weight) * v;
    n++;
    const debias = 1 - Math.pow(weight, n);
    out[i] = debias > 0 ? last / debias : v;
  }
  return out;
}

/**
 * M4 downsampling into `buckets` equal-width x buckets over [xMin, xMax] (default: data range).
 * Input x must be non-decreasing. Points with non-finite y are skipped. Output keeps, per
 * bucket, first/min/max/last in x order (so at most 4 points per bucket); when a range is
 * given, the nearest point on each side outside it is kept too so lines reach the edges.
 */
export function m4Downsample(x: ArrayLike<number>, y: ArrayLike<number>, buckets: number, xMin?: number, xMax?: number): XY {
  if (x.length !== y.length) throw new RangeError(`x and y must have the same length (x: ${x.length}, y: ${y.length})`);
  if (!(Number.isInteger(buckets) && buckets >= 1)) throw new RangeError(`buckets must be a positive integer, got ${buckets}`);
  const n = x.length;
  if (n === 0) return { x: [], y: [] };
  let lo = 0;
  let hi = n - 1;
  if (xMin !== undefined) { while (lo < n && x[lo]! < xMin) lo++; }
  if (xMax !== undefined) { while (hi >= 0 && x[hi]! > xMax) hi--; }
  const outX: number[] = [];
  const outY: number[] = [];
  const push = (i: number) => { outX.push(x[i]!); outY.push(y[i]!); };
  // one neighbour outside the visible range on each side
  for (let i = lo - 1; i >= 0; i--) { if (Number.isFinite(y[i]!)) { push(i); break; } }
  if (lo <= hi) {
    const count = hi - lo + 1;
    if (count <= buckets * 4) {
      for (let i = lo; i <= hi; i++) if (Number.isFinite(y[i]!)) push(i);
    } else {
      const x0 = xMin ?? x[lo]!;
      const x1 = xMax ?? x[hi]!;
      const width = (x1 - x0) / buckets;
      let i = lo;
      while (i <= hi) {
        // bucket of point i; all points with the same bucket index form one group
        const b = width > 0 ? Math.min(buckets - 1, Math.floor((x[i]! - x0) / width)) : 0;
        let first = -1; let last = -1; let iMin = -1; let iMax = -1;
        let j = i;
        for (; j <= hi; j++) {
          const bj = width > 0 ? Math.min(buckets - 1, Math.floor((x[j]! - x0) / width)) : 0;
          if (bj !== b) break;
          const v = y[j]!;
          if (!Number.isFinite(v)) continue;
          if (first < 0) first = j;
          last = j;
          if (iMin < 0 || v < y[iMin]!) iMin = j;
          if (iMax < 0 || v > y[iMax]!) iMax = j;
        }
        if (first >= 0) {
          const keep = [...new Set([first, iMin, iMax, last])].sort((a, c) => a - c);
          for (const k of keep) push(k);
        }
        i = j;
      }
    }
  }
  for (let i = hi + 1; i < n; i++) { if (Number.isFinite(y[i]!)) { push(i); break; } }
  return { x: outX, y: outY };
}

/** Per-bucket min / max / mean over equal-width x buckets (for bands and summaries). */
export function minMaxBuckets(x: ArrayLike<number>, y: ArrayLike<number>, buckets: number): { x: number[]; min: number[]; max: number[]; mean: number[]; count: number[] } {
  const out = { x: [] as number[], min: [] as number[], max: [] as number[], mean: [] as number[], count: [] as number[] };
  if (x.length === 0) return out;
  const x0 = x[0]!;
  const x1 = x[x.length - 1]!;
  const width = (x1 - x0) / buckets;
  let i = 0;
  while (i < x.length) {
    const b = width > 0 ? Math.min(buckets - 1, Math.floor((x[i]! - x0) / width)) : 0;
    let sx = 0; let sy = 0; let c = 0; let mn = Infinity; let mx = -Infinity;
    let j = i;
    for (; j < x.length; j++) {
      const bj = width > 0 ? Math.min(buckets - 1, Math.floor((x[j]! - x0) / width)) : 0;
      if (bj !== b) break;
      const v = y[j]!;
      if (!Number.isFinite(v)) continue;
      sx += x[j]!; sy += v; c++;
      if (v < mn) mn = v;
      if (v > mx) mx = v;
    }
    if (c > 0) { out.x.push(sx / c); out.mean.push(sy / c); out.min.push(mn); out.max.push(mx); out.count.push(c); }
    i = j;
  }
  return out;
}

/** Sort points by x (stable) — live events can arrive slightly out of order across stages. */
export function sortByX(x: number[], y: number[]): XY {
  let sorted = true;
  for (let i = 1; i < x.length; i++) if (x[i]! < x[i - 1]!) { sorted = false; break; }
  if (sorted) return { x, y };
  const idx = x.map((_, i) => i).sort((a, b) => x[a]! - x[b]! || a - b);
  return { x: idx.map((i) => x[i]!), y: idx.map((i) => y[i]!) };
}

// ---------------------------------------------------------------- worker protocol

export interface PrepareSeriesInput { key: string; x: number[]; y: number[] }
export interface PrepareRequest {
  id: number;
  series: PrepareSeriesInput[];
  smoothing: number;       // EMA weight in [0, 1)
  buckets: number;         // typically the plot width in pixels
  xMin?: number;           // visible range (re-bucketed on zoom)
  xMax?: number;
}
export interface PreparedSeries { key: string; raw: XY; smooth: XY | null; totalPoints: number }
export interface PrepareResponse { id: number; series: PreparedSeries[] }

/** Smooth on full data, then downsample raw and smoothed lines to the visible range. */
export function prepareSeries(req: PrepareRequest): PrepareResponse {
  return {
    id: req.id,
    series: req.series.map((s) => {
      const { x, y } = sortByX(s.x, s.y);
      const raw = m4Downsample(x, y, req.buckets, req.xMin, req.xMax);
      const smooth = req.smoothing > 0 ? m4Downsample(x, emaSmooth(y, req.smoothing), req.buckets, req.xMin, req.xMax) : null;
      return { key: s.key, raw, smooth, totalPoints: x.length };
    }),
  };
}
