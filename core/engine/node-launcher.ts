// ProcessLauncher for Node hosts (serve, CLI, tests): child_process.fork of engine-process.ts with
// the tsx loader, so the TypeScript sources run without a build step.
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as fs from 'node:fs';
import type { EngineExit, EngineProcess, LaunchOptions, ProcessLauncher } from './launcher.js';
import type { EngineMessage, HostMessage } from './protocol.js';
import { isEngineMessage } from './protocol.js';

const STDERR_LINES = 20;

function engineEntry(): string {
  const ts = fileURLToPath(new URL('./engine-process.ts', import.meta.url));
  if (fs.existsSync(ts)) return ts;
  return fileURLToPath(new URL('./engine-process.js', import.meta.url));   // a built copy
}

function tsxLoaderUrl(): string {
  const require = createRequire(import.meta.url);
  return pathToFileURL(require.resolve('tsx')).href;
}

export class NodeProcessLauncher implements ProcessLauncher {
  readonly kind = 'node-fork';
  constructor(private readonly options: { echoStderr?: boolean } = {}) {}

  launch(options: LaunchOptions): EngineProcess {
    const entry = engineEntry();
    const execArgv = entry.endsWith('.ts') ? ['--import', tsxLoaderUrl()] : [];
    if (options.maxOldSpaceMb) execArgv.push(`--max-old-space-size=${options.maxOldSpaceMb}`);
    const child = fork(entry, [], {
      execArgv,
      env: { ...process.env, ...(options.env ?? {}), SPA_WORKBENCH_ENGINE: '1', SPA_WORKBENCH_RUN_ID: options.runId },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'json',
      // Its own process group (POSIX): a Ctrl-C in the terminal signals the terminal's foreground
      // group, i.e. the host (CLI, serve), which stops the run gracefully through the channel; the
      // engine is never interrupted mid-step by the terminal. It still exits when the host goes away
      // (the IPC channel closes: engine-process.ts stops at the next step and exits).
      detached: process.platform !== 'win32',
    });
    const tail: string[] = [];
    let partial = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      if (this.options.echoStderr) process.stderr.write(chunk);
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) if (l.trim()) { tail.push(l); if (tail.length > STDERR_LINES) tail.shift(); }
    });
    child.stdout?.resume();   // drain; stages report through events, not stdout
    const messageListeners: ((m: EngineMessage) => void)[] = [];
    const exitListeners: ((e: EngineExit) => void)[] = [];
    let exited: EngineExit | null = null;
    child.on('message', (m) => { if (isEngineMessage(m)) for (const l of messageListeners) l(m); });
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (exited) return;
      if (partial.trim()) { tail.push(partial); if (tail.length > STDERR_LINES) tail.shift(); }
      exited = { code, signal, stderrTail: [...tail] };
      for (const l of exitListeners) l(exited);
    };
    child.on('close', finish);
    child.on('error', (err) => {
      tail.push(`spawn error: ${err.message}`);
      if (child.exitCode !== null || child.pid === undefined) finish(child.exitCode ?? 1, null);
    });
    return {
      get pid() { return child.pid; },
      send(message: HostMessage) {
        if (!child.connected) throw new Error('engine process channel is closed');
        child.send(message);
      },
      onMessage(listener) { messageListeners.push(listener); },
      onExit(listener) { if (exited) listener(exited); else exitListeners.push(listener); },
      kill(signal: NodeJS.Signals = 'SIGTERM') { if (child.exitCode === null && child.signalCode === null) child.kill(signal); },
    };
  }
}
