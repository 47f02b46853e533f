// D2: checkpoint references are stored relative to the project, so a copied or moved project
// resumes from its own checkpoints; a missing parent checkpoint fails the run with a clear error
// (never a fresh model); an old absolute path is mapped into the project or refused. D15: a
// damaged state.json is moved aside and the stage restarts instead of blocking every resume.
import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunEvent } from '../../core/api/records.js';
import type { StageContext, StageDefinition } from '../../core/api/stage.js';
import { resolveRunConfig } from '../../core/engine/config.js';
import { executeRun } from '../../core/engine/runner.js';
import { stageDoneFile, stageStateFile } from '../../core/storage/run-files.js';
import { startingCheckpoint } from '../../core/train/stage-utils.js';
import { tempDir } from '../api/helpers.js';

const RUN = 'r1';
const config = resolveRunConfig({ preset: 'spa', size: 'smoke' }).config!;

function project(): string {
  const dir = tempDir('spa-wb-refs-');
  fs.writeFileSync(path.join(dir, 'workbench.json'), '{}');
  fs.mkdirSync(path.join(dir, 'runs', RUN), { recursive: true });
  return dir;
}

/** Run the stub stages `names` in runs/r1 of `dir`; returns the outcome, the events and what sft saw. */
async function run(dir: string, names: string[]) {
  const events: RunEvent[] = [];
  let sftStart: string | null | undefined;
  let sftState: Record<string, unknown> | null | undefined;
  const defs: Record<string, StageDefinition> = {
    bootstrap: {
      name: 'bootstrap', title: 'stub bootstrap',
      async run(ctx: StageContext) {
        const out = path.join(ctx.runDir, 'checkpoints', 'bootstrap');
        fs.mkdirSync(out, { recursive: true });
        fs.writeFileSync(path.join(out, 'config.json'), '{}');
        return { checkpoint: out };
      },
    },
    sft: {
      name: 'sft', title: 'stub sft',
      async run(ctx: StageContext) {
        sftState = ctx.loadState();
        sftStart = startingCheckpoint(ctx);
        ctx.saveState({ epoch: 1, checkpoint: sftStart });
        return {};
      },
    },
  };
  const outcome = await executeRun({
    runId: RUN, runDir: path.join(dir, 'runs', RUN), config, stages: names, attempt: 1, signal: new AbortController().signal,
    send: (e) => events.push(e), loadStage: async (n) => defs[n]!,
  });
  return { outcome, events, sftStart, sftState };
}

const doneOf = (dir: string, stage: string) => JSON.parse(fs.readFileSync(path.join(dir, 'runs', RUN, stageDoneFile(stage)), 'utf8'));

describe('checkpoint references (D2)', () => {
  it('are stored relative to the project; a copied and then a moved project resume from their own checkpoint', async () => {
    const a = project();
    expect((await run(a, ['bootstrap'])).outcome.status).toBe('completed');
    expect(doneOf(a, 'bootstrap').output.checkpoint).toBe(`runs/${RUN}/checkpoints/bootstrap`);

    const copy = path.join(tempDir(), 'copy');
    fs.cpSync(a, copy, { recursive: true });
    const c = await run(copy, ['bootstrap', 'sft']);
    expect(c.outcome.status).toBe('completed');
    expect(c.sftStart).toBe(path.join(copy, 'runs', RUN, 'checkpoints', 'bootstrap'));   // its own, not the original's
    const state = JSON.parse(fs.readFileSync(path.join(copy, 'runs', RUN, stageStateFile('sft')), 'utf8'));
    expect(state.checkpoint).toBe(`runs/${RUN}/checkpoints/bootstrap`);

    const moved = path.join(tempDir(), 'moved');
    fs.renameSync(a, moved);
    fs.rmSync(path.join(moved, 'runs', RUN, 'stages', 'sft'), { recursive: true, force: true });
    const m = await run(moved, ['bootstrap', 'sft']);
    expect(m.outcome.status).toBe('completed');
    expect(m.sftStart).toBe(path.join(moved, 'runs', RUN, 'checkpoints', 'bootstrap'));
  });

  it('a missing parent checkpoint fails the run with a clear error, never a fresh model', async () => {
    const a = project();
    await run(a, ['bootstrap']);
    fs.rmSync(path.join(a, 'runs', RUN, 'checkpoints'), { recursive: true });
    const r = await run(a, ['bootstrap', 'sft']);
    expect(r.outcome.status).toBe('failed');
    expect(r.sftStart).toBeUndefined();
    expect((r.outcome as { reason?: string }).reason).toMatch(/checkpoint of stage bootstrap, runs\/r1\/checkpoints\/bootstrap, but that folder is missing/);
  });

  it('an old absolute path is mapped into a moved project, and another project\'s checkpoint is refused', async () => {
    const a = project();
    await run(a, ['bootstrap']);
    const done = doneOf(a, 'bootstrap');
    // an old project: absolute path to where it used to live
    done.output.checkpoint = path.join('/old/place/of/the/project', 'runs', RUN, 'checkpoints', 'bootstrap');
    fs.writeFileSync(path.join(a, 'runs', RUN, stageDoneFile('bootstrap')), JSON.stringify(done));
    const r = await run(a, ['bootstrap', 'sft']);
    expect(r.sftStart).toBe(path.join(a, 'runs', RUN, 'checkpoints', 'bootstrap'));

    // another project's checkpoint (absolute, that project still exists; this one has no copy)
    const b = project();
    fs.mkdirSync(path.join(b, 'runs', RUN, 'stages', 'bootstrap'), { recursive: true });
    const foreign = path.join(a, 'runs', RUN, 'checkpoints', 'bootstrap');
    const other = { ...done, output: { checkpoint: foreign.replace(`${path.sep}runs${path.sep}${RUN}`, `${path.sep}runs${path.sep}other-run`) } };
    fs.mkdirSync(path.join(a, 'runs', 'other-run', 'checkpoints', 'bootstrap'), { recursive: true });
    fs.writeFileSync(path.join(a, 'runs', 'other-run', 'checkpoints', 'bootstrap', 'config.json'), '{}');
    fs.writeFileSync(path.join(b, 'runs', RUN, stageDoneFile('bootstrap')), JSON.stringify(other));
    const rb = await run(b, ['bootstrap', 'sft']);
    expect(rb.outcome.status).toBe('failed');
    expect(rb.sftStart).toBeUndefined();
    expect((rb.outcome as { reason?: string }).reason).toMatch(/belongs to another project/);
  });
});

describe('stage state (D15)', () => {
  it('a damaged state.json is moved aside and reported; the stage restarts instead of failing every resume', async () => {
    const a = project();
    await run(a, ['bootstrap']);
    const stateFile = path.join(a, 'runs', RUN, stageStateFile('sft'));
    fs.mkdirSync(path.dirname(stateFile), { recursive: true });
    fs.writeFileSync(stateFile, '{"epoch": 1, "checkp');
    const r = await run(a, ['bootstrap', 'sft']);
    expect(r.outcome.status).toBe('completed');
    expect(r.sftState).toBeNull();
    expect(r.events.some((e) => e.type === 'log' && e.level === 'warn' && /state\.json could not be read/.test(e.message))).toBe(true);
    expect(fs.readdirSync(path.dirname(stateFile)).some((f) => f.startsWith('state.json.corrupt-'))).toBe(true);
  });
});
