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

/** Line diff (longest common subsequence); fine for templates of a few hundred lines. */
export function lineDiff(a: string, b: string): DiffLine[] {
  const x = a.split('\n');
  const y = b.split('\n');
  const n = x.length;
  const m = y.length;
  if (n * m > 4_000_000) return [...x.map((t) => ({ kind: 'del' as const, text: t })), ...y.map((t) => ({ kind: 'add' as const, text: t }))];
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
    lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const out: DiffLine[] = [];
  let i = 0; let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push({ kind: 'same', text: x[i]! }); i++; j++; }
    else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) { out.push({ kind: 'del', text: x[i]! }); i++; }
    else { out.push({ kind: 'add', text: y[j]! }); j++; }
  }
  while (i < n) out.push({ kind: 'del', text: x[i++]! });
  while (j < m) out.push({ kind: 'add', text: y[j++]! });
  return out;
}
