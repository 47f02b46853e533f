#!/usr/bin/env node
// Runs npm scripts side by side and fails if any fails: `node build/parallel.mjs [--stream] typecheck:core lint ...`.
// Each script's output is held and printed whole when it ends (no interleaved lines), with its exit code and time; with
// --stream each line is printed as it comes, prefixed with the script's name ("[test:e2e] ...").
// Used by `npm test` (issue 37 item 7): the checks (tsc and eslint, each single-threaded) side by side, then the unit and the
// end-to-end tiers side by side. Measured from a fresh clone (bench/results/ci-time.md): the test tiers one after another
// used 0.88 of the 2 cores on average (1,023 CPU-s in 1,156 s): they wait on child processes, timers and the browser.
import { spawn } from 'node:child_process';

const stream = process.argv.includes('--stream');
const scripts = process.argv.slice(2).filter((a) => a !== '--stream');
if (scripts.length === 0) {
  console.error('usage: node build/parallel.mjs [--stream] SCRIPT [SCRIPT...]   (npm scripts of package.json, run at once)');
  process.exit(2);
}
const npm = process.env.npm_execpath;   // the npm that started us, if any
const results = await Promise.all(scripts.map((name) => new Promise((resolve) => {
  const started = Date.now();
  const [cmd, args] = npm ? [process.execPath, [npm, 'run', '--silent', name]] : ['npm', ['run', '--silent', name]];
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], shell: !npm && process.platform === 'win32' });
  let out = '';
  const partial = { stdout: '', stderr: '' };
  const take = (which) => (d) => {
    if (!stream) { out += d; return; }
    const lines = (partial[which] + d).split('\n');
    partial[which] = lines.pop();
    for (const l of lines) process[which].write(`[${name}] ${l}\n`);
  };
  child.stdout.on('data', take('stdout'));
  child.stderr.on('data', take('stderr'));
  child.on('error', (err) => resolve({ name, code: 1, out: `${out}${err.message}\n`, seconds: (Date.now() - started) / 1000 }));
  child.on('close', (code, signal) => {
    for (const which of ['stdout', 'stderr']) if (partial[which]) process[which].write(`[${name}] ${partial[which]}\n`);
    const result = { name, code: code ?? 1, signal, out, seconds: (Date.now() - started) / 1000 };
    process.stdout.write(`\n> ${name}: ${code === 0 ? 'ok' : signal ? `killed by ${signal}` : `exit ${code}`} (${result.seconds.toFixed(1)} s)\n${out}`);
    resolve(result);
  });
})));
const failed = results.filter((r) => r.code !== 0);
if (failed.length) {
  console.error(`\nparallel: ${failed.map((r) => r.name).join(', ')} failed`);
  process.exit(1);
}
