// spa-workbench doctor --project DIR [--repair] [--json]: check a project folder (damaged runs,
// moved-aside files, stale locks with their holder, leftovers of interrupted writes, damaged
// stage markers, torn JSONL lines) and, with --repair, fix what is safe (never deletes data).
// Exit code: 0 healthy (after the repairs), 1 problems remain or the check failed.
import type { Command } from 'commander';
import { formatDoctorReport, runDoctor } from '../storage/doctor.js';

export function registerDoctorCommand(program: Command): void {
  program.command('doctor')
    .description('check a project folder: damaged runs, moved-aside files, stale locks, temp leftovers; --repair fixes what is safe')
    .requiredOption('--project <dir>', 'project folder')
    .option('--repair', 'fix what is safe: stale lock, interrupted-write leftovers, rebuild run.json where possible (never deletes data)')
    .option('--json', 'print the report as JSON')
    .action((o: { project: string; repair?: boolean; json?: boolean }) => {
      try {
        const report = runDoctor(o.project, { repair: o.repair === true, purpose: 'spa-workbench doctor' });
        process.stdout.write(o.json ? `${JSON.stringify(report, null, 2)}\n` : formatDoctorReport(report));
        process.exitCode = report.problems === 0 ? 0 : 1;
      } catch (err) {
        const e = err as Error;
        process.stderr.write(`error: ${e.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e.message}\n`);
        process.exitCode = 1;
      }
    });
}
