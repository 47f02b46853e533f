// The worker's memory techniques compute the same numbers as the plain path (tests/torch/memory_check.py):
// LM-head log-probs / entropies in row chunks and their gradients, gradient checkpointing, a score mask
// (log-probs only on loss positions, 0 elsewhere), generation in row chunks (same sampled tokens).
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { probeTorch } from '../../core/model/torch/worker-client.js';

describe('torch worker memory techniques', () => {
  it('chunked head, checkpointing, scored tokens and row-chunked generation equal the plain computation', () => {
    const probe = probeTorch();
    if (!probe.ok) throw new Error(`this test needs a Python with torch: ${probe.reason}`);
    const run = spawnSync(probe.python, [fileURLToPath(new URL('./memory_check.py', import.meta.url))], { encoding: 'utf8', timeout: 120_000 });
    expect(run.status, run.stderr).toBe(0);
    const r = JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, number | boolean>;
    expect(r.gradNorm as number).toBeGreaterThan(1e-3);
    for (const k of ['chunkedLogprobs', 'chunkedEntropies', 'chunkedGrads', 'checkpointGrads', 'checkpointLogprobs', 'scoredEqual']) {
      expect(r[k] as number, k).toBeLessThan(1e-5);
    }
    expect(r.unscoredZero).toBe(0);
    expect(r.generateSameTokens).toBe(true);
    expect(r.generateLogprobs as number).toBeLessThan(1e-5);
  });
});
