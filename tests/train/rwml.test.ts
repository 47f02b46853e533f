// RWML as the RWML paper runs it (audit B7): the action comes from a policy rollout and is given in
// the prompt; only the next state is generated and scored against what the env produced.
import { describe, expect, it } from 'vitest';
import { createEnv } from '../../core/envs/index.js';
import { Rng } from '../../core/util/rng.js';
import { EpisodeSession, randomWellFormedResponse } from '../../core/prompts/session.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import { actionLine, predictedText, rwmlExamples, structuredReward } from '../../core/train/rwml.js';
import type { RolloutResult } from '../../core/train/rollout.js';

function played(seed: number): RolloutResult {
  const template = builtinTemplate('tiny-spa');
  const s = new EpisodeSession(createEnv('frozenlake', { randomStartGoal: true, isSlippery: false }), template, { seed, maxTurns: 3 });
  const rng = new Rng(seed);
  while (!s.done) s.applyResponse(randomWellFormedResponse(s, rng));
  return { spec: { seed, group: 0, sample: 0, id: `e${seed}` }, record: s.toEpisodeRecord({ id: `e${seed}`, runId: 'r', stage: 'rwml' }), tokens: [] };
}

describe('RWML examples', () => {
  it('give the policy\'s executed actions in the prompt and the env\'s next state as the target', () => {
    const results = [played(1), played(2), played(3)];
    const examples = rwmlExamples(results, 'SYSTEM', () => 0.99);
    expect(examples.length).toBe(3);
    for (const e of examples) {
      const turn = results.find((r) => r.record.id === e.episodeId)!.record.turns[e.turn]!;
      expect(e.actions).toEqual(turn.actionsExecuted);
      expect(e.actions.length).toBeGreaterThan(0);
      const last = e.messages[e.messages.length - 1]!;
      expect(last.role).toBe('user');
      expect(last.content.endsWith(actionLine(turn.actionsExecuted))).toBe(true);
      expect(e.truthText).toBe(turn.stateAfter.text);
      expect(e.messages[0]).toEqual({ role: 'system', content: 'SYSTEM' });
      expect(e.messages.length).toBe(2 + 2 * e.turn);
    }
  });

  it('score only the generated next state: copying the current state is no shortcut when the state changed', () => {
    const template = builtinTemplate('tiny-spa');
    const r = played(5);
    const turn = r.record.turns.find((t) => t.stateAfter.text !== t.stateBefore.text)!;
    expect(turn).toBeDefined();
    expect(structuredReward('frozenlake', predictedText(`${turn.stateAfter.text}\n</prediction>`), template, turn.stateAfter.board, 1)).toBe(1);
    expect(structuredReward('frozenlake', predictedText(`${turn.stateBefore.text}\n</prediction>`), template, turn.stateAfter.board, 1)).toBe(0);
    expect(predictedText('abc</prediction></think>')).toBe('abc');
  });
});
