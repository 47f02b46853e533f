// rl.updateRows 'episode' (core/train/ppo.ts episodeRows): an episode's turn rows merged into its prefix carrier, every reply
// trained in one row as RAGEN trains; one update over the merged rows has the loss, gradient and new weights of one update
// over the turn rows (a causal model's token numbers do not depend on what follows them), with fewer tokens computed.
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { Trainer, type TrainRow } from '../../core/model/trainer.js';
import { CausalLM } from '../../core/model/transformer.js';
import { buildGrpoRows } from '../../core/train/grpo.js';
import { aggregatedBatch, episodeRows, rowEpisodes, samplingStats, type TurnSample } from '../../core/train/ppo.js';
import { updateBatches } from '../../core/train/rl-stage.js';
import type { LossAggregation } from '../../core/model/losses.js';
import type { ModelRuntime } from '../../core/train/runtime.js';
import { readJsonl, runPreset, tempProject } from './helpers.js';
import '../../core/train/losses.js';
import { tinyConfig, useTestBackend } from '../model/helpers.js';

beforeAll(async () => { await useTestBackend(); });

const sample = (episode: number, turn: number, ids: number[], responseStart: number): TurnSample => ({ episode, turn, ids, responseStart });
// episode 0: three turns, each row starting with the previous one (history kept whole); episode 1: the second turn's history
// was cut (it does not start with the first turn's tokens), so its turns stay two rows; episode 2: one turn
const SAMPLES = [
  sample(0, 0, [1, 2, 3, 4], 2), sample(0, 1, [1, 2, 3, 4, 5, 6, 7], 5), sample(0, 2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 8),
  sample(1, 0, [9, 8, 7], 1), sample(1, 1, [7, 6, 5, 4], 3), sample(2, 0, [5, 5, 6, 5, 5], 4),
];

/** A runtime's tokenStats from a tiny CausalLM, old log-probs shifted by a function of (token, position) so ratios are not 1. */
function statsRuntime(model: CausalLM): ModelRuntime {
  return {
    async tokenStats(rows: Array<{ ids: number[] }>) {
      const T = Math.max(...rows.map((r) => r.ids.length));
      const [lp, ent] = tf.tidy(() => {
        const out = model.tokenOutputs(rows.map((r) => [...r.ids, ...new Array<number>(T - r.ids.length).fill(0)]), {
          attentionMask: rows.map((r) => [...r.ids.map(() => 1), ...new Array<number>(T - r.ids.length).fill(0)]), values: false, logits: true,
        });
        return [out.logprobs!.clone(), out.entropies!.clone()];
      }).map((t) => { const a = t.arraySync() as number[][]; t.dispose(); return a; });
      return rows.map((r, b) => ({
        logprobs: r.ids.map((id, t) => lp[b]![t]! + 0.05 * (((id * 7 + t) % 5) - 2)),
        entropies: ent[b]!.slice(0, r.ids.length),
        values: null,
      }));
    },
  } as unknown as ModelRuntime;
}

async function turnRows(model: CausalLM): Promise<TrainRow[]> {
  const stats = await samplingStats(statsRuntime(model), SAMPLES, { batchSize: 8 });
  // one group: rewards 1, 0, 0.5 give each episode its own advantage
  return buildGrpoRows(SAMPLES, [1, 0, 0.5], [0, 0, 0], stats).rows;
}

describe('episodeRows merges each episode\'s turns into its prefix carrier', () => {
  it('the carrier row trains every reply of its chain; a cut history stays two rows; arrays land on each turn\'s reply', async () => {
    const model = new CausalLM(tinyConfig(), { seed: 3 });
    const rows = await turnRows(model);
    const merged = episodeRows(rows, SAMPLES);
    expect(merged.map((r) => r.ids)).toEqual([SAMPLES[2]!.ids, SAMPLES[3]!.ids, SAMPLES[4]!.ids, SAMPLES[5]!.ids]);
    const chain = merged[0]!.arrays;
    // the replies of turns 0 (2-3), 1 (5-6) and 2 (8-9) are loss tokens; the prompts (0-1, 4, 7) are not
    expect(chain.lossMask).toEqual([0, 0, 1, 1, 0, 1, 1, 0, 1, 1]);
    expect(chain.advantages!.filter((_, t) => chain.lossMask![t]! > 0).every((a) => a === rows[0]!.arrays.advantages![2])).toBe(true);
    // old log-probs: each turn's own (they came from the carrier's pass, so they agree on the shared positions)
    for (const [i, span] of [[0, [2, 4]], [1, [5, 7]], [2, [8, 10]]] as Array<[number, [number, number]]>) {
      for (let t = span[0]; t < span[1]; t++) expect(chain.oldLogprobs![t]).toBe(rows[i]!.arrays.oldLogprobs![t]);
    }
    // the turn rows are not changed
    expect(rows[2]!.arrays.lossMask).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
    const tokens = (rs: TrainRow[]) => rs.reduce((a, r) => a + r.ids.length, 0);
    expect(tokens(merged)).toBe(22);
    expect(tokens(rows)).toBe(33);
    // the minibatches count episodes: the cut episode's two rows are one unit (rl-stage.ts updateBatches)
    expect(rowEpisodes(merged)).toEqual([0, 1, 1, 2]);
    const plan = updateBatches(merged.length, { updatesPerStep: 0, miniBatchSize: 1, ppoEpochs: 1 }, 5, rowEpisodes(merged));
    expect(plan).toHaveLength(3);
    expect(plan.find((b) => b.includes(1))).toEqual([1, 2]);
    model.dispose();
  });

  it('refuses rows that are not the samples\' rows', async () => {
    const model = new CausalLM(tinyConfig(), { seed: 3 });
    const rows = await turnRows(model);
    expect(() => episodeRows(rows.slice(1), SAMPLES)).toThrow(/5 rows for 6 samples/);
    expect(() => episodeRows([{ ...rows[0]!, ids: [1, 2] }, ...rows.slice(1)], SAMPLES)).toThrow(/row 0 has 2 tokens, its sample 4/);
    const extra = rows.map((r, i) => (i === 0 ? { ids: r.ids, arrays: { ...r.arrays, refLogprobs: r.ids.map(() => 0) } } : r));
    expect(() => episodeRows(extra, SAMPLES)).toThrow(/row 0 has array 'refLogprobs', its carrier row 2 does not/);
    model.dispose();
  });

  for (const mode of ['token-mean', 'seq-mean-token-mean'] as LossAggregation[]) {
    it(`one update over the episode rows = one update over the turn rows (${mode}): loss, gradient norm, new weights`, async () => {
      const run = async (merge: boolean) => {
        const model = new CausalLM(tinyConfig(), { seed: 3 });
        const rows = await turnRows(model);
        const trainer = new Trainer(model, { schedule: { lr: 1e-2, kind: 'constant' }, weightDecay: 0 });
        const params = { clipLow: 0.2, clipHigh: 0.28, dualClip: 3, entropyCoef: 0.01, klCoef: 0, valueClip: null };
        const batch = aggregatedBatch(merge ? episodeRows(rows, SAMPLES) : rows, { lossAggregation: mode });
        const step = trainer.stepRows('grpo', batch, params, { maxGradNorm: 0 });
        const weights = model.trainableVariables().map((v) => Array.from(v.dataSync()));
        trainer.dispose();
        model.dispose();
        return { step, weights };
      };
      const turn = await run(false), episode = await run(true);
      for (const key of ['losses/policy', 'losses/entropy', 'losses/clipFrac']) {
        expect(episode.step.stats[key], key).toBeCloseTo(turn.step.stats[key]!, 6);
      }
      expect(Math.abs(turn.step.stats['losses/policy']!)).toBeGreaterThan(1e-4);   // the update did something to compare
      expect(episode.step.gradNorm).toBeCloseTo(turn.step.gradNorm, 5);
      let diff = 0, moved = 0;
      episode.weights.forEach((w, i) => w.forEach((x, j) => { diff = Math.max(diff, Math.abs(x - turn.weights[i]![j]!)); }));
      const fresh = new CausalLM(tinyConfig(), { seed: 3 });
      fresh.trainableVariables().forEach((v, i) => Array.from(v.dataSync()).forEach((x, j) => { moved = Math.max(moved, Math.abs(x - turn.weights[i]![j]!)); }));
      fresh.dispose();
      expect(moved).toBeGreaterThan(1e-3);
      expect(diff).toBeLessThan(1e-5);
    });
  }
});

describe('rl.updateRows in the RL stage', () => {
  const project = tempProject();
  const CUT_CONTEXT = 150;   // the smoke size's second turn no longer holds its first turn whole
  it('episode: the step trains one row per episode whose turns chain; turn: one row per model turn', async () => {
    const counts: Record<string, { rows: number; turns: number; episodes: number; updates: number }> = {};
    // episode-cut: a context budget that cuts the histories, so the turns of an episode no longer chain into one row
    for (const rowsMode of ['turn', 'episode', 'episode-cut'] as const) {
      const { outcome, runDir } = await runPreset(project, 'vanilla-rl', `rows-${rowsMode}`, {
        env: { id: 'frozenlake' }, stages: { rl: { updateRows: rowsMode === 'turn' ? 'turn' : 'episode', miniBatchSize: 1 },
          ...(rowsMode === 'episode-cut' ? { rollout: { maxContextTokens: CUT_CONTEXT } } : {}) },
      });
      expect(outcome).toEqual({ status: 'completed' });
      const metrics = readJsonl(`${runDir}/metrics.jsonl`) as Array<{ stage: string; step: number; values: Record<string, number> }>;
      const step = metrics.find((m) => m.stage === 'rl' && m.step === 1)!;
      const episodes = readJsonl(`${runDir}/rollouts/rl-000000.jsonl`) as Array<{ turns: Array<{ response: string }> }>;
      counts[rowsMode] = {
        rows: step.values['charts/updateRows']!, turns: episodes.reduce((a, e) => a + e.turns.length, 0), episodes: episodes.length,
        updates: step.values['charts/updates']!,
      };
    }
    expect(counts.turn!.rows).toBe(counts.turn!.turns);
    expect(counts.episode!.rows).toBe(counts.episode!.episodes);
    // minibatches of 1: a turn a minibatch, or an episode a minibatch however many rows its turns make
    expect(counts.turn!.updates).toBe(counts.turn!.turns);
    expect(counts.episode!.updates).toBe(counts.episode!.episodes);
    expect(counts['episode-cut']!.rows).toBeGreaterThan(counts['episode-cut']!.episodes);
    expect(counts['episode-cut']!.updates).toBe(counts['episode-cut']!.episodes);
    expect(counts.turn!.turns).toBeGreaterThan(counts.turn!.episodes);   // multi-turn episodes: the two layouts differ
  }, 240_000);
});
