// A FIFO for tests of code that must refuse special files, with a guard that cannot deadlock the
// test: a worker thread (which runs while the test's own thread is blocked in a synchronous open or
// read) opens the FIFO's write end after `ms`, writes `{}` and closes it, releasing any reader. The
// test then asserts `released()` is false: the code under test never opened the FIFO for reading.
import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';

export interface FifoGuard { released(): boolean; stop(): Promise<void> }

/** Makes a FIFO at `path` (mkfifo) and starts its guard; null (with a loud warning) where mkfifo is missing. */
export function fifoWithGuard(path: string, ms = 3000): FifoGuard | null {
  const made = spawnSync('mkfifo', [path]);
  if (made.status !== 0) {
    console.warn(`\n*** SKIPPED a FIFO case: mkfifo failed (${made.error?.message ?? made.stderr?.toString()}) ***\n`);
    return null;
  }
  const flag = new Int32Array(new SharedArrayBuffer(8));   // [0]: released, [1]: stop asked
  const worker = new Worker(`
    const { workerData } = require('node:worker_threads');
    const fs = require('node:fs');
    const flag = workerData.flag;
    if (Atomics.wait(flag, 1, 0, workerData.ms) === 'timed-out') {
      try {
        const fd = fs.openSync(workerData.path, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
        Atomics.store(flag, 0, 1);
        try { fs.writeSync(fd, '{}'); } catch {}
        fs.closeSync(fd);
      } catch { /* ENXIO: no reader had it open */ }
    }
  `, { eval: true, workerData: { path, ms, flag } });
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  return {
    released: () => Atomics.load(flag, 0) === 1,
    stop: async () => { Atomics.store(flag, 1, 1); Atomics.notify(flag, 1); await exited; },
  };
}
