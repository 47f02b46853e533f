// The lookahead reply (issue 34, ours): the candidate line reads each action's landing cell off the true board, the one-step
// rule picks goal > nearer ice > ice > edge > hole, the writer's reply parses as a world-model reply whose prediction is the
// chosen move's true next state, and SFT trains the whole lookahead reply while maskActionSpans leaves the policy's own plan
// and answer out of the loss.
import { describe, expect, it } from 'vitest';
import { FrozenLakeEnv, frozenLakeLookahead, lookaheadChoice } from '../../core/envs/frozen-lake.js';
import { EpisodeSession, lookaheadResponse } from '../../core/prompts/session.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import { parseResponse } from '../../core/prompts/response.js';
import { isLookaheadLine, lookaheadLine } from '../../core/prompts/reply-format.js';
import { Rng } from '../../core/util/rng.js';
import { RunConfigSchema } from '../../core/api/run-config.js';
import { createRuntime } from '../../core/train/runtime.js';
import { toTrainRows } from '../../core/train/sft.js';

function session(map: string[]): EpisodeSession {
  return new EpisodeSession(new FrozenLakeEnv(), builtinTemplate('tiny-compact'), {
    seed: 1, envOptions: { map, isSlippery: false }, maxTurns: 10, maxActionsPerTurn: 1,
  });
}

describe('frozenLakeLookahead and lookaheadChoice', () => {
  // S at (1,1): Left ice (nearer? G at (0,3): no), Down hole, Right ice (nearer), Up ice (nearer)
  const map = ['FFFG', 'FSFF', 'FHFF', 'FFFF'];
  it('reads the landing cell of each intended move and whether it is nearer the goal', () => {
    const outcomes = frozenLakeLookahead(session(map).env.board());
    expect(outcomes).toEqual([
      { action: 'Left', cell: '_', closer: false },
      { action: 'Down', cell: 'O', closer: false },
      { action: 'Right', cell: '_', closer: true },
      { action: 'Up', cell: '_', closer: true },
    ]);
    expect(lookaheadLine(outcomes)).toBe('Left _, Down O, Right _, Up _.');
  });
  it('marks the edge # and the goal G, and the rule takes the goal', () => {
    const outcomes = frozenLakeLookahead(session(['SGFF', 'HFFF', 'FFFF', 'FFFF']).env.board());
    expect(outcomes.map((o) => o.cell)).toEqual(['#', 'O', 'G', '#']);
    for (let i = 0; i < 20; i++) expect(lookaheadChoice(outcomes, () => i / 20)).toBe('Right');
  });
  it('breaks ties among the best class at random, and ranks edge above hole', () => {
    const picks = new Set<string>();
    const rng = new Rng(3);
    for (let i = 0; i < 200; i++) picks.add(lookaheadChoice(frozenLakeLookahead(session(map).env.board()), () => rng.next()));
    expect([...picks].sort()).toEqual(['Right', 'Up']);
    const cornered = [{ action: 'Left', cell: '#' as const, closer: false }, { action: 'Down', cell: 'O' as const, closer: false }];
    expect(lookaheadChoice(cornered, () => 0.99)).toBe('Left');
  });
  it('refuses a board with no next move and another env', () => {
    const s = session(['SHFF', 'FFFF', 'FFFF', 'FFFG']);
    s.applyResponse('<think><observation>\nx\n</observation>\n<prediction>\nx\n</prediction></think><answer>Right</answer>');
    expect(() => frozenLakeLookahead(s.env.board())).toThrow(/no next move/);
    expect(() => frozenLakeLookahead({ env: 'sokoban', rows: 1, cols: 1, cells: [['floor']] } as never)).toThrow(/FrozenLake only/);
  });
});

describe('lookaheadResponse', () => {
  it('writes a well-formed world-model reply: observation, candidates, the rule\'s plan, its true next state, the answer', () => {
    const s = session(['FFFF', 'FSGF', 'FHFF', 'FFFF']);
    const reply = lookaheadResponse(s, new Rng(1));
    expect(reply).toBe('<think><observation>\n____\n_PG_\n_O__\n____\n</observation>\nLeft _, Down O, Right G, Up _.\nI will try Right.\n' +
      '<prediction>\n____\n__√_\n_O__\n____\n</prediction></think><answer>Right</answer>');
    const parsed = parseResponse(reply, { legalActions: s.legalActions(), maxActionsPerTurn: 1, responseFormat: 'world-model', strict: true });
    expect(parsed.formatError).toBe(false);
    expect(parsed.actions).toEqual(['Right']);
  });
  it("form 'grids': each action with the state its intended move gives (no slip), then the rule's plan and the true next state", () => {
    const s = new EpisodeSession(new FrozenLakeEnv(), builtinTemplate('tiny-compact'), {
      seed: 1, envOptions: { map: ['FFFF', 'FSGF', 'FHFF', 'FFFF'], isSlippery: true, successRate: 0.8 }, maxTurns: 10, maxActionsPerTurn: 1,
    });
    const reply = lookaheadResponse(s, new Rng(1), 'rule', 'grids');
    const candidates = 'Left:\n____\nP_G_\n_O__\n____\nDown:\n____\n__G_\n_X__\n____\nRight:\n____\n__√_\n_O__\n____\nUp:\n_P__\n__G_\n_O__\n____';
    expect(reply.startsWith(`<think><observation>\n____\n_PG_\n_O__\n____\n</observation>\n${candidates}\nI will try Right.\n<prediction>\n`)).toBe(true);
    expect(isLookaheadLine(candidates)).toBe(true);
    // the episode is not disturbed: the session still plays from the start, and the reply parses as a world-model reply
    expect(s.stateText()).toBe('____\n_PG_\n_O__\n____');
    expect(parseResponse(reply, { legalActions: s.legalActions(), maxActionsPerTurn: 1, responseFormat: 'world-model', strict: true }).formatError).toBe(false);
    expect(isLookaheadLine('I think\nsomething: here')).toBe(false);
  });
  it('refuses a plain-format session', () => {
    const s = new EpisodeSession(new FrozenLakeEnv(), builtinTemplate('tiny-compact-plain'), { seed: 1, envOptions: { isSlippery: false } });
    expect(() => lookaheadResponse(s, new Rng(1))).toThrow(/world-model reply/);
  });
});

describe('SFT masks of lookahead and policy rows (sft.maskActionSpans)', () => {
  const config = RunConfigSchema.parse({ model: { overrides: { hidden_size: 8, intermediate_size: 16, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 2, max_position_embeddings: 512 } } });
  const reply = '<think><observation>\nP_\n</observation>\nI will try Right.\n<prediction>\n_P\n</prediction></think><answer>Right</answer>';
  const messages = [{ role: 'system' as const, content: 's' }, { role: 'user' as const, content: 'state' }, { role: 'assistant' as const, content: reply }];
  const targets = (mask: number[]) => mask.reduce((a, b) => a + b, 0);
  it('a policy row trains its whole reply unless maskActionSpans; then only its state contents, as a drill; a lookahead row always all', async () => {
    const runtime = await createRuntime(config, { seed: 1, valueHead: false });
    const [full, masked, drill, lookahead] = [
      toTrainRows(runtime, [{ messages }], 512, false),
      toTrainRows(runtime, [{ messages }], 512, false, true),
      toTrainRows(runtime, [{ messages, drill: true }], 512, false),
      toTrainRows(runtime, [{ messages, lookahead: true }], 512, false, true),
    ].map((rows) => rows[0]!.arrays.lossMask!);
    expect(targets(masked)).toBe(targets(drill));
    expect(targets(masked)).toBeLessThan(targets(full));
    expect(targets(lookahead)).toBe(targets(full));
    // both masks together leave a policy row nothing to train: it is left out, as drills are under maskStateSpans
    expect(toTrainRows(runtime, [{ messages }], 512, true, true)).toHaveLength(0);
    expect(toTrainRows(runtime, [{ messages, lookahead: true }], 512, true, true)).toHaveLength(1);
    runtime.dispose();
  });
});

describe('the candidate line is a prediction in the SFT masks (lookaheadLineRange)', () => {
  const withLine = '<think><observation>\nP_\n</observation>\nLeft #, Down #, Right _, Up #.\nI will try Right.\n<prediction>\n_P\n</prediction></think><answer>Right</answer>';
  it('finds the line between the observation and the plan, and nothing in a paper-order reply or free reasoning', async () => {
    const { lookaheadLineRange } = await import('../../core/train/sft-mask.js');
    const r = lookaheadLineRange(withLine)!;
    expect(withLine.slice(r[0], r[1])).toBe('Left #, Down #, Right _, Up #.');
    expect(lookaheadLineRange(withLine.replace('Left #, Down #, Right _, Up #.\n', ''))).toBeNull();
    expect(lookaheadLineRange(withLine.replace('Left #, Down #, Right _, Up #.', 'I think the goal is near.'))).toBeNull();
  });
  it('a drill row trains the line with the states (not the move); maskStateSpans drops it with them', async () => {
    const config = RunConfigSchema.parse({ model: { overrides: { hidden_size: 8, intermediate_size: 16, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 2, max_position_embeddings: 512 } } });
    const runtime = await createRuntime(config, { seed: 1, valueHead: false });
    const msgs = (content: string) => [{ role: 'user' as const, content: 'state' }, { role: 'assistant' as const, content }];
    const count = (content: string, drill: boolean, maskStateSpans: boolean) =>
      toTrainRows(runtime, [{ messages: msgs(content), drill }], 512, maskStateSpans)[0]!.arrays.lossMask!.reduce((a, b) => a + b, 0);
    const paper = withLine.replace('Left #, Down #, Right _, Up #.\n', '');
    // the line is 30 characters: a character-level tokenizer trains 30 more targets on the drill with the line
    expect(count(withLine, true, false) - count(paper, true, false)).toBe('Left #, Down #, Right _, Up #.'.length);
    // a policy row with masked states: the line is masked too (only the newline after it is a new target)
    expect(count(withLine, false, true) - count(paper, false, true)).toBe(1);
    runtime.dispose();
  });
});

describe('pairedPassAt1Gain', () => {
  it('averages per-puzzle differences of the puzzles both evaluations played, with a bootstrap interval', async () => {
    const { pairedPassAt1Gain } = await import('../../core/train/evaluate-model.js');
    const start = [{ seed: 1, n: 4, c: 1 }, { seed: 2, n: 4, c: 0 }, { seed: 3, n: 4, c: 4 }];
    const end = [{ seed: 1, n: 4, c: 3 }, { seed: 2, n: 4, c: 2 }, { seed: 4, n: 4, c: 4 }];
    const g = pairedPassAt1Gain(start, end)!;
    expect(g.puzzles).toBe(2);
    expect(g.mean).toBeCloseTo(0.5, 10);
    expect(g.low).toBeCloseTo(0.5, 10);    // both differences are 0.5: no spread
    expect(pairedPassAt1Gain(start, [{ seed: 9, n: 4, c: 1 }])).toBeNull();
    const mixed = pairedPassAt1Gain([{ seed: 1, n: 2, c: 0 }, { seed: 2, n: 2, c: 2 }], [{ seed: 1, n: 2, c: 2 }, { seed: 2, n: 2, c: 0 }])!;
    expect(mixed.mean).toBeCloseTo(0, 10);
    expect(mixed.low).toBeLessThan(0);
    expect(mixed.high).toBeGreaterThan(0);
  });
});

describe('forcedPredictions in a lookahead run', () => {
  it("lets the model write its candidates first, then forces the action after them; a paper-order plan is dropped", async () => {
    const { forcedPredictions } = await import('../../core/train/world-model-check.js');
    const prompts: string[] = [];
    const runtime = {
      encodePrompt: (_m: unknown, prefix: string) => { prompts.push(prefix); return [prompts.length - 1]; },
      generate: async (ids: number[][]) => ids.map(([i]) => {
        const p = prompts[i!]!;
        if (p.endsWith('</observation>\n')) return { text: p.includes('PAPER') ? 'I will try Up.' : 'Left:\nP_\nRight:\n_P\nI will try' };
        return { text: '_P\n</prediction>' };
      }),
    };
    const request = (observation: string) => ({ messages: [], generationPrefix: '<think>', observation, actions: ['Right'], truth: { env: 'frozenlake', rows: 1, cols: 2, cells: [['frozen', 'player']] } as never });
    const template = builtinTemplate('tiny-compact');
    const sampling = { maxNewTokens: 64, temperature: 0, topP: 1, topK: 0, seed: 0 };
    const out = await forcedPredictions(runtime as never, [request('P_'), request('PAPER')],
      { envId: 'frozenlake', template: { ...template, responseFormat: 'plain' }, maxPrompt: 64, sampling, lookahead: true });
    expect(out[0]!.prefix).toBe('<think><observation>\nP_\n</observation>\nLeft:\nP_\nRight:\n_P\nI will try Right.\n<prediction>\n');
    expect(out[1]!.prefix).toBe('<think><observation>\nPAPER\n</observation>\nI will try Right.\n<prediction>\n');
    expect(out[0]!.prediction).toBe('_P');
  });
});

describe('sft.moveWeight: the move token of each trained reply weighs more (moveWeights)', () => {
  const config = RunConfigSchema.parse({ model: { overrides: { hidden_size: 8, intermediate_size: 16, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 2, max_position_embeddings: 512 } } });
  const reply = (move: string) => `<think><observation>\nP_\n</observation>\nI will try ${move}.\n<prediction>\n_P\n</prediction></think><answer>${move}</answer>`;
  it('weighs the plan\'s move letter in every trained reply of a whole game, nothing in a drill, 1 elsewhere', async () => {
    const { moveWeights } = await import('../../core/train/sft.js');
    const runtime = await createRuntime(config, { seed: 1, valueHead: false });
    const decode = (ids: number[]) => runtime.tokenizer.decode(ids);
    const game = [
      { role: 'user' as const, content: 'state 1' }, { role: 'assistant' as const, content: reply('Right') },
      { role: 'user' as const, content: 'state 2' }, { role: 'assistant' as const, content: reply('Down') },
    ];
    const [row] = toTrainRows(runtime, [{ messages: game, lookahead: true }], 512, false);
    const w = moveWeights(row!, 20, decode);
    const weighted = w.flatMap((x, t) => (x === 20 ? [t] : []));
    // a character tokenizer: the weighted tokens are the letters after "I will try " in each reply, both in the loss
    expect(weighted.map((t) => decode([row!.ids[t]!]))).toEqual(['R', 'D']);
    expect(weighted.every((t) => row!.arrays.lossMask![t] === 1)).toBe(true);
    expect(w.filter((x) => x !== 1 && x !== 20)).toEqual([]);
    // a drill trains its state contents only: its move is not a target, so nothing is weighted
    const [drill] = toTrainRows(runtime, [{ messages: game.slice(0, 2), drill: true }], 512, false);
    expect(moveWeights(drill!, 20, decode).every((x) => x === 1)).toBe(true);
    runtime.dispose();
  });
});
