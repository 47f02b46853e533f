// The shared LCS of the compare view's template diff (lineDiff) and the text-state word diff (word-diff.ts): fixed inputs
// with their expected alignments, so a change to diff.ts's lcsAlign shows in both callers.
import { describe, expect, it } from 'vitest';
import { lcsAlign, lineDiff } from '../../renderer/src/components/diff.js';
import { wordDiff } from '../../renderer/src/components/word-diff.js';

describe('lcsAlign', () => {
  it('aligns the longest common subsequence, a deletion before an insertion at a tie', () => {
    expect(lcsAlign(['a', 'b', 'c', 'd'], ['a', 'c', 'x', 'd']).map((o) => `${o.kind[0]}${o.item}`)).toEqual(['sa', 'db', 'sc', 'ax', 'sd']);
    expect(lcsAlign(['x'], ['y']).map((o) => o.kind)).toEqual(['del', 'add']);
    expect(lcsAlign([], ['y'])).toEqual([{ kind: 'add', item: 'y' }]);
    expect(lcsAlign([1, 2, 3], [1, 2, 3]).every((o) => o.kind === 'same')).toBe(true);
  });
});

describe('lineDiff', () => {
  it('diffs template sources by line', () => {
    expect(lineDiff('system\nuser {{x}}\nend', 'system\nuser {{y}}\nend')).toEqual([
      { kind: 'same', text: 'system' }, { kind: 'del', text: 'user {{x}}' }, { kind: 'add', text: 'user {{y}}' }, { kind: 'same', text: 'end' },
    ]);
  });
  it('does not align texts past its table bound: every old line deleted, every new one added', () => {
    const a = Array.from({ length: 2001 }, (_, i) => `l${i}`).join('\n');
    const b = Array.from({ length: 2001 }, (_, i) => `l${i}`).join('\n');
    const out = lineDiff(a, b);
    expect(out.length).toBe(4002);
    expect(out.filter((l) => l.kind === 'same').length).toBe(0);
  });
});

describe('wordDiff through the shared LCS', () => {
  it('counts words in both, only in the model text, only in the truth', () => {
    const d = wordDiff('you are in a kitchen\nthere is a key', 'you are in the kitchen\nthere is a key');
    expect(d.counts).toEqual({ same: 8, del: 1, add: 1 });
    expect(d.parts.map((p) => p.kind)).toEqual(['same', 'del', 'add', 'same']);
  });
});
