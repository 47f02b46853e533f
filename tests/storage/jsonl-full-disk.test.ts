// D12: a JSONL append that the disk only half accepts (a full disk) must not leave half a row
// behind: the file is cut back to its previous end and the error is raised with its code.
import { afterEach, describe, expect, it } from 'vitest';
import fsDefault from 'node:fs';
import * as path from 'node:path';
import { syncBuiltinESMExports } from 'node:module';
import { appendJsonl, JsonlWriter, readJsonl } from '../../core/storage/jsonl.js';
import { tempDir } from '../api/helpers.js';

const origWrite = fsDefault.writeSync;
afterEach(() => { fsDefault.writeSync = origWrite; syncBuiltinESMExports(); });

/** The next writeSync writes only `accept` bytes; the one after that fails with ENOSPC. */
function diskFullAfter(accept: number): void {
  let calls = 0;
  fsDefault.writeSync = ((fd: number, buf: Buffer, offset: number | null = 0, length?: number) => {
    offset ??= 0;
    calls++;
    if (calls === 1) return origWrite(fd, buf, offset, Math.min(accept, length ?? buf.length - offset));
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  }) as typeof fsDefault.writeSync;
  syncBuiltinESMExports();
}

describe('JSONL appends on a full disk (D12)', () => {
  it('a partial write is undone: the file keeps only whole rows and the error says so', () => {
    const file = path.join(tempDir(), 'metrics.jsonl');
    appendJsonl(file, [{ step: 0 }]);
    const before = fsDefault.statSync(file).size;
    diskFullAfter(5);
    expect(() => appendJsonl(file, [{ step: 1, loss: 0.5 }, { step: 2, loss: 0.25 }])).toThrow(/could not append 2 row.*ENOSPC/);
    fsDefault.writeSync = origWrite; syncBuiltinESMExports();
    expect(fsDefault.statSync(file).size).toBe(before);
    appendJsonl(file, [{ step: 3 }]);
    const r = readJsonl<{ step: number }>(file);
    expect(r.skipped).toEqual([]);
    expect(r.rows.map((x) => x.step)).toEqual([0, 3]);
  });

  it('the long-lived writer (engine metrics, rollouts) does the same', () => {
    const file = path.join(tempDir(), 'rollouts.jsonl');
    const w = new JsonlWriter(file);
    w.append([{ a: 1 }]);
    diskFullAfter(3);
    expect(() => w.append([{ a: 2 }])).toThrow(/ENOSPC/);
    fsDefault.writeSync = origWrite; syncBuiltinESMExports();
    const spans = w.append([{ a: 3 }]);
    w.close();
    const r = readJsonl<{ a: number }>(file);
    expect(r.skipped).toEqual([]);
    expect(r.rows.map((x) => x.a)).toEqual([1, 3]);
    expect(spans[0]!.offset).toBe(r.spans[1]!.offset);   // the index offsets stay true
  });
});
