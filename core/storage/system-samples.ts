// system.jsonl: CPU, memory and GPU samples of a run's engine process and its machine, appended
// every few seconds while the run runs (core/engine/system-sampler.ts) and read by the host
// (inspect.systemMetrics) for the charts beside the run. One small line per sample (~200 bytes;
// 5 s apart that is ~150 kB per day of training).
import * as path from 'node:path';
import type { SystemSample } from '../api/contract.js';
import { appendJsonl, readJsonl } from './jsonl.js';

export const SYSTEM_FILE = 'system.jsonl';

const isSample = (v: unknown): v is SystemSample => {
  const s = v as SystemSample;
  return !!s && typeof s === 'object' && typeof s.time === 'number' && typeof s.cpuPercent === 'number' && typeof s.rssMb === 'number'
    && typeof s.heapMb === 'number' && typeof s.memUsedMb === 'number' && typeof s.memTotalMb === 'number' && typeof s.loadAvg === 'number'
    && (s.stage === null || typeof s.stage === 'string');
};

export function appendSystemSample(runDir: string, sample: SystemSample): void {
  appendJsonl(path.join(runDir, SYSTEM_FILE), [sample]);
}

/** The samples in time order, thinned evenly to at most maxPoints (the last sample is always kept). */
export function readSystemSamples(runDir: string, maxPoints: number): { samples: SystemSample[]; total: number } {
  const rows = readJsonl(path.join(runDir, SYSTEM_FILE)).rows.filter(isSample).sort((a, b) => a.time - b.time);
  if (rows.length <= maxPoints) return { samples: rows, total: rows.length };
  const out: SystemSample[] = [];
  const stride = (rows.length - 1) / (maxPoints - 1);
  for (let i = 0; i < maxPoints; i++) out.push(rows[Math.round(i * stride)]!);
  return { samples: out, total: rows.length };
}
