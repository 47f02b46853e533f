// The spa-teacher preset (issue 34 item 5, ours; docs/results/mainjob-v3 session 8): SPA at quick size plus 1,500 games of
// the one-step rule (the paper's reply order, 4 turns), the policy's own moves untrained, and the decision phase on the rule
// games alone; everything else as `spa --size quick` resolves it (model, base, rollout, drills' world model, eval). A smoke
// run goes through the decision phase end to end.
import { describe, expect, it } from 'vitest';
import { resolveRunConfig } from '../../core/engine/config.js';
import { runPreset, tempProject } from './helpers.js';

describe('the spa-teacher preset', () => {
  it('is spa --size quick with the rule games and the decision phase, on FrozenLake', () => {
    const teacher = resolveRunConfig({ preset: 'spa-teacher', size: 'quick' }).config!;
    const spa = resolveRunConfig({ preset: 'spa', size: 'quick' }).config!;
    expect(teacher.method).toBe('spa');
    expect(teacher.env).toEqual(spa.env);
    expect(teacher.env.id).toBe('frozenlake');
    expect(teacher.model).toEqual(spa.model);
    expect(teacher.template).toEqual(spa.template);
    expect(teacher.stages.selfplay).toMatchObject({ games: 8, drills: 8000, lookahead: 1500, lookaheadTurns: 4, lookaheadForm: 'none', alignPlan: true });
    expect(teacher.stages.selfplay.drills).toBe(spa.stages.selfplay.drills);   // quick's own drills (teacher3, mainjob-v3)
    expect(teacher.stages.sft).toMatchObject({ ...spa.stages.sft, maskActionSpans: true, decisionSteps: 150, decisionMoveWeight: 20, decisionDrills: 1 });
    expect(teacher.stages.rl).toEqual({ ...spa.stages.rl, passAtKEvery: 2, passAtKPuzzles: 8 });
    expect(teacher.stages.eval).toEqual(spa.stages.eval);
    expect(teacher.stages.rollout).toEqual(spa.stages.rollout);
  });

  it('refuses another env by name before any stage runs (the rule games are FrozenLake\'s)', () => {
    const r = resolveRunConfig({ preset: 'spa-teacher', size: 'quick', set: { 'env.id': 'sokoban' } });
    expect(r.ok).toBe(false);
    expect(r.issues).toContainEqual({ path: 'stages.selfplay.lookahead', message: expect.stringMatching(/FrozenLake only .*env\.id is "sokoban"/) });
    const drills = resolveRunConfig({ preset: 'spa', size: 'quick', set: { 'env.id': 'sokoban', 'stages.selfplay.drillLookahead': true } });
    expect(drills.issues.map((i) => i.path)).toContain('stages.selfplay.drillLookahead');
    expect(resolveRunConfig({ preset: 'spa', size: 'quick', set: { 'env.id': 'sokoban' } }).ok).toBe(true);
  });

  it('runs self-play and SFT with its decision phase at smoke size', async () => {
    const run = await runPreset(tempProject('spa-teacher-'), 'spa-teacher', 't', {
      env: { id: 'frozenlake', options: { randomStartGoal: true } }, stages: { plan: { order: ['selfplay', 'sft'] } },
    });
    expect(run.outcome.status).toBe('completed');
    expect(run.events.some((e) => e.type === 'log' && /sft: decision phase, 2 steps on \d+ lookahead rows/.test(e.message))).toBe(true);
  }, 120_000);
});
