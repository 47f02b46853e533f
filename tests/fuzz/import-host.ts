// The host of the import fuzz suite (tests/fuzz/import.fuzz.test.ts), in its own process so that a
// blocked event loop shows as late pings seen from the test process: `serve`'s dispatcher and
// server, with the project (argv[2]) created and open. Prints one JSON line {wsUrl} when ready.
// SPA_WORKBENCH_IMPORT_INLINE=1 (set by the suite's control case) runs imports on this thread.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createDispatcher } from '../../core/host/dispatcher.js';
import { startServer } from '../../core/server/server.js';
import { NoEngineLauncher } from './fuzz-lib.js';

const project = process.argv[2];
if (!project) throw new Error('usage: import-host.ts <project folder>');
const d = createDispatcher({ host: 'serve', launcher: new NoEngineLauncher() });
await d.call('projects.create', { path: project });
const staticDir = path.join(path.dirname(project), 'static');
fs.mkdirSync(staticDir, { recursive: true });
fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>app</title>');
const server = await startServer({ dispatcher: d, staticDir });
process.stdout.write(`${JSON.stringify({ wsUrl: server.wsUrl })}\n`);
process.on('SIGTERM', () => { void d.dispose().finally(() => process.exit(0)); });
