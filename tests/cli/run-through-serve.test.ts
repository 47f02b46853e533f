// `spa-workbench run` into a project that `serve` holds: the CLI asks the server to start the run
// (through the API link serve remembers for the project) and follows it, instead of refusing.
import { afterEach, describe, expect, it } from 'vitest';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { startServer, type RunningServer } from '../../core/server/server.js';
import { rememberLink } from '../../core/cli/serve-link.js';
import { isolateHome, tempDir } from '../api/helpers.js';

const bin = fileURLToPath(new URL('../../bin/spa-workbench.mjs', import.meta.url));
let d: Dispatcher | null = null;
let server: RunningServer | null = null;
afterEach(async () => { await server?.close(); server = null; await d?.dispose({ kill: true }); d = null; });

function cli(args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => { out += b.toString(); });
  child.stderr.on('data', (b: Buffer) => { out += b.toString(); });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

describe('a CLI run while serve holds the project', () => {
  it('starts in the serve process and is followed to the end', async () => {
    isolateHome();
    const project = path.join(tempDir(), 'proj');
    d = createDispatcher({ host: 'serve', lockPurpose: 'serve' });
    await d.api.projects.create({ path: project });
    server = await startServer({ dispatcher: d, host: '127.0.0.1', port: 0, token: 'a'.repeat(32), log: () => undefined });
    rememberLink(path.resolve(project), { token: 'a'.repeat(32), port: server.port });

    const r = await cli(['run', 'diagnostic', '--size', 'smoke', '--project', project, '--set', 'stages.diag-wait.steps=10']);
    expect(r.out).toMatch(/runs in the serve process/);
    expect(r.code, r.out).toBe(0);
    const { runs } = await d.api.runs.list({});
    expect(runs).toHaveLength(1);
    expect(runs[0]!.status).toBe('completed');
  }, 180_000);
});
