// The TF.js runtime with data-parallel worker threads (issue 13 item 5: both cores on the wasm
// default, in the pipeline): generation, token statistics and training steps split across the
// main thread and a worker give what one thread gives, the workers follow weight changes made on
// the main thread (a value view's step), and a dead worker fails the step with the reason.
import { beforeAll, describe, expect, it } from 'vitest';
import { CausalLM } from '../../core/model/transformer.js';
import { TfjsRuntime } from '../../core/model/runtime.js';
import { buildCharTokenizer } from '../../core/model/tokenizer.js';
import { balanceRows } from '../../core/model/workers/data-parallel.js';
import { padRows, type TrainRow } from '../../core/model/trainer.js';
import { generate } from '../../core/model/generate.js';
import { tokenScores } from '../../core/model/score.js';
import { tinyConfig, useTestBackend } from './helpers.js';
import '../../core/train/losses.js';
import { applyLora } from '../../core/train/lora.js';

beforeAll(useTestBackend);

const LOSSES = new URL('../../core/train/losses.ts', import.meta.url).href;
const info = { backend: 'wasm', device: 'test' };
const tokenizer = buildCharTokenizer({ chars: 'abcdefgh<>/ ', tagTokens: [] });

function pair(valueHead = false): { one: TfjsRuntime; two: TfjsRuntime } {
  const a = new CausalLM(tinyConfig({ vocab_size: tokenizer.vocabSize, initializer_range: 0.3, value_head: valueHead }), { seed: 7 });
  const b = a.clone();
  return {
    one: new TfjsRuntime(a, tokenizer, info),
    two: new TfjsRuntime(b, tokenizer, info, true, { workers: 1, lossModules: [LOSSES] }),
  };
}

/** Rows of different lengths with a loss mask on their second half and PPO arrays. */
function rows(n: number, seed: number): TrainRow[] {
  let s = seed;
  const rnd = () => { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648; };
  return Array.from({ length: n }, (_, i) => {
    const len = 6 + ((i * 5) % 9);
    const ids = Array.from({ length: len }, () => 3 + Math.floor(rnd() * (tokenizer.vocabSize - 3)));
    const lossMask = ids.map((_, t) => (t >= len / 2 ? 1 : 0));
    return {
      ids,
      arrays: {
        lossMask, oldLogprobs: ids.map(() => -2.5), advantages: ids.map(() => rnd() - 0.5),
        returns: ids.map(() => rnd()), oldValues: ids.map(() => 0), refLogprobs: ids.map(() => -2.5),
      },
    };
  });
}

function maxWeightDiff(x: CausalLM, y: CausalLM): number {
  const wy = y.namedWeights();
  let max = 0;
  for (const [k, v] of x.namedWeights()) {
    const a = v.dataSync(); const b = wy.get(k)!.dataSync();
    for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  }
  return max;
}

describe('TfjsRuntime with data-parallel workers', () => {
  it('balances rows by tokens into non-empty shards', () => {
    const r = rows(7, 3);
    const shards = balanceRows(r, 2);
    expect(shards).toHaveLength(2);
    expect(shards.flat()).toHaveLength(7);
    const load = shards.map((sh) => sh.reduce((a, x) => a + x.ids.length, 0));
    expect(Math.abs(load[0]! - load[1]!)).toBeLessThanOrEqual(Math.max(...r.map((x) => x.ids.length)));
    expect(balanceRows(r.slice(0, 1), 4)).toHaveLength(1);
  });

  it('samples, scores and trains (SFT, PPO with a value head) as one thread does, over several steps', async () => {
    const { one, two } = pair(true);
    try {
      const prompts = [[3, 4, 5], [6, 7], [8, 9, 10, 11], [4, 4]];
      const opts = { maxNewTokens: 6, temperature: 1, topP: 1, topK: 0, seed: 11 };
      expect((await two.generate(prompts, opts)).map((g) => g.ids)).toEqual((await one.generate(prompts, opts)).map((g) => g.ids));
      const s1 = await one.tokenStats(rows(5, 9), true);
      const s2 = await two.tokenStats(rows(5, 9), true);
      s1.forEach((s, i) => {
        expect(s2[i]!.logprobs.length).toBe(s.logprobs.length);
        s.logprobs.forEach((v, t) => expect(Math.abs(s2[i]!.logprobs[t]! - v)).toBeLessThan(1e-5));
        s.values!.forEach((v, t) => expect(Math.abs(s2[i]!.values![t]! - v)).toBeLessThan(1e-5));
      });
      for (const [step, loss] of [[0, 'sft'], [1, 'ppo'], [2, 'sft']] as const) {
        if (step === 1) expect(maxWeightDiff(one.model, two.model)).toBeLessThan(1e-2 * 1e-2);   // one AdamW step at lr 1e-2: within 1% of a step
        const batch = rows(6, 100 + step);
        const r1 = await one.trainStep(loss, batch, { valueCoef: 0.5 }, 1e-2, 1.0, 40);
        const r2 = await two.trainStep(loss, batch, { valueCoef: 0.5 }, 1e-2, 1.0, 40);
        // the first step is the same function of the same weights (token-weighted over the shards: a
        // row-weighted mean would be off by percents here, rows have 3-7 loss tokens); later steps
        // inherit AdamW's amplification of float-order noise in near-zero gradients
        const tol = step === 0 ? 1e-6 : 1e-3;
        expect(Math.abs(r2['losses/total']! - r1['losses/total']!)).toBeLessThan(tol * Math.abs(r1['losses/total']!));
        expect(Math.abs(r2['charts/gradNorm']! - r1['charts/gradNorm']!)).toBeLessThan(tol * r1['charts/gradNorm']!);
      }
      // the workers were resynced after each step: sampling across them is what this thread samples from the same weights
      const here = generate(two.model, tokenizer, prompts, { ...opts, stop: ['</answer>'], stopTokenIds: [tokenizer.eosTokenId, ...tokenizer.stopTokenIds] });
      expect((await two.generate(prompts, opts)).map((g) => g.ids)).toEqual(here.map((g) => g.tokens));
      const s0 = tokenScores(two.model, padRows(rows(5, 9), tokenizer.padTokenId).inputIds, { attentionMask: padRows(rows(5, 9), tokenizer.padTokenId).attentionMask, values: true });
      const s3 = await two.tokenStats(rows(5, 9), true);
      s3.forEach((s, i) => s.logprobs.forEach((v, t) => expect(Math.abs(s0.logprobs[i]![t]! - v)).toBeLessThan(1e-5)));
    } finally {
      await one.dispose(); await two.dispose();
    }
  });

  it('a value view trains on the main thread and the workers pick the new weights up', async () => {
    const { one, two } = pair(true);
    try {
      const prompts = [[3, 4, 5], [6, 7], [8, 9, 10]];
      const opts = { maxNewTokens: 5, temperature: 1, topP: 1, topK: 0, seed: 3 };
      await two.generate(prompts, opts);   // workers started with the initial weights
      const v1 = one.valueView([0.9, 0.999]); const v2 = two.valueView([0.9, 0.999]);
      for (let i = 0; i < 3; i++) {
        await v1.trainStep('value', rows(4, 50 + i), { valueClip: 0.5 }, 5e-2, 1.0);
        await v2.trainStep('value', rows(4, 50 + i), { valueClip: 0.5 }, 5e-2, 1.0);
      }
      expect(maxWeightDiff(one.model, two.model)).toBeLessThan(1e-4);
      const fresh = pair(true);
      expect(maxWeightDiff(one.model, fresh.one.model)).toBeGreaterThan(1e-4);   // the view did change the trunk
      await fresh.one.dispose(); await fresh.two.dispose();
      const s1 = await one.tokenStats(rows(4, 1), true);
      const s2 = await two.tokenStats(rows(4, 1), true);
      s1.forEach((s, i) => s.logprobs.forEach((v, t) => expect(Math.abs(s2[i]!.logprobs[t]! - v)).toBeLessThan(1e-4)));
      await v1.dispose(); await v2.dispose();
    } finally {
      await one.dispose(); await two.dispose();
    }
  });

  it('adapters enabled after the workers started: the workers restart with them and train only them', async () => {
    const { one, two } = pair(false);
    try {
      const prompts = [[3, 4, 5], [6, 7]];
      const opts = { maxNewTokens: 4, temperature: 1, topP: 1, topK: 0, seed: 5 };
      await two.generate(prompts, opts);   // workers started without adapters
      const lora = { rank: 2, alpha: 4, targetModules: ['q_proj', 'v_proj'] };
      await applyLora(one, lora, 3);
      await applyLora(two, lora, 3);
      const base = new Map([...two.model.namedWeights()].map(([k, v]) => [k, Float32Array.from(v.dataSync())]));
      for (let i = 0; i < 2; i++) {
        const r1 = await one.trainStep('sft', rows(6, 30 + i), {}, 1e-2, 1.0);
        const r2 = await two.trainStep('sft', rows(6, 30 + i), {}, 1e-2, 1.0);
        expect(Math.abs(r2['losses/total']! - r1['losses/total']!)).toBeLessThan(1e-3 * Math.abs(r1['losses/total']!));
      }
      for (const [k, v] of two.model.namedWeights()) expect(Array.from(v.dataSync()), k).toEqual(Array.from(base.get(k)!));
      const la = one.model.loraWeights(); let max = 0; let moved = 0;
      for (const [k, v] of two.model.loraWeights()) {
        const x = v.dataSync(); const y = la.get(k)!.dataSync();
        for (let i = 0; i < x.length; i++) { max = Math.max(max, Math.abs(x[i]! - y[i]!)); moved = Math.max(moved, Math.abs(x[i]!)); }
      }
      expect(moved).toBeGreaterThan(0);
      expect(max).toBeLessThan(2e-2 * 1e-2 * 2);   // two steps at lr 1e-2, within 2% of a step each
      const here = generate(two.model, tokenizer, prompts, { ...opts, stop: ['</answer>'], stopTokenIds: [tokenizer.eosTokenId, ...tokenizer.stopTokenIds] });
      expect((await two.generate(prompts, opts)).map((g) => g.ids)).toEqual(here.map((g) => g.tokens));
    } finally {
      await one.dispose(); await two.dispose();
    }
  });

  it('fails the step with the reason when a worker dies or the loss is unknown; the main thread is intact', async () => {
    const { one, two } = pair(false);
    try {
      await expect(two.trainStep('no-such-loss', rows(4, 2), {}, 1e-2, 1.0)).rejects.toThrow(/unknown loss "no-such-loss"/);
      await two.generate([[3, 4], [5, 6]], { maxNewTokens: 2, temperature: 1, topP: 1, topK: 0, seed: 1 });
      const pool = (two as unknown as { dp: { handles: Array<{ worker: { terminate(): Promise<number> } }> } }).dp;
      await pool.handles[0]!.worker.terminate();
      await expect(two.trainStep('sft', rows(4, 2), {}, 1e-2, 1.0)).rejects.toThrow(/data-parallel worker 0 exited/);
      // nothing was applied: the weights still equal the single-thread twin's
      expect(maxWeightDiff(one.model, two.model)).toBe(0);
    } finally {
      await one.dispose(); await two.dispose();
    }
  });
});
