// Starts the real server once for the e2e run: `node bin/spa-workbench.mjs serve --port 0
// --no-open` with SPA_WORKBENCH_HOME in a fresh temp folder, reads the tokenised URL from its
// stdout and hands it to the tests through the environment. Builds the renderer if missing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const URL_RE = /(https?:\/\/[^\s]+[?&]token=[0-9A-Za-z_-]+)/;

export default async function globalSetup(): Promise<() => Promise<void>> {
  if (!existsSync(join(root, 'dist-renderer', 'index.html'))) {
    const r = spawnSync(process.execPath, [join(root, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', 'renderer/vite.config.ts'], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('e2e: building the renderer failed (npm run build:renderer)');
  }
  const home = mkdtempSync(join(tmpdir(), 'spa-e2e-home-'));
  const projects = mkdtempSync(join(tmpdir(), 'spa-e2e-projects-'));
  const cmd = process.env['SPA_E2E_SERVER_CMD'] ?? 'node bin/spa-workbench.mjs serve --port 0 --no-open';
  const [exe, ...args] = cmd.split(/\s+/);
  const child: ChildProcess = spawn(exe === 'node' ? process.execPath : exe!, args, {
    cwd: root,
    env: { ...process.env, SPA_WORKBENCH_HOME: home, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`e2e: the server printed no URL within 60 s. Command: ${cmd}\nOutput:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = URL_RE.exec(output);
      if (m) { clearTimeout(timer); resolveUrl(m[1]!); }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`e2e: the server exited (code ${code}) before printing its URL. Command: ${cmd}\nOutput:\n${output}`)); });
  });
  child.stdout!.resume();
  child.stderr!.resume();
  process.env['SPA_E2E_URL'] = url;
  process.env['SPA_E2E_HOME'] = home;
  process.env['SPA_E2E_PROJECTS'] = projects;
  return async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => { const t = setTimeout(() => { child.kill('SIGKILL'); r(null); }, 5000); child.once('exit', () => { clearTimeout(t); r(null); }); });
    }
    if (!process.env['SPA_E2E_KEEP']) {
      rmSync(home, { recursive: true, force: true });
      rmSync(projects, { recursive: true, force: true });
    }
  };
}
