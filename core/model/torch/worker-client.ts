// The engine's side of the PyTorch worker (resources/torch-worker/worker.py): finds a Python with
// torch, starts the worker, and speaks its framed protocol over stdio:
//   frame = "SPAF" + u32 LE header length + JSON header + raw little-endian arrays
//   header.arrays = [{ name, dtype: 'f32' | 'i32', shape }] in payload order
// One request at a time per worker (requests queue). The worker's stderr goes to the log and its
// last lines into the error when it dies: a crash, a kill or a malformed frame fails every pending
// request with the reason, and later requests fail at once.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export type WireArray = Float32Array | Int32Array;
export interface Reply { header: Record<string, unknown>; arrays: Record<string, WireArray> }

export class TorchWorkerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TorchWorkerError';
  }
}

/** What `python -c "import torch"` found: the interpreter, torch's version and devices, or why not. */
export interface TorchProbe {
  ok: boolean;
  python: string;
  /** Where the interpreter came from: SPA_PYTHON or the default search. */
  source: 'SPA_PYTHON' | 'default';
  torch?: string;
  cuda?: boolean;
  mps?: boolean;
  device?: string;
  reason?: string;
}

const MIN_TORCH: [number, number] = [1, 13];
const probes = new Map<string, TorchProbe>();

/** Candidate interpreters: SPA_PYTHON alone when set; else python3 on PATH, then /usr/bin/python3 (Debian's python3-torch). */
export function pythonCandidates(): { list: string[]; source: TorchProbe['source'] } {
  const env = process.env.SPA_PYTHON?.trim();
  if (env) return { list: [env], source: 'SPA_PYTHON' };
  const list = process.platform === 'win32' ? ['python', 'py'] : ['python3', '/usr/bin/python3', 'python'];
  return { list: [...new Set(list)], source: 'default' };
}

const PROBE = 'import json, sys, torch\n' +
  'mps = bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())\n' +
  'cuda = torch.cuda.is_available()\n' +
  'print(json.dumps({"torch": torch.__version__, "cuda": cuda, "mps": mps, "device": torch.cuda.get_device_name(0) if cuda else ("mps" if mps else "cpu")}))';

function versionTuple(v: string): [number, number] {
  const [a, b] = v.split('+')[0]!.split('.').map((p) => Number.parseInt(p.replace(/\D.*$/, ''), 10) || 0);
  return [a ?? 0, b ?? 0];
}

interface ProbeRun { error?: Error; status: number | null; stdout: string; stderr: string }

/** One interpreter's answer: the probe, or why it does not qualify. */
function judge(python: string, source: TorchProbe['source'], r: ProbeRun): TorchProbe | string {
  if (r.error) return `${python}: ${(r.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : r.error.message}`;
  if (r.status !== 0) {
    const last = (r.stderr || '').trim().split('\n').pop() ?? '';
    return `${python}: ${/No module named .?torch/.test(last) ? 'torch is not installed' : last.slice(0, 200) || `exit ${r.status}`}`;
  }
  try {
    const info = JSON.parse(r.stdout.trim().split('\n').pop()!) as { torch: string; cuda: boolean; mps: boolean; device: string };
    const [maj, min] = versionTuple(info.torch);
    if (maj < MIN_TORCH[0] || (maj === MIN_TORCH[0] && min < MIN_TORCH[1])) return `${python}: torch ${info.torch} is too old (need >= ${MIN_TORCH.join('.')})`;
    return { ok: true, python, source, ...info };
  } catch {
    return `${python}: unreadable answer from the torch probe: ${r.stdout.slice(0, 200)}`;
  }
}

function conclude(list: string[], source: TorchProbe['source'], answers: Array<TorchProbe | string>): TorchProbe {
  const found = answers.find((a): a is TorchProbe => typeof a !== 'string');
  if (found) return found;
  return { ok: false, python: list[0]!, source, reason: `no Python with torch >= ${MIN_TORCH.join('.')} (${answers.join('; ')})` };
}

/** Probe for a Python with torch (cached per interpreter list; blocks while Python imports torch). Never throws. */
export function probeTorch(): TorchProbe {
  const { list, source } = pythonCandidates();
  const key = `${source}:${list.join('|')}`;
  const cached = probes.get(key);
  if (cached) return cached;
  const answers: Array<TorchProbe | string> = [];
  for (const python of list) {
    const r = spawnSync(python, ['-c', PROBE], { encoding: 'utf8', timeout: 60_000 });
    const a = judge(python, source, { error: r.error, status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' });
    answers.push(a);
    if (typeof a !== 'string') break;
  }
  const probe = conclude(list, source, answers);
  probes.set(key, probe);
  return probe;
}

const pendingProbes = new Map<string, Promise<TorchProbe>>();

/** The same probe without blocking the event loop (for a host answering requests); shares probeTorch's cache. */
export function probeTorchAsync(): Promise<TorchProbe> {
  const { list, source } = pythonCandidates();
  const key = `${source}:${list.join('|')}`;
  const cached = probes.get(key);
  if (cached) return Promise.resolve(cached);
  const pending = pendingProbes.get(key);
  if (pending) return pending;
  const run = (python: string) => new Promise<ProbeRun>((resolve) => {
    execFile(python, ['-c', PROBE], { encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      const status = error && typeof (error as { code?: unknown }).code === 'number' ? (error as unknown as { code: number }).code : error ? null : 0;
      resolve({ error: error && status === null ? error : undefined, status, stdout, stderr });
    });
  });
  const p = (async () => {
    const answers: Array<TorchProbe | string> = [];
    for (const python of list) {
      const a = judge(python, source, await run(python));
      answers.push(a);
      if (typeof a !== 'string') break;
    }
    const probe = conclude(list, source, answers);
    probes.set(key, probe);
    pendingProbes.delete(key);
    return probe;
  })();
  pendingProbes.set(key, p);
  return p;
}

/** The cached probe, or null when no probe has finished yet (never blocks). */
export function cachedTorchProbe(): TorchProbe | null {
  const { list, source } = pythonCandidates();
  return probes.get(`${source}:${list.join('|')}`) ?? null;
}

/** Forget cached probes (tests that change SPA_PYTHON). */
export function resetTorchProbe(): void { probes.clear(); pendingProbes.clear(); }

/** resources/torch-worker/worker.py: SPA_TORCH_WORKER, else found from this file upwards, else beside an Electron app's resources. */
export function workerScript(): string {
  const env = process.env.SPA_TORCH_WORKER?.trim();
  if (env) return env;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'resources', 'torch-worker', 'worker.py');
    // Inside a packaged app the file is listed in app.asar but Python reads the unpacked copy (build/electron-builder.yml asarUnpack).
    const unpacked = candidate.replace(/app\.asar([\\/])/, 'app.asar.unpacked$1');
    if (unpacked !== candidate && existsSync(unpacked)) return unpacked;
    if (existsSync(candidate)) return candidate;
    dir = resolve(dir, '..');
  }
  const packaged = (process as { resourcesPath?: string }).resourcesPath;
  if (packaged && existsSync(join(packaged, 'torch-worker', 'worker.py'))) return join(packaged, 'torch-worker', 'worker.py');
  throw new TorchWorkerError('the PyTorch worker script resources/torch-worker/worker.py was not found (set SPA_TORCH_WORKER to its path)');
}

function encodeFrame(header: Record<string, unknown>, arrays: Record<string, { data: WireArray; shape: number[] }>): Buffer {
  const specs: Array<{ name: string; dtype: 'f32' | 'i32'; shape: number[] }> = [];
  const blobs: Buffer[] = [];
  for (const [name, { data, shape }] of Object.entries(arrays)) {
    const count = shape.reduce((a, b) => a * b, 1);
    if (count !== data.length) throw new TorchWorkerError(`array ${name}: shape [${shape.join(', ')}] needs ${count} values, got ${data.length}`);
    specs.push({ name, dtype: data instanceof Int32Array ? 'i32' : 'f32', shape });
    blobs.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }
  const json = Buffer.from(JSON.stringify({ ...header, arrays: specs }), 'utf8');
  const head = Buffer.alloc(8);
  head.write('SPAF', 0, 'ascii');
  head.writeUInt32LE(json.length, 4);
  return Buffer.concat([head, json, ...blobs]);
}

/** Incremental frame parser: feed bytes, take complete frames. Throws on a malformed frame. */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);
  push(chunk: Buffer): Reply[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out: Reply[] = [];
    for (;;) {
      if (this.buf.length < 8) return out;
      if (this.buf.toString('ascii', 0, 4) !== 'SPAF') {
        throw new TorchWorkerError(`malformed frame from the worker: expected the magic "SPAF", got ${JSON.stringify(this.buf.toString('latin1', 0, 16))}`);
      }
      const n = this.buf.readUInt32LE(4);
      if (this.buf.length < 8 + n) return out;
      let header: Record<string, unknown>;
      try {
        header = JSON.parse(this.buf.toString('utf8', 8, 8 + n)) as Record<string, unknown>;
      } catch (error) {
        throw new TorchWorkerError(`malformed frame from the worker: header is not JSON (${(error as Error).message})`);
      }
      const specs = (header.arrays ?? []) as Array<{ name: string; dtype: string; shape: number[] }>;
      let size = 0;
      for (const s of specs) size += s.shape.reduce((a, b) => a * b, 1) * 4;
      if (this.buf.length < 8 + n + size) return out;
      let offset = 8 + n;
      const arrays: Record<string, WireArray> = {};
      for (const s of specs) {
        const count = s.shape.reduce((a, b) => a * b, 1);
        const bytes = new Uint8Array(this.buf.subarray(offset, offset + count * 4)).slice().buffer; // aligned copy
        if (s.dtype === 'f32') arrays[s.name] = new Float32Array(bytes);
        else if (s.dtype === 'i32') arrays[s.name] = new Int32Array(bytes);
        else throw new TorchWorkerError(`malformed frame from the worker: array ${s.name} has dtype ${JSON.stringify(s.dtype)}`);
        offset += count * 4;
      }
      this.buf = this.buf.subarray(offset);
      out.push({ header, arrays });
    }
  }
}

export interface WorkerOptions {
  python: string;
  /** Intra-op threads on the CPU (default: SPA_TORCH_THREADS, else every core the process may use). */
  threads?: number;
  log?: (line: string) => void;
}

/** One worker process. `request` resolves with the reply or rejects with the worker's error / death. */
export class TorchWorker {
  /** Where its stderr lines go (changes when the pool hands the worker to a new model). */
  log: ((line: string) => void) | undefined;
  readonly python: string;
  readonly threads: number | undefined;
  private readonly child: ChildProcess;
  private readonly reader = new FrameReader();
  private readonly pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void; op: string }>();
  private nextId = 1;
  private dead: Error | null = null;
  private readonly stderrTail: string[] = [];
  private chain: Promise<unknown> = Promise.resolve();

  constructor(opts: WorkerOptions) {
    this.log = opts.log;
    this.python = opts.python;
    this.threads = opts.threads;
    const script = workerScript();
    this.child = spawn(opts.python, ['-u', script], {
      stdio: ['pipe', 'pipe', 'pipe'],
      // SPA_WORKER_PARENT: the worker exits at start when this process is already gone (worker.py _die_with_parent)
      env: { ...process.env, ...(opts.threads !== undefined ? { SPA_TORCH_THREADS: String(opts.threads) } : {}), PYTHONUNBUFFERED: '1',
        SPA_WORKER_PARENT: String(process.pid) },
    });
    this.child.stdout!.on('data', (chunk: Buffer) => {
      let replies: Reply[];
      try {
        replies = this.reader.push(chunk);
      } catch (error) {
        this.fail(error as Error);
        this.child.kill('SIGKILL');
        return;
      }
      for (const r of replies) {
        const id = r.header.id as number;
        const p = this.pending.get(id);
        if (!p) continue;
        this.pending.delete(id);
        if (r.header.ok) p.resolve(r);
        else p.reject(new TorchWorkerError(`PyTorch worker: ${p.op} failed: ${String(r.header.error)}`));
      }
    });
    let partial = '';
    this.child.stderr!.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        this.stderrTail.push(line);
        if (this.stderrTail.length > 30) this.stderrTail.shift();
        if (line.trim()) this.log?.(`[torch worker] ${line}`);
      }
    });
    this.child.on('error', (error) => this.fail(new TorchWorkerError(`could not start the PyTorch worker with ${opts.python}: ${error.message}`)));
    this.child.on('exit', (code, signal) => {
      const fatal = this.stderrTail.find((l) => l.startsWith('SPA-WORKER-FATAL: '))?.slice('SPA-WORKER-FATAL: '.length);
      const tail = this.stderrTail.filter((l) => l.trim()).slice(-8).join(' | ');
      const how = signal ? `was killed (${signal})` : `exited with code ${code}`;
      this.fail(new TorchWorkerError(`the PyTorch worker ${how}${fatal ? `: ${fatal}` : tail ? `; its last output: ${tail}` : ''}`));
    });
    this.child.stdin!.on('error', () => { /* the exit handler reports the cause */ });
  }

  get pid(): number | undefined { return this.child.pid; }

  /** Alive and able to take requests. */
  get alive(): boolean { return !this.dead && this.child.exitCode === null; }

  /** Whether an idle worker keeps this process running (false while it waits in the pool). */
  setRef(on: boolean): void {
    const handles = [this.child, this.child.stdin, this.child.stdout, this.child.stderr] as Array<{ ref?: () => void; unref?: () => void } | null>;
    for (const h of handles) (on ? h?.ref : h?.unref)?.call(h);
  }

  private fail(error: Error): void {
    if (!this.dead) this.dead = error;
    for (const p of this.pending.values()) p.reject(this.dead);
    this.pending.clear();
  }

  /** Send one request; requests run one after another. */
  request(op: string, header: Record<string, unknown> = {}, arrays: Record<string, { data: WireArray; shape: number[] }> = {}): Promise<Reply> {
    const run = (): Promise<Reply> => {
      if (this.dead) return Promise.reject(this.dead);
      const id = this.nextId++;
      return new Promise<Reply>((resolve, reject) => {
        this.pending.set(id, { resolve, reject, op });
        this.child.stdin!.write(encodeFrame({ ...header, id, op }, arrays));
      });
    };
    const next = this.chain.then(run, run);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Ask the worker to exit; kill it if it does not within a few seconds. */
  async close(): Promise<void> {
    if (this.dead || this.child.exitCode !== null) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.request('shutdown').catch(() => undefined);
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }

  /** Tests: kill the process as a crash would. */
  kill(signal: NodeJS.Signals = 'SIGKILL'): void { this.child.kill(signal); }

  /** Tests: write raw bytes to the worker's stdin (a malformed frame). */
  writeRaw(bytes: Buffer): void { this.child.stdin!.write(bytes); }
}

// ───────────────────────── a small pool of idle workers ─────────────────────────
// Starting Python and importing torch costs about a second; a run loads a model per stage (and a
// reference or a critic beside it). A released worker drops its model (`reset`) and waits, unref'd,
// for the next model of this process; it exits with the process (its stdin closes).

const MAX_IDLE = 2;
const idle: TorchWorker[] = [];

/** A worker for this interpreter and thread count: an idle one if any, else a new process. */
export function takeWorker(opts: WorkerOptions): TorchWorker {
  while (idle.length) {
    const w = idle.pop()!;
    if (w.alive && w.python === opts.python && w.threads === opts.threads) {
      w.setRef(true);
      w.log = opts.log;
      return w;
    }
    void w.close();
  }
  return new TorchWorker(opts);
}

/**
 * Give a worker back: it is idle at once (callers often do not await dispose) and its `reset` is
 * queued before anything the next owner sends; beyond MAX_IDLE it is closed. A dead worker is
 * dropped. The reset is not awaited: an idle worker is unref'd, and waiting on it could leave the
 * process with nothing keeping it alive but that promise.
 */
export async function releaseWorker(w: TorchWorker): Promise<void> {
  if (!w.alive) return;
  if (idle.length >= MAX_IDLE) { await w.close(); return; }
  w.log = undefined;
  idle.push(w);
  w.request('reset').catch(() => {
    const i = idle.indexOf(w);
    if (i >= 0) idle.splice(i, 1);
    void w.close();
  });
  w.setRef(false);
}
