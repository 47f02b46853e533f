// `spa-workbench study …`: run a grid of runs (methods × envs × seeds) in a project, resumable,
// and produce the comparison table (paper layout), CSV and PNG curves.
//   study run   --methods a,b --envs x,y --seeds 0,1 --size quick --project DIR [--name N] | --grid FILE
//   study table --name N --project DIR [--project DIR2 …] [--records DIR …] [--out DIR]
//   study record --project DIR --name N --out DIR [--missing | --add-curves]
import { PRESET_SIZES } from '../api/run-config.js';
import { describeJsonError } from './json-error.js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { createDispatcher } from '../host/dispatcher.js';
import { createInProcessClient } from '../host/in-process.js';
import { cellKey, loadProjectRuns, parseStudySpec, studyCells, writeStudyReport, type StudyRun, type StudySpec } from '../eval/study.js';
import { addRecordCurves, mergeStudyRuns, missingStudyCells, readStudyRecords, recordStudyRuns } from '../eval/study-records.js';
import { parseSetArgs } from '../engine/config.js';

function fail(message: string): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

function list(value: string, what: string): string[] {
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) fail(`${what}: expected a comma-separated list, received ${JSON.stringify(value)}`);
  return items;
}

function collect(value: string, previous: string[] = []): string[] { return [...previous, value]; }

const STUDY_SIZES: readonly string[] = PRESET_SIZES;   // the sizes every method preset defines (RUN_SIZES, core/api/run-config.ts)


/** The study names of the records in `dirs` (runs/*.json, field "study"), in order of first appearance;
 *  unreadable files are left to readStudyRecords to report. */
function recordedStudies(dirs: string[]): string[] {
  const names = new Set<string>();
  for (const dir of dirs) {
    const runsDir = path.join(dir, 'runs');
    const files = fs.existsSync(runsDir) ? fs.readdirSync(runsDir).filter((f) => f.endsWith('.json')).sort() : [];
    for (const f of files) {
      try {
        const study = (JSON.parse(fs.readFileSync(path.join(runsDir, f), 'utf8')) as { study?: unknown }).study;
        if (typeof study === 'string') names.add(study);
      } catch { /* reported by readStudyRecords, with the file and line */ }
    }
  }
  return [...names];
}

/** What a grid file held for the fields parseStudySpec checks (its message says only what is expected). */
function describeSpecValues(raw: unknown): string {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return '';
  const o = raw as Record<string, unknown>;
  return `; received ${['name', 'methods', 'envs', 'seeds', 'size'].map((k) => `${k} = ${JSON.stringify(o[k]) ?? 'missing'}`).join(', ')}`;
}

async function runStudy(spec: StudySpec, projectDir: string): Promise<number> {
  const project = path.resolve(projectDir);
  // The same study runner as the API's studies.start (core/engine/study-host.ts): the same
  // state files, so a study started here can be followed and resumed from the UI and back.
  const d = createDispatcher({
    host: 'cli', lockPurpose: 'cli study run',
    studyHooks: {
      onRunStarting: (_study, r) => {
        const head = `[${r.index + 1}/${r.total}] ${r.name}:`;
        if (r.action === 'skipped') process.stdout.write(`${head} completed, skipped\n`);
        else if (r.action === 'recorded') process.stdout.write(`${head} recorded in --skip-recorded, skipped\n`);
        else if (r.action === 'resumed') process.stdout.write(`${head} resuming ${r.runId}\n`);
        else if (r.action === 'waiting') process.stdout.write(`${head} already running (${r.runId}), waiting for it\n`);
        else process.stdout.write(`${head} ${r.runId} (${r.stages.join(' → ')})\n`);
      },
      onRunEnded: (_study, run) => {
        process.stdout.write(`    ${run.status}${run.reason ? ` (${run.reason})` : ''} in ${(run.durationMs / 1000).toFixed(0)} s\n`);
      },
    },
  });
  const api = createInProcessClient(d);
  if (fs.existsSync(path.join(project, 'workbench.json'))) await api.projects.open({ path: project });
  else await api.projects.create({ path: project });
  const outDir = path.join(project, 'studies', spec.name);
  let stopping = false;
  const onSignal = () => {
    if (stopping) { void d.dispose({ kill: true }).finally(() => process.exit(130)); return; }
    stopping = true;
    process.stdout.write('\nstopping the current run after its step; run the same command again (or studies.start in the UI) to resume the study\n');
    void api.studies.stop({ name: spec.name }).catch(() => undefined);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let status: string;
  let reason: string | null = null;
  try {
    await api.studies.start({
      name: spec.name,
      methods: spec.methods,
      envs: spec.envs,
      seeds: spec.seeds,
      size: spec.size,
      ...(spec.set ? { set: spec.set } : {}),
      ...(spec.skip ? { skip: spec.skip } : {}),
    });
    await d.waitForStudy(spec.name);
    const summary = (await api.studies.list()).studies.find((x) => x.name === spec.name);
    status = summary?.status ?? 'failed';
    reason = summary?.reason ?? null;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await d.dispose();
  }
  const { markdown } = writeStudyReport([project], spec, outDir);
  process.stdout.write(`\n${markdown}\n\nstudy ${status}${reason ? `: ${reason}` : ''}\nstudy files: ${outDir}\n`);
  return status === 'completed' ? 0 : status === 'stopped' ? 130 : 1;
}

export function registerStudyCommands(program: Command): void {
  const study = program.command('study').description('run a grid of runs (methods × envs × seeds) and compare them in the paper\'s layout');

  study.command('run')
    .description('run (or resume) a study: completed runs are skipped, stopped or failed ones resumed')
    .requiredOption('--project <dir>', 'project folder (created when missing)')
    .option('--grid <file>', 'study JSON: { name, methods, envs, seeds, size, set? }')
    .option('--methods <list>', 'comma-separated method presets, e.g. vanilla-rl,state-estimation-rl,spa')
    .option('--envs <list>', 'comma-separated env ids, e.g. frozenlake,sokoban,sudoku')
    .option('--seeds <list>', 'comma-separated run seeds', '0')
    .option('--size <size>', 'preset size: smoke | quick | standard | paper', 'quick')
    .option('--name <name>', 'study name', 'study')
    .option('--set <key=value>', 'override a config value of every run by dotted path, e.g. --set stages.bootstrap.steps=150 (repeatable)', collect, [])
    .option('--skip-recorded <dir>', 'skip the cells recorded in DIR/runs/<method>-<env>-s<seed>.json (docs/results/<study>/<variant>, written by ' +
      'record-runs.mjs as runs finish), so a study resumed on a fresh machine runs only what is missing')
    .action(async (o: {
      project: string; grid?: string; methods?: string; envs?: string; seeds: string; size: string; name: string; set: string[]; skipRecorded?: string;
    }) => {
      let set: Record<string, unknown> = {};
      try { set = parseSetArgs(o.set); } catch (err) { fail((err as Error).message); }
      let spec: StudySpec;
      if (o.grid) {
        let raw: unknown;
        const text = fs.existsSync(o.grid) ? fs.readFileSync(o.grid, 'utf8') : null;
        if (text === null) fail(`--grid ${o.grid}: file not found`);
        try { raw = JSON.parse(text); } catch (err) { fail(`--grid ${o.grid}: not valid JSON at ${describeJsonError(text, err)}`); }
        try { spec = parseStudySpec(raw, `--grid ${o.grid}`); } catch (err) { fail(`${(err as Error).message}${describeSpecValues(raw)}`); }
        if (Object.keys(set).length) spec.set = { ...(spec.set ?? {}), ...set };
      } else {
        if (!o.methods || !o.envs) fail('give --grid FILE, or --methods and --envs (and optionally --seeds, --size, --name)');
        const seeds = list(o.seeds, '--seeds').map((s) => {
          const n = Number(s);
          if (!Number.isInteger(n)) fail(`--seeds: expected integers, received ${JSON.stringify(s)}`);
          return n;
        });
        if (!STUDY_SIZES.includes(o.size)) fail(`--size: expected one of ${STUDY_SIZES.join(', ')}, received ${JSON.stringify(o.size)}`);
        if (!/^[A-Za-z0-9._-]+$/.test(o.name)) fail(`--name: expected letters, digits, ".", "_" or "-" (it names a folder under studies/), ` +
          `received ${JSON.stringify(o.name)}`);
        try {
          spec = parseStudySpec(
            {
              name: o.name,
              methods: list(o.methods, '--methods'),
              envs: list(o.envs, '--envs'),
              seeds,
              size: o.size,
              ...(Object.keys(set).length ? { set } : {}),
            },
            'command line',
          );
        } catch (err) {
          fail((err as Error).message);
        }
      }
      if (o.skipRecorded) {
        const dir = path.join(o.skipRecorded, 'runs');
        if (!fs.existsSync(dir)) {
          fail(`--skip-recorded ${o.skipRecorded}: no runs/ folder there (record-runs.mjs writes <dir>/runs/<method>-<env>-s<seed>.json)`);
        }
        const skip: string[] = [];
        for (const c of studyCells(spec)) {
          const file = path.join(dir, `${c.method}-${c.env}-s${c.seed}.json`);
          if (!fs.existsSync(file)) continue;
          let record: { study?: string; method?: string; env?: string; seed?: number; eval?: unknown };
          try { record = JSON.parse(fs.readFileSync(file, 'utf8')); } catch (err) { fail(`--skip-recorded: ${file}: ${(err as Error).message}`); }
          if (record.study !== spec.name || record.method !== c.method || record.env !== c.env || record.seed !== c.seed || !record.eval) {
            fail(`--skip-recorded: ${file} is not the finished record of ${c.method} on ${c.env} seed ${c.seed} in study ${spec.name}`);
          }
          skip.push(cellKey(c.method, c.env, c.seed));
        }
        process.stdout.write(`${skip.length} of ${studyCells(spec).length} cells recorded in ${o.skipRecorded}; they are not run again\n`);
        if (skip.length) spec.skip = skip;
      }
      // Check every run's config before the first one starts (a typo in --set would otherwise fail each run late).
      const { checkRunRequest } = await import('./core-commands.js');
      for (const method of spec.methods) {
        for (const env of spec.envs) {
          const problems = await checkRunRequest(
            { preset: method, size: spec.size, set: { 'env.id': env, 'seeds.base': spec.seeds[0]!, ...(spec.set ?? {}) } },
            o.project,
          );
          if (problems.length) fail(`study run ${method} on ${env}: invalid run config:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
        }
      }
      try { process.exitCode = await runStudy(spec, o.project); } catch (err) { fail((err as Error).message); }
    });

  study.command('table')
    .description('write the comparison table (markdown + CSV) and curves (PNG) of a study from project folders, from its records, or both')
    .option('--project <dir>', 'project folder (repeat for studies split over several projects)', collect, [])
    .option('--records <dir>', 'records folder holding runs/<method>-<env>-s<seed>.json (docs/results/<study>/<variant>, written by ' +
      '`study record`); repeatable; with --project, a cell in both counts once and the record wins', collect, [])
    .option('--name <name>', 'study name (default "study"; with --records alone, the one study the records hold)')
    .option('--methods <list>', 'methods in table order (default: from the study spec; without one, the order the runs ran)')
    .option('--envs <list>', 'envs in table order (default: from the study spec; without one, the order the runs ran)')
    .option('--out <dir>', 'output folder (default <first project>/studies/<name>; required with --records alone)')
    .action((given: { project: string[]; records: string[]; name?: string; methods?: string; envs?: string; out?: string }) => {
      if (given.project.length === 0 && given.records.length === 0) fail('give at least one --project folder or --records folder');
      const o = { ...given, name: given.name ?? '' };
      if (given.name === undefined) {
        // records alone: the study they hold (docs/results/spa-cpu-v1/fl08 holds "spa-cpu-v1-fl08"), so the name need not be known
        const held = o.project.length === 0 ? recordedStudies(o.records) : [];
        if (held.length > 1) fail(`--name: the records hold ${held.length} studies (${held.map((n) => JSON.stringify(n)).join(', ')}); say which`);
        o.name = held[0] ?? 'study';
      }
      if (o.project.length === 0 && !o.out) fail('--out: give the output folder (there is no --project to put studies/<name>/ in)');
      const specFiles = o.project.map((p) => path.join(path.resolve(p), 'studies', o.name, 'spec.json')).filter((p) => fs.existsSync(p));
      const specs = o.methods && o.envs ? [] : specFiles.map((p) => {
        try { return parseStudySpec(JSON.parse(fs.readFileSync(p, 'utf8')), p); } catch (err) { return fail(`${p}: ${(err as Error).message}; pass ` +
          `--methods and --envs to build the table without it`); }
      });
      let runs: StudyRun[];
      const notes: string[] = [];
      try {
        const projectRuns = o.project.length ? loadProjectRuns(o.project, o.name) : [];
        if (o.records.length) {
          const recorded = readStudyRecords(o.records, o.name);
          const merged = mergeStudyRuns(projectRuns, recorded.runs);
          notes.push(...recorded.notes, ...merged.notes);
          runs = merged.runs;
        } else {
          runs = projectRuns;
        }
      } catch (err) {
        return fail((err as Error).message);
      }
      // Without a spec: the order the runs ran (run ids start with the start time; a study runs seed, env, method).
      const byStart = [...runs].sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
      const methods = o.methods ? list(o.methods, '--methods')
        : specs.length ? [...new Set(specs.flatMap((s) => s.methods))] : [...new Set(byStart.map((r) => r.method))];
      const envs = o.envs ? list(o.envs, '--envs') : specs.length ? [...new Set(specs.flatMap((s) => s.envs))] : [...new Set(byStart.map((r) => r.env))];
      if (methods.length === 0 || envs.length === 0) {
        fail(`no study "${o.name}" found in ${[...o.project, ...o.records].join(', ')}; pass --methods and --envs, or run the study first` +
          notes.map((n) => `\n  note: ${n}`).join(''));
      }
      const out = o.out ?? path.join(path.resolve(o.project[0]!), 'studies', o.name);
      const { markdown, files } = writeStudyReport(runs, { name: o.name, methods, envs }, out);
      const fromRecords = runs.filter((r) => r.origin === 'record').length;
      if (o.records.length) notes.push(`${runs.length} run(s): ${fromRecords} from records, ${runs.length - fromRecords} from project folders`);
      process.stdout.write(`${notes.map((n) => `note: ${n}\n`).join('')}${markdown}\n\n${files.map((f) => `wrote ${f}`).join('\n')}\n`);
    });

  study.command('record')
    .description('record each completed run of a study as DIR/runs/<method>-<env>-s<seed>.json (eval summary, gate, stage wall times, ' +
      'config, RL curves), written once and never overwritten, so the table can be built from the records alone (study table --records)')
    .requiredOption('--project <dir>', 'project folder holding the study\'s runs')
    .requiredOption('--name <name>', 'study name')
    .requiredOption('--out <dir>', 'records folder, e.g. docs/results/spa-cpu-v1/fl08')
    .option('--missing', 'print the cells not yet recorded, one `method env seed` line each, and record nothing')
    .option('--add-curves', 'add the curves existing records lack (the whole field, or curve metrics added since, e.g. rl/wm*) from their run ' +
      'folder in --project; the series a record holds and every other field stay as they are; records nothing new')
    .action((o: { project: string; name: string; out: string; missing?: boolean; addCurves?: boolean }) => {
      if (o.missing && o.addCurves) fail('--missing and --add-curves: give one of them');
      try {
        if (o.missing) {
          fs.mkdirSync(path.join(o.out, 'runs'), { recursive: true });
          const cells = missingStudyCells(o.project, o.name, o.out);
          if (cells === null) { process.stderr.write(`no study ${o.name} in ${o.project}\n`); process.exit(2); }
          process.stdout.write(cells.map((c) => `${c}\n`).join(''));
          return;
        }
        const lines = o.addCurves ? addRecordCurves(o.project, o.name, o.out) : recordStudyRuns(o.project, o.name, o.out);
        process.stdout.write(lines.map((l) => `${l}\n`).join(''));
      } catch (err) {
        fail((err as Error).message);
      }
    });
}
