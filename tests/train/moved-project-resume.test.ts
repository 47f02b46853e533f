// D2 end to end on a real smoke run: the SPA pipeline runs up to SFT in one project folder; the
// folder is copied and moved, and the rest (RL, eval) runs in the copy and in the moved folder.
// RL must start from the SFT checkpoint of the folder it runs in (its manifest's parent is that
// checkpoint, stored relative to the project), never from a fresh model; with the checkpoint gone
// the stage fails with an error naming it.
import { describe, expect, it } from 'vitest';
import { cpSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunConfigSchema } from '../../core/api/run-config.js';
import { executeRun } from '../../core/engine/runner.js';
import { loadStage, planStages } from '../../core/engine/stages.js';
import { mergeConfig, presetConfig } from '../../core/train/presets.js';
import { GATE_TURNS, tempProject } from './helpers.js';

const RUN = 'spa-moved';
// wasm as runPreset (auto took the torch worker wherever PyTorch is installed: CI has it) and its 5-turn bootstrap gate
const config = RunConfigSchema.parse(mergeConfig(presetConfig('spa', 'smoke', {}) as Record<string, unknown>,
  { env: { id: 'frozenlake' }, backend: 'wasm', stages: { bootstrap: { gateTurns: GATE_TURNS } } }));
const plan = planStages(config);

async function run(project: string, stages: string[]) {
  return executeRun({ runId: RUN, runDir: join(project, 'runs', RUN), config, stages, attempt: 1, signal: new AbortController().signal, loadStage, send: () => undefined });
}

function rlParent(project: string): string {
  const ck = join(project, 'runs', RUN, 'checkpoints');
  const rl = readdirSync(ck).filter((n) => n.startsWith('rl-')).sort()[0]!;
  return (JSON.parse(readFileSync(join(ck, rl, 'manifest.json'), 'utf8')) as { parent: string }).parent;
}

describe('a copied and a moved project resume from their own checkpoints (D2)', () => {
  it('runs SFT, copies and moves the project, and finishes RL from the SFT checkpoint in each', async () => {
    const original = join(tempProject(), 'project');
    cpSync(tempProject(), original, { recursive: true });
    writeFileSync(join(original, 'workbench.json'), '{}');
    const upToSft = plan.slice(0, plan.indexOf('rl'));
    expect(upToSft).toContain('sft');
    expect((await run(original, upToSft)).status).toBe('completed');
    const sftDone = JSON.parse(readFileSync(join(original, 'runs', RUN, 'stages', 'sft', 'done.json'), 'utf8')) as { output: { checkpoint: string } };
    expect(sftDone.output.checkpoint).toMatch(new RegExp(`^runs/${RUN}/checkpoints/sft-epoch-\\d+$`));   // relative to the project

    const copy = join(tempProject(), 'copy');
    cpSync(original, copy, { recursive: true });
    expect(await run(copy, plan)).toEqual({ status: 'completed' });
    expect(rlParent(copy)).toBe(sftDone.output.checkpoint);

    const moved = join(tempProject(), 'moved');
    renameSync(original, moved);
    expect(await run(moved, plan)).toEqual({ status: 'completed' });
    expect(rlParent(moved)).toBe(sftDone.output.checkpoint);

    // the parent checkpoint is gone: a clear failure, not a fresh model
    const broken = join(tempProject(), 'broken');
    cpSync(moved, broken, { recursive: true });
    rmSync(join(broken, 'runs', RUN, 'stages', 'rl'), { recursive: true, force: true });
    rmSync(join(broken, 'runs', RUN, 'stages', 'eval'), { recursive: true, force: true });
    rmSync(join(broken, 'runs', RUN, 'checkpoints', sftDone.output.checkpoint.split('/').pop()!), { recursive: true });
    const outcome = await run(broken, plan) as { status: string; reason?: string };
    expect(outcome.status).toBe('failed');
    expect(outcome.reason).toMatch(/starts from the checkpoint of stage sft, runs\/spa-moved\/checkpoints\/sft-epoch-\d+, but that folder is missing/);
  }, 600_000);   // a hang guard: 162 s at load 17, past 240 s at load 35-40 (CPU the same)
});
