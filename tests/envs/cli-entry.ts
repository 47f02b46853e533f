// Minimal CLI with only the env commands, for tests/envs/cli.test.ts (independent of other areas' commands).
import { Command } from 'commander';
import { registerEnvCommands } from '../../core/cli/env-commands.js';

const program = new Command().name('spa-workbench').exitOverride();
registerEnvCommands(program);
await program.parseAsync(process.argv);
