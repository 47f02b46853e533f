// The bootstrap must teach the model exactly what the rollouts will ask of it. For every env at the
// quick size: each bootstrap row is laid out exactly like the rollout's prompt for each turn
// (ModelRuntime.encodePrompt: chat, assistant opening, forced `<think>`, context truncation)
// followed by the reply and its end-of-turn token; the games cover every turn number a rollout
// plays; and every well-formed reply fits in rollout.maxNewTokens (a regression test: with
// maxNewTokens 300 no world-model turn of Sokoban, 326–392 characters, could ever be finished, so
// self-play kept 0 turns).
import { describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-cpu';
import { RunConfigSchema, type RunConfig } from '../../core/api/run-config.js';
import { mergeConfig, presetConfig } from '../../core/train/presets.js';
import { createRuntime } from '../../core/train/runtime.js';
import { bootstrapRows } from '../../core/train/bootstrap.js';
import { structuralProblem } from '../../core/train/selfplay-data.js';
import { playEpisodes, groupSpecs } from '../../core/train/rollout.js';
import { rolloutDeps } from '../../core/train/episodes.js';

await tf.setBackend('cpu');

// The compact quick size plays 3-turn bootstrap games against 10-turn rollouts (stages.bootstrap.turns: shorter, cheaper
// rows; later turns repeat the same layout with a longer history), so the layout is checked with rollouts of the
// bootstrap's own number of turns.
function quickConfig(env: string, games: number): RunConfig {
  const preset = presetConfig('spa', 'quick', { env: { id: env } }) as Record<string, unknown>;
  const turns = (preset.stages as { bootstrap?: { turns?: number } }).bootstrap?.turns;
  return RunConfigSchema.parse(mergeConfig(preset, { stages: { bootstrap: { games }, ...(turns ? { rollout: { maxTurns: turns } } : {}) } }));
}

describe('bootstrap rows match the rollout layout (quick size)', () => {
  for (const env of ['sokoban', 'frozenlake', 'sudoku']) {
    it(`${env}: each turn's rollout prompt + reply + end-of-turn is exactly a slice of the row; replies fit maxNewTokens`, async () => {
      const config = quickConfig(env, 120);
      const limits = config.stages.rollout;
      const section = config.stages.bootstrap;
      const runtime = await createRuntime(config, { seed: 0, valueHead: false });
      const tok = runtime.tokenizer;
      const imEnd = tok.tokenToId('<|im_end|>')!;
      const templates = [...new Set([...section.templates, config.template.preset])];
      const data = bootstrapRows(config, tok, runtime.maxContext, templates);
      expect(data.rows.length).toBe(120 + data.drills);
      expect(data.drills).toBe(Math.round(section.copyDrills * 120));
      expect(data.longestResponseTokens).toBeLessThanOrEqual(limits.maxNewTokens);
      const maxPrompt = limits.maxContextTokens - limits.maxNewTokens;
      let maxTurnsSeen = 0;
      let worldModelTurns = 0;
      data.rows.forEach((row, r) => {
        const chat = data.chats[r]!;
        expect(chat[chat.length - 1]!.role).toBe('assistant');
        const assistants = chat.map((m, i) => (m.role === 'assistant' ? i : -1)).filter((i) => i >= 0);
        maxTurnsSeen = Math.max(maxTurnsSeen, assistants.length);
        for (const a of assistants) {
          const prompt = runtime.encodePrompt(chat.slice(0, a), '<think>', maxPrompt);
          const reply = chat[a]!.content;
          expect(reply.startsWith('<think>')).toBe(true);
          // generation stops at </answer>: the reply ends there and has it once
          expect(reply.endsWith('</answer>')).toBe(true);
          expect(reply.indexOf('</answer>')).toBe(reply.length - '</answer>'.length);
          const generated = [...tok.encode(reply.slice('<think>'.length)), imEnd];
          expect(generated.length - 1).toBeLessThanOrEqual(limits.maxNewTokens);
          expect(row.ids.slice(0, prompt.length)).toEqual(prompt);
          expect(row.ids.slice(prompt.length, prompt.length + generated.length)).toEqual(generated);
          // the loss covers every generated token (reply + end of turn) …
          expect(row.arrays.lossMask!.slice(prompt.length, prompt.length + generated.length).every((m) => m === 1)).toBe(true);
          if (reply.includes('<observation>')) {
            worldModelTurns++;
            expect(structuralProblem(reply)).toBeNull();
          }
        }
        // … and no system or user token
        const userTokens = row.ids.length - row.arrays.lossMask!.reduce((x, m) => x + m, 0);
        expect(userTokens).toBeGreaterThan(0);
      });
      expect(maxTurnsSeen).toBe(limits.maxTurns);
      expect(worldModelTurns).toBeGreaterThan(0);
      runtime.dispose();
    });
  }

  it('the bootstrap observation is the true state; the prediction is a counterfactual, not the effect of the answer (audit B2)', async () => {
    for (const env of ['sokoban', 'frozenlake', 'sudoku']) {
      const config = quickConfig(env, 60);
      const section = config.stages.bootstrap;
      expect(section.observation).toBe('true');
      const runtime = await createRuntime(config, { seed: 0, valueHead: false });
      const data = bootstrapRows(config, runtime.tokenizer, runtime.maxContext, [...new Set([...section.templates, config.template.preset])]);
      let turns = 0, grounded = 0;
      for (const chat of data.chats) {
        chat.forEach((m, i) => {
          const match = m.role === 'assistant' ? /<observation>\n([\s\S]*?)\n<\/observation>/.exec(m.content) : null;
          if (!match) return;
          turns++;
          if (chat[i - 1]!.content.includes(match[1]!)) grounded++;   // the user message holds the true state
        });
      }
      expect(turns).toBeGreaterThan(0);
      expect(grounded).toBe(turns);
      runtime.dispose();
    }
  });

  it('counterfactual predictions: well formed, but they match the answer\'s true next state no more than chance would', async () => {
    const { EpisodeSession } = await import('../../core/prompts/session.js');
    const { groundedBootstrapResponse } = await import('../../core/train/episodes.js');
    const { builtinTemplate } = await import('../../core/prompts/resolve-template.js');
    const { createEnv } = await import('../../core/envs/index.js');
    const { Rng } = await import('../../core/util/rng.js');
    const rng = new Rng(3);
    let changed = 0, matches = 0;
    for (let seed = 0; seed < 40; seed++) {
      const s = new EpisodeSession(createEnv('frozenlake', { randomStartGoal: true, isSlippery: false }), builtinTemplate('tiny-spa'), { seed, maxTurns: 1 });
      const t = s.applyResponse(groundedBootstrapResponse(s, rng));
      expect(t.flags.formatError).toBe(false);
      expect(t.wm.observation!.exact).toBe(true);
      if (t.stateAfter.text === t.stateBefore.text) continue;
      changed++;
      if (t.wm.prediction!.exact) matches++;
    }
    expect(changed).toBeGreaterThan(10);
    expect(matches / changed).toBeLessThan(0.6);
  });

  it('observation "decoy" keeps the old anti-grounded data (states of unrelated puzzles from the pool)', async () => {
    const config = RunConfigSchema.parse(mergeConfig(presetConfig('spa', 'quick', { env: { id: 'sokoban' } }) as Record<string, unknown>, { stages: { bootstrap: { games: 30, observation: 'decoy', decoyPool: 4 } } }));
    const section = config.stages.bootstrap;
    const runtime = await createRuntime(config, { seed: 0, valueHead: false });
    const data = bootstrapRows(config, runtime.tokenizer, runtime.maxContext, [...new Set([...section.templates, config.template.preset])]);
    expect(data.drills).toBe(0);
    const observations = new Set<string>();
    for (const chat of data.chats) for (const m of chat) {
      const match = m.role === 'assistant' ? /<observation>\n([\s\S]*?)\n<\/observation>/.exec(m.content) : null;
      if (match) observations.add(match[1]!);
    }
    expect(observations.size).toBeLessThanOrEqual(4);
    runtime.dispose();
  });

  it('a rollout that writes the bootstrap replies reproduces the bootstrap row token for token', async () => {
    const config = quickConfig('sokoban', 2);
    const limits = config.stages.rollout;
    const runtime = await createRuntime(config, { seed: 0, valueHead: false });
    const section = config.stages.bootstrap;
    const data = bootstrapRows(config, runtime.tokenizer, runtime.maxContext, [...new Set([...section.templates, config.template.preset])]);
    const chat = data.chats[1]!; // tiny-spa: world-model format
    const replies = chat.filter((m) => m.role === 'assistant').map((m) => m.content);
    // replay game 1 through the rollout loop with a policy whose "generation" is the bootstrap reply
    const deps = rolloutDeps(config, runtime, limits, { runId: 't', stage: 'selfplay', step: 0 });
    const seen: number[][] = [];
    deps.policy = {
      encodePrompt: (messages, prefix, maxTokens) => runtime.encodePrompt(messages, prefix, maxTokens),
      generate: async (prompts) => prompts.map((p) => {
        seen.push(p);
        const text = replies[seen.length - 1]!.slice('<think>'.length);
        return { ids: runtime.tokenizer.encode(text), text, logprobs: [] };
      }),
    };
    const [result] = await playEpisodes(groupSpecs('t', config.seeds.selfplayStart - 2, 0, 1, 1), limits, 0, deps);
    expect(result!.record.turns.map((t) => t.response)).toEqual(replies);
    for (let t = 0; t < seen.length; t++) {
      const full = [...seen[t]!, ...result!.tokens[t]!.responseIds];
      expect(data.rows[1]!.ids.slice(0, full.length)).toEqual(full);
    }
    runtime.dispose();
  });
});
