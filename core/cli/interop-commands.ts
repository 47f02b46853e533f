// SPA/RAGEN interop commands: `import DIR --project P` (a finished SPA/RAGEN run becomes a read-only
// run) and the `--to spa-ragen` branch of `export` (core/cli/core-commands.ts dispatches here).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { WorkbenchError } from '../api/errors.js';
import { BUNDLE_VALUES, exportSpaRagenBundle, type BundleValues } from '../interop/export-bundle.js';
import { isInside, realPathOf } from '../storage/real-path.js';

function message(err: unknown): string {
  if (err instanceof WorkbenchError || (err instanceof Error && 'details' in err)) {
    const e = err as WorkbenchError;
    return `${e.name}: ${e.message}${e.details?.expected ? ` (expected ${e.details.expected})` : ''}`;
  }
  return err instanceof Error ? err.message : String(err);
}

export const EXPORT_TARGETS = ['spa-ragen'] as const;

/** `export RUN --to spa-ragen --out DIR [--values run|paper]`: reads the run folder (no project lock needed) and writes the bundle. */
export function exportTo(target: string, project: string, runId: string, out: string, model?: string, values?: string): void {
  if (values !== undefined && !(BUNDLE_VALUES as readonly string[]).includes(values)) {
    throw new Error(`--values: expected ${BUNDLE_VALUES.join(' | ')} (run: the run's own settings; paper: the SPA release's), ` +
      `received ${JSON.stringify(values)}`);
  }
  if (!(EXPORT_TARGETS as readonly string[]).includes(target)) throw new Error(`--to: expected ${EXPORT_TARGETS.join(' | ')}, received ` +
    `${JSON.stringify(target)}`);
  const runDir = path.join(path.resolve(project), 'runs', runId);
  if (!/^[\w.-]+$/.test(runId) || !fs.existsSync(path.join(runDir, 'run.json'))) {
    throw new Error(`run ${JSON.stringify(runId)} not found in ${project} (list runs with: spa-workbench list --project ${project})`);
  }
  const target_ = realPathOf(out);            // links resolved: a linked --out cannot write inside the project
  const projectAbs = realPathOf(project);
  if (isInside(target_, projectAbs)) throw new Error(`--out: ${target_} is inside the project folder; choose a ` +
    `folder outside it`);
  const r = exportSpaRagenBundle({ runDir, out, ...(model ? { model } : {}), ...(values ? { values: values as BundleValues } : {}) });
  process.stdout.write(`wrote SPA/RAGEN bundle ${r.dir} (${r.files.length} files)\n  model: ${r.model.path} (${r.model.note})\n` +
    `  values: ${r.values === 'paper' ? 'the SPA release\'s (--values paper)' : 'the run\'s own'}\n`);
  for (const w of r.warnings) process.stdout.write(`  note: ${w}\n`);
  process.stdout.write(`  next: ${path.join(r.dir, 'launch.sh')} --ragen /path/to/RAGEN --gpus N   (see README.md in the bundle)\n`);
}

export function registerInteropCommands(program: Command): void {
  program.command('import')
    .description('import a finished SPA/RAGEN run (recorder JSONL, raw_trajectories_*.json, wm_*.parquet, verl file-logger JSONL, W&B val/generations ' +
      'table), or a folder written by `export RUN --out DIR/`, as a read-only run')
    .argument('<dir>', 'the run\'s output folder, or one file')
    .requiredOption('--project <dir>', 'project folder (created when missing)')
    .option('--name <name>', 'display name of the imported run')
    .action(async (dir: string, o: { project: string; name?: string }) => {
      const { createDispatcher } = await import('../host/dispatcher.js');
      const { createInProcessClient } = await import('../host/in-process.js');
      const d = createDispatcher({ host: 'cli', lockPurpose: 'cli import' });
      const api = createInProcessClient(d);
      try {
        const abs = path.resolve(o.project);
        if (fs.existsSync(path.join(abs, 'workbench.json'))) await api.projects.open({ path: abs });
        else await api.projects.create({ path: abs });
        const r = await api.runs.import({ path: dir, ...(o.name ? { name: o.name } : {}) });
        process.stdout.write(`imported ${r.run.id} (${r.run.env}, ${r.run.method}): ${r.sources.map((s) => `${s.kind} ${s.file} (${s.count})`).join(', ')}\n`);
        for (const s of r.skipped) process.stdout.write(`  not imported: ${s}\n`);
        for (const w of r.warnings) process.stdout.write(`  warning: ${w}\n`);
      } catch (err) {
        process.stderr.write(`error: ${message(err)}\n`);
        process.exitCode = 1;
      } finally {
        await d.dispose();
      }
    });
}
