// Entry of the probe.turn child in the desktop app (bundled as dist-electron/probe.js, started as
// an Electron utilityProcess): runs `probe <argv>` exactly as `spa-workbench probe` does, without
// the tsx loader or bin/ (neither ships in the packaged app) and without ELECTRON_RUN_AS_NODE.
import { Command } from 'commander';
import { registerProbeCommands } from './probe-commands.js';

const program = new Command().name('spa-workbench');
registerProbeCommands(program);
await program.parseAsync(['node', 'spa-workbench', 'probe', ...process.argv.slice(2)]);
