// runs.samples: the sample generations stages write during training (core/train/samples.ts),
// read from samples/<stage>.jsonl in the run folder, newest first. A torn last line (the stage is
// writing) is skipped.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ApiRequestParsed, ApiResponse } from '../api/contract.js';
import { readJsonl } from '../storage/jsonl.js';

type Sample = ApiResponse<'runs.samples'>['samples'][number];

export function readSamples(runDir: string, req: Pick<ApiRequestParsed<'runs.samples'>, 'stage' | 'offset' | 'limit'>): ApiResponse<'runs.samples'> {
  const dir = path.join(runDir, 'samples');
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl') && (!req.stage || f === `${req.stage}.jsonl`)) : [];
  const all = files.flatMap((f) => readJsonl<Sample>(path.join(dir, f)).rows)
    .filter((s) => s && typeof s.generated === 'string' && typeof s.step === 'number')
    .sort((a, b) => b.time - a.time);
  return { samples: all.slice(req.offset, req.offset + req.limit), total: all.length };
}
