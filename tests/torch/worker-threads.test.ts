// The torch worker's CPU threads are what SPA_TORCH_THREADS says, BLAS pool included. OpenBLAS (Debian's torch and numpy share
// one libopenblas) sizes its pool once, when first loaded: the worker imported numpy (its sampler's sort) before it set
// OPENBLAS_NUM_THREADS, so with SPA_TORCH_THREADS=1 every worker ran a second, OpenBLAS thread beside torch's, and two
// workers on two cores (study v4's streams) paid ~1.4x the CPU-seconds per step (bench/results/torch-threads.json; amendment
// of 2026-12-02 02:15 in docs/results/study-v4). Checked here: the worker module, imported as the worker starts, leaves one
// thread in its process after matrix products of the model's shapes (GEMM and GEMV), and its BLAS variables say 1.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { probeTorch } from '../../core/model/torch/worker-client.js';

const WORKER_DIR = path.resolve(__dirname, '../../resources/torch-worker');

const SCRIPT = `
import json, os, sys
sys.path.insert(0, sys.argv[1])
import worker   # what the worker process runs first: its thread settings, numpy, torch
import torch
g = torch.Generator().manual_seed(0)
for m, k, n in [(512, 576, 1536), (8, 576, 49152), (1, 576, 1536)]:
    a = torch.randn(m, k, generator=g); b = torch.randn(k, n, generator=g)
    (a @ b).sum().item()
print(json.dumps({"threads": len(os.listdir("/proc/self/task")), "workerThreads": worker.THREADS,
                  "openblas": os.environ.get("OPENBLAS_NUM_THREADS"), "omp": os.environ.get("OMP_NUM_THREADS")}))
`;

describe('the torch worker runs the threads SPA_TORCH_THREADS says (Linux)', () => {
  // on one core OpenBLAS starts no second thread whatever the order, so the check could not fail there
  it.skipIf(process.platform !== 'linux' || os.cpus().length < 2)('SPA_TORCH_THREADS=1: one thread in the process, BLAS pool included', () => {
    const probe = probeTorch();
    if (!probe.ok) throw new Error(`this test needs a Python with torch: ${probe.reason}`);
    const env: NodeJS.ProcessEnv = { ...process.env, SPA_TORCH_THREADS: '1' };
    for (const v of ['OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS']) delete env[v];
    const out = execFileSync(probe.python, ['-c', SCRIPT, WORKER_DIR], { env, encoding: 'utf8' });
    const r = JSON.parse(out.trim().split('\n').pop()!) as { threads: number; workerThreads: number; openblas: string; omp: string };
    expect(r).toEqual({ threads: 1, workerThreads: 1, openblas: '1', omp: '1' });
  }, 120_000);
});
