// probe.turn runs a model (TF.js), which must never run on the host's event loop. Like
// templates.perplexity (template-perplexity-child.ts), the host runs the CLI command
// `spa-workbench probe --json --request=-` in a child process (same Node or Electron binary,
// ELECTRON_RUN_AS_NODE=1) with the request as JSON on stdin; the shared ChildRunner
// (child-runner.ts) gives it the timeout, the one-at-a-time rule and the error mapping.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { repoRoot } from './system-info.js';
import { ChildRunner, nodeChildHandle, type ChildHandle } from './child-runner.js';

export { lastJson } from './child-runner.js';

/** The argv of the command (after the node binary). */
export function probeArgs(project: string): string[] {
  return [path.join(repoRoot, 'bin', 'spa-workbench.mjs'), 'probe', `--project=${project}`, '--request=-', '--json'];
}

/** Runs probe children, at most one at a time per host; `killAll` on dispose. */
export class ProbeRunner {
  private readonly runner = new ChildRunner({ running: 'another probe', expected: 'one probe at a time' });

  killAll(): void { this.runner.killAll(); }

  run(project: string, request: Record<string, unknown>, timeoutMs: number, where = 'probe.turn'): Promise<Record<string, unknown>> {
    const start = (): ChildHandle => {
      const child = spawn(process.execPath, probeArgs(project), {
        cwd: repoRoot,
        env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
      child.stdin!.on('error', () => { /* the child may exit before reading stdin: its exit explains why */ });
      child.stdin!.end(JSON.stringify(request));
      return nodeChildHandle(child);
    };
    return this.runner.run({
      start, timeoutMs, where, name: 'the probe process', onTimeout: 'the probe was stopped (raise timeoutSeconds)', maxStdout: 16_000_000,
    });
  }
}
