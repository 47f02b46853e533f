// ProcessLauncher for the desktop app: each run's engine is an Electron utilityProcess (own V8
// heap, own OS process), so training never runs on the main process or the UI thread and an
// out-of-memory or crash there cannot take the window down. Messages flow over the utility
// process's parentPort; the reason of an abnormal exit comes from app 'child-process-gone'.
import { app, utilityProcess, type UtilityProcess } from 'electron';
import type { EngineExit, EngineProcess, LaunchOptions, ProcessLauncher } from '../core/engine/launcher.js';
import type { EngineMessage, HostMessage } from '../core/engine/protocol.js';
import { isEngineMessage } from '../core/engine/protocol.js';

const STDERR_LINES = 20;

export class ElectronUtilityLauncher implements ProcessLauncher {
  readonly kind = 'electron-utility';
  /** serviceName → last 'child-process-gone' reason (oom, crashed, killed...). */
  private readonly goneReasons = new Map<string, string>();

  constructor(private readonly entry: string, private readonly onGone?: (serviceName: string, reason: string, exitCode: number) => void) {
    app.on('child-process-gone', (_event, details) => {
      if (details.type !== 'Utility' || !details.serviceName?.startsWith('spa-engine-')) return;
      this.goneReasons.set(details.serviceName, details.reason);
      if (details.reason !== 'clean-exit') this.onGone?.(details.serviceName, details.reason, details.exitCode);
    });
  }

  launch(options: LaunchOptions): EngineProcess {
    const serviceName = `spa-engine-${options.runId}`;
    this.goneReasons.delete(serviceName);
    const execArgv = options.maxOldSpaceMb ? [`--max-old-space-size=${options.maxOldSpaceMb}`] : [];
    const child: UtilityProcess = utilityProcess.fork(this.entry, [], {
      serviceName,
      stdio: 'pipe',
      execArgv,
      env: { ...process.env, ...(options.env ?? {}), SPA_WORKBENCH_ENGINE: '1', SPA_WORKBENCH_RUN_ID: options.runId },
    });
    const tail: string[] = [];
    let partial = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) if (l.trim()) { tail.push(l); if (tail.length > STDERR_LINES) tail.shift(); }
    });
    child.stdout?.resume();
    const messageListeners: Array<(m: EngineMessage) => void> = [];
    const exitListeners: Array<(e: EngineExit) => void> = [];
    let exited: EngineExit | null = null;
    let alive = true;
    child.on('message', (m: unknown) => { if (isEngineMessage(m)) for (const l of messageListeners) l(m); });
    child.on('exit', (code: number) => {
      alive = false;
      // 'child-process-gone' may arrive just after 'exit': wait a moment for the reason.
      setTimeout(() => {
        if (exited) return;
        if (partial.trim()) tail.push(partial);
        const reason = this.goneReasons.get(serviceName) ?? null;
        exited = { code, signal: reason && reason !== 'clean-exit' ? reason : null, stderrTail: tail.slice(-STDERR_LINES) };
        for (const l of exitListeners) l(exited);
      }, 100);
    });
    return {
      get pid() { return child.pid; },
      send(message: HostMessage) {
        if (!alive) throw new Error('engine process has exited');
        child.postMessage(message);
      },
      onMessage(listener) { messageListeners.push(listener); },
      onExit(listener) { if (exited) listener(exited); else exitListeners.push(listener); },
      kill() { if (alive) child.kill(); },
    };
  }
}
