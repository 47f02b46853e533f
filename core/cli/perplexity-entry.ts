// Entry of the templates.perplexity child in the desktop app (bundled as
// dist-electron/template-perplexity.js, started as an Electron utilityProcess): runs
// `template perplexity <argv>` exactly as `spa-workbench template perplexity` does, without the
// tsx loader or bin/ (neither ships in the packaged app) and without ELECTRON_RUN_AS_NODE.
import { Command } from 'commander';
import { registerTemplateCommands } from './template-commands.js';

const program = new Command().name('spa-workbench');
registerTemplateCommands(program);
await program.parseAsync(['node', 'spa-workbench', 'template', 'perplexity', ...process.argv.slice(2)]);
