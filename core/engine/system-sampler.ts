// Samples the engine process and its machine every few seconds while a run runs and appends them
// to <run>/system.jsonl (inspect.systemMetrics, the System panel of the run view): CPU of this
// process (% of one core, from process.cpuUsage), its resident memory and V8 heap, the machine's
// memory in use and 1-minute load, and, where `nvidia-smi` answers, the first GPU's utilisation
// and memory. The timer is unref'd; a sample that fails to write is dropped (never fails a run).
import { execFile } from 'node:child_process';
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

/** Start sampling into runDir/system.jsonl; returns stop(). `stage()` names the stage running now. */
export function startSystemSampler(runDir: string, stage: () => string | null, intervalMs = SYSTEM_SAMPLE_MS): () => void {
  let lastCpu = process.cpuUsage();
  let lastTime = performance.now();
  let gpuAvailable = true;        // stop asking after the first failure (no nvidia-smi on this machine)
  let stopped = false;
  const mb = (bytes: number) => Math.round(bytes / 1048576 * 10) / 10;
  const sample = async (): Promise<void> => {
    const cpu = process.cpuUsage();
    const now = performance.now();
    const busyMs = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000;
    const cpuPercent = now > lastTime ? Math.round(busyMs / (now - lastTime) * 1000) / 10 : 0;
    lastCpu = cpu; lastTime = now;
    const mem = process.memoryUsage();
    const gpu = gpuAvailable ? await queryGpu() : null;
    if (!gpu) gpuAvailable = false;
    if (stopped) return;
    const s: SystemSample = {
      time: Date.now(), stage: stage(), cpuPercent, rssMb: mb(mem.rss), heapMb: mb(mem.heapUsed),
      memUsedMb: mb(os.totalmem() - os.freemem()), memTotalMb: mb(os.totalmem()), loadAvg: Math.round(os.loadavg()[0]! * 100) / 100,
      ...(gpu ?? {}),
    };
    try { appendSystemSample(runDir, s); } catch { /* disk full or folder gone: the run itself reports that */ }
  };
  const timer = setInterval(() => { void sample(); }, intervalMs);
  timer.unref();
  void sample();
  return () => { stopped = true; clearInterval(timer); };
}
