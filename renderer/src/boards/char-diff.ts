// Character diff of two short texts (a parsed state text against the true one): common prefix and
// suffix trimmed, then an LCS over characters; a middle larger than the budget falls back to one
// replaced block, so a long garbled reply never freezes the page.
import type { DiffPart } from './text-diff.js';

const MAX_CELLS = 2_000_000;

function push(parts: DiffPart[], kind: DiffPart['kind'], text: string): void {
  if (!text) return;
  const last = parts[parts.length - 1];
  if (last && last.kind === kind) last.text += text;
  else parts.push({ kind, text });
}

/** Parts in reading order; 'same'+'del' joined give `a`, 'same'+'ins' joined give `b`. */
export function diffChars(a: string, b: string): DiffPart[] {
  const ca = Array.from(a), cb = Array.from(b);
  let start = 0;
  while (start < ca.length && start < cb.length && ca[start] === cb[start]) start++;
  let endA = ca.length, endB = cb.length;
  while (endA > start && endB > start && ca[endA - 1] === cb[endB - 1]) { endA--; endB--; }
  const parts: DiffPart[] = [];
  push(parts, 'same', ca.slice(0, start).join(''));
  const x = ca.slice(start, endA), y = cb.slice(start, endB);
  const n = x.length, m = y.length;
  if (n * m > MAX_CELLS) {
    push(parts, 'del', x.join('')); push(parts, 'ins', y.join(''));
  } else {
    // lcs[i][j] = LCS length of x[i..] and y[j..], in one flat array
    const lcs = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
      lcs[i * (m + 1) + j] = x[i] === y[j] ? lcs[(i + 1) * (m + 1) + j + 1]! + 1 : Math.max(lcs[(i + 1) * (m + 1) + j]!, lcs[i * (m + 1) + j + 1]!);
    }
    let i = 0, j = 0;
    while (i < n && j < m) {
      if (x[i] === y[j]) { push(parts, 'same', x[i]!); i++; j++; }
      else if (lcs[(i + 1) * (m + 1) + j]! >= lcs[i * (m + 1) + j + 1]!) { push(parts, 'del', x[i]!); i++; }
      else { push(parts, 'ins', y[j]!); j++; }
    }
    push(parts, 'del', x.slice(i).join('')); push(parts, 'ins', y.slice(j).join(''));
  }
  push(parts, 'same', ca.slice(endA).join(''));
  return parts;
}
