// The reliability retest's R3/R4 on the torch worker (issue 37, N6 and N6b), at the smallest size that
// showed them: PPO with the shared-trunk critic (the smoke/quick default), the torch worker killed
// with SIGKILL right after RL saved the state of step 1 (the engine stops there too). Before the fix
// the value step's AdamW moments restarted on resume (steps 2-3 and the milestones differed) and
// the old order (state, then Pass@k) lost the step's Pass@k; now every metric value, Pass@k file and
// milestone checkpoint equals an uninterrupted run's.
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { passAtKFile, UPDATE_POINT } from '../../core/train/rl-stage.js';
import { tempProject } from '../train/helpers.js';
import { RL_RESUME_OVERRIDES, expectSameRun, runRl, weightHashes } from '../train/rl-resume-helpers.js';

const OVERRIDES = { ...RL_RESUME_OVERRIDES, backend: 'torch' as const };

/** This process's torch worker children (resources/torch-worker/worker.py), from /proc. */
function torchWorkerPids(): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(join('/proc', entry, 'stat'), 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      if (readFileSync(join('/proc', entry, 'cmdline'), 'utf8').includes('worker.py')) out.push(Number(entry));
    } catch { /* the process ended meanwhile */ }
  }
  return out;
}

describe('RL resume on the torch worker (shared-trunk critic)', () => {
  it('a SIGKILL of the worker right after the state of step 1 loses nothing and resumes exactly', async () => {
    const reference = await runRl(tempProject('spa-torch-rl-resume-'), 'ref', OVERRIDES);
    expect(reference.outcome.status).toBe('completed');
    const project = tempProject('spa-torch-rl-resume-');
    let killed: number[] = [];
    const first = await runRl(project, 'r', OVERRIDES, {
      kill: { after: 'saveState', nextStep: 1, before: () => { killed = torchWorkerPids(); for (const pid of killed) process.kill(pid, 'SIGKILL'); } },
    });
    expect(first.outcome.status).toBe('failed');
    expect(killed.length).toBeGreaterThan(0);
    expect(existsSync(join(first.runDir, passAtKFile(1)))).toBe(true);
    expect(existsSync(join(first.runDir, 'checkpoints', 'rl-latest', 'optimizer.value.safetensors'))).toBe(true);
    const second = await runRl(project, 'r', OVERRIDES);
    expect(second.outcome.status).toBe('completed');
    expect(second.events.some((e) => e.type === 'log' && /rl: resuming at step 1 .*the shared-trunk value step's too/.test(e.message))).toBe(true);
    expectSameRun(second.runDir, reference.runDir);
    expect(await weightHashes(second.runDir)).toEqual(await weightHashes(reference.runDir));
  }, 300_000);

  it('GRPO with LoRA and episode rows (study v4\'s shape): a SIGKILL after a resume point in step 2\'s update resumes there exactly', async () => {
    const rl = { ...(RL_RESUME_OVERRIDES.stages as { rl: Record<string, unknown> }).rl, algorithm: 'grpo' as const, steps: 2, updateRows: 'episode' as const, miniBatchSize: 1 };
    const lora = { rank: 2, alpha: 4, targetModules: ['q_proj', 'up_proj'] };
    const base = { ...OVERRIDES, model: { ...OVERRIDES.model, lora }, stages: { ...OVERRIDES.stages, rl } };
    const reference = await runRl(tempProject('spa-torch-rl-upd-'), 'ref', { ...base, model: { ...base.model, memory: { resumePointMinutes: 0 } } });
    expect(reference.outcome.status).toBe('completed');
    const timed = { ...base, model: { ...base.model, memory: { resumePointMinutes: 1e-6 } } };   // a resume point after every update
    const project = tempProject('spa-torch-rl-upd-');
    let killed: number[] = [];
    const first = await runRl(project, 'r', timed, {
      kill: { after: 'updatePoint', step: 1, batchesDone: 1, before: () => { killed = torchWorkerPids(); for (const pid of killed) process.kill(pid, 'SIGKILL'); } },
    });
    expect(first.outcome.status).toBe('failed');
    expect(killed.length).toBeGreaterThan(0);
    expect(existsSync(join(first.runDir, 'checkpoints', UPDATE_POINT, 'adapter_model.safetensors'))).toBe(true);
    const second = await runRl(project, 'r', timed);
    expect(second.outcome.status).toBe('completed');
    expect(second.events.some((e) => e.type === 'log' && /rl: resuming step 2 after 1 of its 2 updates/.test(e.message))).toBe(true);
    expectSameRun(second.runDir, reference.runDir);
    const weights = await weightHashes(second.runDir);
    expect(Object.keys(weights)).toContain('rl-2/adapters');
    expect(weights).toEqual(await weightHashes(reference.runDir));
  }, 300_000);
});
