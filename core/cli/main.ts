// spa-workbench CLI: one program, subcommands registered by each area in its own file.
import { Command } from 'commander';
import { registerCoreCommands } from './core-commands.js';
import { registerEnvCommands } from './env-commands.js';
import { registerModelCommands } from './model-commands.js';
import { registerStudyCommands } from './study-commands.js';
import { registerTemplateCommands } from './template-commands.js';

const program = new Command();
program
  .name('spa-workbench')
  .description('SPA Workbench: run and study world-model reinforcement learning for LLM agents')
  .showHelpAfterError()
  .enablePositionalOptions();

registerCoreCommands(program);   // run, list, show, export, serve, start (core/cli/core-commands.ts)
registerEnvCommands(program);    // env list|render|run|solve|play (core/cli/env-commands.ts)
registerModelCommands(program);  // model info|generate|score|init (core/cli/model-commands.ts)
registerStudyCommands(program);  // study ... (core/cli/study-commands.ts)
registerTemplateCommands(program); // template perplexity|checkpoints (core/cli/template-commands.ts)

await program.parseAsync(process.argv);
