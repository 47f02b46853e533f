// `spa-workbench template …`: state perplexity of a prompt template under a run's checkpoint.
//
//   template perplexity --project DIR --run RUN [--checkpoint NAME] --env ID [--config JSON]
//                       [--template NAME|--template-file FILE|-] [--samples N] [--seed-start N]
//                       [--backend NAME] [--json]
//   template checkpoints --project DIR --run RUN [--json]
//
// Reads the project folder directly (no project lock: it is safe next to a running app or
// server). With --json a failure prints `{ "error": { name, message, details } }` on stdout and
// exits 1; the API's templates.perplexity runs this command in a child process and relies on it.
import { readFileSync } from 'node:fs';
import { readRegularTextSync, stripBom } from '../util/regular-file.js';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { reportCommandError, usageFail as fail } from './action.js';

interface PerplexityFlags {
  project: string; run: string; checkpoint?: string; env: string; config?: string; template?: string; templateFile?: string;
  samples?: string; seedStart?: string; backend?: string; json?: boolean;
}
interface CheckpointsFlags { project: string; run: string; json?: boolean }

function intFlag(name: string, text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < min || n > max) fail(`${name}: expected an integer from ${min} to ${max}, ` +
    `received ${JSON.stringify(text)}`);
  return n;
}

function parseConfig(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try { value = JSON.parse(text); } catch (e) {
    fail(`--config: expected a JSON object such as '{"width":6,"height":6}', received ${JSON.stringify(text)} (${(e as Error).message})`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) fail(`--config: expected a JSON object, received ${text}`);
  return value as Record<string, unknown>;
}

function readTemplateFile(file: string): string {
  // a BOM dropped (Notepad writes one); a file must be a regular file (a FIFO is refused unopened); '-' is standard input
  try {
    return file === '-' ? stripBom(readFileSync(0, 'utf8')) : readRegularTextSync(file, { maxBytes: 16 * 1024 ** 2, what: 'a template file' });
  } catch (e) {
    return fail(`--template-file: cannot read ${file === '-' ? 'standard input' : resolve(file)}: ${(e as Error).message}`);
  }
}

function fmt(x: number, digits = 4): string { return Number.isFinite(x) ? x.toFixed(digits) : String(x); }

export function registerTemplateCommands(program: Command): void {
  const template = program.command('template').description('prompt templates: state perplexity under a run\'s checkpoint');

  template.command('perplexity')
    .description('state perplexity of a template under a checkpoint: exp(mean NLL) of the true state text (observation and prediction) on sampled states')
    .requiredOption('--project <dir>', 'project folder')
    .requiredOption('--run <id>', 'run id (a folder under <project>/runs/)')
    .option('--checkpoint <name>', 'checkpoint folder under runs/<run>/checkpoints/ (default: the run\'s latest)')
    .requiredOption('--env <id>', 'environment id (sokoban, frozenlake, sudoku)')
    .option('--config <json>', 'env options as JSON, e.g. \'{"width":6,"height":6}\'')
    .option('--template <name>', 'a preset (spa, coordinates, tiny-spa, …) or a saved template (name or name@hash); default tiny-spa')
    .option('--template-file <file>', 'template JSON text from a file ("-" reads standard input)')
    .option('--samples <n>', 'sampled states, one row each (default 8)')
    .option('--seed-start <n>', 'first seed (default: the run\'s evaluation seeds, seeds.evalStart)')
    .option('--backend <name>', 'compute backend: auto, torch, wasm, cpu, tensorflow, tensorflow-gpu (default: the run\'s)')
    .option('--json', 'print JSON (errors too: { "error": { name, message, details } })')
    .action(async (flags: PerplexityFlags) => {
      try {
        if (flags.template !== undefined && flags.templateFile !== undefined) fail('give --template or --template-file, not both');
        const samples = intFlag('--samples', flags.samples, 1, 256);
        const seedStart = intFlag('--seed-start', flags.seedStart, -(2 ** 31), 2 ** 53 - 1);
        const options = parseConfig(flags.config);
        const source = flags.templateFile !== undefined ? readTemplateFile(flags.templateFile) : undefined;
        const { templatePerplexity } = await import('../eval/template-perplexity.js');
        const r = await templatePerplexity({
          project: flags.project, runId: flags.run, ...(flags.checkpoint !== undefined ? { checkpoint: flags.checkpoint } : {}),
          env: { id: flags.env, options }, template: source !== undefined ? { source } : { name: flags.template ?? 'tiny-spa' },
          ...(samples !== undefined ? { samples } : {}), ...(seedStart !== undefined ? { seedStart } : {}),
          ...(flags.backend !== undefined ? { backend: flags.backend } : {}),
        });
        if (flags.json) { process.stdout.write(`${JSON.stringify(r, null, 2)}\n`); return; }
        process.stdout.write(`state perplexity ${fmt(r.perplexity)}  (mean NLL ${fmt(r.meanNll)} nats over ${r.tokens} state tokens, ${r.rows} ` +
          `rows, seeds ${r.seedStart}…${r.seedStart + r.samples - 1})\n`);
        process.stdout.write(`template ${r.template.name}@${r.template.hash.slice(0, 12)} (${r.template.from}) ` +
          `on ${r.env.id}${Object.keys(r.env.options).length ? ` ${JSON.stringify(r.env.options)}` : ''}\n`);
        const stage = r.checkpoint.stage ? ` (stage ${r.checkpoint.stage}, step ${r.checkpoint.step})` : '';
        process.stdout.write(`checkpoint ${r.checkpoint.name}${stage} of run ${r.runId}; context ${r.maxContext} tokens, longest row ${r.longestRow}\n`);
        process.stdout.write(`backend ${r.backend}, ${r.wallSeconds.toFixed(2)} s\n`);
      } catch (err) {
        reportCommandError(err, flags.json, 'template perplexity');
      }
    });

  template.command('checkpoints')
    .description('list the checkpoints of a run (the latest policy checkpoint is the default for perplexity)')
    .requiredOption('--project <dir>', 'project folder')
    .requiredOption('--run <id>', 'run id')
    .option('--json', 'print JSON')
    .action(async (flags: CheckpointsFlags) => {
      try {
        const { latestCheckpoint, listRunCheckpoints } = await import('../eval/template-perplexity.js');
        const list = listRunCheckpoints(flags.project, flags.run);
        const latest = latestCheckpoint(list)?.name ?? null;
        if (flags.json) { process.stdout.write(`${JSON.stringify({ runId: flags.run, latest, checkpoints: list }, null, 2)}\n`); return; }
        if (list.length === 0) { process.stdout.write(`run ${flags.run} has no checkpoints yet\n`); return; }
        for (const c of list) process.stdout.write(`${c.name === latest ? '*' : ' '} ${c.name.padEnd(24)} ${(c.stage ?? '?').padEnd(10)} ` +
          `step ${String(c.step ?? '?').padStart(6)}  ${c.created ?? ''}${c.role === 'critic' ? '  (critic)' : ''}\n`);
      } catch (err) {
        reportCommandError(err, flags.json, 'template perplexity');
      }
    });
}
