#!/usr/bin/env node
// Runs npm scripts side by side and fails if any fails: `node build/parallel.mjs typecheck:core lint ...`.
// Each script's output is held and printed whole when it ends (no interleaved lines), with its exit code and time.
// Used by `npm test` for the checks before the tests: tsc and eslint are single-threaded, so on a 2-core machine two
// of them at once take about half the wall time of one after another (issue 37 item 7).
import { spawn } from 'node:child_process';

const scripts = process.argv.slice(2);
if (scripts.length === 0) {
  console.error('usage: node build/parallel.mjs SCRIPT [SCRIPT...]   (npm scripts of package.json, run at once)');
  process.exit(2);
}
const npm = process.env.npm_execpath;   // the npm that started us, if any
const results = await Promise.all(scripts.map((name) => new Promise((resolve) => {
  const started = Date.now();
  const [cmd, args] = npm ? [process.execPath, [npm, 'run', '--silent', name]] : ['npm', ['run', '--silent', name]];
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], shell: !npm && process.platform === 'win32' });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  child.on('error', (err) => resolve({ name, code: 1, out: `${out}${err.message}\n`, seconds: (Date.now() - started) / 1000 }));
  child.on('close', (code, signal) => {
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
