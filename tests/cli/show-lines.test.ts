// `spa-workbench show` says what a running run is doing now (its latest progress message, stage and run ETA) and what a
// Stop would keep: the journals and an RL step's update resume point (core/train/rl-stage.ts UpdatePoint). `run` without
// a terminal prints the progress message in its lines too ("rl: 1/16 (6%) · RL step 2/16: update 3/4 · ETA ...").
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunInfo } from '../../core/api/contract.js';
import { showLines } from '../../core/cli/core-commands.js';

function run(dir: string, over: Partial<RunInfo>): RunInfo {
  return {
    id: '20261201-000000-spa-frozenlake-abcd', name: 'spa s0', method: 'spa', env: 'frozenlake', size: 'cpu-real', preset: 'spa',
    templateHash: null, status: 'running', reason: null, createdAt: 0, startedAt: Date.now() - 60_000, finishedAt: null, durationMs: 0,
    attempts: 3, stages: [{ name: 'rl', title: 'RL', status: 'running', startedAt: 0, finishedAt: null, reason: null, done: 1, total: 16 }],
    progress: null, latest: {}, versions: {}, dir, ...over,
  } as RunInfo;
}

describe('show', () => {
  it('gives a running run\'s latest progress message with its ETAs, and an RL update resume point', () => {
    const dir = mkdtempSync(join(tmpdir(), 'spa-show-'));
    mkdirSync(join(dir, 'stages', 'rl'), { recursive: true });
    writeFileSync(join(dir, 'stages', 'rl', 'state.json'), JSON.stringify({ nextStep: 1, update: { step: 1, batchesDone: 2, batches: 4, manifest: 'x' } }));
    mkdirSync(join(dir, 'stages', 'sft'), { recursive: true });
    writeFileSync(join(dir, 'stages', 'sft', 'state.json'), '{ not json');   // left out, not a failure
    const progress = { stage: 'rl', done: 1, total: 16, etaSeconds: 7_200, message: 'RL step 2/16: update 2/4', runEtaSeconds: 9_000, unestimatedStages: 0 };
    const text = showLines(run(dir, { progress })).join('\n');
    expect(text).toMatch(/^now: +rl 1\/16 · RL step 2\/16: update 2\/4 · stage ETA 2h00m · run ETA 2h30m$/m);
    expect(text).toMatch(/kept for a resume \(update points\):\n +rl step 2's update: after 2 of its 4 updates/);
    expect(text).not.toContain('sft step');
  });

  it('has no "now" line for a finished run, and no update point where the state has none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'spa-show-'));
    mkdirSync(join(dir, 'stages', 'rl'), { recursive: true });
    writeFileSync(join(dir, 'stages', 'rl', 'state.json'), JSON.stringify({ nextStep: 3, checkpoint: 'x' }));
    const progress = { stage: 'rl', done: 16, total: 16, etaSeconds: null };
    const text = showLines(run(dir, { status: 'completed', progress })).join('\n');
    expect(text).not.toMatch(/^now:/m);
    expect(text).not.toContain('update points');
    // running, with no ETA yet: the message alone
    expect(showLines(run(dir, { progress: { ...progress, done: 3, message: 'RL step 4/16: update 1/4' } })).join('\n'))
      .toMatch(/^now: +rl 3\/16 · RL step 4\/16: update 1\/4$/m);
  });

  it('run, without a terminal, prints each progress line with its message', () => {
    const home = mkdtempSync(join(tmpdir(), 'spa-show-home-'));
    const project = join(mkdtempSync(join(tmpdir(), 'spa-show-')), 'p');
    const bin = fileURLToPath(new URL('../../bin/spa-workbench.mjs', import.meta.url));
    const r = spawnSync(process.execPath, [bin, 'run', 'diagnostic', '--size', 'smoke', '--project', project, '--set', 'stages.diag-wait.steps=3'],
      { encoding: 'utf8', env: { ...process.env, SPA_WORKBENCH_HOME: home }, timeout: 300_000 });
    expect(r.status, r.stderr).toBe(0);
    // the diagnostic stage's messages are "step N/3"; the first progress event is never throttled
    expect(r.stdout).toMatch(/^diag-wait: 1\/3 \(33%\) · step 1\/3( · |$)/m);
  }, 300_000);
});
