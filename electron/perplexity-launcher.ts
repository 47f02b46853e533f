// The model children of the desktop app (templates.perplexity, probe.turn): Electron
// utilityProcesses of the bundled dist-electron/template-perplexity.js (core/cli/perplexity-entry.ts)
// and dist-electron/probe.js (core/cli/probe-entry.ts). They replace spawning the Electron binary
// with ELECTRON_RUN_AS_NODE=1, which the RunAsNode fuse (off in packaged builds, see
// build/electron-builder.yml) no longer allows.
import { utilityProcess } from 'electron';
import type { ChildHandle } from '../core/host/child-runner.js';
import type { PerplexityLauncher } from '../core/host/template-perplexity-child.js';

export function utilityPerplexityLauncher(entry: string): PerplexityLauncher {
  return utilityChildLauncher(entry, 'spa-template-perplexity');
}

/** Starts `entry` with the given arguments as a utilityProcess; its handle reports the exit once stdout is drained. */
export function utilityChildLauncher(entry: string, serviceName: string): (args: string[]) => ChildHandle {
  return (args): ChildHandle => {
    const child = utilityProcess.fork(entry, args, { serviceName, stdio: 'pipe', env: { ...process.env } });
    let exitCode: number | null = null;
    let exited = false;
    let stdoutEnded = child.stdout === null;
    const exitListeners: Array<(code: number | null, signal: string | null) => void> = [];
    // report the exit only once stdout is drained (the JSON result is its last output)
    const maybeFinish = () => {
      if (!exited || !stdoutEnded) return;
      for (const l of exitListeners.splice(0)) l(exitCode, null);
    };
    child.stdout?.on('end', () => { stdoutEnded = true; maybeFinish(); });
    child.on('exit', (code: number) => {
      exited = true;
      exitCode = code;
      setTimeout(() => { stdoutEnded = true; maybeFinish(); }, 2000).unref();   // a stream that never ends
      maybeFinish();
    });
    return {
      stdout: child.stdout, stderr: child.stderr,
      kill: () => { if (!exited) child.kill(); },
      onExit: (l) => { exitListeners.push(l); maybeFinish(); },
      onSpawnError: (l) => { child.once('error', (e: unknown) => l(e instanceof Error ? e : new Error(String(e)))); },
    };
  };
}
