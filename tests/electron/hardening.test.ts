// Electron hardening (issue 10), checked without the Electron binary (not installed here):
// the dev URL is honoured only unpackaged and on loopback; every app:// response (404 too)
// carries the CSP; the packaged build flips the fuses and ships the entries it starts; and
// templates.perplexity runs as a utilityProcess (here the fake electron's, a Node fork) of a
// bundled entry, with the template text in a temp file rather than on stdin.
import { describe, expect, it, vi } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { appResponseHeaders, CONTENT_SECURITY_POLICY, devServerUrlFor } from '../../electron/security.js';
import { PerplexityRunner } from '../../core/host/template-perplexity-child.js';
import { ProbeRunner } from '../../core/host/probe-child.js';

// utilityProcess as tests/e2e/fake-electron does it (a Node fork with piped stdout/stderr), without
// that module's IPC bridge to a parent test driver
vi.mock('electron', async () => {
  const { fork } = await import('node:child_process');
  const { EventEmitter } = await import('node:events');
  return {
    utilityProcess: {
      fork(modulePath: string, args: string[], options: { env?: NodeJS.ProcessEnv }) {
        const child = fork(modulePath, args, { env: options.env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
        const proc = Object.assign(new EventEmitter(), { pid: child.pid, stdout: child.stdout, stderr: child.stderr, kill: () => child.kill() });
        child.on('exit', (code) => proc.emit('exit', code ?? 1));
        return proc;
      },
    },
  };
});
const { utilityChildLauncher, utilityPerplexityLauncher } = await import('../../electron/perplexity-launcher.js');

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The two blocks of electron-builder.yml checked here (flat YAML; no YAML package is a dependency). */
function builderConfig(text: string): { electronFuses: Record<string, boolean>; files: string[] } {
  const out = { electronFuses: {} as Record<string, boolean>, files: [] as string[] };
  let block = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '');
    if (/^\S/.test(line)) { block = line.replace(/:.*$/, ''); continue; }
    const kv = /^\s+(\w+):\s*(true|false)\s*$/.exec(line);
    if (block === 'electronFuses' && kv) out.electronFuses[kv[1]!] = kv[2] === 'true';
    const item = /^\s+-\s+"?([^"]+)"?\s*$/.exec(line);
    if (block === 'files' && item) out.files.push(item[1]!);
  }
  return out;
}

describe('electron hardening', () => {
  it('SPA_WORKBENCH_DEV_URL is honoured only in an unpackaged app and only on loopback', () => {
    expect(devServerUrlFor('http://localhost:5173', false)).toBe('http://localhost:5173');
    expect(devServerUrlFor('http://127.0.0.1:5173/x', false)).toBe('http://127.0.0.1:5173');
    expect(devServerUrlFor('http://[::1]:5173', false)).toBe('http://[::1]:5173');
    expect(devServerUrlFor('http://localhost:5173', true)).toBeNull();             // packaged: never
    expect(devServerUrlFor('https://evil.example', false)).toBeNull();
    expect(devServerUrlFor('http://192.168.1.5:5173', false)).toBeNull();
    expect(devServerUrlFor('file:///etc/passwd', false)).toBeNull();
    expect(devServerUrlFor('not a url', false)).toBeNull();
    expect(devServerUrlFor(undefined, false)).toBeNull();
    // main.ts takes the dev URL only through this check
    const main = fs.readFileSync(path.join(root, 'electron', 'main.ts'), 'utf8');
    expect(main).toMatch(/devServerUrlFor\(process\.env\['SPA_WORKBENCH_DEV_URL'\], app\.isPackaged\)/);
    expect(main.match(/SPA_WORKBENCH_DEV_URL/g)?.length).toBe(1);
  });

  it('every app:// response, a 404 included, carries the CSP', () => {
    expect(appResponseHeaders('text/plain; charset=utf-8')['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    const main = fs.readFileSync(path.join(root, 'electron', 'main.ts'), 'utf8');
    const handler = main.slice(main.indexOf('protocol.handle(APP_SCHEME'), main.indexOf('const engineEntry'));
    expect(handler).not.toMatch(/new Response\([^)]*\{ status: 404 \}\)/);    // no bare 404
    expect(handler.match(/new Response\(/g)?.length).toBe(handler.match(/appResponseHeaders\(/g)?.length);
  });

  it('the packaged build flips the fuses and ships every entry the app starts', () => {
    const cfg = builderConfig(fs.readFileSync(path.join(root, 'build', 'electron-builder.yml'), 'utf8'));
    expect(cfg.electronFuses).toMatchObject({
      runAsNode: false, enableCookieEncryption: true, enableEmbeddedAsarIntegrityValidation: true, onlyLoadAppFromAsar: true,
      enableNodeOptionsEnvironmentVariable: false, enableNodeCliInspectArguments: false,
    });
    expect(cfg.files).toContain('dist-electron/**');
    const build = fs.readFileSync(path.join(root, 'build', 'build-electron.mjs'), 'utf8');
    for (const entry of [
      "'template-perplexity': 'core/cli/perplexity-entry.ts'", "probe: 'core/cli/probe-entry.ts'", "'render-worker': 'core/host/render-worker.ts'",
      "'engine-process': 'core/engine/engine-process.ts'", "'dp-worker': 'core/train/dp-worker-entry.ts'",
    ]) {
      expect(build).toContain(entry);
    }
    // nothing the desktop app runs relies on ELECTRON_RUN_AS_NODE any more (the fuse is off)
    for (const f of ['core/host/template-perplexity-child.ts', 'core/host/probe-child.ts', 'electron/main.ts', 'electron/engine-launcher.ts', 'electron/perplexity-launcher.ts']) {
      expect(fs.readFileSync(path.join(root, f), 'utf8'), f).not.toMatch(/ELECTRON_RUN_AS_NODE: '1'/);
    }
  });

  it('templates.perplexity runs as a utilityProcess of the bundled entry; the template text travels in a temp file', async () => {
    const runner = new PerplexityRunner(utilityPerplexityLauncher(path.join(root, 'tests', 'electron', 'fake-perplexity-entry.mjs')));
    const source = '{"name": "t", "parts": {}}';
    const out = await runner.run({ project: '/p', runId: 'r1', env: { id: 'sokoban', options: { width: 6 } }, template: { source }, samples: 2, timeoutMs: 60_000 });
    expect(out.perplexity).toBe(1.5);
    expect(out.template).toBe(source);
    const args = out.args as string[];
    expect(args).toEqual(expect.arrayContaining(['--project=/p', '--run=r1', '--env=sokoban', '--samples=2', '--json']));
    const file = args.find((a) => a.startsWith('--template-file='))!.slice('--template-file='.length);
    expect(fs.existsSync(file)).toBe(false);                    // removed afterwards
    expect(args).not.toContain('--template-file=-');
  });

  it('probe.turn runs as a utilityProcess of the bundled entry; the request travels in a temp file that is removed afterwards', async () => {
    const runner = new ProbeRunner(utilityChildLauncher(path.join(root, 'tests', 'electron', 'fake-probe-entry.mjs'), 'spa-probe'));
    const request = { runId: 'r1', seed: 3, action: 'Up' };
    const out = await runner.run('/p', request, 60_000);
    expect(out.request).toEqual(request);
    const args = out.args as string[];
    expect(args).toEqual(expect.arrayContaining(['--project=/p', '--json']));
    const file = args.find((a) => a.startsWith('--request='))!.slice('--request='.length);
    expect(file).not.toBe('-');
    expect(fs.existsSync(file)).toBe(false);
  });
});
