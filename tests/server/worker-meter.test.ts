// The System panel measures the process that computes: the engine's child processes (the torch
// workers) from /proc/<pid>/stat and status, over a fake /proc and a real child process.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { childProcesses, readProcStat, workerMeter, type ProcReader } from '../../core/engine/system-sampler.js';

function fakeProc(procs: Record<number, { comm: string; ppid: number; utime: number; stime: number; rssKb: number }>): ProcReader {
  return {
    list: () => ['self', 'cpuinfo', ...Object.keys(procs)],
    read: (path) => {
      const [pid, file] = path.split('/');
      const p = procs[Number(pid)];
      if (!p) return null;
      // fields 3..: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime …
      if (file === 'stat') return `${pid} (${p.comm}) S ${p.ppid} 1 1 0 -1 4194304 10 0 0 0 ${p.utime} ${p.stime} 0 0 20 0 3 0 100 1000 50`;
      if (file === 'status') return `Name:\t${p.comm}\nVmPeak:\t 999 kB\nVmRSS:\t ${p.rssKb} kB\nThreads:\t3\n`;
      return null;
    },
  };
}

describe('worker meter', () => {
  it('reads comm (with spaces and parentheses), ppid, utime + stime and VmRSS', () => {
    const proc = fakeProc({ 42: { comm: 'python3 (x)', ppid: 7, utime: 150, stime: 50, rssKb: 2048 } });
    expect(readProcStat(42, proc)).toEqual({ pid: 42, comm: 'python3 (x)', ppid: 7, cpuTicks: 200, rssKb: 2048 });
    expect(readProcStat(43, proc)).toBeNull();
  });

  it('measures only the children of the engine: CPU from tick deltas, RSS summed', () => {
    const procs = {
      10: { comm: 'python3', ppid: 7, utime: 100, stime: 0, rssKb: 300 * 1024 },
      11: { comm: 'python3', ppid: 7, utime: 50, stime: 0, rssKb: 64 * 1024 },
      12: { comm: 'bash', ppid: 1, utime: 9999, stime: 0, rssKb: 999999 },
    };
    const proc = fakeProc(procs);
    expect(childProcesses(7, proc).map((p) => p.pid)).toEqual([10, 11]);
    const meter = workerMeter(7, proc);
    meter(5000);                                  // first call: the baseline
    procs[10].utime += 150; procs[11].stime += 50; // 200 ticks = 2 CPU-seconds over 5 s
    expect(meter(5000)).toEqual({ workerCpuPercent: 40, workerRssMb: 364, workerPids: [10, 11] });
    expect(workerMeter(99, proc)(5000)).toBeNull();  // no children: the engine computes itself
    // the first call is a baseline: a child's ticks since its start over a window of a few ms are no CPU figure (was 5,982%)
    expect(workerMeter(7, proc)(3)).toEqual({ workerRssMb: 364, workerPids: [10, 11] });
  });

  it.runIf(existsSync('/proc/self/stat'))('finds a real child process and its resident memory', async () => {
    const child = spawn(process.execPath, ['-e', 'const a = Buffer.alloc(64 * 1024 * 1024, 1); setInterval(() => a[0]++, 1000)'], { stdio: 'ignore' });
    try {
      await new Promise((r) => child.once('spawn', r));
      await expect.poll(() => childProcesses(process.pid).find((p) => p.pid === child.pid)?.rssKb ?? 0, { timeout: 20_000 }).toBeGreaterThan(60 * 1024);
      const w = workerMeter(process.pid)(1000);
      expect(w?.workerPids).toContain(child.pid);
      expect(w!.workerRssMb).toBeGreaterThan(60);
    } finally { child.kill(); }
  });
});
