// Issue 36 (one run spec): every registered preset at every size it offers, and configs that name no preset, resolve to the
// same effective values as before the stage sections were typed in the run config. The golden file was written by the code
// before the change (tests/engine/golden/make-run-spec-golden.ts at commit e9c521a): for each case, the top-level config,
// every stage section as its stage read it (the section parsed with its defaults), the other sections (plan, diagnostics),
// the stage plan and the paths of resolve issues. Now a stage reads config.stages.<name> directly, so the comparison is
// between that and the golden's parsed section.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { listPresets } from '../../core/engine/presets.js';
import { resolveRunConfig, type ResolveRequest } from '../../core/engine/config.js';
import { StageSectionSchemas } from '../../core/api/run-config.js';

interface GoldenCase { top: Record<string, unknown>; sections: Record<string, unknown>; other: Record<string, unknown>; plan: string[]; issuePaths: string[] }
const golden = JSON.parse(readFileSync(new URL('./golden/run-spec-golden.json', import.meta.url), 'utf8')) as Record<string, GoldenCase>;

/**
 * Intended differences from the golden, each with its reason: [cases (by key), dotted path, the value now]. A field added to a
 * section after the golden appears in every case with its default (the behaviour before it existed), unless a preset sets it.
 */
const PAPER_RECIPE = /^[a-z0-9-]+ (paper|gpu-24g|gpu-80g)$/;   // the paper size and the GPU sizes built from it
const INTENDED: Array<{ cases: RegExp; path: string; now: unknown; why: string }> = [
  { cases: /./, path: 'sections.sft.lossAggregation', now: 'token-mean', why: 'new field (h2-loss): the mean over target tokens, as SFT did' },
  { cases: PAPER_RECIPE, path: 'sections.sft.lossAggregation', now: 'seq-mean-token-mean', why: "h2-loss: the paper recipe weighs rows as SPA's SFT trainer" },
  { cases: /./, path: 'sections.rl.lossAggregation', now: 'token-mean', why: 'new field (h2-loss): the mean over model tokens, as RL did' },
  { cases: PAPER_RECIPE, path: 'sections.rl.lossAggregation', now: 'seq-mean-token-mean', why: 'h2-loss: the paper recipe weighs episodes as RAGEN (micro-batch 1)' },
  { cases: /./, path: 'sections.rl.responseMask', now: 'reply', why: "new field (h2-loss): the loss covers the model's reply tokens, as before" },
  { cases: /./, path: 'sections.rl.maskStateSpans', now: false, why: 'new field (h2-loss, issue 34): the policy loss keeps the state spans, as before' },
  { cases: /./, path: 'sections.selfplay.drillLookahead', now: false, why: 'new field (h11, issue 34): drills in the paper order, as before' },
  { cases: /./, path: 'sections.selfplay.lookahead', now: 0, why: 'new field (h11, issue 34): no lookahead games, as before' },
  { cases: /./, path: 'sections.selfplay.lookaheadTurns', now: 1, why: 'new field (h11, issue 34): its default (unused without lookahead games)' },
  { cases: /./, path: 'sections.sft.maskActionSpans', now: false, why: "new field (h11, issue 34): the policy's rows train their whole reply, as before" },
  { cases: /./, path: 'sections.selfplay.lookaheadForm', now: 'cells', why: 'new field (h11, issue 34): its default (unused without lookahead games)' },
  { cases: /./, path: 'sections.sft.moveWeight', now: 1, why: 'new field (issue 34): the plain cross-entropy, as before' },
  { cases: /./, path: 'sections.sft.decisionSteps', now: 0, why: 'new field (issue 34, session 8): no decision phase after the epochs, as before' },
  { cases: /./, path: 'sections.sft.decisionDrills', now: 0.5, why: 'new field (issue 34, session 8): its default (unused without decisionSteps)' },
  { cases: /./, path: 'sections.sft.decisionMoveWeight', now: 20, why: 'new field (issue 34, session 8): its default (unused without decisionSteps)' },
  { cases: /./, path: 'sections.rl.entropyOn', now: 'all', why: 'new field (h15, issue 34): the entropy bonus covers every policy-loss token, as before' },
  { cases: /./, path: 'sections.rl.warmupSteps', now: 0, why: 'new field (h15, issue 34): no lr warmup, as before' },
  { cases: /./, path: 'sections.rl.lossOn', now: 'reply', why: 'new field (h15, issue 34): the loss covers every reply token, as before' },
  { cases: /./, path: 'sections.rl.entropyCap', now: null, why: 'new field (h15, issue 34): the entropy bonus is uncapped, as before' },
  { cases: /./, path: 'sections.rl.selfImitation', now: { steps: 0, batch: 16, lr: null, moveWeight: 20, filter: 'plan', source: 'won-episodes', capacity: 1024, gamma: 1, minBuffer: 0, moments: 'shared' },
    why: 'new field (issue 34): no self-imitation, as before' },
  { cases: /./, path: 'sections.rl.updateRows', now: 'turn', why: 'new field (issue 35): a row per turn, as before' },
  { cases: /./, path: 'sections.rollout.history', now: 'text', why: "new field (issue 35): each prompt re-rendered from the chat's text, as before" },
  { cases: PAPER_RECIPE, path: 'sections.rl.updateRows', now: 'episode',
    why: "issue 35: the paper recipe trains RAGEN's episode rows (the same loss under its seq-mean aggregation and one update per step)" },
];

/**
 * Intended: the default env became FrozenLake (DEFAULT_ENV_ID; issue 36: one default env, the one `npm start` plays, which has
 * a shipped base). No golden case names an env, so each moves from Sokoban to FrozenLake: a preset run gets FrozenLake as its
 * presets play it (random start and goal, success rate 0.8; core/train/presets.ts PRESET_ENV_OPTIONS) and says so in its name.
 */
function defaultEnvIsFrozenLake(key: string, expected: GoldenCase): void {
  const top = expected.top as { env: { id: string; options: Record<string, unknown> }; name?: string };
  expect(top.env).toEqual({ id: 'sokoban', options: {} });   // the golden's default env
  top.env = { id: 'frozenlake', options: key.startsWith('config ') ? {} : { randomStartGoal: true, successRate: 0.8 } };
  if (typeof top.name === 'string') top.name = top.name.replace(/ sokoban /, ' frozenlake ');
}

function requestOf(key: string): ResolveRequest {
  const m = /^config (.*)$/.exec(key);
  if (m) return { config: m[1] === '{}' ? {} : { method: /method: ([a-z-]+)/.exec(m[1]!)![1] } };
  const [preset, size] = key.split(' ');
  return { preset, size: size as ResolveRequest['size'] };
}

function setPath(obj: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let cur = obj;
  for (const p of parts.slice(0, -1)) cur = cur[p] as Record<string, unknown>;
  cur[parts[parts.length - 1]!] = value;
}

describe('run spec golden: every preset x size resolves to the same effective values', () => {
  it('covers every registered preset at every size it offers', () => {
    // cpu-real was added after the golden (issue 35): tests/train/cpu-real-preset.test.ts checks its settings
    // spa-teacher was added after it (issue 34, session 8): tests/train/spa-teacher-preset.test.ts checks its settings
    const now = listPresets().filter((p) => p.id !== 'spa-teacher')
      .flatMap((p) => p.sizes.filter((s) => s !== 'cpu-real').map((s) => `${p.id} ${s}`)).sort();
    const before = Object.keys(golden).filter((k) => !k.startsWith('config ')).sort();
    expect(now).toEqual(before);
    expect(before.length).toBeGreaterThan(60);
  });

  for (const [key, want] of Object.entries(golden)) {
    it(key, () => {
      const r = resolveRunConfig(requestOf(key));
      expect(r.config, JSON.stringify(r.issues)).not.toBeNull();
      const { stages, ...top } = r.config!;
      const sections: Record<string, unknown> = {}, other: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(stages)) (name in StageSectionSchemas ? sections : other)[name] = value;
      const expected = structuredClone(want);
      for (const d of INTENDED) if (d.cases.test(key)) setPath(expected as unknown as Record<string, unknown>, d.path, d.now);
      defaultEnvIsFrozenLake(key, expected);
      // JSON round trip: undefined-valued optional keys are absent on both sides
      expect(JSON.parse(JSON.stringify({ top, sections, other }))).toEqual({ top: expected.top, sections: expected.sections, other: expected.other });
      expect(r.stages).toEqual(expected.plan);
      expect(r.issues.map((i) => i.path)).toEqual(expected.issuePaths);
    });
  }
});
