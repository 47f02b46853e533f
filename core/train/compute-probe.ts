// Whether the torch backend can run here, without loading TF.js and without blocking (for
// system.info): the Python that `auto` and `backend: torch` would use, its torch version and device,
// or why not. The first call starts the probe (importing torch takes a second or two) and answers
// "checking"; later calls answer from the finished probe.
import { availableParallelism } from 'node:os';
import { cachedTorchProbe, probeTorchAsync, type TorchProbe } from '../model/torch/worker-client.js';

/** Most worker threads `auto` starts on wasm (each holds a replica of the model). */
export const AUTO_WORKERS_MAX = 3;

/** Data-parallel worker threads `auto` gives a wasm run on this machine: one per further core, at most AUTO_WORKERS_MAX. */
export function autoWasmWorkers(): number { return Math.max(0, Math.min(AUTO_WORKERS_MAX, availableParallelism() - 1)); }

export function torchBackendInfo(): { name: 'torch'; available: boolean; detail: string } {
  const p = cachedTorchProbe();
  if (!p) {
    void probeTorchAsync();
    return { name: 'torch', available: false, detail: 'checking for a Python with PyTorch (SPA_PYTHON, python3, /usr/bin/python3)…' };
  }
  return describe(p);
}

/** The same, waiting for the probe (the CLI, tests). */
export async function torchBackendInfoAsync(): Promise<{ name: 'torch'; available: boolean; detail: string }> {
  return describe(await probeTorchAsync());
}

function describe(p: TorchProbe): { name: 'torch'; available: boolean; detail: string } {
  if (!p.ok) return { name: 'torch', available: false, detail: `${p.reason}; install PyTorch for a Python 3 or set SPA_PYTHON (docs/compute.md)` };
  const device = p.cuda ? `CUDA: ${p.device}` : p.mps ? 'Apple MPS' : 'CPU, all cores';
  return { name: 'torch', available: true, detail: `PyTorch ${p.torch} in ${p.python}${p.source === 'SPA_PYTHON' ? ' (SPA_PYTHON)' : ''}; ${device}` };
}
