// Small diff helpers for the compare view: flatten configs to dotted paths, and an LCS line diff
// for template sources.
export function flatten(value: unknown, prefix = '', out: Record<string, string> = {}): Record<string, string> {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0 && prefix) out[prefix] = '{}';
    for (const [k, v] of entries) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix) {
    out[prefix] = value === undefined ? '' : JSON.stringify(value);
  }
  return out;
}

/** Rows of a config comparison: path, one value per config ('' = absent), and whether they differ. */
export function compareFlat(configs: Array<Record<string, string>>): Array<{ path: string; values: string[]; differs: boolean }> {
  const paths = [...new Set(configs.flatMap((c) => Object.keys(c)))].sort();
  return paths.map((path) => {
    const values = configs.map((c) => c[path] ?? '');
    return { path, values, differs: values.some((v) => v !== values[0]) };
  });
}

export type DiffLine = { kind: 'same' | 'add' | 'del'; text: string };

/**
 * The longest-common-subsequence alignment of two token arrays (tokens compared with ===), in reading order: `same` for a
 * token in both, `del` for one only in `x`, `add` for one only in `y`; a deletion comes before an insertion at a tie.
 * O(n*m) time and memory (a Uint32 table of (n+1)*(m+1) cells): callers bound n*m first. Used by lineDiff (lines) and
 * word-diff.ts's wordDiff (words and line breaks).
 */
export function lcsAlign<T>(x: readonly T[], y: readonly T[]): Array<{ kind: 'same' | 'add' | 'del'; item: T }> {
  const n = x.length;
  const m = y.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
    lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const out: Array<{ kind: 'same' | 'add' | 'del'; item: T }> = [];
  let i = 0; let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push({ kind: 'same', item: x[i]! }); i++; j++; }
    else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) { out.push({ kind: 'del', item: x[i]! }); i++; }
    else { out.push({ kind: 'add', item: y[j]! }); j++; }
  }
  while (i < n) out.push({ kind: 'del', item: x[i++]! });
  while (j < m) out.push({ kind: 'add', item: y[j++]! });
  return out;
}

/** Line diff (longest common subsequence); fine for templates of a few hundred lines. */
export function lineDiff(a: string, b: string): DiffLine[] {
  const x = a.split('\n');
  const y = b.split('\n');
  if (x.length * y.length > 4_000_000) return [...x.map((t) => ({ kind: 'del' as const, text: t })), ...y.map((t) => ({ kind: 'add' as const, text: t }))];
  return lcsAlign(x, y).map(({ kind, item }) => ({ kind, text: item }));
}
