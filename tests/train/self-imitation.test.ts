// rl.selfImitation (issue 34, curve (a)): after each RL step's update the policy replays its own distinct won turns
// (Oh et al. 2018). Checked here: which won turns the filters keep (a garbled or contradicting plan, an inexact written
// state, a format error are left out); the buffer keeps each (prompt, reply) once, drops the oldest at capacity and samples
// deterministically; the replayed rows' loss mask and weights (the move token `moveWeight`, the state contents out with
// maskStateSpans); one self-imitation step is the GRPO loss at ratio 1 with the current log-probs, no entropy and no KL, and
// its update raises the replayed reply's log-probability on the shipped base; the RL stage keeps the buffer in its state
// and a resume after a kill is exact; the export refuses it by name. The learning check of curve (a) with it is in
// tests/train/rl-learns-bandit.test.ts.
import { beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RlSectionSchema, RunConfigSchema, type RunConfigInput } from '../../core/api/run-config.js';
import type { TurnRecord } from '../../core/api/records.js';
import { hydraConfig, inexpressibleRlOptions } from '../../core/interop/export-bundle.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import { mergeConfig, presetConfig } from '../../core/train/presets.js';
import { loadRuntime, useBackend } from '../../core/train/runtime.js';
import { groupSpecs, playEpisodes, type RolloutResult } from '../../core/train/rollout.js';
import { rolloutDeps } from '../../core/train/episodes.js';
import type { TrainRow } from '../../core/train/runtime.js';
import {
  SelfImitationBuffer, selfImitationLeftOut, selfImitationRows, selfImitationSteps, type SelfImitationPolicy,
} from '../../core/train/self-imitation.js';
import { tempProject } from './helpers.js';
import { expectSameRun, runRl, weightHashes } from './rl-resume-helpers.js';
import { useTestBackend } from '../model/helpers.js';

beforeAll(async () => { await useTestBackend(); });

const BASE = fileURLToPath(new URL('../../resources/bases/frozenlake-compact', import.meta.url));
const SIL = RlSectionSchema.parse({}).selfImitation;
/** Curve (a) (issue 34): the one-step FrozenLake bandit in the shipped base's compact plain format. */
const BANDIT: RunConfigInput = {
  backend: 'wasm', workers: 0,
  env: { id: 'frozenlake', options: { isSlippery: false, p: 1, goalDistance: 1, maxSteps: 1 } },
  model: { source: 'checkpoint', path: BASE },
  template: { preset: 'tiny-compact-plain', responseFormat: 'plain' },
  stages: { rollout: { maxTurns: 1, maxNewTokens: 48 } },
} as RunConfigInput;

// a character tokenizer with the reply's tags as single tokens (as the tiny base's)
const SPECIAL = ['<think>', '</think>', '<answer>', '</answer>', '<observation>', '</observation>'];
const ALPHABET = [...SPECIAL, ...'abcdefghijklmnopqrstuvwxyzDLRUIGP_ .\n#'];
const decode = (ids: number[]) => ids.map((i) => ALPHABET[i]!).join('');
function encode(text: string): number[] {
  const out: number[] = [];
  for (let k = 0; k < text.length;) {
    const piece = SPECIAL.find((s) => text.startsWith(s, k)) ?? text[k]!;
    const id = ALPHABET.indexOf(piece);
    if (id < 0) throw new Error(`test tokenizer: no token for ${JSON.stringify(piece)}`);
    out.push(id);
    k += piece.length;
  }
  return out;
}

type Turn = Pick<TurnRecord, 'parsed' | 'flags' | 'wm'>;
function turn(reasoning: string | null, answer: string | null, extra: { formatError?: boolean; obsExact?: boolean; predExact?: boolean } = {}): Turn {
  const score = (exact: boolean | undefined) => (exact === undefined ? null : { exact } as NonNullable<TurnRecord['wm']['observation']>);
  return {
    parsed: {
      observation: null, reasoning, prediction: null, answer, actions: answer ? [answer] : [], unknownActions: [],
      formatError: extra.formatError ?? false, formatErrors: [],
    },
    flags: { formatError: extra.formatError ?? false, invalidAction: false, actionIsEffective: true },
    wm: { observation: score(extra.obsExact), prediction: score(extra.predExact) },
  };
}

describe('selfImitationLeftOut: which won turns enter the buffer', () => {
  it('plan: the reasoning\'s "I will try A." must name the answered move', () => {
    expect(selfImitationLeftOut(turn('I will try Left.', 'Left'), 'plan')).toBeNull();
    expect(selfImitationLeftOut(turn('I will try left.', ' Left'), 'plan')).toBeNull();   // case and spaces ignored
    expect(selfImitationLeftOut(turn('I will try Up.', 'Left'), 'plan')).toBe('plan names another move');
    // the drift seen without the filter (bench/results/rl-curves/README.md, session 4): a garbled plan
    expect(selfImitationLeftOut(turn('I Rightry Left.', 'Left'), 'plan')).toBe('no plan sentence');
    expect(selfImitationLeftOut(turn(null, 'Left'), 'plan')).toBe('no plan sentence');
  });
  it('well-formed: format, a legal move, exact written states; won: everything', () => {
    expect(selfImitationLeftOut(turn('I Rightry Left.', 'Left'), 'well-formed')).toBeNull();
    expect(selfImitationLeftOut(turn('I will try Left.', 'Left', { formatError: true }), 'well-formed')).toBe('format error');
    expect(selfImitationLeftOut(turn('x', null), 'well-formed')).toBe('no legal move in the answer');
    expect(selfImitationLeftOut(turn('I will try Left.', 'Left', { obsExact: true, predExact: false }), 'plan')).toBe('prediction not exact');
    expect(selfImitationLeftOut(turn('I will try Left.', 'Left', { obsExact: false, predExact: true }), 'well-formed')).toBe('observation not exact');
    expect(selfImitationLeftOut(turn('I will try Left.', 'Left', { obsExact: true, predExact: true }), 'plan')).toBeNull();
    expect(selfImitationLeftOut(turn('x', null, { formatError: true }), 'won')).toBeNull();
  });
  it('plan-only: the plan must name the answer and the format pass, but wrong written states do not keep a turn out', () => {
    expect(selfImitationLeftOut(turn('I will try Left.', 'Left', { obsExact: true, predExact: false }), 'plan-only')).toBeNull();
    expect(selfImitationLeftOut(turn('I will try Left.', 'Left', { obsExact: false, predExact: false }), 'plan-only')).toBeNull();
    expect(selfImitationLeftOut(turn('I will try Up.', 'Left', { obsExact: true, predExact: false }), 'plan-only')).toBe('plan names another move');
    expect(selfImitationLeftOut(turn('I will try Left.', 'Left', { formatError: true }), 'plan-only')).toBe('format error');
    expect(selfImitationLeftOut(turn(null, 'Left'), 'plan-only')).toBe('no plan sentence');
  });
});

function result(success: boolean, turns: Array<{ prompt: number[]; reply: number[]; t: Turn }>): Pick<RolloutResult, 'record' | 'tokens'> {
  return {
    record: { success, turns: turns.map((x) => x.t) } as unknown as RolloutResult['record'],
    tokens: turns.map((x) => ({ promptIds: x.prompt, responseIds: x.reply, logprobs: x.reply.map(() => -1) })),
  };
}

describe('SelfImitationBuffer', () => {
  it('keeps each won (prompt, reply) once, counts what it left out, and drops the oldest at capacity', () => {
    const good = turn('I will try Up.', 'Up'), bad = turn('I will try Down.', 'Up');
    const buffer = new SelfImitationBuffer(3);
    const first = buffer.addWins([
      result(true, [{ prompt: [1], reply: [2], t: good }]),
      result(true, [{ prompt: [1], reply: [2], t: good }]),      // the same turn won again
      result(false, [{ prompt: [9], reply: [9], t: good }]),     // lost: never
      result(true, [{ prompt: [1], reply: [3], t: bad }]),
    ], 'plan');
    expect(first).toEqual({ added: 1, known: 1, leftOut: { 'plan names another move': 1 } });
    buffer.addWins([result(true, [{ prompt: [4], reply: [5], t: good }, { prompt: [4, 5, 6], reply: [7], t: good }])], 'plan');
    expect(buffer.size).toBe(3);
    buffer.add({ promptIds: [8], responseIds: [8] });
    expect(buffer.toJSON().map((e) => e.promptIds)).toEqual([[4], [4, 5, 6], [8]]);   // [1] was the oldest
    // restored from its JSON (the stage state): the same entries, the same draws
    const again = new SelfImitationBuffer(3, JSON.parse(JSON.stringify(buffer.toJSON())));
    expect(again.sample(5, 11)).toEqual(buffer.sample(5, 11));
    expect(buffer.sample(200, 3).length).toBe(200);
    expect(new Set(buffer.sample(200, 3).map((e) => e.promptIds.join())).size).toBe(3);
    expect(new SelfImitationBuffer(2).sample(4, 1)).toEqual([]);
    expect(() => new SelfImitationBuffer(0)).toThrow(/capacity must be a positive whole number; received 0/);
  });

  it("source 'rewarded-turns': every turn with a reward above 0, of any episode (turn-level credit), priority 1", () => {
    const good = turn('I will try Up.', 'Up');
    const at = (reward: number) => ({ ...good, reward }) as Turn;
    const buffer = new SelfImitationBuffer(8);
    const added = buffer.addWins([
      result(false, [{ prompt: [1], reply: [2], t: at(0.1) }, { prompt: [3], reply: [2], t: at(-0.1) }, { prompt: [4], reply: [2], t: at(0) }]),
      result(true, [{ prompt: [5], reply: [2], t: at(-0.1) }, { prompt: [6], reply: [2], t: at(1.1) }]),
    ], 'plan', 0.5, 'rewarded-turns');
    expect(added).toEqual({ added: 2, known: 0, leftOut: {} });
    expect(buffer.toJSON().map((e) => [e.promptIds[0], e.priority])).toEqual([[1, 1], [6, 1]]);
    // the default source takes every turn of the won episode only, whatever its own reward
    const wins = new SelfImitationBuffer(8);
    wins.addWins([
      result(false, [{ prompt: [1], reply: [2], t: at(0.1) }]),
      result(true, [{ prompt: [5], reply: [2], t: at(-0.1) }, { prompt: [6], reply: [2], t: at(1.1) }]),
    ], 'plan');
    expect(wins.toJSON().map((e) => e.promptIds[0])).toEqual([5, 6]);
  });

  it('gamma < 1: turn k of a won episode of T turns has priority gamma^(T-1-k), and draws follow the priorities', () => {
    const good = turn('I will try Up.', 'Up');
    const buffer = new SelfImitationBuffer(8);
    buffer.addWins([result(true, [0, 1, 2].map((k) => ({ prompt: [k], reply: [9], t: good })))], 'plan', 0.5);
    expect(buffer.toJSON().map((e) => e.priority)).toEqual([0.25, 0.5, 1]);
    // the same turn won again as the last turn of a shorter episode: it keeps the larger priority
    buffer.addWins([result(true, [{ prompt: [0], reply: [9], t: good }])], 'plan', 0.5);
    expect(buffer.toJSON().map((e) => e.priority)).toEqual([1, 0.5, 1]);
    const draws = buffer.sample(25_000, 7);
    const share = (k: number) => draws.filter((e) => e.promptIds[0] === k).length / draws.length;
    expect(share(0)).toBeCloseTo(0.4, 1);
    expect(share(1)).toBeCloseTo(0.2, 1);
    expect(share(2)).toBeCloseTo(0.4, 1);
    // restored from the stage state with its priorities
    expect(new SelfImitationBuffer(8, JSON.parse(JSON.stringify(buffer.toJSON()))).sample(50, 3)).toEqual(buffer.sample(50, 3));
  });
});

describe('selfImitationRows and one self-imitation step', () => {
  const reply = '<observation>\n#G\n</observation>I will try Up.</think><answer>Up</answer>';
  it('trains the reply tokens, the move token at moveWeight; maskStateSpans leaves the state contents out', () => {
    const prompt = encode('<think>');
    const [row] = selfImitationRows([{ promptIds: prompt, responseIds: encode(reply) }], decode, { moveWeight: 20, maskStateSpans: false });
    const ids = row!.ids;
    expect(ids).toEqual([...prompt, ...encode(reply)]);
    expect(row!.arrays.lossMask).toEqual(ids.map((_, t) => (t >= prompt.length ? 1 : 0)));
    const move = prompt.length + encode('<observation>\n#G\n</observation>I will try ').length;
    expect(row!.arrays.advantages!.flatMap((a, t) => (a === 20 ? [t] : []))).toEqual([move]);
    expect(row!.arrays.advantages!.filter((a) => a === 1).length).toBe(encode(reply).length - 1);
    const [masked] = selfImitationRows([{ promptIds: prompt, responseIds: encode(reply) }], decode, { moveWeight: 20, maskStateSpans: true });
    const left = masked!.arrays.lossMask!.map((m, t) => (m === 0 && t >= prompt.length ? decode([ids[t]!]) : '')).join('');
    expect(left).toBe('\n#G\n');
  });

  it('one step: the GRPO loss at ratio 1 (old = current log-probs), no entropy, no KL, at the self-imitation lr', async () => {
    const calls: Array<{ loss: string; rows: TrainRow[]; params: Record<string, unknown>; lr: number }> = [];
    const fake: SelfImitationPolicy = {
      tokenizer: { decode },
      tokenStats: async (rows) => rows.map((r) => ({ logprobs: r.ids.map(() => -0.5) })),
      trainStep: async (loss, rows, params, lr) => { calls.push({ loss, rows, params, lr }); return { 'losses/policy': -1 }; },
    };
    const buffer = new SelfImitationBuffer(8, [0, 1, 2, 3, 4].map((k) => ({ promptIds: [k, ...encode('<think>')], responseIds: encode(reply) })));
    const out = await selfImitationSteps(fake, buffer, { ...SIL, steps: 3, batch: 4 }, {
      lr: 2e-3, gradClip: 1, maskStateSpans: false, lossParams: { clipLow: 0.2, entropyCoef: 0.1, klCoef: 0.5 }, seed: 1,
    });
    expect(out.steps).toBe(3);
    expect(out.crossEntropy).toBeCloseTo(0.5, 12);   // every token at log-prob -0.5: the weighted mean NLL is 0.5
    expect(calls.map((c) => [c.loss, c.lr, c.rows.length, c.params.entropyCoef, c.params.klCoef, c.params.clipLow])).toEqual(
      Array(3).fill(['grpo', 2e-3, 4, 0, 0, 0.2]));
    expect(calls[0]!.rows[0]!.arrays.oldLogprobs).toEqual(calls[0]!.rows[0]!.ids.map(() => -0.5));
    // the batch is min(batch, buffer size) draws
    const small = new SelfImitationBuffer(8, [{ promptIds: [1], responseIds: encode(reply) }]);
    await selfImitationSteps(fake, small, { ...SIL, steps: 1, batch: 4 }, { lr: 1, gradClip: 1, maskStateSpans: false, lossParams: {}, seed: 1 });
    expect(calls.at(-1)!.rows.length).toBe(1);
    expect((await selfImitationSteps(fake, new SelfImitationBuffer(2), { ...SIL, steps: 3 }, {
      lr: 1, gradClip: 1, maskStateSpans: false, lossParams: {}, seed: 1,
    })).steps).toBe(0);
    // minBuffer: no replay until the buffer holds that many turns (5 here)
    const opts = { lr: 1, gradClip: 1, maskStateSpans: false, lossParams: {}, seed: 1 };
    expect((await selfImitationSteps(fake, buffer, { ...SIL, steps: 2, minBuffer: 6 }, opts)).steps).toBe(0);
    expect((await selfImitationSteps(fake, buffer, { ...SIL, steps: 2, minBuffer: 5 }, opts)).steps).toBe(2);
  });

  it('on the shipped base, replaying a won reply raises its log-probability and most at the move', async () => {
    const config = RunConfigSchema.parse(mergeConfig(presetConfig('vanilla-rl', 'quick', BANDIT) as Record<string, unknown>, BANDIT as Record<string, unknown>));
    await useBackend(config);
    const policy = await loadRuntime(BASE, { valueHead: false });
    try {
      policy.ensureOptimizer(0, [0.9, 0.999]);
      // a real prompt of curve (a), as the rollout renders it
      const limits = config.stages.rollout;
      const [played] = await playEpisodes(groupSpecs('t', config.seeds.rlStart, 0, 1, 1), limits, 5, rolloutDeps(config, policy, limits, { runId: 't', stage: 'rl', step: 0 }));
      const prompt = played!.tokens[0]!.promptIds;
      const responseIds = policy.tokenizer.encode('I will try Right.</think><answer>Right</answer>');
      const buffer = new SelfImitationBuffer(4, [{ promptIds: prompt, responseIds }]);
      const logp = async () => (await policy.tokenStats([{ ids: [...prompt, ...responseIds] }], false))[0]!.logprobs.slice(prompt.length);
      const before = await logp();
      const out = await selfImitationSteps(policy, buffer, { ...SIL, steps: 2, batch: 2 }, {
        // a fresh AdamW's first steps move every weight by ~lr (sign steps): at 2e-3 on one row they overshoot this move
        lr: 1e-4, gradClip: 1, maskStateSpans: false, lossParams: { clipLow: 0.2, clipHigh: 0.28, dualClip: 3 }, seed: 0,
      });
      expect(out.steps).toBe(2);
      const after = await logp();
      const move = 'I will try '.length;   // character tokens
      expect(after.reduce((a, b) => a + b, 0)).toBeGreaterThan(before.reduce((a, b) => a + b, 0));
      // the move (about ln 4 before: the base is state-blind) gains most
      const gains = after.map((x, k) => x - before[k]!);
      expect(gains[move]).toBeGreaterThan(0.05);
      expect(gains.indexOf(Math.max(...gains))).toBe(move);
    } finally {
      policy.dispose();
    }
  }, 120_000);
});

describe('the RL stage with self-imitation', () => {
  // the one-step bandit of curve (a) on the shipped base: wins from the first step, so the buffer fills
  const overrides: RunConfigInput = {
    ...BANDIT,
    seeds: { base: 3 },
    stages: {
      ...BANDIT.stages, plan: { order: ['rl'] },
      rl: { algorithm: 'grpo', steps: 3, groups: 4, groupSize: 2, passAtKEvery: 1, passAtKPuzzles: 2, selfImitation: { steps: 2, batch: 4, lr: 2e-3 } },
    },
  } as RunConfigInput;
  let reference = '';
  beforeAll(async () => {
    const run = await runRl(tempProject('spa-sil-'), 'ref', overrides);
    expect(run.outcome.status).toBe('completed');
    reference = run.runDir;
  }, 240_000);

  it('logs the buffer per step and keeps it in the stage state', () => {
    const points = readFileSync(join(reference, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { stage: string; step: number; values: Record<string, number> })
      .filter((p) => p.stage === 'rl' && 'sil/buffer' in p.values);
    expect(points.map((p) => p.step)).toEqual([1, 2, 3]);
    expect(points.every((p) => p.values['sil/steps'] === 2 || p.values['sil/buffer'] === 0)).toBe(true);
    const buffer = points.at(-1)!.values['sil/buffer']!;
    expect(buffer).toBeGreaterThan(0);
    expect(points.reduce((a, p) => a + p.values['sil/added']!, 0)).toBe(buffer);
    const state = JSON.parse(readFileSync(join(reference, 'stages', 'rl', 'state.json'), 'utf8')) as { selfImitation: unknown[] };
    expect(state.selfImitation.length).toBe(buffer);
  });

  it('a kill right after the state of step 1: the resumed run restores the buffer and matches the reference exactly', async () => {
    const project = tempProject('spa-sil-');
    const first = await runRl(project, 'r', overrides, { kill: { after: 'saveState', nextStep: 1 } });
    expect(first.outcome.status).toBe('failed');
    const second = await runRl(project, 'r', overrides);
    expect(second.outcome.status).toBe('completed');
    expect(second.events.some((e) => e.type === 'log' && /self-imitation buffer restored with \d+ turns/.test(e.message))).toBe(true);
    expectSameRun(second.runDir, reference);
    expect(await weightHashes(second.runDir)).toEqual(await weightHashes(reference));
  }, 240_000);

  it('moments own: the replay\'s own AdamW moments go in the resume point, and a resume after a kill is exact', async () => {
    const own = { ...overrides, stages: { ...overrides.stages, rl: { ...(overrides.stages!.rl as object), selfImitation: { steps: 2, batch: 4, lr: 2e-3, moments: 'own' } } } } as RunConfigInput;
    const ref = await runRl(tempProject('spa-sil-own-'), 'ref', own);
    expect(ref.outcome.status).toBe('completed');
    // another optimizer state: the weights differ from the shared-moments reference
    expect(await weightHashes(ref.runDir)).not.toEqual(await weightHashes(reference));
    const project = tempProject('spa-sil-own-');
    const first = await runRl(project, 'r', own, { kill: { after: 'saveState', nextStep: 1 } });
    expect(first.outcome.status).toBe('failed');
    expect(existsSync(join(first.runDir, 'checkpoints', 'rl-latest', 'optimizer.value.safetensors'))).toBe(true);
    const second = await runRl(project, 'r', own);
    expect(second.outcome.status).toBe('completed');
    expectSameRun(second.runDir, ref.runDir);
    expect(await weightHashes(second.runDir)).toEqual(await weightHashes(ref.runDir));
    // refused with the shared trunk's critic, whose value step holds the second set of moments
    const ppo = { ...own, stages: { ...own.stages, rl: { ...(own.stages!.rl as object), algorithm: 'ppo' } } } as RunConfigInput;
    const refused = await runRl(tempProject('spa-sil-own-'), 'p', ppo);
    expect(refused.outcome.status).toBe('failed');
    expect(JSON.stringify(refused.events)).toMatch(/moments 'own' needs a critic-free algorithm/);
  }, 240_000);

  it("source 'rewarded-turns' on the 4x4 lake with progressReward: the buffer takes every rewarded turn, lost episodes' too", async () => {
    const lake = {
      ...overrides,
      env: { id: 'frozenlake', options: { isSlippery: false, randomStartGoal: true, progressReward: 0.1 } },
      stages: {
        ...overrides.stages, rollout: { maxTurns: 4, maxNewTokens: 48 },
        rl: { algorithm: 'grpo', steps: 2, groups: 4, groupSize: 2, passAtKEvery: 0, selfImitation: { steps: 1, batch: 4, lr: 2e-3, filter: 'won', source: 'rewarded-turns' } },
      },
    } as RunConfigInput;
    const run = await runRl(tempProject('spa-sil-turns-'), 'lake', lake);
    expect(run.outcome.status).toBe('completed');
    // every (prompt, reply) of the step's rollouts whose turn reward is above 0, distinct, is what the buffer holds
    const rewarded = new Set<string>();
    let fromLost = 0;
    for (const step of [0, 1]) {
      const file = join(run.runDir, 'rollouts', `rl-${String(step).padStart(6, '0')}.jsonl`);
      for (const line of readFileSync(file, 'utf8').trim().split('\n')) {
        const ep = JSON.parse(line) as { success: boolean; turns: Array<{ reward: number; prompt: unknown; response: string }> };
        ep.turns.forEach((t, k) => {
          if (!(t.reward > 0)) return;
          // a turn's prompt is the chat so far: the episode's turns up to it (the record keeps each turn's new state only)
          rewarded.add(JSON.stringify(ep.turns.slice(0, k + 1).map((u) => [u.prompt, u.response])));
          if (!ep.success) fromLost++;
        });
      }
    }
    expect(fromLost).toBeGreaterThan(0);
    const state = JSON.parse(readFileSync(join(run.runDir, 'stages', 'rl', 'state.json'), 'utf8')) as { selfImitation: Array<{ priority: number }> };
    expect(state.selfImitation.length).toBe(rewarded.size);
    expect(state.selfImitation.every((e) => e.priority === 1)).toBe(true);
  }, 240_000);

  it('the export refuses it by name (RAGEN v1 has no self-imitation)', () => {
    const config = RunConfigSchema.parse(mergeConfig(presetConfig('vanilla-rl', 'quick', overrides) as Record<string, unknown>, overrides as Record<string, unknown>));
    expect(inexpressibleRlOptions(config.stages.rl).map(([o]) => o)).toContain('rl.selfImitation.steps 2');
    expect(() => hydraConfig(config, builtinTemplate(config.template.preset, config.template.responseFormat), 'x', 'm')).toThrow(/rl\.selfImitation\.steps 2 \(RAGEN v1 has no self-imitation/);
    const off = { ...config.stages.rl, selfImitation: { ...config.stages.rl.selfImitation, steps: 0 } };
    expect(inexpressibleRlOptions(off).map(([o]) => o).some((o) => o.startsWith('rl.selfImitation'))).toBe(false);
  });
});
