// A row nested deeper than the stack allows is refused with a named error (file, row), never a raw
// RangeError, and nothing of it is left in the file.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendJsonl, JsonlWriter } from '../../core/storage/jsonl.js';

function deep(n: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
}

describe('appendJsonl with deep nesting', () => {
  it('names the file and the row; the rows before it in the same call are not written either', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'jsonl-deep-')), 'x.jsonl');
    appendJsonl(file, [{ ok: 1 }]);
    let err: unknown;
    try { appendJsonl(file, [{ ok: 2 }, deep(1_000_000)]); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(RangeError);
    expect((err as Error).message).toContain(file);
    expect((err as Error).message).toMatch(/row 2 of 2 cannot be written: it is nested too deeply/);
    expect(readFileSync(file, 'utf8')).toBe('{"ok":1}\n');
    const w = new JsonlWriter(file);
    try { expect(() => w.append([deep(1_000_000)])).toThrow(/x\.jsonl\): row 1 of 1/); } finally { w.close(); }
  });
});
