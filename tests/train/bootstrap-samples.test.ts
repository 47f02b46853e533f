// The bootstrap, the longest stage, writes sample generations as it trains (samples/bootstrap.jsonl,
// read by runs.samples and the Run view): the model's greedy reply to a held-out puzzle beside the
// reply the bootstrap trains towards, about four times per stage.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runPreset, tempProject } from './helpers.js';

describe('bootstrap samples', () => {
  it('writes about four samples, the last at the final step, on a held-out puzzle in the run template', async () => {
    const project = tempProject();
    const over = { env: { id: 'frozenlake' }, stages: { bootstrap: { steps: 8, cache: false, gateTurns: 0 } } };
    const run = await runPreset(project, 'spa', 'boot-samples', over);
    expect(run.outcome.status).toBe('completed');
    const lines = readFileSync(join(run.runDir, 'samples', 'bootstrap.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as {
      stage: string; step: number; prompt: string; target: string; generated: string; wellFormed: boolean;
    });
    expect(lines.map((l) => l.step)).toEqual([2, 4, 6, 8]);
    for (const l of lines) {
      expect(l.stage).toBe('bootstrap');
      expect(l.target).toMatch(/<observation>[\s\S]+<\/observation>/);   // spa: the world-model format
      expect(l.generated.startsWith('<think>')).toBe(true);
      expect(l.prompt.length).toBeGreaterThan(0);
    }
    // the target's observation is the true state of the prompt's puzzle (the state text sits in the prompt)
    const observed = /<observation>\n?([\s\S]*?)\n?<\/observation>/.exec(lines[0]!.target)![1]!.trim();
    expect(lines[0]!.prompt).toContain(observed.split('\n')[0]!);
  }, 240_000);
});
