import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerEnvCommands, splitActions } from '../../core/cli/env-commands.js';

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
    expect(list.map((d: { id: string }) => d.id)).toEqual(['sokoban', 'frozenlake', 'sudoku']);
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
  });

  it('splits action lists per env', () => {
    expect(splitActions('sokoban', 'Up,Up, Left')).toEqual(['Up', 'Up', 'Left']);
    expect(splitActions('sudoku', '1,1,3 4,1,1')).toEqual(['1,1,3', '4,1,1']);
    expect(splitActions('sudoku', '1,1,3;4,1,1')).toEqual(['1,1,3', '4,1,1']);
    expect(splitActions('sokoban', 'Up || Down')).toEqual(['Up', 'Down']);
  });

  it('play works with piped stdin', () => {
    const r = spawnSync(process.execPath, ['bin/run-ts.mjs', 'tests/envs/cli-entry.ts', 'env', 'play', '--env', 'frozenlake', '--config', '{"map":["SFG"],"isSlippery":false}'],
      { input: 'Right\nRight\nq\n', encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('P_G');
    expect(r.stdout).toContain('_PG');
    expect(r.stdout).toContain('reward 1 (total 1)');
    expect(r.stdout).toContain('Solved!');
  });
});
