#!/usr/bin/env node
// Measures how long `node bin/spa-workbench.mjs --help` takes to start: the built CLI (dist-cli/)
// against the sources through tsx (SPA_WORKBENCH_CLI=source), interleaved, with an empty `node -e 0`
// as the machine's own floor at the same moment (the load moves all three). Writes the medians (wall
// and CPU seconds) to bench/results/cli-start.json. Usage: node build/measure-cli-start.mjs [runs=7]
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] ?? 7);
const bin = join(root, 'bin', 'spa-workbench.mjs');
const cases = {
  'node -e 0 (floor)': { args: ['-e', '0'], env: {} },
  'built (dist-cli)': { args: [bin, '--help'], env: { SPA_WORKBENCH_CLI: 'built' } },
  'sources through tsx (before)': { args: [bin, '--help'], env: { SPA_WORKBENCH_CLI: 'source' } },
};

const check = spawnSync(process.execPath, [bin, '--help'], { env: { ...process.env, SPA_WORKBENCH_CLI: 'built' }, encoding: 'utf8' });
if (check.status !== 0) { console.error(`the built CLI is not current: run node build/build-cli.mjs first\n${check.stderr}`); process.exit(1); }

/** Wall seconds and the child's CPU seconds (user + system, from /usr/bin/time's format or process.resourceUsage fallback). */
function once(c) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, ...c.args], { env: { ...process.env, ...c.env }, encoding: 'utf8' });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`${c.args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const [user, sys] = r.stderr.trim().split('\n').pop().split(' ').map(Number);
  return { wall, cpu: user + sys };
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = Math.floor(s.length / 2); return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
const loadBefore = loadavg();
for (let i = 0; i < runs; i++) for (const [name, c] of Object.entries(cases)) samples[name].push(once(c));
const results = Object.fromEntries(Object.entries(samples).map(([name, xs]) => [name, {
  wallSecondsMedian: +median(xs.map((x) => x.wall)).toFixed(3), cpuSecondsMedian: +median(xs.map((x) => x.cpu)).toFixed(3),
  wallSeconds: xs.map((x) => +x.wall.toFixed(3)),
}]));
const out = {
  bench: 'cli-start', when: new Date().toISOString(), command: 'node bin/spa-workbench.mjs --help', runs, cpus: cpus().length,
  loadAverage: { before: loadBefore.map((x) => +x.toFixed(2)), after: loadavg().map((x) => +x.toFixed(2)) },
  note: 'runs interleaved (floor, built, sources) so that the machine\'s load moves all three alike; compare columns of one file, not across machines',
  target: 'the built CLI starts in under 1 s (issue 24 item 4)',
  results,
};
writeFileSync(join(root, 'bench', 'results', 'cli-start.json'), `${JSON.stringify(out, null, 2)}\n`);
console.log(JSON.stringify(results, null, 2));
