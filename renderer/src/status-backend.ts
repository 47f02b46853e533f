// The status bar's compute backend: auto's choice, the first available backend in system.info's
// order (torch first). While the host is still probing for a Python with PyTorch, torch reads
// "unavailable, checking…": the bar says "checking…" then, not the TF.js fallback behind it.
import type { SystemInfo } from '../../core/api/contract.js';

export const isProbing = (b: SystemInfo['backends'][number]) => !b.available && /^checking\b/.test(b.detail);

export function statusBackend(system: Pick<SystemInfo, 'backends'>): string {
  for (const b of system.backends) {
    if (b.available) return b.name;
    if (isProbing(b)) return 'checking…';
  }
  return 'none available';
}
