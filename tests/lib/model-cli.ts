// Runs `spa-workbench model …` in-process (commander with exitOverride), capturing console output and the exit code.
import { Command } from 'commander';
import { vi } from 'vitest';
import { registerModelCommands } from '../../core/cli/model-commands.js';

export async function modelCli(...args: string[]): Promise<{ out: string; err: string; code: number }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => { out.push(a.join(' ')); });
  const error = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => { err.push(a.join(' ')); });
  process.exitCode = 0;
  try {
    const program = new Command().exitOverride();
    registerModelCommands(program);
    await program.parseAsync(['node', 'spa-workbench', ...args]);
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = 0;
  return { out: out.join('\n'), err: err.join('\n'), code };
}
