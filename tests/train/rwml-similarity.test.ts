// RWML's similarity before binarisation (issue 38: rwml/predictionSimilarity and the run folder's rwml-predictions.jsonl): the
// structured similarity is the parsed prediction's cell accuracy (0 unparsed), and each sample's line names its example.
import { describe, expect, it } from 'vitest';
import { createEnv } from '../../core/envs/index.js';
import { Rng } from '../../core/util/rng.js';
import { EpisodeSession, randomWellFormedResponse } from '../../core/prompts/session.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import { rwmlExamples, rwmlPredictionRows, structuredReward, structuredSimilarity } from '../../core/train/rwml.js';
import type { RolloutResult } from '../../core/train/rollout.js';

const template = builtinTemplate('tiny-spa');

function played(seed: number): RolloutResult {
  const s = new EpisodeSession(createEnv('frozenlake', { randomStartGoal: true, isSlippery: false }), template, { seed, maxTurns: 3 });
  const rng = new Rng(seed);
  while (!s.done) s.applyResponse(randomWellFormedResponse(s, rng));
  return { spec: { seed, group: 0, sample: 0, id: `e${seed}` }, record: s.toEpisodeRecord({ id: `e${seed}`, runId: 'r', stage: 'rwml' }), tokens: [] };
}

describe('RWML similarity', () => {
  it('structured: 1 for the true next state, the share of equal cells for another state, 0 unparsed; the reward binarises it', () => {
    const turn = played(5).record.turns.find((t) => t.stateAfter.text !== t.stateBefore.text)!;
    const truth = turn.stateAfter.board;
    expect(structuredSimilarity('frozenlake', turn.stateAfter.text, template, truth)).toBe(1);
    const before = structuredSimilarity('frozenlake', turn.stateBefore.text, template, truth);
    const cells = truth.rows * truth.cols;
    expect(before).toBeCloseTo((cells - 2) / cells, 10);   // one step moves the player: two cells differ
    expect(structuredSimilarity('frozenlake', 'no board here', template, truth)).toBe(0);
    expect(structuredReward('frozenlake', turn.stateBefore.text, template, truth, before)).toBe(1);
    expect(structuredReward('frozenlake', turn.stateBefore.text, template, truth, before + 1e-9)).toBe(0);
  });

  it('gives one row (a JSON line of the run folder) per sample, naming its example, the texts, the measure, the similarity and the reward', () => {
    const examples = rwmlExamples([played(1), played(2)], 'SYSTEM', () => 0.5);
    expect(examples.length).toBe(2);
    const texts = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'];   // groupSize 3: samples 0-2 of example 0, 3-5 of example 1
    const lines = rwmlPredictionRows(4, examples, texts, [0.1, 0.2, 0.3, 0.4, 0.5, 0.95], [0, 0, 0, 0, 0, 1], 3, 'embedding')
      .map((row) => JSON.parse(JSON.stringify(row)) as Record<string, unknown>);   // as the JSON line reads back
    expect(lines.length).toBe(6);
    expect(lines[4]).toEqual({
      step: 4, episodeId: examples[1]!.episodeId, turn: examples[1]!.turn, actions: examples[1]!.actions, sample: 1,
      prediction: 'p4', truth: examples[1]!.truthText, measure: 'embedding', similarity: 0.5, reward: 0,
    });
    expect(lines.map((l) => l.episodeId)).toEqual([0, 0, 0, 1, 1, 1].map((e) => examples[e]!.episodeId));
  });
});
