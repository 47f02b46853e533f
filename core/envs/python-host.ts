// The synchronous line to one Python env process (resources/python-envs/host.py). The Env contract is synchronous
// (reset/step return values), a child process is not: a worker thread owns the child and its pipes, and the caller blocks on
// an Atomics.wait until the worker has the reply (receiveMessageOnPort), or until the call's timeout.
//   frame = "SPAE" + u32 LE length + UTF-8 JSON, both directions, one request at a time.
// A reply {ok: false} (the env raised) becomes a PythonEnvError with the env id, the op and Python's traceback, and the process
// is retired (the next env of that file starts a fresh one, so a fixed file is picked up). A process that exits is an error with
// its stderr's last lines; a call past its timeout asks Python for the stack of the hung call (faulthandler on SIGUSR1), kills
// the process and throws with that stack.
// This file and python-registry.ts are core/envs' only door to the operating system (child processes, no fs): envs written
// in Python run outside the engine, by design.
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';

/** An env failure on the Python side (raised, crashed, hung, unreadable): names the env, the call and the traceback. */
export class PythonEnvError extends Error {
  readonly envId: string;
  readonly op: string;
  readonly traceback: string;
  constructor(envId: string, op: string, message: string, traceback = '') {
    super(`python env ${JSON.stringify(envId)}: ${op} failed: ${message}${traceback ? `\n${traceback.trimEnd()}` : ''}`);
    this.name = 'PythonEnvError';
    this.envId = envId;
    this.op = op;
    this.traceback = traceback;
  }
}

// The worker thread's code (CommonJS, run with eval): spawn the host, frame requests onto its stdin, parse frames off its
// stdout, and post each reply to the caller's port before bumping the shared counter the caller waits on.
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const { spawn } = require('node:child_process');
const { python, args, port, sab } = workerData;
const counter = new Int32Array(sab);
let stderrTail = '';
let buf = Buffer.alloc(0);
let exited = null;
function post(msg) { port.postMessage(msg); Atomics.add(counter, 0, 1); Atomics.notify(counter, 0); }
const child = spawn(python, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PYTHONUNBUFFERED: '1', PYTHONFAULTHANDLER: '1' } });
post({ pid: child.pid ?? null });
child.stderr.on('data', (c) => { stderrTail = (stderrTail + c.toString('utf8')).slice(-16000); });
child.stdout.on('data', (chunk) => {
  buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
  while (buf.length >= 8) {
    if (buf.toString('latin1', 0, 4) !== 'SPAE') {
      const head = JSON.stringify(buf.toString('latin1', 0, 40));
      post({ fatal: 'malformed frame from the env process (did it write to stdout directly?): ' + head, stderr: stderrTail });
      child.kill('SIGKILL');
      return;
    }
    const n = buf.readUInt32LE(4);
    if (buf.length < 8 + n) return;
    const text = buf.toString('utf8', 8, 8 + n);
    buf = buf.subarray(8 + n);
    try { post({ reply: JSON.parse(text) }); } catch (e) { post({ fatal: 'reply is not JSON: ' + e.message, stderr: stderrTail }); }
  }
});
child.on('error', (e) => { exited = true; post({ fatal: 'could not start ' + python + ': ' + e.message, stderr: stderrTail }); });
child.on('exit', (code, signal) => {
  // let stderr drain before reporting
  setTimeout(() => {
    exited = true;
    post({ fatal: 'the env process exited (' + (signal ? 'signal ' + signal : 'code ' + code) + ')', stderr: stderrTail });
  }, 50);
});
child.stdin.on('error', () => {});
parentPort.on('message', (m) => {
  if (m.kill) { try { child.kill('SIGKILL'); } catch {} return; }
  if (m.dump) { try { child.kill('SIGUSR1'); } catch {} return; }
  if (exited) { post({ fatal: 'the env process has exited', stderr: stderrTail }); return; }
  const body = Buffer.from(JSON.stringify(m.request), 'utf8');
  const head = Buffer.alloc(8); head.write('SPAE', 0, 'latin1'); head.writeUInt32LE(body.length, 4);
  child.stdin.write(Buffer.concat([head, body]));
});
`;

interface WorkerMessage { pid?: number | null; reply?: Record<string, unknown>; fatal?: string; stderr?: string }

/** Last lines of a stderr capture, for error messages. */
function tail(text: string, lines = 30): string {
  const all = text.trimEnd().split('\n');
  return all.slice(-lines).join('\n');
}

/**
 * One Python env process, called synchronously. `call` blocks the calling thread until the reply or the timeout (ms).
 * After any failure the host is dead (`alive` false) and every later call throws at once.
 */
export class PythonHost {
  readonly envId: string;
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly counter: Int32Array;
  private pid: number | null = null;
  private deadReason: string | null = null;
  private stderr = '';

  constructor(envId: string, python: string, hostScript: string, envFile: string) {
    this.envId = envId;
    const sab = new SharedArrayBuffer(4);
    this.counter = new Int32Array(sab);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { python, args: ['-u', hostScript, envFile], port: port2, sab },
      transferList: [port2],
      stdout: false,
      stderr: false,
    });
    this.worker.unref();
    port1.unref();
  }

  get alive(): boolean { return this.deadReason === null; }

  /** Take the next message from the worker, waiting until `deadline` (Date.now() ms); null on timeout. */
  private next(deadline: number): WorkerMessage | null {
    for (;;) {
      const seen = Atomics.load(this.counter, 0);
      const got = receiveMessageOnPort(this.port);
      if (got) {
        const m = got.message as WorkerMessage;
        if (m.stderr !== undefined) this.stderr = m.stderr;
        if (m.pid !== undefined && m.reply === undefined && m.fatal === undefined) { this.pid = m.pid; continue; }
        return m;
      }
      const left = deadline - Date.now();
      if (left <= 0) return null;
      Atomics.wait(this.counter, 0, seen, Math.min(left, 1000));
    }
  }

  /** Send one request and wait for its reply (`timeoutMs`). Throws PythonEnvError on an env exception, exit or timeout. */
  call(op: string, request: Record<string, unknown>, timeoutMs: number): Record<string, unknown> {
    if (this.deadReason !== null) throw new PythonEnvError(this.envId, op, `the env process is gone (${this.deadReason})`);
    this.worker.postMessage({ request: { op, ...request } });
    const started = Date.now();
    const m = this.next(started + timeoutMs);
    if (m === null) {
      // Hung: ask Python for the stack of the running call (faulthandler), then kill the process.
      this.worker.postMessage({ dump: true });
      const until = Date.now() + 1500;
      while (Date.now() < until) { const x = this.next(Math.min(until, Date.now() + 100)); if (x?.fatal) break; }
      this.worker.postMessage({ kill: true });
      const gone = this.next(Date.now() + 3000);
      if (gone?.stderr !== undefined) this.stderr = gone.stderr;
      this.retire(`timed out in ${op}`);
      throw new PythonEnvError(this.envId, op,
        `no reply within ${(timeoutMs / 1000).toFixed(1)} s (the env hung; raise \`timeout\` in its declaration or SPA_ENV_TIMEOUT_S if it is only slow); ` +
        'the stack of the hung call:', tail(this.stderr, 40));
    }
    if (m.fatal !== undefined) {
      this.retire(m.fatal);
      throw new PythonEnvError(this.envId, op, m.fatal, tail(this.stderr));
    }
    const reply = m.reply!;
    if (reply.ok !== true) {
      const error = (reply.error ?? {}) as { type?: string; message?: string; traceback?: string };
      this.retire(`the env raised ${error.type ?? 'an error'} in ${op}`);
      throw new PythonEnvError(this.envId, op, `${error.type ?? 'Error'}: ${error.message ?? '(no message)'}`, error.traceback ?? '');
    }
    return reply;
  }

  /** Stop the process (idempotent); later calls throw. */
  retire(reason = 'closed'): void {
    if (this.deadReason === null) this.deadReason = reason;
    try { this.worker.postMessage({ kill: true }); } catch { /* already gone */ }
    setTimeout(() => { void this.worker.terminate(); }, 200).unref();
  }
}
