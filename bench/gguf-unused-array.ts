// Issue 37 N9: what an unused metadata array costs `model import` (time, resident memory). The fault retest measured
// a 100 MB u8 array at 1.59 GB RSS and 28 s before the fix (the array was materialised as a JS array of numbers);
// the import now skips arrays it does not read. Usage: node bin/run-ts.mjs bench/gguf-unused-array.ts [MB]
// The file is the tiny llama of tests/model/gguf-writer.ts plus the array; prints one JSON line.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importGguf } from '../core/model/gguf.js';
import { tinyGguf } from '../tests/model/gguf-writer.js';

const mb = Number(process.argv[2] ?? 100);
const dir = mkdtempSync(join(tmpdir(), 'gguf-bench-'));
try {
  const file = join(dir, 'blob.gguf');
  writeFileSync(file, tinyGguf({ metadata: { 'general.unused_blob': { type: 'u8-block', length: mb * 1_000_000 } } }));
  const rssBefore = process.memoryUsage().rss;
  let peak = rssBefore;
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 5);
  const started = performance.now();
  await importGguf(file, join(dir, 'out'));
  const seconds = (performance.now() - started) / 1000;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  console.log(JSON.stringify({ arrayMB: mb, seconds: Number(seconds.toFixed(3)), rssBeforeMB: Math.round(rssBefore / 1e6),
    peakRssMB: Math.round(peak / 1e6), node: process.version }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
