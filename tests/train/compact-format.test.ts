// The compact world-model format of the tiny presets (issue 23): the prompt is the one-line rules and the grid, the reply
// observation / plan / prediction / answer with one action per turn; the "nothing moves" bootstrap turn copies the
// observation into the prediction; quick and standard resolve to it with plan-aligned targets; the paper size keeps the
// paper-faithful templates; the shipped base of the compact format is found beside the study v1 base.
import { describe, expect, it } from 'vitest';
import { RunConfigSchema } from '../../core/api/run-config.js';
import { createEnv } from '../../core/envs/index.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import { EpisodeSession, randomWellFormedResponse } from '../../core/prompts/session.js';
import { nothingMovesResponse } from '../../core/train/bootstrap-copy.js';
import { groundedBootstrapResponse } from '../../core/train/episodes.js';
import { presetConfig } from '../../core/train/presets.js';
import { alignPlan, buildSftRows, structuralProblem } from '../../core/train/selfplay-data.js';
import { Rng } from '../../core/util/rng.js';

function session(seed: number, template = 'tiny-compact', options: Record<string, unknown> = { randomStartGoal: true, successRate: 0.8 }) {
  return new EpisodeSession(createEnv('frozenlake', options), builtinTemplate(template), { seed, maxTurns: 10, maxActionsPerTurn: 1 });
}

describe('the compact format', () => {
  it('prompt = the one-line rules and the grid; no system line, no coordinates, no turn counter', () => {
    const s = session(3);
    const [system, user] = s.messages();
    expect(system!.content).toBe('');
    const lines = user!.content.split('\n');
    expect(lines[0]).toBe('Reach G, avoid O; moves may slip. Actions: Left, Down, Right, Up. Write the state, your move, the next state.');
    // the plain format's prompt differs (a base trained on both must know which reply is asked for)
    const plain = new EpisodeSession(createEnv('frozenlake', { randomStartGoal: true }), builtinTemplate('tiny-compact-plain'), { seed: 3 });
    expect(plain.messages()[1]!.content.split('\n')[0]).toBe('Reach G, avoid O; moves may slip. Actions: Left, Down, Right, Up. Write your move.');
    expect(lines.slice(1, 5).join('\n')).toBe(s.stateText());
    expect(s.stateText()).toMatch(/^[_POG√X]{4}(\n[_POG√X]{4}){3}$/);
    expect(user!.content).not.toMatch(/is at|Turn|actions left/);
    // other envs get their own rules line
    const sok = new EpisodeSession(createEnv('sokoban', {}), builtinTemplate('tiny-compact'), { seed: 1 });
    expect(sok.messages()[1]!.content.split('\n')[0]).toMatch(/^Push every box/);
  });

  it('the rules line is true for the env\'s options: "moves may slip" only on a lake where they can', () => {
    const first = (options: Record<string, unknown>, template = 'tiny-compact') => session(3, template, options).messages()[1]!.content.split('\n')[0];
    // the deterministic lake (isSlippery false, or a slippery lake whose moves always succeed) says nothing of slipping
    expect(first({ randomStartGoal: true, isSlippery: false })).toBe('Reach G, avoid O. Actions: Left, Down, Right, Up. Write the state, your move, the next state.');
    expect(first({ successRate: 1 }, 'tiny-compact-plain')).toBe('Reach G, avoid O. Actions: Left, Down, Right, Up. Write your move.');
    expect(first({})).toMatch(/^Reach G, avoid O; moves may slip\./);
    // options given at reset count too (a study's env.options reach the env there)
    const s = new EpisodeSession(createEnv('frozenlake', {}), builtinTemplate('tiny-compact'), { seed: 3, envOptions: { isSlippery: false } });
    expect(s.messages()[1]!.content).toMatch(/^Reach G, avoid O\. /);
    // the other built-in envs have their own lines
    for (const [env, line] of [['sudoku', /^Fill the grid; no digit twice/], ['keydoor', /^Pick up K, open D with it, reach G\. /]] as const) {
      expect(new EpisodeSession(createEnv(env, {}), builtinTemplate('tiny-compact'), { seed: 1 }).messages()[1]!.content).toMatch(line);
    }
  });

  it('a reply is observation, one-action plan, prediction, answer; ~4x shorter than tiny-spa; later turns carry only grids', () => {
    const rng = new Rng(5);
    const s = session(11);
    const reply = randomWellFormedResponse(s, rng);
    expect(structuralProblem(reply)).toBeNull();
    expect(reply).toMatch(/^<think><observation>\n[^<]+\n<\/observation>\nI will try (Left|Down|Right|Up)\.\n<prediction>\n[^<]+\n<\/prediction><\/think><answer>(Left|Down|Right|Up)<\/answer>$/);
    const spa = new EpisodeSession(createEnv('frozenlake', { randomStartGoal: true }), builtinTemplate('tiny-spa'), { seed: 11 });
    expect(randomWellFormedResponse(spa, new Rng(5)).length).toBeGreaterThan(2 * reply.length);
    const record = s.applyResponse(reply);
    expect(record.actionsExecuted).toHaveLength(1);
    if (!s.done) expect(s.messages()[3]!.content).toBe(`\n${s.stateText()}\n`);   // no reward line, no turn counter
  });

  it('"nothing moves": the bootstrap prediction is the observation copied; the counterfactual differs on some turns', () => {
    const rng = new Rng(7);
    let differs = 0;
    for (let seed = 0; seed < 40; seed++) {
      const s = session(seed);
      const copy = nothingMovesResponse(s, rng);
      expect(structuralProblem(copy)).toBeNull();
      const obs = /<observation>\n([\s\S]*?)\n<\/observation>/.exec(copy)![1];
      const pred = /<prediction>\n([\s\S]*?)\n<\/prediction>/.exec(copy)![1];
      expect(obs).toBe(s.stateText());
      expect(pred).toBe(obs);
      const cf = groundedBootstrapResponse(s, rng);
      if (/<prediction>\n([\s\S]*?)\n<\/prediction>/.exec(cf)![1] !== obs) differs++;
    }
    expect(differs).toBeGreaterThan(10);
    const plain = new EpisodeSession(createEnv('frozenlake', {}), builtinTemplate('tiny-compact-plain'), { seed: 1, maxActionsPerTurn: 1 });
    expect(nothingMovesResponse(plain, rng)).toMatch(/^<think>I will try \w+\.<\/think><answer>\w+<\/answer>$/);
  });

  it('plan-aligned rows: the plan is rewritten as the action taken, so the prediction is of that action', () => {
    const s = session(21, 'tiny-compact', { randomStartGoal: true, isSlippery: false });
    const before = s.stateText();
    // the policy planned Up but answered Right: after alignment the plan says Right and the prediction is the state after Right
    const reply = `<think><observation>\n${before}\n</observation>\nI will try Up.\n<prediction>\n${before}\n</prediction></think><answer>Right</answer>`;
    s.applyResponse(reply);
    const ep = s.toEpisodeRecord({ id: 'e', runId: 'r', stage: 'selfplay' });
    const { rows } = buildSftRows([ep], { groundTruthReplacement: true, alignPlan: true });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.corrected).toContain('I will try Right.');
    expect(rows[0]!.corrected).toContain(`<prediction>\n${ep.turns[0]!.stateAfter.text}\n</prediction>`);
    expect(alignPlan(reply, ['Right'])).not.toContain('I will try Up.');
  });

  it('quick and standard use it (one action per turn, 10 turns, aligned plans); paper keeps the paper-faithful templates', () => {
    for (const size of ['quick', 'standard'] as const) {
      const spa = RunConfigSchema.parse(presetConfig('spa', size, { env: { id: 'frozenlake' } }));
      expect(spa.template.preset).toBe('tiny-compact');
      expect(spa.stages.rollout).toMatchObject({ maxTurns: 10, maxActionsPerTurn: 1 });
      expect(spa.stages.selfplay.alignPlan).toBe(true);
      expect(spa.stages.bootstrap).toMatchObject({ prediction: 'copy', templates: ['tiny-compact-plain', 'tiny-compact'] });
      expect(RunConfigSchema.parse(presetConfig('vanilla-rl', size)).template.preset).toBe('tiny-compact-plain');
    }
    const paper = RunConfigSchema.parse(presetConfig('spa', 'paper'));
    expect(paper.template.preset).toBe('spa');
    expect(paper.stages.selfplay.alignPlan).toBe(false);
  });
});
