// Token-level diff of two texts (original vs ground-truth-corrected response) for the dataset
// browser: common prefix/suffix trimmed, then an LCS over word/space/punctuation tokens; very
// long middles fall back to one replaced block, so a huge row never freezes the page.
export type DiffPart = { kind: 'same' | 'del' | 'ins'; text: string };

const MAX_CELLS = 4_000_000; // LCS table budget (n × m)

export function tokenize(text: string): string[] {
  return text.match(/\s+|[A-Za-z0-9_]+|[^\sA-Za-z0-9_]/g) ?? [];
}

function push(parts: DiffPart[], kind: DiffPart['kind'], text: string): void {
  if (!text) return;
  const last = parts[parts.length - 1];
  if (last && last.kind === kind) last.text += text;
  else parts.push({ kind, text });
}

/** Parts in reading order; joining the 'same'+'del' parts gives `a`, the 'same'+'ins' parts give `b`. */
export function diffText(a: string, b: string): DiffPart[] {
  const ta = tokenize(a);
  const tb = tokenize(b);
  let start = 0;
  while (start < ta.length && start < tb.length && ta[start] === tb[start]) start++;
  let endA = ta.length;
  let endB = tb.length;
  while (endA > start && endB > start && ta[endA - 1] === tb[endB - 1]) { endA--; endB--; }
  const parts: DiffPart[] = [];
  push(parts, 'same', ta.slice(0, start).join(''));
  const midA = ta.slice(start, endA);
  const midB = tb.slice(start, endB);
  if (midA.length * midB.length > MAX_CELLS) {
    push(parts, 'del', midA.join(''));
    push(parts, 'ins', midB.join(''));
  } else {
    const n = midA.length;
    const m = midB.length;
    // lcs[i][j] = LCS length of midA[i:] and midB[j:]
    const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i]![j] = midA[i] === midB[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && midA[i] === midB[j]) { push(parts, 'same', midA[i]!); i++; j++; }
      else if (j < m && (i >= n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) { push(parts, 'ins', midB[j]!); j++; }
      else { push(parts, 'del', midA[i]!); i++; }
    }
  }
  push(parts, 'same', ta.slice(endA).join(''));
  return parts;
}
