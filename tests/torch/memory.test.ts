// The worker's memory techniques compute the same numbers as the plain path (tests/torch/memory_check.py):
// LM-head log-probs / entropies in row chunks and their gradients, gradient checkpointing, a score mask
// (log-probs only on loss positions, 0 elsewhere), generation in row chunks (same sampled tokens), a shared prefix
// computed once for every row (same log-probs, entropies, values and gradients).
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { probeTorch } from '../../core/model/torch/worker-client.js';

/** Runs one of this folder's Python checks with the probed torch and returns its last line's JSON (it must exit 0). */
function runCheck(file: string, timeout = 120_000): unknown {
  const probe = probeTorch();
  if (!probe.ok) throw new Error(`this test needs a Python with torch: ${probe.reason}`);
  const run = spawnSync(probe.python, [fileURLToPath(new URL(`./${file}`, import.meta.url))], { encoding: 'utf8', timeout });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').pop()!);
}

describe('torch worker memory techniques', () => {
  it('chunked head, checkpointing, scored tokens and row-chunked generation equal the plain computation', () => {
    const r = runCheck('memory_check.py') as Record<string, number | boolean>;
    expect(r.gradNorm as number).toBeGreaterThan(1e-3);
    // a prefix every row shares is computed once (7 tokens here: ids, segments; a padded and a packed row among them)
    expect(r.sharedPrefixUsed).toBe(7);
    expect(r.sharedPrefixOff).toBe(0);
    for (const k of ['chunkedLogprobs', 'chunkedEntropies', 'chunkedGrads', 'checkpointGrads', 'checkpointLogprobs', 'scoredEqual',
      'sharedLogprobs', 'sharedCheckpointLogprobs']) {
      expect(r[k] as number, k).toBeLessThan(1e-5);
    }
    for (const k of ['sharedGrads', 'sharedCheckpointGrads']) expect(r[k] as number, k).toBeLessThan(1e-4);   // sums in another order
    expect(r.unscoredZero).toBe(0);
    expect(r.generateSameTokens).toBe(true);
    expect(r.generateLogprobs as number).toBeLessThan(1e-5);
  });

  it('generation with cache keys reuses each row\'s history and gives the tokens of generation without them', () => {
    const r = runCheck('prefix_cache_check.py') as Record<string, unknown>;
    expect(r.sameTokens).toBe(true);                                  // temperature 0 and 1, three turns, row chunks, GQA
    expect(r.maxLogprobDiff as number).toBeLessThan(1e-4);
    for (const t of ['0', '1']) {
      const stats = r[`stats_${t}`] as { rows: number; tokens: number; reused: number };
      expect(stats.rows).toBe(12);
      expect(stats.reused / stats.tokens).toBeGreaterThan(0.15);       // less: a cut row and a new row are computed whole
      expect(r[`entries_${t}`]).toEqual(['e0', 'e1', 'e2-new', 'e3']);   // e2 left the call and was dropped
    }
    const clean = r.stats_clean as { tokens: number; reused: number };
    expect(clean.reused / clean.tokens).toBeGreaterThan(0.4);          // turns 2 and 3 reuse every row's history
    expect(r.storedOne).toBe(1);
    expect(r.droppedMissing).toEqual(['y']);
    expect(r.keptByStats).toBe(1);
    expect(r.clearedByApply).toBe(0);                                   // new weights: nothing cached stays
    expect(r.badKeys).toMatch(/cacheKeys must hold one string per prompt \(2\)/);
  });

  it('generation over a frozen bf16 base holds f32 copies for the call: the same tokens and log-probs as upcasting every step', () => {
    const r = runCheck('gen_f32_copies_check.py') as Record<string, unknown>;
    expect(r.calls).toBe(6);                                        // temperature 0 and 1, three turns with cache keys, row chunks
    expect(r.sameTokens).toBe(true);
    expect(r.sameLogprobs).toBe(true);                              // bit for bit: the copies are the upcasts' own values
    expect(r.readsCopies).toBe(true);                               // the decode reads the copies (altered copies change the tokens)
    expect(r.copiesDuring).toEqual([0, r.bf16Weights]);              // none with f32CopiesMb 0; every bf16 weight with the budget
    expect(r.heldAfterCall).toBe(false);                            // dropped when the call ends
    expect(r.heldBytes).toBe(r.frozenBytes);
    expect(r.heldWhenTooSmall).toBe(0);
    expect(r.heldWhenFits).toBe(r.frozenBytes);
    expect(r.headHeld).toBe(true);
    expect(r.heldUnderAutocast).toBe(0);
  });

  it('the CPU sampler sorts values with numpy and picks the token torch\'s stable sort picks, bit for bit, ties and NaN included', () => {
    const r = runCheck('sample_batch_check.py', 180_000) as Record<string, unknown>;
    expect(r.numpy).toBe(true);                                     // the fast path ran (numpy importable)
    expect(r.cases).toBe(478);
    expect(r.mismatches).toEqual([]);
    expect(r.tiesHit as number).toBeGreaterThan(500);               // picks inside tie groups: the case the rank rule decides
    expect(r.greedySame).toBe(true);
    expect(r.generateSame).toBe(true);                              // a generate call: same tokens and log-probs either way
    expect(r.generateTokens as number).toBeGreaterThan(40);
  });

  it('rows sharing their start with a longer row (an episode\'s turns) are computed once per shared part, with the plain numbers', () => {
    const r = runCheck('prefix_families_check.py', 180_000) as Record<string, unknown>;
    // two episodes (a long row, 3 and 2 rows of their own after part of it), a row of no family, a whole prefix of a long row,
    // and row 9, which shares its first 10 of 40 tokens with row 0: under half, so an anchor of its own
    expect(r.plan).toEqual({ anchors: [0, 9, 4, 7], tails: [3, 6, 2, 8, 5, 1], tailAnchor: [0, 2, 0, 0, 2, 0], shared: [31, 25, 20, 17, 12, 9] });
    for (const k of ['logprobs', 'entropies', 'values', 'scoredLogprobs']) expect(r[k] as number, k).toBeLessThan(1e-5);
    expect(r.grads as number).toBeLessThan(1e-5);                   // relative to the largest gradient; sums in another order
    expect(r.checkpointGrads as number).toBeLessThan(1e-5);
    expect(r.gradNorm as number).toBeGreaterThan(1);
    expect(r.tokensFamilies as number).toBeLessThan(0.5 * (r.tokensPlain as number));   // 212 of 440 here
    expect(r.unscoredZero).toBe(0);
    expect(r.paddingSame).toBe(true);
    for (const k of ['noPlanPacked', 'noPlanLeftPadded', 'noPlanTooLittle', 'noPlanOneRow']) expect(r[k], k).toBe(true);
  });

  it('AdamW with bf16 moments moves the weights as f32 moments do; the rounding is unbiased; resume points keep BF16 moments', () => {
    const r = runCheck('bf16_moments_check.py') as Record<string, unknown>;
    expect(r.momentDtype).toBe('torch.bfloat16');
    expect(r.moveNorm as number).toBeGreaterThan(0.1);                // 40 steps moved the weights
    expect(r.moveRelDiff as number).toBeLessThan(0.03);               // measured 0.35% of the movement
    expect(Math.abs((r.lossBf16 as number) - (r.lossF32 as number))).toBeLessThan(0.01);
    expect(Math.abs(r.stochasticMeanError as number)).toBeLessThan(1e-4);   // round-to-nearest: 2^-10 off
    expect(Math.abs(r.nearestError as number)).toBeGreaterThan(5e-4);
    expect(r.stochasticValues).toEqual([1, 1.0078125]);
    expect(r.savedDtypes).toEqual(['BF16']);
    expect(r.reloadedEqual).toBe(true);
    expect(r.reloadedDtype).toBe('torch.bfloat16');
  });
});
