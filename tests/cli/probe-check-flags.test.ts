// `probe --check` (the eval's world-model check on any checkpoint): flags that belong to the one-turn probe are refused
// with a clear reason, as are --base/--out without --check and a bad turn count. The check itself: tests/train/wm-versus-base.
import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerProbeCommands } from '../../core/cli/probe-commands.js';

async function probe(args: string[]): Promise<{ error?: { name: string; message: string } }> {
  let stdout = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => { stdout += String(chunk); return true; });
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const saved = process.exitCode;
  try {
    const program = new Command().exitOverride();
    registerProbeCommands(program);
    await program.parseAsync(['node', 'spa-workbench', 'probe', '--project', '/nonexistent-project', '--json', ...args]);
    return JSON.parse(stdout) as { error?: { name: string; message: string } };
  } finally {
    vi.restoreAllMocks();
    process.exitCode = saved;
  }
}

afterEach(() => vi.restoreAllMocks());

describe('probe --check flags', () => {
  it('refuses one-turn flags with --check, --base/--out without it, a bad count, and no --run', async () => {
    expect((await probe(['--run', 'r', '--check', '--seed', '3'])).error?.message).toBe('--seed does not go with --check (it checks the first turns of the eval puzzles)');
    expect((await probe(['--run', 'r', '--check', '--sample-seed', '3'])).error?.message).toMatch(/^--sample-seed does not go with --check/);
    expect((await probe(['--run', 'r', '--seed', '3', '--base', '/x'])).error?.message).toBe('--base and --out go with --check');
    expect((await probe(['--run', 'r', '--check', '0'])).error?.message).toMatch(/^--check: expected an integer ≥ 1, received "0"/);
    expect((await probe(['--check'])).error?.message).toBe('--check needs --run');
    // past the flags: the project is looked up, and its absence is reported
    const missing = await probe(['--run', 'r', '--check', '8']);
    expect(missing.error?.name).toBe('NotFound');
  });
});
