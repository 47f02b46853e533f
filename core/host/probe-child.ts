// probe.turn runs a model (TF.js), which must never run on the host's event loop. Like
// templates.perplexity (template-perplexity-child.ts), the host runs the CLI command
// `spa-workbench probe --json --request=<file>` in a child process: the same Node binary in the
// Node hosts, an Electron utilityProcess of the bundled dist-electron/probe.js in the desktop app
// (electron/perplexity-launcher.ts; ELECTRON_RUN_AS_NODE is off there by fuse). The request travels
// in a private temp file (a utilityProcess has no stdin); the shared ChildRunner (child-runner.ts)
// gives the timeout, the one-at-a-time rule and the error mapping.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { repoRoot } from './system-info.js';
import { ChildRunner, nodeChildHandle, type ChildHandle } from './child-runner.js';

export { lastJson } from './child-runner.js';

/** The arguments of the command after "probe". */
export function probeArgs(project: string, requestFile: string): string[] {
  return [`--project=${project}`, `--request=${requestFile}`, '--json'];
}

/** Starts `probe <args>`, whatever starts it (a Node child process, an Electron utilityProcess). */
export type ProbeLauncher = (args: string[]) => ChildHandle;

/** Node hosts (serve, CLI, tests): the same Node binary runs bin/spa-workbench.mjs. */
export const nodeProbeLauncher: ProbeLauncher = (args) =>
  nodeChildHandle(spawn(process.execPath, [path.join(repoRoot, 'bin', 'spa-workbench.mjs'), 'probe', ...args], {
    cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true,
  }));

/** Runs probe children, at most one at a time per host; `killAll` on dispose. */
export class ProbeRunner {
  private readonly runner = new ChildRunner({ running: 'another probe', expected: 'one probe at a time' });

  constructor(private readonly launch: ProbeLauncher = nodeProbeLauncher) {}

  killAll(): void { this.runner.killAll(); }

  run(project: string, request: Record<string, unknown>, timeoutMs: number, where = 'probe.turn'): Promise<Record<string, unknown>> {
    let requestDir: string | null = null;
    const start = (): ChildHandle => {
      requestDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-probe-'));
      const file = path.join(requestDir, `request-${randomBytes(4).toString('hex')}.json`);
      fs.writeFileSync(file, JSON.stringify(request), { mode: 0o600 });
      return this.launch(probeArgs(project, file));
    };
    return this.runner.run({
      start, timeoutMs, where, name: 'the probe process', onTimeout: 'the probe was stopped (raise timeoutSeconds)', maxStdout: 16_000_000,
      cleanup: () => { if (requestDir) fs.rmSync(requestDir, { recursive: true, force: true }); },
    });
  }
}
