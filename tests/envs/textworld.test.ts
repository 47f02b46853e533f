// TextWorld (resources/python-envs/envs/textworld.py, textworld 1.7.0 on the Python .ci/install-envs.sh installs it for): games
// generated from a seed at three levels, admissible commands as actions, the walkthrough as oracle, text states scored
// exactly after normalisation, the env checker, and `env run` from the CLI. Skipped, with the reason printed, where no
// Python can import textworld.
import { Command } from 'commander';
import { describe, expect, it, vi } from 'vitest';
import { registerEnvCommands, splitActions } from '../../core/cli/env-commands.js';
import { checkEnv, createEnv, describeEnv, getEnvDefinition, listEnvs, solveEnv } from '../../core/envs/index.js';
import { parseStateText, scoreWorldModel } from '../../core/prompts/world-model.js';
import { envInfos } from '../../core/host/env-adapter.js';

/** The env commands in-process, capturing console.log. */
async function cli(...args: string[]): Promise<{ stdout: string; code: number | undefined }> {
  const out: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => { out.push(a.join(' ')); });
  const before = process.exitCode;
  process.exitCode = undefined;
  try {
    const program = new Command().exitOverride();
    registerEnvCommands(program);
    await program.parseAsync(['node', 'spa-workbench', ...args]);
    return { stdout: out.join('\n'), code: process.exitCode as number | undefined };
  } finally {
    log.mockRestore();
    process.exitCode = before;
  }
}

const summary = describeEnv('textworld').docs.summary;
const missing = summary.startsWith('Unavailable') ? summary : null;
if (missing) console.warn(`*** TextWorld tests skipped: ${missing} ***`);

describe('textworld is registered', () => {
  it('is listed with its levels, whether or not textworld is installed', () => {
    expect(listEnvs()).toContain('textworld');
    expect(describeEnv('textworld').title).toBe('TextWorld');
  });

  it('is served by envs.list (what the New Run form offers) with its default options', () => {
    const info = envInfos().find((e) => e.id === 'textworld');
    expect(info).toBeDefined();
    if (!missing) expect(info!.defaultOptions).toEqual({ level: 'coin-easy', max_steps: 50 });
  });
});

describe.skipIf(missing !== null)('TextWorld games', () => {
  it('has three levels, each generated from the seed and solved by its walkthrough', () => {
    expect(describeEnv('textworld').options.find((o) => o.name === 'level')!.values).toEqual(['coin-easy', 'coin-medium', 'cooking-easy']);
    for (const [level, length] of [['coin-easy', 3], ['coin-medium', 5], ['cooking-easy', 3]] as const) {
      const env = createEnv('textworld', { level });
      const first = env.reset({ seed: 1 });
      expect(first.observation).toMatch(/Admissible commands: /);
      expect(first.observation).not.toMatch(/\$\$\$/);              // the banner is cut
      const plan = solveEnv(env)!;
      expect(plan.actions.length, level).toBe(length);
      let last = null as ReturnType<typeof env.step> | null;
      for (const action of plan.actions) {
        expect(env.legalActions(), `${level}: ${action}`).toContain(action);
        last = env.step(action);
      }
      expect(last!.terminated, level).toBe(true);
      expect(last!.info.success, level).toBe(true);
      expect(env.legalActions()).toEqual([]);
    }
  }, 300_000);

  it('reproduces a game from its seed, and different seeds give different games', () => {
    const a = createEnv('textworld'); const b = createEnv('textworld'); const c = createEnv('textworld');
    expect(a.reset({ seed: 2 }).observation).toBe(b.reset({ seed: 2 }).observation);
    expect(c.reset({ seed: 3 }).observation).not.toBe(a.gridText());
    const action = a.legalActions().find((x) => x.startsWith('go '))!;
    expect(a.step(action)).toEqual(b.step(action));
  }, 300_000);

  it('passes the env checker (getState/setState replays the seeded game)', () => {
    const report = checkEnv(() => createEnv('textworld', { level: 'cooking-easy' }), { seeds: [0, 1, 2], maxSteps: 8 });
    expect(report.problems).toEqual([]);
    expect(report.stepsRun).toBeGreaterThan(5);
  }, 300_000);

  it('scores a predicted text state exactly after normalisation, and a wrong one by its equal lines', () => {
    const env = createEnv('textworld');
    env.reset({ seed: 1 });
    env.step('go south');
    const truth = env.board();
    const sloppy = env.gridText().toUpperCase().replace(/\n/g, '\n\n   ');
    expect(scoreWorldModel(parseStateText('textworld', sloppy), truth)).toMatchObject({ parsed: true, exact: true, cellAccuracy: 1 });
    const lines = env.gridText().split('\n');
    const oneWrong = [...lines.slice(0, -1), 'Admissible commands: go west'].join('\n');
    const score = scoreWorldModel(parseStateText('textworld', oneWrong), truth);
    expect(score.exact).toBe(false);
    expect(score.cellAccuracy).toBeGreaterThan(0.5);
    expect(score.cellAccuracy).toBeLessThan(1);
    expect(getEnvDefinition('textworld').rules!(env)).toBe('Find the coin and take it; move with go north/south/east/west.');
  }, 300_000);

  it('plays from the CLI: env run --env textworld --seed 1 --actions "go south, go east, take coin"', async () => {
    expect(splitActions('textworld', 'go south, go east, take coin')).toEqual(['go south', 'go east', 'take coin']);
    const out = await cli('env', 'run', '--env', 'textworld', '--seed', '1', '--actions', 'go south, go east, take coin', '--json');
    expect(out.code ?? 0).toBe(0);
    const result = JSON.parse(out.stdout) as { steps: Array<{ action: string; terminated: boolean; info: { success: boolean } }>; totalReward: number };
    expect(result.steps.map((s) => s.action)).toEqual(['go south', 'go east', 'take coin']);
    expect(result.steps[2]!.info.success).toBe(true);
    expect(result.totalReward).toBe(1);
  }, 300_000);
});
