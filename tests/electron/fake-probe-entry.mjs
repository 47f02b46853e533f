// Stand-in for dist-electron/probe.js: echoes its argv and the request file it was given as the
// JSON result the real command prints last.
import { readFileSync } from 'node:fs';
const args = process.argv.slice(2);
const file = args.find((a) => a.startsWith('--request='))?.slice('--request='.length);
process.stdout.write(`${JSON.stringify({ args, request: file ? JSON.parse(readFileSync(file, 'utf8')) : null }, null, 2)}\n`);
