// A fixed seed on the cpu backend gives identical results twice; a stopped run resumes and finishes.
// The bootstrap's gate runs on 4 held-out turns, not the smoke size's 50 (issue 37 item 7: 69 of the 97 s of
// a cpu-backend run at load 15); it is still run, and its numbers are compared like the rest.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonl, runPreset, tempProject } from './helpers.js';

function strip(values: unknown): unknown {
  return JSON.parse(JSON.stringify(values, (key, v) => (key === 'time' || key === 'wallSeconds' || key === 'model' ? undefined : v)));
}

const GATE_TURNS = 4;

describe('determinism and resume', () => {
  it('a fixed seed on the cpu backend gives identical results twice', async () => {
    const over = { env: { id: 'frozenlake' }, backend: 'cpu' as const, seeds: { base: 3 }, stages: { bootstrap: { gateTurns: GATE_TURNS } } };
    const a = await runPreset(tempProject(), 'vanilla-rl', 'run', over);
    const b = await runPreset(tempProject(), 'vanilla-rl', 'run', over);
    expect(a.outcome.status).toBe('completed');
    expect(b.outcome.status).toBe('completed');
    const metrics = (dir: string) => (readJsonl(join(dir, 'metrics.jsonl')) as Array<{ stage: string; step: number; values: Record<string, number> }>).map((m) => ({ stage: m.stage, step: m.step, values: m.values }));
    expect(metrics(a.runDir).length).toBeGreaterThan(3);
    expect(metrics(b.runDir)).toEqual(metrics(a.runDir));
    const evalA = strip(JSON.parse(readFileSync(join(a.runDir, 'eval', 'final.json'), 'utf8')));
    const evalB = strip(JSON.parse(readFileSync(join(b.runDir, 'eval', 'final.json'), 'utf8')));
    expect(evalB).toEqual(evalA);
    const episodes = (dir: string) => (readJsonl(join(dir, 'rollouts', 'rl-000000.jsonl')) as Array<{ turns: Array<{ response: string }> }>).map((e) => e.turns.map((t) => t.response));
    expect(episodes(b.runDir)).toEqual(episodes(a.runDir));
  }, 180_000);

  it('a stopped run resumes and finishes', async () => {
    const project = tempProject();
    const controller = new AbortController();
    const first = await runPreset(project, 'spa', 'resumable', { env: { id: 'frozenlake' }, stages: { rl: { steps: 2, passAtKEvery: 0 }, bootstrap: { gateTurns: GATE_TURNS } } }, {
      signal: controller.signal,
      // Stop on step 1's metrics, emitted before its state is saved: progress events are throttled (250 ms), so "done 1"
      // can be dropped and the Stop land in step 2's update or not at all (CI, 2026-12-01)
      onEvent: (e) => { if (e.type === 'metric' && e.point.stage === 'rl' && e.point.step === 1) controller.abort(); },
    });
    expect(first.outcome.status).toBe('stopped');
    expect(existsSync(join(first.runDir, 'stages', 'sft', 'done.json'))).toBe(true);
    expect(existsSync(join(first.runDir, 'stages', 'rl', 'done.json'))).toBe(false);
    const state = JSON.parse(readFileSync(join(first.runDir, 'stages', 'rl', 'state.json'), 'utf8')) as { nextStep: number };
    expect(state.nextStep).toBe(1);
    const second = await runPreset(project, 'spa', 'resumable', { env: { id: 'frozenlake' }, stages: { rl: { steps: 2, passAtKEvery: 0 }, bootstrap: { gateTurns: GATE_TURNS } } });
    expect(second.outcome.status).toBe('completed');
    expect(second.events.some((e) => e.type === 'log' && /already completed/.test(e.message))).toBe(true);
    expect(second.events.some((e) => e.type === 'log' && /resuming at step 1 /.test(e.message))).toBe(true);
    const rlSteps = (readJsonl(join(second.runDir, 'metrics.jsonl')) as Array<{ stage: string; step: number; values: Record<string, number> }>).filter((m) => m.stage === 'rl' && 'rollout/reward' in m.values).map((m) => m.step);
    expect(rlSteps).toEqual([1, 2]);
    expect(existsSync(join(second.runDir, 'eval', 'final.json'))).toBe(true);
  }, 180_000);

  it('a stopped RWML stage resumes at its next step', async () => {
    const project = tempProject();
    const controller = new AbortController();
    const over = { env: { id: 'frozenlake' }, stages: { rwml: { steps: 2 }, rl: { passAtKEvery: 0 }, bootstrap: { gateTurns: GATE_TURNS } } };
    const first = await runPreset(project, 'rwml-rl', 'rwml-resume', over, {
      signal: controller.signal,
      onEvent: (e) => { if (e.type === 'progress' && e.stage === 'rwml' && e.done === 1) controller.abort(); },
    });
    expect(first.outcome.status).toBe('stopped');
    const state = JSON.parse(readFileSync(join(first.runDir, 'stages', 'rwml', 'state.json'), 'utf8')) as { nextStep: number };
    expect(state.nextStep).toBe(1);
    const second = await runPreset(project, 'rwml-rl', 'rwml-resume', over);
    expect(second.outcome.status).toBe('completed');
    expect(second.events.some((e) => e.type === 'log' && /rwml: resuming at step 1/.test(e.message))).toBe(true);
  }, 180_000);
});
