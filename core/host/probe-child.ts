// probe.turn runs a model (TF.js), which must never run on the host's event loop. Like
// templates.perplexity (template-perplexity-child.ts), the dispatcher runs the CLI command
// `spa-workbench probe --json --request=-` in a child process (same Node or Electron binary,
// ELECTRON_RUN_AS_NODE=1) with the request as JSON on stdin, with a timeout, at most one at a
// time, and turns what comes back into the response or an API error with the child's own error
// name and details (or the exit code / signal and the stderr tail when it died without one).
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { repoRoot } from './system-info.js';
import { WorkbenchError } from '../api/errors.js';

const STDERR_LINES = 20;
const KNOWN = new Set(['ValidationError', 'NotFound', 'Conflict', 'NoProject', 'Unavailable', 'Timeout', 'CorruptData', 'InternalError']);

/** The argv of the command (after the node binary). */
export function probeArgs(project: string): string[] {
  return [path.join(repoRoot, 'bin', 'spa-workbench.mjs'), 'probe', `--project=${project}`, '--request=-', '--json'];
}

/** The JSON object printed last on stdout (pretty-printed: it starts at a line that is exactly "{"). */
export function lastJson(stdout: string): Record<string, unknown> | null {
  const lines = stdout.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i] !== '{') continue;
    try { return JSON.parse(lines.slice(i).join('\n')) as Record<string, unknown>; } catch { return null; }
  }
  return null;
}

export class ProbeRunner {
  private readonly children = new Set<ChildProcess>();
  private runningSince: number | null = null;

  killAll(): void {
    for (const c of this.children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    this.children.clear();
  }

  async run(project: string, request: Record<string, unknown>, timeoutMs: number, where = 'probe.turn'): Promise<Record<string, unknown>> {
    if (this.runningSince !== null) {
      throw new WorkbenchError('Conflict', `${where}: another probe is running (started ${Math.round((Date.now() - this.runningSince) / 1000)} s ago); wait for it to finish`, {
        where, expected: 'one probe at a time', received: 'a second request while one runs',
      });
    }
    this.runningSince = Date.now();
    try { return await this.spawnOnce(project, request, timeoutMs, where); } finally { this.runningSince = null; }
  }

  private spawnOnce(project: string, request: Record<string, unknown>, timeoutMs: number, where: string): Promise<Record<string, unknown>> {
    const args = probeArgs(project);
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, args, { cwd: repoRoot, env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
      this.children.add(child);
      let stdout = '';
      const tail: string[] = [];
      let partial = '';
      let timedOut = false;
      let settled = false;
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => { if (stdout.length < 16_000_000) stdout += chunk; });
      child.stderr!.setEncoding('utf8');
      child.stderr!.on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop() ?? '';
        for (const l of lines) if (l.trim()) { tail.push(l); if (tail.length > STDERR_LINES) tail.shift(); }
      });
      child.stdin!.on('error', () => { /* the child may exit before reading stdin: its exit explains why */ });
      child.stdin!.end(JSON.stringify(request));
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGTERM');
        setTimeout(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); }, 2000).unref();
      }, timeoutMs);
      const finish = (code: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.children.delete(child);
        if (partial.trim()) tail.push(partial);
        const stderrTail = tail.slice(-STDERR_LINES);
        if (timedOut) {
          reject(new WorkbenchError('Timeout', `${where}: no result within ${Math.round(timeoutMs / 1000)} s; the probe was stopped (raise timeoutSeconds)`, {
            where, expected: `a result within ${Math.round(timeoutMs / 1000)} s`, received: 'no result', stderrTail,
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
        reject(new WorkbenchError('InternalError', `${where}: the probe process ${how}${stderrTail.length ? `: ${stderrTail[stderrTail.length - 1]}` : ' with no output'}`, {
          where: `${where} child process`, expected: 'exit code 0 and a JSON result on stdout', received: spawnError ? spawnError.message : signal ? `signal ${signal}` : `exit code ${code}`, stderrTail,
        }));
      };
      child.on('close', (code, signal) => finish(code, signal));
      child.on('error', (err) => { if (child.pid === undefined) finish(null, null, err); });
    });
  }
}
