// Whether the torch backend can run here, without loading TF.js (for system.info and the CLI):
// the Python that `auto` and `backend: torch` would use, its torch version and device, or why not.
import { probeTorch } from '../model/torch/worker-client.js';

export function torchBackendInfo(): { name: 'torch'; available: boolean; detail: string } {
  const p = probeTorch();
  if (!p.ok) return { name: 'torch', available: false, detail: `${p.reason}; install PyTorch for a Python 3 or set SPA_PYTHON (docs/compute.md)` };
  const device = p.cuda ? `CUDA: ${p.device}` : p.mps ? 'Apple MPS' : 'CPU, all cores';
  return { name: 'torch', available: true, detail: `PyTorch ${p.torch} in ${p.python}${p.source === 'SPA_PYTHON' ? ' (SPA_PYTHON)' : ''}; ${device}` };
}
