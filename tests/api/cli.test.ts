import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers.js';

const bin = fileURLToPath(new URL('../../bin/spa-workbench.mjs', import.meta.url));
function cli(args: string[], home: string) {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, SPA_WORKBENCH_HOME: home }, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('spa-workbench CLI (core commands)', () => {
  it('--help lists the subcommands', () => {
    const home = tempDir();
    const top = cli(['--help'], home);
    for (const c of ['start', 'run', 'list', 'show', 'export', 'serve', 'resume', 'stop']) expect(top.stdout).toMatch(new RegExp(`\\n  ${c} `));
  });

  it('runs a preset into a new project, exports it; bad options get clear errors', () => {
    const home = tempDir();
    const project = path.join(tempDir(), 'proj');
    const r = cli(['run', 'diagnostic', '--size', 'smoke', '--project', project, '--set', 'stages.diag-wait.steps=3', '--json'], home);
    expect(r.stderr).toContain('[diag-wait] completed');          // progress as plain lines (not a TTY)
    expect(r.code).toBe(0);
    const info = JSON.parse(r.stdout) as { id: string; status: string; config: { stages: Record<string, { steps: number }> } };
    expect(info.status).toBe('completed');
    expect(info.config.stages['diag-wait']!.steps).toBe(3);
    const out = path.join(tempDir(), 'metrics.csv');
    const exp = cli(['export', info.id, '--project', project, '--out', out], home);
    expect(exp.code).toBe(0);
    const csv = fs.readFileSync(out, 'utf8').trim().split('\n');
    expect(csv[0]).toBe('stage,step,time,episodes,diag/step,diag/value');
    expect(csv).toHaveLength(4);
    const bad = cli(['run', 'diagnostic', '--project', project, '--size', 'huge'], home);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--size: expected one of smoke, quick, paper, custom, received "huge"');
    const unknown = cli(['run', 'no-such-preset', '--project', project], home);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/unknown preset "no-such-preset"; available: .*diagnostic/);
  });
});
