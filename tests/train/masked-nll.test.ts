// One masked-NLL loop (core/train/perplexity.ts maskedNll): it sums -logprob at exactly the chosen
// positions of each row, batch by batch, and SFT's validation loss, state perplexity and the eval
// stage's per-template perplexity all go through it (no second loop over tokenStats logprobs in core).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { maskedNll } from '../../core/train/perplexity.js';

// logprob of token t in a row = -(id + t / 10): easy to sum by hand
const fake = {
  calls: [] as number[],
  async tokenStats(rows: Array<{ ids: number[] }>) {
    this.calls.push(rows.length);
    return rows.map((r) => ({ logprobs: r.ids.map((id, t) => -(id + t / 10)), entropies: r.ids.map(() => 0), values: null }));
  },
};

function coreFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? coreFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('maskedNll', () => {
  it('sums the chosen positions only, in batches', async () => {
    fake.calls = [];
    const rows = [{ ids: [1, 2, 3], positions: [1, 2] }, { ids: [5, 6], positions: [] }, { ids: [4, 4, 4, 4], positions: [0, 3] }];
    const { nll, tokens } = await maskedNll(fake, rows, 2);
    expect(tokens).toBe(4);
    expect(nll).toBeCloseTo((2 + 0.1) + (3 + 0.2) + 4 + (4 + 0.3), 10);
    expect(fake.calls).toEqual([2, 1]);
    expect(await maskedNll(fake, [], 8)).toEqual({ nll: 0, tokens: 0 });
  });

  it('is the only masked-NLL loop in core', () => {
    const loops = coreFiles('core').filter((f) => /nll\s*-=\s*stats\[/.test(readFileSync(f, 'utf8')));
    expect(loops).toEqual(['core/train/perplexity.ts']);
    for (const f of ['core/train/sft.ts', 'core/eval/evaluate.ts']) expect(readFileSync(f, 'utf8')).toContain('await maskedNll(runtime');
  });
});
