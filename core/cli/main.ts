// spa-workbench CLI: one program, subcommands registered by each area in its own file.
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerCoreCommands } from './core-commands.js';
import { registerEnvCommands } from './env-commands.js';
import { registerInteropCommands } from './interop-commands.js';
import { registerModelCommands } from './model-commands.js';
import { registerStudyCommands } from './study-commands.js';
import { registerTemplateCommands } from './template-commands.js';
import { registerDoctorCommand } from './doctor-command.js';
import { suggestUnknownOptions } from './option-suggest.js';
import { registerProbeCommands } from './probe-commands.js';

// `spa-workbench … | head` closes the pipe early: drop further output instead of crashing with
// EPIPE. The command itself carries on (a `run` keeps its engine and finishes its run cleanly).
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    stream.write = (() => true) as typeof stream.write;
  });
}

const program = new Command();
program
  .name('spa-workbench')
  .description('SPA Workbench: run and study world-model reinforcement learning for LLM agents')
  .version(
    (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version,
    '-V, --version',
    'print the version',
  )
  .showHelpAfterError()
  .enablePositionalOptions();

registerCoreCommands(program);   // run, list, show, export, serve, start (core/cli/core-commands.ts)
registerEnvCommands(program);    // env list|render|run|solve|play (core/cli/env-commands.ts)
registerModelCommands(program);  // model info|generate|score|init (core/cli/model-commands.ts)
registerStudyCommands(program);  // study ... (core/cli/study-commands.ts)
registerTemplateCommands(program); // template perplexity|checkpoints (core/cli/template-commands.ts)
registerDoctorCommand(program);    // doctor --project DIR [--repair] [--json] (core/cli/doctor-command.ts)
registerProbeCommands(program);    // probe: the world-model probe (core/cli/probe-commands.ts)
registerInteropCommands(program);  // import; export --to spa-ragen (core/cli/interop-commands.ts)
suggestUnknownOptions(program);    // "(Did you mean --project?)" before "required option missing" (core/cli/option-suggest.ts)

await program.parseAsync(process.argv);
