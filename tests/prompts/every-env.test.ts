// Every registered env through the prompts code (issue 22): its state vocabulary covers every cell its boards hold, every
// template preset renders its state, every truthful preset parses back to the exact board and scores exact, a wrong state
// scores not exact, a random-policy episode plays through a session with world-model scores, and an unknown env id fails
// loudly instead of borrowing another env's labels. A new env is covered by being registered.
import { describe, expect, it } from 'vitest';
import { createEnv, describeEnv, getEnvDefinition, listEnvs } from '../../core/envs/index.js';
import {
  EpisodeSession, getTemplatePreset, listTemplatePresets, parseStateText, randomCoordinates, randomWellFormedResponse, renderState,
  scoreWorldModel, spaCoordinates,
} from '../../core/prompts/index.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import { Rng } from '../../core/util/rng.js';

describe.each(listEnvs())('env %s through templates, rendering, parsing and scoring', (id) => {
  const vocabulary = getEnvDefinition(id).vocabulary;

  it('declares every cell kind its boards hold, with a one-character symbol and a label', () => {
    const declared = new Set(vocabulary.cells.map((c) => c.kind));
    for (let seed = 0; seed < 5; seed++) {
      const env = createEnv(id);
      env.reset({ seed });
      const rng = new Rng(seed);
      for (let step = 0; step < 6; step++) {
        for (const row of env.board().cells) for (const kind of row) expect(declared, `${id} seed ${seed}: ${kind}`).toContain(kind);
        const actions = env.legalActions();
        const r = env.step(actions[rng.int(actions.length)]);
        if (r.terminated || r.truncated) break;
      }
    }
    for (const c of vocabulary.cells) {
      expect([...c.symbol]).toHaveLength(1);
      expect(c.label.length).toBeGreaterThan(0);
      expect(c.glyphs.length).toBeGreaterThan(0);
    }
    expect(describeEnv(id).cells.map((c) => c.kind)).toEqual(vocabulary.cells.map((c) => c.kind));
  });

  it('states its rules in one line for the compact prompts, and the tiny-compact prompt opens with it', () => {
    const env = createEnv(id);
    env.reset({ seed: 2 });
    const rules = getEnvDefinition(id).rules?.(env);
    expect(rules, `${id}: EnvDefinition.rules`).toMatch(/^[^\n{}<>]{8,80}\.$/);
    const s = new EpisodeSession(createEnv(id), builtinTemplate('tiny-compact'), { seed: 2 });
    expect(s.messages()[1]!.content.startsWith(`${rules} Actions: `)).toBe(true);
  });

  // text envs (Python envs such as textworld) have no entities: the coordinate forms are empty for them, and any text parses
  const textEnv = vocabulary.entities.length === 0 && vocabulary.cells.every((c) => c.kind === 'line');

  it('renders every preset, and every truthful preset parses back to the exact board', () => {
    for (const { name } of listTemplatePresets()) {
      if (textEnv && !/\b(grid|json)\b/.test(getTemplatePreset(name).parts.state)) continue;   // coordinate-only presets
      const template = getTemplatePreset(name);
      for (let seed = 0; seed < 3; seed++) {
        const env = createEnv(id);
        env.reset({ seed });
        const text = renderState(template, env);
        expect(text.trim().length, `${name} seed ${seed}`).toBeGreaterThan(0);
        const board = parseStateText(id, text, template, env.board());
        expect(board, `${name} ${id} seed ${seed}:\n${text}`).not.toBeNull();
        expect(scoreWorldModel(board, env.board()).exact, `${name} ${id} seed ${seed}:\n${text}`).toBe(true);
      }
    }
  });

  it('scores a state from another seed as not exact, and an unparseable text as not parsed', () => {
    const a = createEnv(id); a.reset({ seed: 1 });
    let b = createEnv(id); let seed = 2;
    do { b = createEnv(id); b.reset({ seed: seed++ }); } while (b.gridText() === a.gridText() && seed < 50);
    const template = getTemplatePreset('spa');
    const score = scoreWorldModel(parseStateText(id, renderState(template, b), template, a.board()), a.board());
    expect(score.exact).toBe(false);
    expect(score.cellAccuracy).toBeLessThan(1);
    if (textEnv) return;                     // any text is a (wrong) text state; there are no coordinates to randomise
    expect(scoreWorldModel(parseStateText(id, 'no state here', template, a.board()), a.board()).parsed).toBe(false);
    expect(randomCoordinates(a)).not.toBe(spaCoordinates(id, a.entities()));
  });

  it('plays a random-policy episode through a session with world-model scores on every turn', () => {
    const session = new EpisodeSession(createEnv(id), getTemplatePreset('spa'), { seed: 4 });
    const rng = new Rng(9);
    let turns = 0;
    while (!session.done && turns < 3) {
      const record = session.applyResponse(randomWellFormedResponse(session, rng));
      expect(record.wm.observation, `${id} turn ${turns}`).not.toBeNull();
      expect(record.wm.prediction, `${id} turn ${turns}`).not.toBeNull();
      turns++;
    }
    expect(turns).toBeGreaterThan(0);
  });
});

describe('an unknown env id', () => {
  it('fails loudly in every prompts entry point, never borrowing another env\'s labels', () => {
    const truth = { env: 'no-such-env', rows: 1, cols: 1, cells: [['floor']] };
    expect(() => spaCoordinates('no-such-env', [])).toThrow(/unknown env.*no-such-env/s);
    expect(() => parseStateText('no-such-env', 'P_\n__', undefined)).toThrow(/unknown env/);
    expect(() => scoreWorldModel(truth, truth)).toThrow(/unknown env/);
  });
});
