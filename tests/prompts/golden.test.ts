// Golden files: the exact output of every template preset on fixed seeds, for every env.
// Regenerate after an intended change with UPDATE_GOLDEN=1 npx vitest run tests/prompts/golden.test.ts
// and review the diff of tests/fixtures/templates/ by eye.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { getTemplatePreset, listTemplatePresets, previewPrompt } from '../../core/prompts/index.js';

const DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'templates');
const CASES: [string, Record<string, unknown>, number[]][] = [
  ['sokoban', {}, [0, 7]],
  ['sokoban', { width: 8, height: 8, numBoxes: 2 }, [3]],
  ['frozenlake', {}, [0, 5]],
  ['sudoku', {}, [0, 2]],
];

function render(preset: string): string {
  const out: string[] = [];
  for (const [env, options, seeds] of CASES) {
    for (const seed of seeds) {
      const p = previewPrompt(getTemplatePreset(preset), env, options, seed);
      out.push(`===== ${env} ${JSON.stringify(options)} seed ${seed}: state =====`, p.stateText);
    }
  }
  // The whole first prompt once per env.
  for (const env of ['sokoban', 'frozenlake', 'sudoku']) {
    const p = previewPrompt(getTemplatePreset(preset), env, {}, 1);
    out.push(`===== ${env} seed 1: messages =====`);
    for (const m of p.messages) out.push(`--- ${m.role}`, m.content);
  }
  return `${out.join('\n')}\n`;
}

describe('template presets: golden files', () => {
  for (const { name } of listTemplatePresets()) {
    it(`${name} renders exactly as reviewed`, () => {
      const file = join(DIR, `${name}.txt`);
      const actual = render(name);
      if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) {
        mkdirSync(DIR, { recursive: true });
        writeFileSync(file, actual);
        if (process.env.UPDATE_GOLDEN !== '1') throw new Error(`golden file ${file} was missing and has been written: review it and rerun`);
      }
      expect(actual).toBe(readFileSync(file, 'utf8'));
    });
  }

  it('SPA formats are exactly the released ones', () => {
    const sokoban = previewPrompt(getTemplatePreset('spa'), 'sokoban', { level: '#####\n#@$.#\n#####' }, 0).stateText;
    expect(sokoban).toBe('#####\n#PXO#\n#####\nPlayer (P) is at (1,1); box (X) is at (1,2); target (O) is at (1,3).');
    const sudoku = previewPrompt(getTemplatePreset('spa'), 'sudoku', { puzzle: '.124 4213 2341 .4.2' }, 0).stateText;
    expect(sudoku).toBe('| . 1 2 4 | 4 2 1 3 | 2 3 4 1 | . 4 . 2\nEmpty positions to be filled are at (1,1), (4,1), (4,3).');
    const one = previewPrompt(getTemplatePreset('spa'), 'sudoku', { puzzle: '3124 4213 2341 .432' }, 0).stateText;
    expect(one.split('\n')[1]).toBe('Empty position to be filled is at (4,1).');
    const lake = previewPrompt(getTemplatePreset('spa'), 'frozenlake', { map: ['SFFF', 'FHFH', 'FFFH', 'HFFG'] }, 0).stateText;
    expect(lake).toBe('P___\n_O_O\n___O\nO__G\nPlayer (P) is at (0,0); hole (O) is at (1,1); hole (O) is at (1,3); hole (O) is at (2,3); hole (O) is at (3,0); goal (G) is at (3,3).');
  });

  it('random coordinates are well-formed, wrong, and stable for a state', () => {
    const a = previewPrompt(getTemplatePreset('random-coordinates'), 'sokoban', {}, 4).stateText.split('\n').pop()!;
    const b = previewPrompt(getTemplatePreset('random-coordinates'), 'sokoban', {}, 4).stateText.split('\n').pop()!;
    const truth = previewPrompt(getTemplatePreset('spa'), 'sokoban', {}, 4).stateText.split('\n').pop()!;
    expect(a).toBe(b);
    expect(a).not.toBe(truth);
    expect(a).toMatch(/^Player \(P\) is at \(\d+,\d+\); box \(X\) is at \(\d+,\d+\); target \(O\) is at \(\d+,\d+\)\.$/);
  });
});
