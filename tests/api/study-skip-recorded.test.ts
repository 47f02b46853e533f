// `study run --skip-recorded DIR`: cells whose finished record is in DIR/runs (docs/results, written
// by record-runs.mjs as runs finish) are not run again, so a study resumed on a fresh machine runs
// only what is missing; a record of another cell or study is refused with a clear error.
import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers.js';

const bin = fileURLToPath(new URL('../../bin/spa-workbench.mjs', import.meta.url));
function cli(args: string[], home: string) {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, SPA_WORKBENCH_HOME: home }, timeout: 300_000 });
  if (r.error) throw new Error(`spa-workbench ${args.join(' ')}: ${r.error.message}`);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('study run --skip-recorded', () => {
  it('runs only the cells not recorded, and refuses a record of another cell', () => {
    const home = tempDir();
    const project = path.join(tempDir(), 'p');
    const recorded = tempDir();
    fs.mkdirSync(path.join(recorded, 'runs'));
    const record = { study: 'skipper', method: 'vanilla-rl', env: 'frozenlake', seed: 0, eval: { passAtK: {} } };
    fs.writeFileSync(path.join(recorded, 'runs', 'vanilla-rl-frozenlake-s0.json'), JSON.stringify(record));
    const args = ['study', 'run', '--project', project, '--name', 'skipper', '--methods', 'vanilla-rl', '--envs', 'frozenlake', '--seeds', '0,1',
      '--size', 'smoke', '--set', 'stages.bootstrap.shipped=false', '--skip-recorded', recorded];
    const r = cli(args, home);
    expect(r.stderr).toBe(r.stderr.replace(/error:/, ''));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/1 of 2 cells recorded in/);
    expect(r.stdout).toMatch(/\[1\/2\] study:skipper:vanilla-rl:frozenlake:s0: recorded in --skip-recorded, skipped/);
    expect(r.stdout).toMatch(/\[2\/2\] study:skipper:vanilla-rl:frozenlake:s1: \S+ \(/);
    const runs = fs.readdirSync(path.join(project, 'runs'));
    expect(runs.length).toBe(1);
    expect(JSON.parse(fs.readFileSync(path.join(project, 'runs', runs[0]!, 'run.json'), 'utf8')).name).toBe('study:skipper:vanilla-rl:frozenlake:s1');

    fs.writeFileSync(path.join(recorded, 'runs', 'vanilla-rl-frozenlake-s0.json'), JSON.stringify({ ...record, seed: 5 }));
    const bad = cli(args, home);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/is not the finished record of vanilla-rl on frozenlake seed 0 in study skipper/);
    const missing = cli([...args.slice(0, -1), path.join(recorded, 'nope')], home);
    expect(missing.stderr).toMatch(/no runs\/ folder there/);
  }, 600_000);
});
