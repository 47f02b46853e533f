// templates.perplexity runs TF.js, which must never run on the host's event loop (the Electron
// main process or the server must keep answering). So the dispatcher runs
// `spa-workbench template perplexity … --json` in a child process (Node hosts: the same Node
// binary; Electron: a utilityProcess of the bundled dist-electron/template-perplexity.js, so the
// RunAsNode fuse can stay off), with a timeout, and turns what comes back into the response or
// an API error: the command's own JSON error (NotFound, ValidationError, … with details), or, when
// the process died without one, an error naming the exit code or signal with its stderr tail.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { repoRoot } from './system-info.js';
import { WorkbenchError } from '../api/errors.js';

export interface PerplexityChildRequest {
  project: string;
  runId: string;
  checkpoint?: string;
  env: { id: string; options: Record<string, unknown> };
  template: { source: string } | { name: string; hash?: string };
  samples: number;
  seedStart?: number;
  timeoutMs: number;
}

const STDERR_LINES = 20;
const KNOWN = new Set(['ValidationError', 'NotFound', 'Conflict', 'NoProject', 'Unavailable', 'Timeout', 'CorruptData', 'InternalError']);

/** The argv of the command (after the node binary): exported for tests and docs. */
export function perplexityArgs(req: PerplexityChildRequest): string[] {
  const bin = path.join(repoRoot, 'bin', 'spa-workbench.mjs');
  const t = req.template;
  return [
    bin, 'template', 'perplexity', `--project=${req.project}`, `--run=${req.runId}`, `--env=${req.env.id}`,
    `--config=${JSON.stringify(req.env.options)}`, `--samples=${req.samples}`,
    ...(req.checkpoint ? [`--checkpoint=${req.checkpoint}`] : []),
    ...(req.seedStart !== undefined ? [`--seed-start=${req.seedStart}`] : []),
    ...('source' in t ? ['--template-file=-'] : [`--template=${t.hash ? `${t.name}@${t.hash}` : t.name}`]),
    '--json',
  ];
}

/** The JSON object printed last on stdout (pretty-printed: it starts at a line that is exactly "{"). */
function lastJson(stdout: string): Record<string, unknown> | null {
  const lines = stdout.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i] !== '{') continue;
    try { return JSON.parse(lines.slice(i).join('\n')) as Record<string, unknown>; } catch { return null; }
  }
  return null;
}

/** A started perplexity process, whatever starts it (a Node child process, an Electron utilityProcess). */
export interface PerplexityChild {
  readonly stdout: NodeJS.ReadableStream | null;
  readonly stderr: NodeJS.ReadableStream | null;
  kill(signal?: NodeJS.Signals): void;
  /** Called once when the process has exited (code, or the signal/reason that ended it). */
  onExit(listener: (code: number | null, signal: string | null) => void): void;
  /** Called when the process could not be started at all. */
  onSpawnError(listener: (err: Error) => void): void;
}

/**
 * Starts `template perplexity <args>`; `args` are the command's arguments after "perplexity". The
 * template text of an unsaved template is in a file named by --template-file (never on stdin, which
 * an Electron utilityProcess does not offer).
 */
export type PerplexityLauncher = (args: string[]) => PerplexityChild;

/** Node hosts (serve, CLI, tests): the same Node binary runs bin/spa-workbench.mjs. */
export const nodePerplexityLauncher: PerplexityLauncher = (args) => {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'spa-workbench.mjs'), 'template', 'perplexity', ...args], {
    cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true,
  });
  return {
    stdout: child.stdout, stderr: child.stderr,
    kill: (signal) => { if (child.exitCode === null && child.signalCode === null) child.kill(signal); },
    onExit: (l) => child.on('close', (code, signal) => l(code, signal)),
    onSpawnError: (l) => child.on('error', (err) => { if (child.pid === undefined) l(err); }),
  };
};

/** Runs perplexity children; at most one at a time per host; `killAll` on dispose. */
export class PerplexityRunner {
  private readonly children = new Set<PerplexityChild>();
  private runningSince: number | null = null;

  constructor(private readonly launch: PerplexityLauncher = nodePerplexityLauncher) {}

  get active(): number { return this.children.size; }

  killAll(): void {
    for (const c of this.children) c.kill('SIGKILL');
    this.children.clear();
  }

  async run(req: PerplexityChildRequest, where = 'templates.perplexity'): Promise<Record<string, unknown>> {
    if (this.runningSince !== null) {
      throw new WorkbenchError('Conflict', `${where}: another perplexity computation is running (started ${Math.round((Date.now() - this.runningSince) / 1000)} s ago); wait for it to finish`, {
        where, expected: 'one computation at a time', received: 'a second request while one runs',
      });
    }
    this.runningSince = Date.now();
    try { return await this.spawnOnce(req, where); } finally { this.runningSince = null; }
  }

  private spawnOnce(req: PerplexityChildRequest, where: string): Promise<Record<string, unknown>> {
    // the text of an unsaved template goes through a private temp file (removed afterwards)
    let templateFile: string | null = null;
    if ('source' in req.template) {
      templateFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'spa-perplexity-')), `template-${randomBytes(4).toString('hex')}.json`);
      fs.writeFileSync(templateFile, req.template.source, { mode: 0o600 });
    }
    const args = perplexityArgs(req).slice(3).map((a) => (a === '--template-file=-' && templateFile ? `--template-file=${templateFile}` : a));
    const cleanup = () => { if (templateFile) fs.rmSync(path.dirname(templateFile), { recursive: true, force: true }); };
    return new Promise((resolve, reject) => {
      let child: PerplexityChild;
      try { child = this.launch(args); } catch (err) {
        cleanup();
        reject(new WorkbenchError('Unavailable', `${where}: the perplexity process could not start: ${(err as Error).message}`, { where }));
        return;
      }
      this.children.add(child);
      let stdout = '';
      const tail: string[] = [];
      let partial = '';
      let timedOut = false;
      let settled = false;
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (chunk: string) => { if (stdout.length < 4_000_000) stdout += chunk; });
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop() ?? '';
        for (const l of lines) if (l.trim()) { tail.push(l); if (tail.length > STDERR_LINES) tail.shift(); }
      });
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGTERM');
        setTimeout(() => { if (!settled) child.kill('SIGKILL'); }, 2000).unref();
      }, req.timeoutMs);
      const finish = (code: number | null, signal: string | null, spawnError?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        cleanup();
        this.children.delete(child);
        if (partial.trim()) tail.push(partial);
        const stderrTail = tail.slice(-STDERR_LINES);
        if (timedOut) {
          reject(new WorkbenchError('Timeout', `${where}: no result within ${Math.round(req.timeoutMs / 1000)} s; the computation was stopped (try fewer samples or a larger timeoutSeconds)`, {
            where, expected: `a result within ${Math.round(req.timeoutMs / 1000)} s`, received: 'no result', stderrTail,
          }));
          return;
        }
        const out = spawnError ? null : lastJson(stdout);
        if (code === 0 && out && !('error' in out)) { resolve(out); return; }
        const e = out?.error as { name?: unknown; message?: unknown; details?: Record<string, unknown> } | undefined;
        if (e && typeof e.message === 'string') {
          const name = typeof e.name === 'string' && KNOWN.has(e.name) ? e.name : 'InternalError';
          reject(new WorkbenchError(name, `${where}: ${e.message}`, { ...(e.details ?? {}), where: `${where} ${typeof e.details?.where === 'string' ? e.details.where : ''}`.trim(), stderrTail }));
          return;
        }
        const how = spawnError ? `could not start (${spawnError.message})` : signal ? `was killed by ${signal}` : `exited with code ${code}`;
        const last = stderrTail.length ? `: ${stderrTail[stderrTail.length - 1]}` : ' with no output';
        reject(new WorkbenchError('InternalError', `${where}: the perplexity process ${how}${last}`, {
          where: `${where} child process`, expected: 'exit code 0 and a JSON result on stdout', received: spawnError ? spawnError.message : signal ? `signal ${signal}` : `exit code ${code}`,
          stderrTail, command: `spa-workbench template perplexity ${args.slice(0, 2).join(' ')} …`,
        }));
      };
      child.onExit((code, signal) => finish(code, signal));
      child.onSpawnError((err) => finish(null, null, err));
    });
  }
}
