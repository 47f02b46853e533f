// rl.entropyOn 'action' (issue 34, curve (a)): the entropy bonus on the token that chooses the move only. On the tiny
// character-level base a bonus on every reply token wiped out the format within 3 updates (entropyCoef 0.3), while the
// science review's pilot, whose bonus sits at the decision, left the plateau (bench/results/rl-curves/README.md).
// Checked here: which token decisionTokenMask marks (character and sub-word decodings); the entropy term's gradient with
// respect to each token's entropy (zero on every other token, non-zero at the move; 'all' as before); the term's value
// whatever the chunking (the PyTorch runtime's path, lossOutputGradients per chunk) and aggregation; the TF.js Trainer
// reading the same weights; the rows from turnSamples; the export refusing it by name.
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { RlSectionSchema } from '../../core/api/run-config.js';
import { inexpressibleRlOptions } from '../../core/interop/export-bundle.js';
import { chunkRows, lossOutputGradients, lossTokens, padRows, Trainer, type TrainRow } from '../../core/model/trainer.js';
import { CausalLM } from '../../core/model/transformer.js';
import { buildGrpoRows } from '../../core/train/grpo.js';
import { aggregatedBatch, decisionTokenMask, entropyWeights, turnSamples, warmedLr } from '../../core/train/ppo.js';
import type { RolloutResult } from '../../core/train/rollout.js';
import '../../core/train/losses.js';
import { tinyConfig, useTestBackend } from '../model/helpers.js';

beforeAll(async () => { await useTestBackend(); });

// A character tokenizer over a fixed alphabet, with the reply's tags as single tokens (as the tiny base's).
const SPECIAL = ['</think>', '<answer>', '</answer>'];
const ALPHABET = [...SPECIAL, ...'abcdefghijklmnopqrstuvwxyzDLRUIGP_ .\n'];
const decode = (ids: number[]) => ids.map((i) => ALPHABET[i]!).join('');
function encode(text: string): number[] {
  const out: number[] = [];
  for (let k = 0; k < text.length;) {
    const tag = SPECIAL.find((s) => text.startsWith(s, k));
    const piece = tag ?? text[k]!;
    const id = ALPHABET.indexOf(piece);
    if (id < 0) throw new Error(`test tokenizer: no token for ${JSON.stringify(piece)}`);
    out.push(id);
    k += piece.length;
  }
  return out;
}
const REPLY = 'I will try Up.</think><answer>Up</answer>';
const MOVE_AT = 'I will try '.length;   // the 'U' of the plan: token 11

describe('decisionTokenMask: the token that chooses the move', () => {
  it('character tokens: the plan\'s first move letter only (not the answer\'s copy, not the word\'s other letters)', () => {
    const mask = decisionTokenMask(encode(REPLY), decode);
    expect(mask.length).toBe(encode(REPLY).length);
    expect(mask.reduce((a, b) => a + b, 0)).toBe(1);
    expect(mask[MOVE_AT]).toBe(1);
  });
  it('sub-word tokens: the token that starts the move word (" Up" carries the space before it)', () => {
    const pieces = ['I', ' will', ' try', ' Up', '.', '</think>', '<answer>', 'Up', '</answer>'];
    expect(decisionTokenMask(pieces.map((_, i) => i), (ids) => ids.map((i) => pieces[i]!).join(''))).toEqual([0, 0, 0, 1, 0, 0, 0, 0, 0]);
  });
  it('no plan: the answer\'s first move; no move at all: zeros', () => {
    const answer = decisionTokenMask(encode('<answer>Down</answer>'), decode);
    expect(answer).toEqual([0, 1, 0, 0, 0, 0]);
    expect(decisionTokenMask(encode('gibberish'), decode)).toEqual(new Array(9).fill(0));
    expect(decisionTokenMask(encode('I will try '), decode).every((m) => m === 0)).toBe(true);
    // a space where the move goes is the decision made there: trained, with the letter after it
    expect(decisionTokenMask(encode('I will try  Up.'), decode).flatMap((m, t) => (m ? [t] : []))).toEqual([MOVE_AT, MOVE_AT + 1]);
  });
});

/** One rollout per reply (one turn each), as the RL stage's turnSamples reads them. */
function results(replies: string[], prompt = 'G_P\n'): RolloutResult[] {
  return replies.map((r) => ({ tokens: [{ promptIds: encode(prompt), responseIds: encode(r) }] }) as unknown as RolloutResult);
}
const PARAMS = { clipLow: 0.2, clipHigh: 0.28, dualClip: 3, entropyCoef: 0.3, klCoef: 0 };

/** GRPO rows of the replies with ratio 1 and zero advantages (the policy term has no gradient; only the entropy term acts). */
function rowsOf(replies: string[], entropyOn: 'all' | 'action', logprobs?: number[][], lossOn: 'reply' | 'action' = 'reply', rewards?: number[]): TrainRow[] {
  const rs = results(replies);
  const samples = turnSamples(rs, () => true, { entropyOn, lossOn, decode });
  const stats = { logprobs: logprobs ?? samples.map((s) => s.ids.map(() => -1)), values: [], refLogprobs: null, entropies: [] };
  return buildGrpoRows(samples, rewards ?? replies.map(() => 1), replies.map(() => 0), stats).rows;
}

/** d loss / d entropy_t of every token, and the 'losses/entropy' stat, as the PyTorch runtime computes them (chunks of `budget`). */
function entropyGradients(rows: TrainRow[], entropies: number[][], budget = 10_000, params: Record<string, unknown> = PARAMS) {
  const grads = new Map<TrainRow, number[]>();
  let stat = 0, total = 0;
  for (const chunk of chunkRows(rows, budget)) {
    const batch = padRows(chunk, 0);
    const T = batch.inputIds[0]!.length;
    const flat = (pick: (r: TrainRow) => number[]) => Float32Array.from(chunk.flatMap((r) => [...pick(r), ...new Array<number>(T - r.ids.length).fill(0)]));
    const out = lossOutputGradients('grpo', params, batch, {
      logprobs: flat((r) => r.arrays.oldLogprobs!), entropies: flat((r) => entropies[rows.indexOf(r)]!),
    });
    const w = lossTokens(batch);
    chunk.forEach((r, b) => grads.set(r, Array.from(out.grads.entropies!.subarray(b * T, b * T + r.ids.length)).map((g) => (g * w))));
    stat += out.stats['losses/entropy']! * w;
    total += w;
  }
  return { grads: rows.map((r) => grads.get(r)!.map((g) => g / total)), entropy: stat / total };
}

describe('the entropy term on the move token only (GRPO rows from turnSamples, the update\'s aggregatedBatch)', () => {
  const replies = [REPLY, 'I will try Left.</think><answer>Left</answer>', '<answer>Down</answer>'];
  const prompt = encode('G_P\n').length;
  const decisions = [prompt + MOVE_AT, prompt + MOVE_AT, prompt + 1];   // the plan's U, the plan's L, the answer's D
  const entropiesOf = (rows: TrainRow[]) => rows.map((r, i) => r.ids.map((_, t) => (t === decisions[i] ? 1.2 + 0.1 * i : 0.01 * (t % 3))));

  it('action: zero gradient on every other token, -coef/N_moves at each move; losses/entropy = the moves\' mean entropy', () => {
    const rows = aggregatedBatch(rowsOf(replies, 'action'), { lossAggregation: 'token-mean', entropyOn: 'action' });
    const { grads, entropy } = entropyGradients(rows, entropiesOf(rows));
    grads.forEach((g, i) => g.forEach((x, t) => {
      if (t === decisions[i]) expect(x, `row ${i} move token ${t}`).toBeCloseTo(-0.3 / 3, 6);
      else expect(Math.abs(x), `row ${i} token ${t}`).toBe(0);
    }));
    expect(entropy).toBeCloseTo((1.2 + 1.3 + 1.4) / 3, 5);
  });

  it('entropyCap: no gradient at a move whose entropy is above the cap; losses/entropy stays uncapped', () => {
    const rows = aggregatedBatch(rowsOf(replies, 'action'), { lossAggregation: 'token-mean', entropyOn: 'action' });
    const capped = entropyGradients(rows, entropiesOf(rows), 10_000, { ...PARAMS, entropyCap: 1.25 });
    capped.grads.forEach((g, i) => g.forEach((x, t) => expect(x, `row ${i} token ${t}`).toBeCloseTo(t === decisions[i] && i === 0 ? -0.3 / 3 : 0, 6)));
    expect(capped.entropy).toBeCloseTo((1.2 + 1.3 + 1.4) / 3, 5);
    // the loss counts min(H, cap): 1.2, 1.25, 1.25
    const lossOf = (params: Record<string, unknown>) => lossOutputGradients('grpo', params, padRows(rows, 0), {
      logprobs: Float32Array.from(padRows(rows, 0).oldLogprobs!.flat()), entropies: Float32Array.from(entropiesOf(rows).flatMap((e) => [...e, ...new Array<number>(
        Math.max(...rows.map((r) => r.ids.length)) - e.length).fill(0)])),
    }).loss;
    expect(lossOf({ ...PARAMS, entropyCap: 1.25 }) - lossOf(PARAMS)).toBeCloseTo(0.3 * ((1.3 - 1.25) + (1.4 - 1.25)) / 3, 5);
  });

  it('the same whatever the chunking (one row per chunk) and per episode under seq-mean-token-mean', () => {
    const base = rowsOf(replies, 'action');
    const one = aggregatedBatch(base, { lossAggregation: 'token-mean', entropyOn: 'action' });
    const seq = aggregatedBatch(base, { lossAggregation: 'seq-mean-token-mean', entropyOn: 'action' });
    for (const rows of [one, seq]) {
      const small = entropyGradients(rows, entropiesOf(rows), 1);
      expect(small.entropy).toBeCloseTo((1.2 + 1.3 + 1.4) / 3, 5);
      small.grads.forEach((g, i) => g.forEach((x, t) => expect(x).toBeCloseTo(t === decisions[i] ? -0.1 : 0, 6)));
    }
  });

  it('all: as before (the rows untouched, -coef/N on every loss token)', () => {
    const before = rowsOf(replies, 'all');
    const rows = aggregatedBatch(before, { lossAggregation: 'token-mean', entropyOn: 'all' });
    expect(rows).toBe(before);
    expect(rows.every((r) => r.arrays.entropyWeight === undefined)).toBe(true);
    const n = rows.reduce((a, r) => a + r.arrays.lossMask!.reduce((b, m) => b + m, 0), 0);
    const { grads } = entropyGradients(rows, entropiesOf(rows));
    grads.forEach((g, i) => g.forEach((x, t) => expect(x).toBeCloseTo(rows[i]!.arrays.lossMask![t]! ? -0.3 / n : 0, 7)));
  });

  it('refuses rows without entropy masks and mismatched masks by name; an update without a move gets no bonus', () => {
    expect(() => aggregatedBatch(rowsOf(replies, 'all'), { lossAggregation: 'token-mean', entropyOn: 'action' })).toThrow(/has no entropy mask/);
    expect(() => entropyWeights([[1, 1]], [[1]], [0], 'token-mean')).toThrow(/1 values for 2 tokens/);
    expect(() => turnSamples(results([REPLY]), () => true, { entropyOn: 'action' })).toThrow(/needs the tokenizer's decode/);
    expect(entropyWeights([[0, 1, 1]], [[0, 0, 0]], [0], 'token-mean')).toEqual([[0, 0, 0]]);
    // a move token outside the loss mask (e.g. masked by another rule) is not counted
    expect(entropyWeights([[0, 1, 1], [1, 1, 0]], [[0, 1, 0], [0, 0, 1]], [0, 1], 'token-mean')).toEqual([[0, 4, 0], [0, 0, 0]]);
  });
});

describe('rl.lossOn action: the loss on the move token only (REINFORCE on the decision)', () => {
  it('the loss mask is the move token; the policy gradient is zero on every other token and -A/N at the move', () => {
    const replies = [REPLY, 'I will try Left.</think><answer>Left</answer>', 'bad reply'];
    const rows = aggregatedBatch(rowsOf(replies, 'all', undefined, 'action', [1, 0, 0]), { lossAggregation: 'token-mean', entropyOn: 'all' });
    const prompt = encode('G_P\n').length;
    // the reply without a move is left out (no loss token: a chunk of such rows made the PyTorch worker's backward fail)
    expect(rows.map((r) => r.arrays.lossMask!.flatMap((m, t) => (m ? [t] : [])))).toEqual([[prompt + MOVE_AT], [prompt + MOVE_AT]]);
    const batch = padRows(rows, 0);
    const T = batch.inputIds[0]!.length;
    const flat = (pick: (r: TrainRow) => number[]) => Float32Array.from(rows.flatMap((r) => [...pick(r), ...new Array<number>(T - r.ids.length).fill(0)]));
    const out = lossOutputGradients('grpo', { ...PARAMS, entropyCoef: 0 }, batch, { logprobs: flat((r) => r.arrays.oldLogprobs!), entropies: flat((r) => r.ids.map(() => 0)) });
    const g = out.grads.logprobs!;
    rows.forEach((r, b) => r.ids.forEach((_, t) => {
      const x = g[b * T + t]!;
      if (t === prompt + MOVE_AT && b < 2) expect(x, `row ${b} move`).toBeCloseTo(-r.arrays.advantages![t]! / 2, 6);
      else expect(Math.abs(x), `row ${b} token ${t}`).toBe(0);
    }));
    expect(rows[0]!.arrays.advantages![prompt + MOVE_AT]).toBeGreaterThan(0);   // the winner is pushed up, the loser down
    expect(rows[1]!.arrays.advantages![prompt + MOVE_AT]).toBeLessThan(0);
    expect(() => turnSamples(results([REPLY]), () => true, { lossOn: 'action' })).toThrow(/needs the tokenizer's decode/);
  });
});

describe('the TF.js Trainer reads the same weights', () => {
  it('losses/entropy is the model\'s entropy at the move tokens, and the step changes the weights only through it', () => {
    const model = new CausalLM(tinyConfig({ vocab_size: ALPHABET.length }), { seed: 5 });
    const trainer = new Trainer(model, { schedule: { lr: 1e-2, kind: 'constant' }, weightDecay: 0 });
    const replies = [REPLY, 'I will try Right.</think><answer>Right</answer>'];
    const plain = rowsOf(replies, 'action');
    const T = Math.max(...plain.map((r) => r.ids.length));
    const [lp, ent] = tf.tidy(() => {
      const out = model.tokenOutputs(plain.map((r) => [...r.ids, ...new Array<number>(T - r.ids.length).fill(0)]), {
        attentionMask: plain.map((r) => [...r.ids.map(() => 1), ...new Array<number>(T - r.ids.length).fill(0)]), values: false, logits: true,
      });
      return [out.logprobs!.arraySync() as number[][], out.entropies!.arraySync() as number[][]];
    });
    const at = encode('G_P\n').length + MOVE_AT;
    const rows = aggregatedBatch(rowsOf(replies, 'action', plain.map((r, i) => lp[i]!.slice(0, r.ids.length))),
      { lossAggregation: 'token-mean', entropyOn: 'action' });
    const step = trainer.stepRows('grpo', rows, PARAMS, { tokenBudget: 10_000, maxGradNorm: 0 });
    expect(step.stats['losses/entropy']).toBeCloseTo((ent[0]![at]! + ent[1]![at]!) / 2, 4);
    expect(step.stats['losses/policy']).toBeCloseTo(0, 6);
    expect(step.gradNorm).toBeGreaterThan(0);
    trainer.dispose();
    model.dispose();
  });
});

describe('the setting', () => {
  it('defaults to all (the release\'s bonus), and the export refuses action with a bonus by name', () => {
    const rl = RlSectionSchema.parse({});
    expect(rl.entropyOn).toBe('all');
    expect(() => RlSectionSchema.parse({ entropyOn: 'move' })).toThrow();
    expect(inexpressibleRlOptions(rl).map(([o]) => o)).toEqual([]);
    expect(inexpressibleRlOptions({ ...rl, entropyOn: 'action' }).map(([o]) => o)).toEqual(['rl.entropyOn "action"']);
    expect(inexpressibleRlOptions({ ...rl, entropyOn: 'action', entropyCoef: 0 })).toEqual([]);
    expect(rl.lossOn).toBe('reply');
    expect(rl.entropyCap).toBeNull();
    expect(inexpressibleRlOptions({ ...rl, entropyCap: 1.386 }).map(([o]) => o)).toEqual(['rl.entropyCap 1.386']);
    expect(inexpressibleRlOptions({ ...rl, lossOn: 'action' }).map(([o]) => o)).toEqual(['rl.lossOn "action"']);
  });
});

describe('rl.warmupSteps: verl\'s constant schedule with linear warmup, one step per RL step', () => {
  it('lr * k / N for k < N (0 at step 0), then lr; 0 = off; a bad step is refused', () => {
    const rl = RlSectionSchema.parse({ lr: 2e-3, warmupSteps: 4 });
    expect([0, 1, 2, 3, 4, 9].map((k) => warmedLr(rl, k))).toEqual([0, 5e-4, 1e-3, 1.5e-3, 2e-3, 2e-3]);
    expect(warmedLr(RlSectionSchema.parse({ lr: 2e-3 }), 0)).toBe(2e-3);
    expect(() => warmedLr(rl, -1)).toThrow(/non-negative integer/);
    expect(() => RlSectionSchema.parse({ warmupSteps: 1.5 })).toThrow();
  });
});
