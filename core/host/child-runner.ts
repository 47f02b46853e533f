// The host's model commands (templates.perplexity, probe.turn) run TF.js, which must never run on the
// host's event loop (the Electron main process or the server must keep answering). Each runs a CLI
// command with `--json` in a child process; this runner holds what they share: at most one child at a
// time per runner, a timeout (SIGTERM, then SIGKILL), the stderr tail, and turning what comes back into
// the response or an API error: the command's own JSON error (NotFound, ValidationError, … with its
// details), or, when the process died without one, an error naming the exit code or signal with the
// stderr tail. What differs (how the process starts, its arguments, stdin or a temp file) is the caller's.
import type { ChildProcess } from 'node:child_process';
import { WorkbenchError } from '../api/errors.js';

const STDERR_LINES = 20;
const KNOWN = new Set<string>(['ValidationError', 'NotFound', 'Conflict', 'NoProject', 'Unavailable', 'Timeout', 'CorruptData', 'InternalError']);

/** A started child, whatever starts it (a Node child process, an Electron utilityProcess). */
export interface ChildHandle {
  readonly stdout: NodeJS.ReadableStream | null;
  readonly stderr: NodeJS.ReadableStream | null;
  kill(signal?: NodeJS.Signals): void;
  /** Called once when the process has exited (code, or the signal/reason that ended it). */
  onExit(listener: (code: number | null, signal: string | null) => void): void;
  /** Called when the process could not be started at all. */
  onSpawnError(listener: (err: Error) => void): void;
}

/** A Node child process as a ChildHandle: kill() only signals a live process; exit is reported on 'close' (stdout drained). */
export function nodeChildHandle(child: ChildProcess): ChildHandle {
  return {
    stdout: child.stdout, stderr: child.stderr,
    kill: (signal) => { if (child.exitCode === null && child.signalCode === null) child.kill(signal); },
    onExit: (l) => child.on('close', (code, signal) => l(code, signal)),
    onSpawnError: (l) => child.on('error', (err) => { if (child.pid === undefined) l(err); }),
  };
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

/** One run of a child command. */
export interface ChildJob {
  /** Starts the process (and feeds its stdin, if it reads one). A throw is reported as Unavailable. */
  start(): ChildHandle;
  timeoutMs: number;
  /** The API method, for error messages and details. */
  where: string;
  /** The process as errors name it, e.g. "the probe process". */
  name: string;
  /** What a timeout message says after "no result within N s; ", e.g. "the probe was stopped (raise timeoutSeconds)". */
  onTimeout: string;
  /** Stdout kept at most (characters); the result is the last JSON object in it. */
  maxStdout: number;
  /** Extra details of the error for a process that ended without a JSON result or error. */
  crashDetails?: Record<string, unknown>;
  /** Runs once, when the process has ended or could not start. */
  cleanup?(): void;
}

/** Runs child commands at most one at a time; `killAll` on dispose. */
export class ChildRunner {
  private readonly children = new Set<ChildHandle>();
  private runningSince: number | null = null;

  /** `busy` names the work in the Conflict error of a second request, e.g. { running: 'another probe', expected: 'one probe at a time' }. */
  constructor(private readonly busy: { running: string; expected: string }) {}

  /** Children alive now. */
  get active(): number { return this.children.size; }

  killAll(): void {
    for (const c of this.children) c.kill('SIGKILL');
    this.children.clear();
  }

  async run(job: ChildJob): Promise<Record<string, unknown>> {
    if (this.runningSince !== null) {
      const seconds = Math.round((Date.now() - this.runningSince) / 1000);
      throw new WorkbenchError('Conflict', `${job.where}: ${this.busy.running} is running (started ${seconds} s ago); wait for it to finish`, {
        where: job.where, expected: this.busy.expected, received: 'a second request while one runs',
      });
    }
    this.runningSince = Date.now();
    try { return await this.runOnce(job); } finally { this.runningSince = null; }
  }

  private runOnce(job: ChildJob): Promise<Record<string, unknown>> {
    const { where } = job;
    return new Promise((resolve, reject) => {
      let child: ChildHandle;
      try { child = job.start(); } catch (err) {
        job.cleanup?.();
        reject(new WorkbenchError('Unavailable', `${where}: ${job.name} could not start: ${(err as Error).message}`, { where }));
        return;
      }
      this.children.add(child);
      let stdout = '';
      const tail: string[] = [];
      let partial = '';
      let timedOut = false;
      let settled = false;
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (chunk: string) => { if (stdout.length < job.maxStdout) stdout += chunk; });
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
      }, job.timeoutMs);
      const finish = (code: number | null, signal: string | null, spawnError?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        job.cleanup?.();
        this.children.delete(child);
        if (partial.trim()) tail.push(partial);
        const stderrTail = tail.slice(-STDERR_LINES);
        if (timedOut) {
          const seconds = Math.round(job.timeoutMs / 1000);
          reject(new WorkbenchError('Timeout', `${where}: no result within ${seconds} s; ${job.onTimeout}`, {
            where, expected: `a result within ${seconds} s`, received: 'no result', stderrTail,
          }));
          return;
        }
        const out = spawnError ? null : lastJson(stdout);
        if (code === 0 && out && !('error' in out)) { resolve(out); return; }
        const e = out?.error as { name?: unknown; message?: unknown; details?: Record<string, unknown> } | undefined;
        if (e && typeof e.message === 'string') {
          const name = typeof e.name === 'string' && KNOWN.has(e.name) ? e.name : 'InternalError';
          reject(new WorkbenchError(name, `${where}: ${e.message}`, {
            ...(e.details ?? {}),
            where: `${where} ${typeof e.details?.where === 'string' ? e.details.where : ''}`.trim(),
            stderrTail,
          }));
          return;
        }
        let how: string;
        let received: string;
        if (spawnError) { how = `could not start (${spawnError.message})`; received = spawnError.message; }
        else if (signal) { how = `was killed by ${signal}`; received = `signal ${signal}`; }
        else { how = `exited with code ${code}`; received = `exit code ${code}`; }
        const last = stderrTail.length ? `: ${stderrTail[stderrTail.length - 1]}` : ' with no output';
        reject(new WorkbenchError('InternalError', `${where}: ${job.name} ${how}${last}`, {
          where: `${where} child process`, expected: 'exit code 0 and a JSON result on stdout', received, stderrTail, ...(job.crashDetails ?? {}),
        }));
      };
      child.onExit((code, signal) => finish(code, signal));
      child.onSpawnError((err) => finish(null, null, err));
    });
  }
}
