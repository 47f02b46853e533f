import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerEnvCommands, splitActions, unknownTemplateVariables } from '../../core/cli/env-commands.js';
import { listEnvs } from '../../core/envs/index.js';
import { getTemplatePreset, listTemplatePresets } from '../../core/prompts/index.js';
import { TINY_TEMPLATES } from '../../core/prompts/tiny-templates.js';

async function cli(...args: string[]): Promise<{ out: string; err: string; code: number | undefined }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => { out.push(a.join(' ')); });
  const error = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => { err.push(a.join(' ')); });
  const before = process.exitCode;
  process.exitCode = undefined;
  try {
    const program = new Command().exitOverride();
    registerEnvCommands(program);
    await program.parseAsync(['node', 'spa-workbench', ...args]);
    return { out: out.join('\n'), err: err.join('\n'), code: process.exitCode as number | undefined };
  } finally {
    log.mockRestore();
    error.mockRestore();
    process.exitCode = before;
  }
}

afterEach(() => vi.restoreAllMocks());

describe('spa-workbench env', () => {
  it('list names every env with its options', async () => {
    const { out } = await cli('env', 'list', '--json');
    const list = JSON.parse(out);
    const ids = list.map((d: { id: string }) => d.id);
    // the four TypeScript envs first, then the Python envs the registry found (textworld when a Python can serve it)
    expect(ids.slice(0, 4)).toEqual(['sokoban', 'frozenlake', 'sudoku', 'keydoor']);
    expect(ids).toEqual(listEnvs());
  });

  it('render prints the template state text', async () => {
    const { out } = await cli('env', 'render', '--env', 'sudoku', '--config', '{"puzzle":".124 4213 2341 .4.2"}');
    expect(out).toBe('| . 1 2 4 | 4 2 1 3 | 2 3 4 1 | . 4 . 2\nEmpty positions to be filled are at (1,1), (4,1), (4,3).');
    const prompt = await cli('env', 'render', '--env', 'sokoban', '--seed', '2', '--template', 'raw-grid', '--prompt');
    expect(prompt.out).toContain('--- system');
    expect(prompt.out).toContain('Turn 1:');
  });

  it('run --json prints every step with reward, flags, info and the true state', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spa-env-'));
    const file = join(dir, 'level.xsb');
    writeFileSync(file, '; tiny\n######\n#@$ .#\n######\n');
    const { out } = await cli('env', 'run', '--env', 'sokoban', '--level', file, '--actions', 'Right,Right', '--json');
    const result = JSON.parse(out);
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]).toMatchObject({ action: 'Right', reward: -0.1, terminated: false, truncated: false });
    expect(result.steps[1]).toMatchObject({ reward: 10.9, terminated: true });
    expect(result.steps[1].observation).toBe('######\n#__P√#\n######');
    expect(result.steps[1].state.boxes).toEqual([10]);
    expect(result.totalReward).toBeCloseTo(10.8);
  });

  it('solve prints an optimal plan for each env', async () => {
    const sokoban = JSON.parse((await cli('env', 'solve', '--env', 'sokoban', '--seed', '4', '--json')).out);
    expect(sokoban.solved).toBe(true);
    expect(sokoban.optimal).toBe(true);
    const lake = JSON.parse((await cli('env', 'solve', '--env', 'frozenlake', '--config', '{"map":["SFF","HHF","GFF"]}', '--json')).out);
    expect(lake.actions).toEqual(['Right', 'Right', 'Down', 'Down', 'Left', 'Left']);
    const sudoku = JSON.parse((await cli('env', 'solve', '--env', 'sudoku', '--config', '{"puzzle":".124 4213 2341 .4.2"}', '--json')).out);
    expect(sudoku.actions).toEqual(['1,1,3', '4,1,1', '4,3,3']);
  });

  it('bad input gets a clear error and exit code 1', async () => {
    const r = await cli('env', 'render', '--env', 'sokoban', '--config', '{"numBoxes": 9}');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/option "numBoxes".*expected an integer in 1\.\.4.*received 9/);
    const bad = await cli('env', 'run', '--env', 'sokoban', '--config', 'not json', '--actions', 'Up');
    expect(bad.err).toMatch(/--config: expected a JSON object/);
    const none = await cli('env', 'run', '--env', 'sokoban', '--actions', ' , ');
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/--actions: expected at least one action.*received " , "/);
  });

  it('--level files: malformed XSB is refused naming the file, line and column, never played truncated', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spa-level-'));
    const level = (name: string, text: string) => { const f = join(dir, name); writeFileSync(f, text); return f; };
    const good = level('good.xsb', '#######\n#     #\n# $@. #\n#     #\n#######\n');
    const ok = await cli('env', 'solve', '--env', 'sokoban', '--level', good, '--json');
    expect(ok.code).toBeUndefined();
    expect(JSON.parse(ok.out).actions).toHaveLength(6);
    const cases: [string, string, RegExp][] = [
      ['noplayer.xsb', '#######\n#     #\n# $ . #\n#     #\n#######\n', /wrong number of players; expected exactly one @ or \+; received 0/],
      ['two.xsb', '#######\n#  @  #\n# $@. #\n#     #\n#######\n', /received 2 \(at line 2 column 4, line 3 column 4\)/],
      ['unbalanced.xsb', '#######\n#  $  #\n# $@. #\n#     #\n#######\n', /as many targets as boxes; received 1 targets and 2 boxes/],
      // a short row leaves a gap in the right wall: the player could walk off the board
      ['ragged.xsb', '#######\n#     #\n# $@. #\n#   #\n#######\n', /line 4 column 7: level is not closed.*line 4 ends at column 5/],
      // a stray character in a wall row used to end the level there (a 3-row board was played)
      ['typo.xsb', '#######\n#     #\n# $@. #\n#  X  #\n#######\n', /line 4 column 4: unexpected character.*received "X"/],
    ];
    for (const [name, text, message] of cases) {
      const file = level(name, text);
      const r = await cli('env', 'render', '--env', 'sokoban', '--level', file);
      expect(r.code, name).toBe(1);
      expect(r.err, name).toContain(`--level ${file}`);
      expect(r.err, name).toMatch(message);
      expect(r.out, name).toBe('');
    }
  });

  it('a template file with an unknown variable (a typo) gets a warning naming it; the presets use none', async () => {
    for (const t of [...listTemplatePresets().map((p) => getTemplatePreset(p.name)), ...TINY_TEMPLATES]) expect(unknownTemplateVariables(t), t.name).toEqual([]);
    const dir = mkdtempSync(join(tmpdir(), 'spa-tpl-'));
    const file = join(dir, 'typo.json');
    const parts = { system: 's', instruction: 'i', turn: '{{ state }}', reward: 'r', state: '{{ gird }}\n{% for e in entities %}{{ e.kind }}{% endfor %}', format: '' };
    writeFileSync(file, JSON.stringify({ name: 'typo', description: 'd', responseFormat: 'world-model', parts }));
    const r = await cli('env', 'render', '--env', 'sokoban', '--seed', '3', '--template', file);
    expect(r.code).toBeUndefined();
    expect(r.err).toContain(`warning: --template ${file}: part "state" uses {{ gird }}, which is not a template variable`);
    expect(r.err).not.toContain('{{ e }}');
  });

  it('renders the tiny-* templates that smoke and quick runs use', async () => {
    const r = await cli('env', 'render', '--env', 'sokoban', '--seed', '3', '--template', 'tiny-spa', '--prompt');
    expect(r.code).toBeUndefined();
    expect(r.out).toContain('Solve the sokoban puzzle.');
    expect(r.out).toContain('Player (P) is at (3,4)');
    expect((await cli('env', 'list')).out).toMatch(/templates: .*tiny-spa/);
  });

  it('splits action lists per env', () => {
    expect(splitActions('sokoban', 'Up,Up, Left')).toEqual(['Up', 'Up', 'Left']);
    expect(splitActions('sudoku', '1,1,3 4,1,1')).toEqual(['1,1,3', '4,1,1']);
    expect(splitActions('sudoku', '1,1,3;4,1,1')).toEqual(['1,1,3', '4,1,1']);
    expect(splitActions('sokoban', 'Up || Down')).toEqual(['Up', 'Down']);
  });

  it('play works with piped stdin', () => {
    const r = spawnSync(process.execPath, ['bin/run-ts.mjs', 'tests/envs/cli-entry.ts', 'env', 'play', '--env', 'frozenlake', '--config', '{"map":["SFG"],"isSlippery":false}'],
      { input: 'Right\nRight\nq\n', encoding: 'utf8', timeout: 120_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('P_G');
    expect(r.stdout).toContain('_PG');
    expect(r.stdout).toContain('reward 1 (total 1)');
    expect(r.stdout).toContain('Solved!');
  });

  it('play: after the episode ends, moves get a hint instead of an engine error; no-op moves say why', () => {
    const r = spawnSync(process.execPath, ['bin/run-ts.mjs', 'tests/envs/cli-entry.ts', 'env', 'play', '--env', 'frozenlake', '--config', '{"map":["SFG"],"isSlippery":false}'],
      { input: 'Right\nRight\nLeft\n', encoding: 'utf8', timeout: 120_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('the episode is over: r = restart, q = quit');
    expect(r.stdout).not.toMatch(/reset\(\)/);
    const s = spawnSync(process.execPath, ['bin/run-ts.mjs', 'tests/envs/cli-entry.ts', 'env', 'play', '--env', 'sudoku', '--config', '{"puzzle":".124 4213 2341 .4.2"}'],
      { input: '1,2,1\n', encoding: 'utf8', timeout: 120_000 });
    expect(s.status).toBe(0);
    expect(s.stdout).toMatch(/no effect \(.+\)/);
  });
});
