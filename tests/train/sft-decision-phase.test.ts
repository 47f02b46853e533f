// sft.decisionSteps (ours, issue 34 item 5): after SFT's epochs, SFT on the lookahead rows alone with their moves weighted.
// The rows keep every reply target and weigh each reply's move letter sft.decisionMoveWeight; the batches are seeded passes over every row; the phase
// runs its steps, ends the stage on its own checkpoint, refuses a run with no lookahead rows by name, and a stop inside it
// resumes to the uninterrupted run's weights and metrics. TF.js wasm on one thread.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunConfigSchema, type RunConfigInput } from '../../core/api/run-config.js';
import { createRuntime } from '../../core/train/runtime.js';
import { decisionBatches, decisionRows, toTrainRows, type SftState } from '../../core/train/sft.js';
import { runPreset, tempProject } from './helpers.js';
import { metricValues } from './rl-resume-helpers.js';

const TINY = { hidden_size: 8, intermediate_size: 16, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 2, max_position_embeddings: 512 };
const reply = (move: string) => `<think><observation>\nP_\n</observation>\nI will try ${move}.\n<prediction>\n_P\n</prediction></think><answer>${move}</answer>`;

describe('decisionRows and decisionBatches', () => {
  it("weighs each reply's move letter in a lookahead game and keeps the rest of the reply, and leaves out a row without one", async () => {
    const runtime = await createRuntime(RunConfigSchema.parse({ model: { overrides: TINY } }), { seed: 1, valueHead: false });
    const decode = (ids: number[]) => runtime.tokenizer.decode(ids);
    const game = [
      { role: 'user' as const, content: 'state 1' }, { role: 'assistant' as const, content: reply('Right') },
      { role: 'user' as const, content: 'state 2' }, { role: 'assistant' as const, content: reply('Down') },
    ];
    const rows = toTrainRows(runtime, [{ messages: game, lookahead: true }, { messages: game.slice(0, 2), drill: true }], 512, false);
    expect(rows).toHaveLength(2);
    const out = decisionRows(rows, 20, decode);
    expect(out).toHaveLength(1);   // the drill's move is not a target of its row, so it has no move to weigh
    const w = out[0]!.arrays.aggregationWeight!;
    expect(w.flatMap((x, t) => (x === 20 ? [decode([out[0]!.ids[t]!])] : []))).toEqual(['R', 'D']);
    expect(w.filter((x) => x !== 1 && x !== 20)).toEqual([]);
    // the whole reply stays a target: the move alone made the model write move letters everywhere
    expect(out[0]!.arrays.lossMask).toEqual(rows[0]!.arrays.lossMask);
    expect(out[0]!.ids).toEqual(rows[0]!.ids);
    runtime.dispose();
  });

  it('draws seeded passes over every row, the same at every call', () => {
    const b = decisionBatches(5, 2, 5, 7);
    expect(b).toHaveLength(5);
    expect(b.every((x) => x.length === 2)).toBe(true);
    expect([...b[0]!, ...b[1]!, b[2]![0]].sort()).toEqual([0, 1, 2, 3, 4]);   // the first pass sees every row once
    expect(decisionBatches(5, 2, 5, 7)).toEqual(b);
    expect(decisionBatches(5, 2, 5, 8)).not.toEqual(b);
    expect(decisionBatches(3, 8, 2, 1).every((x) => x.length === 3)).toBe(true);   // a batch is at most every row
  });
});

const OVERRIDES: RunConfigInput = {
  backend: 'wasm', workers: 0,
  env: { id: 'frozenlake', options: { randomStartGoal: true } },
  stages: {
    plan: { order: ['selfplay', 'sft'] },
    selfplay: { games: 1, drills: 4, lookahead: 6, lookaheadTurns: 2, lookaheadForm: 'none', valFraction: 0 },
    sft: { epochs: 1, batchSize: 2, decisionSteps: 4 },
  },
};

describe('the SFT stage with sft.decisionSteps', () => {
  it('runs the steps, ends on sft-decision, and a stop inside the phase resumes to the same weights', async () => {
    const whole = await runPreset(tempProject('spa-sft-decision-'), 'sft-only', 'w', OVERRIDES);
    expect(whole.outcome.status).toBe('completed');
    const m = metricValues(whole.runDir);
    const decision = [...m].filter(([k]) => k.endsWith('/losses/sftDecision'));
    expect(decision).toHaveLength(4);
    expect(decision.every(([, v]) => Number.isFinite(v) && v > 0)).toBe(true);
    expect(whole.events.some((e) => e.type === 'log' && /decision phase, 4 steps on \d+ lookahead rows, their \d+ moves weighted 20, with 1 of 4 drill rows a step/.test(e.message))).toBe(true);
    expect(existsSync(join(whole.runDir, 'checkpoints', 'sft-decision', 'model.safetensors'))).toBe(true);

    const project = tempProject('spa-sft-decision-');
    const controller = new AbortController();
    let seen = 0;
    const first = await runPreset(project, 'sft-only', 'r', OVERRIDES, {
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'metric' && e.point.stage === 'sft' && 'losses/sftDecision' in e.point.values && ++seen === 2) controller.abort();
      },
    });
    expect(first.outcome.status).toBe('stopped');
    const state = JSON.parse(readFileSync(join(first.runDir, 'stages', 'sft', 'state.json'), 'utf8')) as SftState;
    expect(state).toMatchObject({ epoch: 1, decisionStep: 2 });
    const second = await runPreset(project, 'sft-only', 'r', OVERRIDES);
    expect(second.outcome.status).toBe('completed');
    expect(second.events.some((e) => e.type === 'log' && /decision phase, .* resuming at step 3/.test(e.message))).toBe(true);
    const weights = (dir: string) => readFileSync(join(dir, 'checkpoints', 'sft-decision', 'model.safetensors'));
    expect(weights(second.runDir).equals(weights(whole.runDir))).toBe(true);
    const sftMetrics = (x: Map<string, number>) => new Map([...x].filter(([k]) => k.startsWith('sft/') && !k.includes('charts/')));
    expect(sftMetrics(metricValues(second.runDir))).toEqual(sftMetrics(m));
  }, 240_000);

  it('refuses the phase by name when self-play wrote no lookahead rows', async () => {
    const run = await runPreset(tempProject('spa-sft-decision-'), 'sft-only', 'n', {
      ...OVERRIDES, stages: { ...OVERRIDES.stages, selfplay: { games: 2, drills: 0, lookahead: 0, valFraction: 0 } },
    });
    expect(run.outcome.status).toBe('failed');
    expect(JSON.stringify(run.events)).toMatch(/sft\.decisionSteps needs lookahead rows/);
  }, 120_000);
});
