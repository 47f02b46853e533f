// Placeholder: the owning area replaces this file with its subcommands.
import type { Command } from 'commander';

export function registerModelCommands(_program: Command): void {}
