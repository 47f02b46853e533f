// Placeholder: the owning area replaces this file with its subcommands.
import type { Command } from 'commander';

export function registerStudyCommands(_program: Command): void {}
