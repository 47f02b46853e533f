// spa-workbench base build|ship|show: the shipped bases (core/train/shipped-base.ts).
//   build  trains a base (a run of the vanilla-rl preset whose plan is the bootstrap stage only, at
//          the given size, with the study's env options) and writes resources/bases/<env>/
//   ship   writes the shipped base from a finished bootstrap run (e.g. one resumed by hand)
//   show   lists the shipped bases, checks their hashes and prints their gate
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { RunConfigSchema, type RunConfig } from '../api/run-config.js';
import type { BootstrapGate } from '../train/world-model-check.js';
import { builtinTemplate } from '../prompts/resolve-template.js';
import type { ShippedBaseRecord } from '../train/shipped-base.js';
import { workbenchHome } from '../storage/home.js';
import { parseSetArgs, resolveRunConfig } from '../engine/config.js';
import type { Size } from '../api/contract.js';

/**
 * The bootstrap, shipped-base and checkpoint code, loaded when a base command runs: it brings the
 * model code (TF.js), which the CLI's other commands and its start should not wait for.
 */
async function lib() {
  const [bootstrap, check, shipped, checkpoint] = await Promise.all([
    import('../train/bootstrap.js'), import('../train/world-model-check.js'), import('../train/shipped-base.js'), import('../model/checkpoint.js'),
  ]);
  return { ...bootstrap, ...check, ...shipped, ...checkpoint };
}

function fail(message: string): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

function collect(value: string, previous: string[] = []): string[] { return [...previous, value]; }

const CLI = fileURLToPath(new URL('../../bin/spa-workbench.mjs', import.meta.url));

/** Runs the CLI in a child process (progress on stderr) and returns the final run JSON it prints. */
function runCli(args: string[]): Promise<{ code: number; run: { id: string; dir: string; status: string } | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args, '--json'], { stdio: ['inherit', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString('utf8'); });
    child.on('error', reject);
    child.on('close', (code) => {
      let run = null;
      try { run = JSON.parse(out.slice(out.indexOf('{'))) as { id: string; dir: string; status: string }; } catch { run = null; }
      resolve({ code: code ?? 1, run });
    });
  });
}

/** The shipped base from a finished bootstrap run folder. */
async function shipFromRun(runDir: string, out: string, command: string): Promise<ShippedBaseRecord> {
  const runFile = path.join(runDir, 'run.json');
  if (!fs.existsSync(runFile)) fail(`${runDir}: not a run folder (no run.json)`);
  type StageInfo = { name: string; status: string; startedAt?: number; finishedAt?: number };
  const info = JSON.parse(fs.readFileSync(runFile, 'utf8')) as { id: string; config: unknown; stages: StageInfo[] };
  const stage = info.stages.find((s) => s.name === 'bootstrap');
  if (!stage || stage.status !== 'completed') {
    fail(`${runDir}: its bootstrap stage is ${stage ? stage.status : 'missing'}; finish it first (spa-workbench resume ${info.id} --project ...)`);
  }
  const checkpoint = path.join(runDir, 'checkpoints', 'bootstrap');
  if (!fs.existsSync(path.join(checkpoint, 'config.json'))) fail(`${checkpoint}: no bootstrap checkpoint`);
  const config: RunConfig = RunConfigSchema.parse(info.config);
  const gateFile = path.join(runDir, 'bootstrap', 'gate.json');
  const gate = fs.existsSync(gateFile) ? JSON.parse(fs.readFileSync(gateFile, 'utf8')) as Record<string, unknown> : null;
  const { bootstrapTemplates, shipBase } = await lib();
  const { templates } = bootstrapTemplates(config, runDir);
  const trainSeconds = stage.startedAt && stage.finishedAt ? Math.round((stage.finishedAt - stage.startedAt) / 1000) : null;
  const resolved = templates.map((t) => (typeof t === 'string' ? builtinTemplate(t) : t));
  return shipBase({ checkpoint, out, config, templates: resolved, command, gate, trainSeconds, sourceRun: info.id });
}

interface ShipCheckpointOptions {
  checkpoint: string; env: string; size: string; set: string[]; gate?: string; trainSeconds?: string; command: string; out?: string;
}

/** The config a bootstrap checkpoint was trained with: base build's run (vanilla-rl, bootstrap only) at --size with --set. */
async function shipFromCheckpoint(o: ShipCheckpointOptions): Promise<ShippedBaseRecord> {
  const checkpoint = path.resolve(o.checkpoint);
  if (!fs.existsSync(path.join(checkpoint, 'config.json'))) fail(`${checkpoint}: not a checkpoint folder (no config.json)`);
  const { bootstrapTemplates, shipBase, shippedBasesDir, verifyCheckpoint } = await lib();
  const problems = await verifyCheckpoint(checkpoint);
  if (problems.length > 0) fail(`${checkpoint}: damaged checkpoint: ${problems.join('; ')}`);
  let set: Record<string, unknown> = {};
  try { set = parseSetArgs(o.set); } catch (err) { fail((err as Error).message); }
  const resolved = resolveRunConfig({
    preset: 'vanilla-rl', size: o.size as Size, name: `base-${o.env}`,
    set: { 'env.id': o.env, 'stages.plan.order': ['bootstrap'], 'stages.bootstrap.shipped': false, ...set },
  });
  if (!resolved.ok || !resolved.config) fail(`the base's config does not resolve: ${resolved.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  const config = resolved.config;
  let gate: Record<string, unknown> | null = null;
  if (o.gate) {
    if (!fs.existsSync(o.gate)) fail(`--gate ${o.gate}: no such file`);
    try { gate = JSON.parse(fs.readFileSync(o.gate, 'utf8')) as Record<string, unknown>; } catch (err) { fail(`--gate ${o.gate}: ${(err as Error).message}`); }
    if (typeof gate?.passed !== 'boolean' || typeof gate.observationExact !== 'number') fail(`--gate ${o.gate}: not a bootstrap gate.json`);
  }
  const trainSeconds = o.trainSeconds === undefined ? null : Number(o.trainSeconds);
  if (trainSeconds !== null && !(Number.isFinite(trainSeconds) && trainSeconds >= 0)) fail(`--train-seconds: expected seconds, got ${o.trainSeconds}`);
  const { templates } = bootstrapTemplates(config);
  const resolvedTemplates = templates.map((t) => (typeof t === 'string' ? builtinTemplate(t) : t));
  const out = o.out ?? path.join(shippedBasesDir(), o.env);
  return shipBase({ checkpoint, out, config, templates: resolvedTemplates, command: o.command, gate, trainSeconds, sourceRun: null });
}

async function printRecord(dir: string, record: ShippedBaseRecord): Promise<void> {
  const { gateLine } = await lib();
  const gate = record.gate as BootstrapGate | null;
  process.stdout.write(`${dir}: ${record.env}, content ${record.contentHash.slice(0, 16)}…, match key ${record.matchKey}\n`);
  process.stdout.write(`  command: ${record.command}\n`);
  const { games, drills, gate: gateSeeds } = record.dataSeeds;
  process.stdout.write(`  data seeds: games ${games.join('–')}, drills ${drills[1] < drills[0] ? 'none' : drills.join('–')}, gate ${gateSeeds.join('–')}\n`);
  process.stdout.write(`  ${gate ? gateLine(gate) : 'no gate recorded'}\n`);
  if (record.trainSeconds !== null) process.stdout.write(`  trained in ${(record.trainSeconds / 60).toFixed(1)} min (run ${record.sourceRun})\n`);
}

export function registerBaseCommands(program: Command): void {
  const base = program.command('base').description('the shipped bases (resources/bases/<env>): build, ship from a run, show');

  base.command('build')
    .description('train the base of an env (a bootstrap-only run of the vanilla-rl preset with the study\'s env options) and write resources/bases/<env>/')
    .requiredOption('--env <id>', 'environment id (frozenlake, sokoban, sudoku)')
    .option('--size <size>', 'preset size whose model and bootstrap settings the base uses', 'quick')
    .option('--project <dir>', 'project folder for the training run', '')
    .option('--set <key=value>', 'extra config override (repeatable), e.g. --set stages.bootstrap.steps=1200', collect, [])
    .option('--out <dir>', 'destination (default: resources/bases/<env>)')
    .option('--resume <runId>', 'resume a stopped build run of --project instead of starting one')
    .action(async (o: { env: string; size: string; project: string; set: string[]; out?: string; resume?: string }) => {
      const project = o.project || path.join(workbenchHome(), 'base-builds', o.env);
      const { shippedBasesDir } = await lib();
      const out = o.out ?? path.join(shippedBasesDir(), o.env);
      const sets = [`env.id=${o.env}`, 'stages.plan.order=["bootstrap"]', 'stages.bootstrap.shipped=false', ...o.set];
      const args = o.resume
        ? ['resume', o.resume, '--project', project]
        : ['run', 'vanilla-rl', '--size', o.size, '--project', project, '--name', `base-${o.env}`, ...sets.flatMap((s) => ['--set', s])];
      process.stderr.write(`training the ${o.env} base: spa-workbench ${args.join(' ')}\n`);
      const { code, run } = await runCli(args);
      if (code !== 0 || !run) {
        const resume = `spa-workbench base build --env ${o.env} --project ${project} --resume <runId>`;
        fail(`the base run did not complete (exit ${code}${run ? `, ${run.id} ${run.status}` : ''}); resume with: ${resume}`);
      }
      const command = `spa-workbench base build --env ${o.env} --size ${o.size}${o.set.map((s) => ` --set '${s}'`).join('')}`;
      const record = await shipFromRun(run.dir, out, command);
      await printRecord(out, record);
    });

  base.command('ship')
    .description('write the shipped base from a finished bootstrap run, or from a bootstrap checkpoint described by --env/--size (its weights as F16, ' +
      'its config, gate and data seeds)')
    .option('--project <dir>', 'project folder of the run')
    .option('--run <id>', 'run id')
    .option('--checkpoint <dir>', 'instead of a run: a bootstrap checkpoint folder (e.g. trained in phases by hand), described by --env and --size')
    .option('--env <id>', 'with --checkpoint: its environment (the study\'s env options are applied as in base build)')
    .option('--size <size>', 'with --checkpoint: the preset size whose bootstrap settings trained it', 'quick')
    .option('--set <key=value>', 'with --checkpoint: config overrides it was trained with (repeatable)', collect, [])
    .option('--gate <file>', 'with --checkpoint: the gate.json measured on it (bootstrap/gate.json of its last run)')
    .option('--train-seconds <n>', 'with --checkpoint: total training wall time in seconds, recorded in the manifest')
    .requiredOption('--command <text>', 'the command that reproduces the base (recorded in the manifest)')
    .option('--out <dir>', 'destination (default: resources/bases/<env of the run>)')
    .action(async (o: {
      project?: string; run?: string; checkpoint?: string; env?: string; size: string; set: string[]; gate?: string; trainSeconds?: string;
      command: string; out?: string;
    }) => {
      const { shippedBasesDir } = await lib();
      if (o.checkpoint) {
        if (o.project || o.run) fail('give either --checkpoint (with --env) or --project and --run, not both');
        if (!o.env) fail('--checkpoint needs --env <id> (and --size if not quick)');
        await printRecord(o.out ?? path.join(shippedBasesDir(), o.env), await shipFromCheckpoint(o as ShipCheckpointOptions & { env: string }));
        return;
      }
      if (!o.project || !o.run) fail('give --project and --run (a finished bootstrap run), or --checkpoint with --env');
      const runDir = path.join(path.resolve(o.project), 'runs', o.run);
      if (!fs.existsSync(path.join(runDir, 'run.json'))) fail(`${runDir}: not a run folder (no run.json)`);
      const env = (JSON.parse(fs.readFileSync(path.join(runDir, 'run.json'), 'utf8')) as { config: { env: { id: string } } }).config.env.id;
      const out = o.out ?? path.join(shippedBasesDir(), env);
      await printRecord(out, await shipFromRun(runDir, out, o.command));
    });

  base.command('show')
    .description('list the shipped bases, check their files against manifest.json and print their gate')
    .option('--dir <dir>', 'folder of the bases (default: resources/bases)')
    .action(async (o: { dir?: string }) => {
      const { contentHash, readManifest, SHIPPED_BASE_FORMAT, shippedBasesDir, verifyCheckpoint } = await lib();
      const root = o.dir ?? shippedBasesDir();
      const envs = fs.existsSync(root) ? fs.readdirSync(root).filter((e) => fs.existsSync(path.join(root, e, 'manifest.json'))) : [];
      if (envs.length === 0) { process.stdout.write(`no shipped bases in ${root}\n`); return; }
      let bad = 0;
      for (const env of envs) {
        const dir = path.join(root, env);
        const manifest = await readManifest(dir);
        const record = (manifest?.extra as { shippedBase?: ShippedBaseRecord } | undefined)?.shippedBase;
        if (!manifest || record?.format !== SHIPPED_BASE_FORMAT) { process.stdout.write(`${dir}: no shipped-base record\n`); bad++; continue; }
        const problems = await verifyCheckpoint(dir);
        if (problems.length === 0 && contentHash(manifest) !== record.contentHash) problems.push('content hash differs from the recorded one');
        await printRecord(dir, record);
        process.stdout.write(problems.length ? `  DAMAGED: ${problems.join('; ')}\n` : '  files intact\n');
        if (problems.length) bad++;
      }
      if (bad) process.exit(1);
    });
}
