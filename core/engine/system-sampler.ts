// Samples the engine process and its machine every few seconds while a run runs and appends them
// to <run>/system.jsonl (inspect.systemMetrics, the System panel of the run view): CPU of this
// process (% of one core, from process.cpuUsage), its resident memory and V8 heap, the machine's
// memory in use and 1-minute load, the engine's child processes (the torch workers that do the
// computing on the torch backend: CPU and resident memory from /proc/<pid>/stat and status, Linux
// only), and, where `nvidia-smi` answers, the first GPU's utilisation and memory. The timer is
// unref'd; a sample that fails to write is dropped (never fails a run).
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import type { SystemSample } from '../api/contract.js';
import { appendSystemSample } from '../storage/system-samples.js';

export const SYSTEM_SAMPLE_MS = 5000;

type Gpu = Pick<SystemSample, 'gpuPercent' | 'gpuMemMb' | 'gpuMemTotalMb'>;

/** First GPU from `nvidia-smi --query-gpu=utilization.gpu,memory.used,memory.total --format=csv,noheader,nounits`. */
export function parseNvidiaSmi(text: string): Gpu | null {
  const first = text.split('\n').map((l) => l.trim()).find((l) => l.length > 0);
  if (!first) return null;
  const [util, used, total] = first.split(',').map((x) => Number(x.trim()));
  if (![util, used, total].every((x) => Number.isFinite(x))) return null;
  return { gpuPercent: util!, gpuMemMb: used!, gpuMemTotalMb: total! };
}

function queryGpu(): Promise<Gpu | null> {
  return new Promise((resolve) => {
    execFile('nvidia-smi', ['--query-gpu=utilization.gpu,memory.used,memory.total', '--format=csv,noheader,nounits'], { timeout: 2000, windowsHide: true },
      (err, stdout) => resolve(err ? null : parseNvidiaSmi(String(stdout))));
  });
}

/** Reads /proc (or a fake of it in tests): the names under it and a file's text, null when gone. */
export interface ProcReader { list(): string[]; read(path: string): string | null }

export const realProc: ProcReader = {
  list: () => { try { return readdirSync('/proc'); } catch { return []; } },
  read: (path) => { try { return readFileSync(`/proc/${path}`, 'utf8'); } catch { return null; } },
};

export interface ProcStat { pid: number; comm: string; ppid: number; cpuTicks: number; rssKb: number }

/** One process from /proc/<pid>/stat (comm, ppid, utime + stime) and /proc/<pid>/status (VmRSS); null when it is gone. */
export function readProcStat(pid: number, proc: ProcReader = realProc): ProcStat | null {
  const stat = proc.read(`${pid}/stat`);
  if (!stat) return null;
  const open = stat.indexOf('('), close = stat.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const f = stat.slice(close + 2).trim().split(/\s+/);   // f[0] = state (field 3), f[1] = ppid, f[11] = utime, f[12] = stime
  const ppid = Number(f[1]), utime = Number(f[11]), stime = Number(f[12]);
  if (![ppid, utime, stime].every(Number.isFinite)) return null;
  const rss = /^VmRSS:\s*(\d+)\s*kB/m.exec(proc.read(`${pid}/status`) ?? '');
  return { pid, comm: stat.slice(open + 1, close), ppid, cpuTicks: utime + stime, rssKb: rss ? Number(rss[1]) : 0 };
}

/** The live child processes of `ppid` (the engine's torch workers). */
export function childProcesses(ppid: number, proc: ProcReader = realProc): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of proc.list()) {
    if (!/^\d+$/.test(name)) continue;
    const s = readProcStat(Number(name), proc);
    if (s && s.ppid === ppid) out.push(s);
  }
  return out.sort((a, b) => a.pid - b.pid);
}

export const CLOCK_TICKS_PER_SECOND = 100;   // USER_HZ on Linux

type Workers = Pick<SystemSample, 'workerCpuPercent' | 'workerRssMb' | 'workerPids'>;

/**
 * The engine's child processes measured between two calls: CPU (% of one core, from their clock
 * ticks since the last call; a process new since then counts from its start) and resident memory.
 * The first call is the baseline: it gives memory and pids but no CPU (a child's ticks since its
 * start over the first call's window of a few ms read as thousands of %). Null when there are no
 * children (the TF.js backends compute in the engine itself) or /proc is absent.
 */
export function workerMeter(ppid: number, proc: ProcReader = realProc): (elapsedMs: number) => Workers | null {
  let last: Map<number, number> | null = null;
  return (elapsedMs) => {
    const kids = childProcesses(ppid, proc).filter((k) => k.comm !== 'nvidia-smi');
    const ticks = new Map(kids.map((k) => [k.pid, k.cpuTicks]));
    const before = last;
    last = ticks;
    if (kids.length === 0) return null;
    const busy = before ? kids.reduce((a, k) => a + k.cpuTicks - (before.get(k.pid) ?? 0), 0) : 0;
    const cpu = before && elapsedMs > 0 ? busy / CLOCK_TICKS_PER_SECOND / (elapsedMs / 1000) * 100 : null;
    return {
      ...(cpu !== null ? { workerCpuPercent: Math.round(Math.max(0, cpu) * 10) / 10 } : {}),
      workerRssMb: Math.round(kids.reduce((a, k) => a + k.rssKb, 0) / 1024 * 10) / 10,
      workerPids: kids.map((k) => k.pid),
    };
  };
}

/** Start sampling into runDir/system.jsonl; returns stop(). `stage()` names the stage running now. */
export function startSystemSampler(runDir: string, stage: () => string | null, intervalMs = SYSTEM_SAMPLE_MS): () => void {
  // the first sample (taken at once) averages over the process's life so far, not over a window of a few ms
  let lastCpu: NodeJS.CpuUsage = { user: 0, system: 0 };
  let lastTime = 0;                 // performance.now() counts from the process's start
  let gpuAvailable = true;        // stop asking after the first failure (no nvidia-smi on this machine)
  let stopped = false;
  const mb = (bytes: number) => Math.round(bytes / 1048576 * 10) / 10;
  const workers = workerMeter(process.pid);
  const sample = async (): Promise<void> => {
    const cpu = process.cpuUsage();
    const now = performance.now();
    const busyMs = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000;
    const cpuPercent = now > lastTime ? Math.round(busyMs / (now - lastTime) * 1000) / 10 : 0;
    const work = workers(now - lastTime);
    lastCpu = cpu; lastTime = now;
    const mem = process.memoryUsage();
    const gpu = gpuAvailable ? await queryGpu() : null;
    if (!gpu) gpuAvailable = false;
    if (stopped) return;
    const s: SystemSample = {
      time: Date.now(), stage: stage(), cpuPercent, rssMb: mb(mem.rss), heapMb: mb(mem.heapUsed),
      memUsedMb: mb(os.totalmem() - os.freemem()), memTotalMb: mb(os.totalmem()), loadAvg: Math.round(os.loadavg()[0]! * 100) / 100,
      cores: os.availableParallelism(),
      ...(work ?? {}), ...(gpu ?? {}),
    };
    try { appendSystemSample(runDir, s); } catch { /* disk full or folder gone: the run itself reports that */ }
  };
  const timer = setInterval(() => { void sample(); }, intervalMs);
  timer.unref();
  void sample();
  return () => { stopped = true; clearInterval(timer); };
}
