// The plain-reply twin of the coordinate-line compact template (issue 34 curve (a), session 4: does a tiny character model
// read the player's and the goal's places more easily from the SPA coordinate line than from the grid?):
// tiny-compact-coordinates-plain asks "Write your move." as tiny-compact-plain does, shows the state as the coordinate line
// (true to the board), and takes the plain reply; the templates the shipped base pins keep their hashes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEnv } from '../../core/envs/index.js';
import { builtinTemplate, builtinTemplateNames } from '../../core/prompts/resolve-template.js';
import { EpisodeSession, randomWellFormedResponse } from '../../core/prompts/session.js';
import { templateHash } from '../../core/prompts/template.js';
import { Rng } from '../../core/util/rng.js';

// curve (a)'s env options as a run gets them (the preset's randomStartGoal and successRate, then the bench's)
const BANDIT = { randomStartGoal: true, successRate: 0.8, isSlippery: false, p: 1, goalDistance: 1, maxSteps: 1 };

function session(template: string, seed: number, options: Record<string, unknown> = BANDIT) {
  return new EpisodeSession(createEnv('frozenlake', options), builtinTemplate(template), { seed, maxTurns: 1, maxActionsPerTurn: 1 });
}

/** Row and column of a symbol in a grid text (rows split by newlines). */
function where(grid: string, symbol: string): [number, number] {
  const rows = grid.split('\n');
  const r = rows.findIndex((row) => row.includes(symbol));
  if (r < 0) throw new Error(`no ${symbol} in ${JSON.stringify(grid)}`);
  return [r, rows[r]!.indexOf(symbol)];
}

describe('tiny-compact-coordinates-plain', () => {
  it('is a built-in plain template: the coordinate twin of tiny-compact-plain, the plain twin of tiny-compact-coordinates', () => {
    expect(builtinTemplateNames()).toContain('tiny-compact-coordinates-plain');
    const t = builtinTemplate('tiny-compact-coordinates-plain');
    const wm = builtinTemplate('tiny-compact-coordinates');
    const grid = builtinTemplate('tiny-compact-plain');
    expect(t.responseFormat).toBe('plain');
    expect(t.parts.state).toBe('{{ spa_coordinates }}');
    expect(t.parts.instruction).toBe(grid.parts.instruction);
    expect(t.parts.instruction).not.toBe(wm.parts.instruction);
    expect({ ...t.parts, instruction: '' }).toEqual({ ...wm.parts, instruction: '' });
    expect(templateHash(t)).not.toBe(templateHash(grid));
  });

  it('the prompt shows the coordinate line of the true board (no grid) and asks for the move; the plain reply is well formed', () => {
    for (const seed of [1, 2, 3, 17, 40]) {
      const coords = session('tiny-compact-coordinates-plain', seed);
      const grid = session('tiny-compact-plain', seed);
      const [, user] = coords.messages();
      const lines = user!.content.split('\n');
      expect(lines[0]).toBe('Reach G, avoid O. Actions: Left, Down, Right, Up. Write your move.');
      expect(lines[0]).toBe(grid.messages()[1]!.content.split('\n')[0]);
      const [pr, pc] = where(grid.stateText(), 'P');
      const [gr, gc] = where(grid.stateText(), 'G');
      expect(lines[1]).toBe(`Player (P) is at (${pr},${pc}); goal (G) is at (${gr},${gc}).`);
      expect(Math.abs(pr - gr) + Math.abs(pc - gc)).toBe(1);
      expect(user!.content).not.toMatch(/[_PG]{4}\n/);
      expect(randomWellFormedResponse(coords, new Rng(seed))).toMatch(/^<think>I will try (Left|Down|Right|Up)\.<\/think><answer>(Left|Down|Right|Up)<\/answer>$/);
    }
  });

  it('the templates the shipped compact base pins keep their hashes (adding a template changes none)', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'resources', 'bases', 'frozenlake-compact', 'manifest.json'), 'utf8'));
    const pinned = manifest.extra.shippedBase.match.templates as Array<{ name: string; hash: string }>;
    expect(pinned.map((p) => p.name)).toEqual(['tiny-compact-plain', 'tiny-compact']);
    for (const p of pinned) expect(templateHash(builtinTemplate(p.name)), p.name).toBe(p.hash);
  });

  it('an unknown template name is refused with the built-ins named', () => {
    expect(() => builtinTemplate('tiny-compact-coordinate-plain')).toThrow(/tiny-compact-coordinates-plain/);
  });
});
