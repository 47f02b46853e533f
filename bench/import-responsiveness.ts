// Host responsiveness during runs.import (issue 24 item 8): a real host (tests/fuzz/import-host.ts, its
// own process) imports a 10^6-row verl metrics file and 16,000 recorder lines with one episode id while
// this script pings it (projects.info) every 20 ms. Measured twice, side by side: the product
// (the import in a worker thread) and the reference, the same host running the same import code on
// its own thread (SPA_WORKBENCH_IMPORT_INLINE=1), as runs.import ran before issue 24. Before issue 24
// the duplicate-id pass was also quadratic (31 s for 16k lines, ../shared/reference/reliability-retest.md
// I8); the reference here has the linear one, so it shows the blocking alone. Prints and writes JSON:
// bench/results/import-responsiveness.json. The fuzz suite (tests/fuzz/import.fuzz.test.ts) asserts
// the host keeps answering during an import (an order, independent of the machine's speed); this file
// records the latencies and the pings over 200 ms.
// Run: node bin/run-ts.mjs bench/import-responsiveness.ts [--rows 1000000] [--dupes 16000] [--out FILE]
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Host, pinged, RECORDER_LINE, verlMetrics } from '../tests/fuzz/import-lib.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}
const rows = Number(arg('rows', '1000000'));
const dupes = Number(arg('dupes', '16000'));
const out = arg('out', path.join('bench', 'results', 'import-responsiveness.json'));

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-bench-import-'));
const million = path.join(root, 'sources', 'rows');
fs.mkdirSync(million, { recursive: true });
verlMetrics(path.join(million, 'metrics.jsonl'), rows);
const dup = path.join(root, 'sources', 'dupes');
fs.mkdirSync(dup, { recursive: true });
fs.writeFileSync(path.join(dup, 'val_step1.jsonl'), `${RECORDER_LINE}\n`.repeat(dupes));

async function measure(mode: 'worker' | 'inline'): Promise<Record<string, unknown>> {
  const host = new Host(path.join(root, mode, 'project'), mode === 'inline' ? { SPA_WORKBENCH_IMPORT_INLINE: '1' } : {});
  await host.start();
  const result: Record<string, unknown> = {};
  try {
    for (const [name, src] of [[`${rows} verl rows`, million], [`${dupes} duplicate recorder lines`, dup]] as const) {
      const t = performance.now();
      const p = await pinged(host, 'runs.import', { path: src });
      result[name] = {
        ok: p.reply.ok, importSeconds: Math.round((performance.now() - t) / 100) / 10, pings: p.pings,
        maxPingMs: Math.round(p.maxPingMs), p99PingMs: Math.round(p.p99PingMs), pingsOver200ms: p.late.length,
      };
      process.stderr.write(`${mode} ${name}: ${JSON.stringify(result[name])}\n`);
    }
  } finally {
    await host.stop();
  }
  return result;
}

const worker = await measure('worker');
const inline = await measure('inline');
const report = {
  bench: 'import-responsiveness', date: new Date().toISOString(), machine: `${os.cpus().length} cores, load ${os.loadavg().map((l) => l.toFixed(1)).join('/')}`,
  node: process.version, pingEveryMs: 20,
  product: { mode: 'worker thread (core/host/import-pool.ts)', ...worker },
  reference: { mode: 'the same import code on the host thread itself (SPA_WORKBENCH_IMPORT_INLINE=1), as runs.import ran before issue 24', ...inline },
};
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
fs.rmSync(root, { recursive: true, force: true });
