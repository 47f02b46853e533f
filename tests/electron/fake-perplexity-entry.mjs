// Stand-in for dist-electron/template-perplexity.js: echoes its argv and the template file it was
// given as the JSON result the real command prints last.
import { readFileSync } from 'node:fs';
const args = process.argv.slice(2);
const file = args.find((a) => a.startsWith('--template-file='))?.slice('--template-file='.length);
process.stderr.write('fake perplexity: started\n');
const big = 'x'.repeat(200_000);   // enough output that stdout is still draining when the process exits
process.stdout.write(`${big}\n`);
process.stdout.write(`${JSON.stringify({ args, template: file ? readFileSync(file, 'utf8') : null, perplexity: 1.5 }, null, 2)}\n`);
