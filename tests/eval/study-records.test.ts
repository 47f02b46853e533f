// Study records (docs/results/<study>/<variant>/runs/*.json): the table built from the records alone
// is the table built from the run folders, file for file; records carry the RL curves; --add-curves
// changes nothing but the curves field; bad record folders and records give errors naming the file
// and the field.
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { loadProjectRuns, writeStudyReport, writeStudySpec } from '../../core/eval/study.js';
import {
  addRecordCurves, formatRecord, mergeStudyRuns, missingStudyCells, parseRunRecord, readStudyRecords, recordStudyRuns, type RunRecord,
} from '../../core/eval/study-records.js';

const ROOT = resolve(__dirname, '../..');
const CONFIG = { env: { id: 'frozenlake', options: { randomStartGoal: true, isSlippery: false } }, stages: { rollout: { maxTurns: 3 } } };
const PUZZLES = [3_000_000, 3_000_001, 3_000_002];

interface FakeRun { study: string; method: string; env?: string; seed: number; c: number[]; rewards: number[]; durationMs: number; status?: string }

/** A run folder as the pipeline leaves it: run.json, a stage's done.json, eval/final.json (k, no passAtK) and metrics.jsonl. */
function fakeRun(project: string, id: string, r: FakeRun): void {
  const dir = join(project, 'runs', id);
  const env = r.env ?? 'frozenlake';
  mkdirSync(join(dir, 'eval'), { recursive: true });
  mkdirSync(join(dir, 'stages', 'rl'), { recursive: true });
  writeFileSync(join(dir, 'run.json'), JSON.stringify({
    name: `study:${r.study}:${r.method}:${env}:s${r.seed}`, status: r.status ?? 'completed', durationMs: r.durationMs, size: 'smoke',
    stages: [{ name: 'rl' }, { name: 'eval' }], config: { ...CONFIG, name: `study:${r.study}:${r.method}:${env}:s${r.seed}` },
  }));
  writeFileSync(join(dir, 'stages', 'rl', 'done.json'), JSON.stringify({ output: { wallSeconds: 12.5 } }));
  const wm = r.method === 'spa';    // world-model format: the eval and RL step 0 measure the world model
  writeFileSync(join(dir, 'eval', 'final.json'), JSON.stringify({
    puzzles: PUZZLES.length, samplesPerPuzzle: 4, k: [1, 4], perPuzzle: PUZZLES.map((seed, i) => ({ seed, n: 4, c: r.c[i] })),
    ...(!wm ? { wm: { observation: { turns: 0, exact: 0 }, prediction: { turns: 0, exact: 0 } } } : {
      wm: { observation: { turns: 9, exact: 0.7 - 0.1 * r.seed }, prediction: { turns: 9, exact: 0.02 } },
      worldModelVersusBase: {
        model: { observationExact: 0.875, conditioned: { exactChanged: 0.1 + 0.1 * r.seed } },
        base: { observationExact: 0.9, conditioned: { exactChanged: 0.025 } },
      },
    }),
  }));
  const rows = r.rewards.map((reward, step) => ({
    stage: 'rl', step, time: step, values: {
      'rollout/success': reward, 'rollout/reward': reward * 2 - 0.25, 'losses/policy': 0.1,
      ...(step % 2 === 0 ? { 'rl/passAt1': reward / 2, 'rl/passAt4': reward } : {}),
      ...(wm && step === 0 ? { 'rl/wmObservationExact': 0.8 + 0.05 * r.seed, 'rl/wmPredictionExact': 0.01 } : {}),
    },
  }));
  rows.push({ stage: 'eval', step: 0, time: 99, values: { 'eval/wmCheck/observationExact': 0.75, 'eval/success': 0.5 } as never });
  writeFileSync(join(dir, 'metrics.jsonl'), rows.map((x) => JSON.stringify(x)).join('\n') + '\n');
}

/** A finished study of 2 methods × 2 seeds, plus a run of another study. */
function fakeStudy(): string {
  const project = mkdtempSync(join(tmpdir(), 'study-rec-'));
  writeStudySpec(project, { name: 'q', methods: ['vanilla-rl', 'spa'], envs: ['frozenlake'], seeds: [0, 1], size: 'smoke' });
  // run ids (start times) out of seed order, so a table that depended on the folder order would differ from the records'
  fakeRun(project, '20261125-000003-spa', { study: 'q', method: 'spa', seed: 0, c: [4, 0, 2], rewards: [0, 0.5, 0.75], durationMs: 61_400 });
  fakeRun(project, '20261125-000002-vanilla', { study: 'q', method: 'vanilla-rl', seed: 0, c: [0, 0, 1], rewards: [0, 0.1, 0.2], durationMs: 59_600 });
  fakeRun(project, '20261125-000001-spa', { study: 'q', method: 'spa', seed: 1, c: [3, 1, 2], rewards: [0.2, 0.4, 0.6], durationMs: 70_049 });
  fakeRun(project, '20261125-000004-vanilla', { study: 'q', method: 'vanilla-rl', seed: 1, c: [1, 0, 0], rewards: [0.3, 0.1, 0.2], durationMs: 58_000 });
  fakeRun(project, '20261125-000005-other', { study: 'other', method: 'spa', seed: 0, c: [4, 4, 4], rewards: [1], durationMs: 1000 });
  return project;
}

function filesOf(dir: string): Record<string, Buffer> {
  return Object.fromEntries(readdirSync(dir).sort().map((f) => [f, readFileSync(join(dir, f))]));
}

const SPEC = { name: 'q', methods: ['vanilla-rl', 'spa'], envs: ['frozenlake'] };

describe('study records', () => {
  it('the table from the records alone is the table from the run folders, file for file (record-runs.mjs writes them)', () => {
    const project = fakeStudy();
    const records = mkdtempSync(join(tmpdir(), 'study-records-'));
    const log = execFileSync(process.execPath, [join(ROOT, 'docs/results/spa-cpu-v1/record-runs.mjs'), '--project', project, '--name', 'q', '--out', records],
      { encoding: 'utf8' });
    expect(log).toContain('recorded spa-frozenlake-s0 (20261125-000003-spa)');
    expect(log).toContain('4 new run(s) recorded');
    expect(readdirSync(join(records, 'runs')).sort()).toEqual(
      ['spa-frozenlake-s0.json', 'spa-frozenlake-s1.json', 'vanilla-rl-frozenlake-s0.json', 'vanilla-rl-frozenlake-s1.json']);

    const fromProject = join(project, 'out-project'), fromRecords = join(project, 'out-records');
    writeStudyReport([project], SPEC, fromProject);
    const read = readStudyRecords([records], 'q');
    expect(read.notes).toEqual([]);
    writeStudyReport(read.runs, SPEC, fromRecords);
    const a = filesOf(fromProject), b = filesOf(fromRecords);
    expect(Object.keys(a)).toEqual(['rl-pass-at-1-frozenlake.png', 'rl-reward-frozenlake.png', 'rl-success-frozenlake.png', 'study.json', 'table.csv', 'table.md']);
    expect(Object.keys(b)).toEqual(Object.keys(a));
    for (const f of ['table.md', 'table.csv', ...Object.keys(a)]) expect(b[f]!.equals(a[f]!), f).toBe(true);
    const md = a['table.md']!.toString();
    expect(md).toContain('| method | frozenlake Pass@1 / Pass@4 |');          // k from eval.k (the records must carry it)
    expect(md).toContain('| *oracle (optimal)* |');                          // references from the recorded config
    expect(md).toContain('| spa | 66 (2 runs) |');                            // mean of 61 and 70 whole seconds
    const csv = a['table.csv']!.toString().split('\n');
    expect(csv).toContain('spa,frozenlake,2,2,1,0.5,' + csv.find((l) => l.startsWith('spa,frozenlake,2,2,1,'))!.split(',').slice(6).join(','));

    // the CLI from records alone writes the same files
    const cliOut = join(project, 'out-cli');
    const cli = spawnSync(process.execPath, [join(ROOT, 'bin/spa-workbench.mjs'), 'study', 'table', '--records', records, '--name', 'q',
      '--methods', 'vanilla-rl,spa', '--envs', 'frozenlake', '--out', cliOut], { encoding: 'utf8' });
    expect(cli.stderr).toBe('');
    expect(cli.stdout).toContain('note: 4 run(s): 4 from records, 0 from project folders');
    const c = filesOf(cliOut);
    for (const f of Object.keys(a)) expect(c[f]!.equals(a[f]!), f).toBe(true);
  }, 120_000);

  it('records carry the curves (RL curve metrics, every rl/passAt* and rl/wm*, eval/wmCheck/*) compactly, are never overwritten, and --missing lists the rest', () => {
    const project = fakeStudy();
    const records = mkdtempSync(join(tmpdir(), 'study-records-'));
    expect(missingStudyCells(project, 'q', records)).toEqual(['vanilla-rl frozenlake 0', 'spa frozenlake 0', 'vanilla-rl frozenlake 1', 'spa frozenlake 1']);
    expect(missingStudyCells(project, 'nope', records)).toBeNull();
    rmSync(join(project, 'runs', '20261125-000004-vanilla'), { recursive: true });
    recordStudyRuns(project, 'q', records);
    expect(missingStudyCells(project, 'q', records)).toEqual(['vanilla-rl frozenlake 1']);
    const file = join(records, 'runs', 'spa-frozenlake-s0.json');
    const text = readFileSync(file, 'utf8');
    const record = JSON.parse(text) as RunRecord;
    expect(Object.keys(record)).toEqual(['study', 'method', 'env', 'seed', 'runId', 'size', 'durationSeconds', 'stages', 'gate', 'filter', 'eval', 'config', 'curves']);
    expect(record.durationSeconds).toBe(61);
    expect(record.stages.rl!.wallSeconds).toBe(12.5);
    expect(record.eval!.k).toEqual([1, 4]);
    expect(record.curves).toEqual({
      rl: {
        'rollout/success': { steps: [0, 1, 2], values: [0, 0.5, 0.75] },
        'rollout/reward': { steps: [0, 1, 2], values: [-0.25, 0.75, 1.25] },
        'rl/passAt1': { steps: [0, 2], values: [0, 0.375] },
        'rl/passAt4': { steps: [0, 2], values: [0, 0.75] },
        'rl/wmObservationExact': { steps: [0], values: [0.8] },
        'rl/wmPredictionExact': { steps: [0], values: [0.01] },
      },
      eval: { 'eval/wmCheck/observationExact': { steps: [0], values: [0.75] } },
    });
    expect(text).toContain('      "rollout/success": {"steps": [0,1,2], "values": [0,0.5,0.75]},\n');   // one line per metric
    expect(text).not.toContain('losses/policy');
    expect(formatRecord(parseRunRecord(record, file))).toBe(text);
    // written once: a second pass records nothing and leaves the files as they were
    writeFileSync(file, text.replace('"size": "smoke"', '"size": "kept"'));
    expect(recordStudyRuns(project, 'q', records)).toEqual([`0 new run(s) recorded in ${join(records, 'runs')}`]);
    expect(readFileSync(file, 'utf8')).toContain('"size": "kept"');
  });

  it('--add-curves adds only the curves field to old records whose run folder is found; old records without curves give no PNGs', () => {
    const project = fakeStudy();
    const records = mkdtempSync(join(tmpdir(), 'study-records-'));
    recordStudyRuns(project, 'q', records);
    const dir = join(records, 'runs');
    const withCurves = readFileSync(join(dir, 'spa-frozenlake-s0.json'), 'utf8');
    // old records: written before curves existed
    const old: Record<string, string> = {};
    for (const f of readdirSync(dir)) {
      const { curves: _curves, ...rest } = JSON.parse(readFileSync(join(dir, f), 'utf8')) as RunRecord;
      old[f] = `${JSON.stringify(rest, null, 2)}\n`;
      writeFileSync(join(dir, f), old[f]!);
    }
    const out = join(project, 'out-old');
    writeStudyReport(readStudyRecords([records], 'q').runs, SPEC, out);
    expect(readdirSync(out).filter((f) => f.endsWith('.png'))).toEqual([]);
    // the same table, but the world model after SFT (an RL curve) is unknown without curves
    const fromFolders = readFileSync(writeStudyReport([project], SPEC, join(project, 'out-p')).files[0]!, 'utf8');
    expect(fromFolders).toContain('| 82.5 (80.0, 85.0) | 1.0 (1.0, 1.0) |');
    expect(readFileSync(join(out, 'table.md'), 'utf8')).toBe(fromFolders.replace('| 82.5 (80.0, 85.0) | 1.0 (1.0, 1.0) |', '| – | – |'));

    rmSync(join(project, 'runs', '20261125-000004-vanilla'), { recursive: true });    // that run folder is gone
    const lines = addRecordCurves(project, 'q', records);
    expect(lines).toContain(`vanilla-rl-frozenlake-s1.json: no run folder 20261125-000004-vanilla of study q in ${resolve(project)}: left without curves`);
    expect(lines.find((l) => l.startsWith('spa-frozenlake-s0.json: added curves of 7 metric(s) (rl, eval)'))).toBeDefined();
    expect(lines.at(-1)).toBe(`curves added to 3 record(s) in ${dir}`);
    expect(readFileSync(join(dir, 'vanilla-rl-frozenlake-s1.json'), 'utf8')).toBe(old['vanilla-rl-frozenlake-s1.json']);
    const added = readFileSync(join(dir, 'spa-frozenlake-s0.json'), 'utf8');
    expect(added).toBe(withCurves);                                              // the same text as a new record
    expect(added.startsWith(old['spa-frozenlake-s0.json']!.slice(0, -3))).toBe(true);  // the old text untouched before it
    expect(addRecordCurves(project, 'q', records)).toContain('spa-frozenlake-s0.json: has curves already');
    expect(readFileSync(join(dir, 'spa-frozenlake-s0.json'), 'utf8')).toBe(withCurves);
  });

  it('--add-curves adds the curve metrics a record lacks (rl/wm* since 2026-11-26), keeping its series; a record whose series differ is left', () => {
    const project = fakeStudy();
    const records = mkdtempSync(join(tmpdir(), 'study-records-'));
    recordStudyRuns(project, 'q', records);
    const dir = join(records, 'runs');
    const fresh = readFileSync(join(dir, 'spa-frozenlake-s0.json'), 'utf8');
    const drop = (f: string, change?: (r: RunRecord) => void) => {
      const r = JSON.parse(readFileSync(join(dir, f), 'utf8')) as RunRecord;
      delete r.curves!.rl!['rl/wmObservationExact'];
      delete r.curves!.rl!['rl/wmPredictionExact'];
      change?.(r);
      writeFileSync(join(dir, f), formatRecord(r));
    };
    drop('spa-frozenlake-s0.json');
    drop('spa-frozenlake-s1.json', (r) => { r.curves!.rl!['rollout/success']!.values[0] = 0.99; });
    const before1 = readFileSync(join(dir, 'spa-frozenlake-s1.json'), 'utf8');
    const lines = addRecordCurves(project, 'q', records);
    expect(lines).toContain(`spa-frozenlake-s0.json: added 2 curve metric(s) (rl/wmObservationExact, rl/wmPredictionExact) from ${join(project, 'runs', '20261125-000003-spa')}`);
    expect(lines).toContain(`spa-frozenlake-s1.json: rl/rollout/success in run folder ${join(project, 'runs', '20261125-000001-spa')} differ from the record's: left as it is`);
    expect(lines).toContain('vanilla-rl-frozenlake-s0.json: has curves already');
    expect(lines.at(-1)).toBe(`curves added to 1 record(s) in ${dir}`);
    expect(readFileSync(join(dir, 'spa-frozenlake-s0.json'), 'utf8')).toBe(fresh);        // as a record written today
    expect(readFileSync(join(dir, 'spa-frozenlake-s1.json'), 'utf8')).toBe(before1);
  });

  it('the table prints the world-model rows (criterion 1): after SFT, end of run, first turns beside the base; none for a plain-format method', () => {
    const project = fakeStudy();
    const md = writeStudyReport([project], SPEC, join(project, 'out')).markdown;
    const row = md.split('\n').find((l) => l.startsWith('| spa | frozenlake |'));
    // after SFT: 0.80 and 0.85 → 82.5; end observation 0.7 and 0.6 → 65; given the action 0.1 and 0.2 → 15, base 2.5
    expect(row).toBe('| spa | frozenlake | 0, 1 | 82.5 (80.0, 85.0) | 1.0 (1.0, 1.0) | 65.0 (70.0, 60.0) | 2.0 (2.0, 2.0) ' +
      '| 87.5 (87.5, 87.5); base 90.0 | 15.0 (10.0, 20.0); base 2.5 |');
    expect(md).not.toContain('| vanilla-rl | frozenlake | 0, 1 |');
    expect(md).toContain('| world model, exact match % (mean; each seed) |');
  });

  it('--project with --records: a cell in both counts once and the record wins; a record without curves takes its run folder\'s', () => {
    const project = fakeStudy();
    const records = mkdtempSync(join(tmpdir(), 'study-records-'));
    recordStudyRuns(project, 'q', records);
    const file = join(records, 'runs', 'spa-frozenlake-s0.json');
    const record = JSON.parse(readFileSync(file, 'utf8')) as RunRecord;
    record.eval!.perPuzzle = record.eval!.perPuzzle.map((p) => ({ ...p, c: 4 }));   // the record differs from the folder
    delete record.curves;
    writeFileSync(file, formatRecord(record));
    const { runs, notes } = mergeStudyRuns(loadProjectRuns([project], 'q'), readStudyRecords([records], 'q').runs);
    expect(runs.length).toBe(4);
    expect(notes[0]).toMatch(/^4 cell\(s\) both in the project folders and the records; the record counts: /);
    expect(notes[1]).toBe('curves of 1 recorded run(s) without curves taken from their run folders');
    const spa0 = runs.find((r) => r.method === 'spa' && r.seed === 0)!;
    expect(spa0.origin).toBe('record');
    expect(spa0.eval!.perPuzzle.map((p) => p.c)).toEqual([4, 4, 4]);
    expect(spa0.curves!.rl!['rollout/success']!.values).toEqual([0, 0.5, 0.75]);
    // a cell only in the project still counts
    rmSync(join(records, 'runs', 'vanilla-rl-frozenlake-s1.json'));
    const merged = mergeStudyRuns(loadProjectRuns([project], 'q'), readStudyRecords([records], 'q').runs);
    expect(merged.runs.map((r) => `${r.method}:${r.seed}:${r.origin}`)).toEqual(['spa:0:record', 'spa:1:record', 'vanilla-rl:0:record', 'vanilla-rl:1:run folder']);
  });

  it('clear errors: a folder without records, a malformed record (file and field), another study\'s records skipped with a note', () => {
    const empty = mkdtempSync(join(tmpdir(), 'study-records-empty-'));
    expect(() => readStudyRecords([empty], 'q')).toThrow(`records folder ${empty}: no runs/*.json there`);
    mkdirSync(join(empty, 'runs'));
    expect(() => readStudyRecords([empty], 'q')).toThrow(/no runs\/\*\.json there .*docs\/results\/spa-cpu-v1\/fl08/);

    const project = fakeStudy();
    const records = mkdtempSync(join(tmpdir(), 'study-records-'));
    recordStudyRuns(project, 'q', records);
    const file = join(records, 'runs', 'spa-frozenlake-s1.json');
    const good = readFileSync(file, 'utf8');
    const record = JSON.parse(good) as RunRecord;
    writeFileSync(file, formatRecord({ ...record, eval: { ...record.eval!, perPuzzle: [record.eval!.perPuzzle[0]!, { seed: 3_000_001, n: 4, c: 5 }] } }));
    expect(() => readStudyRecords([records], 'q')).toThrow(`${file}: malformed record: field "eval.perPuzzle[1].c": expected an integer from 0 to n (4), received 5`);
    writeFileSync(file, formatRecord({ ...record, seed: 'one' as unknown as number }));
    expect(() => readStudyRecords([records], 'q')).toThrow(`${file}: malformed record: field "seed": expected an integer, received "one"`);
    writeFileSync(file, formatRecord({ ...record, seed: 2 }));
    expect(() => readStudyRecords([records], 'q')).toThrow(/the file name says one cell, the record another .*spa-frozenlake-s2\.json/);
    writeFileSync(file, good.slice(0, 100));
    expect(() => readStudyRecords([records], 'q')).toThrow(`${file}: not valid JSON`);
    writeFileSync(file, good);

    const otherProject = mkdtempSync(join(tmpdir(), 'study-rec-other-'));
    fakeRun(otherProject, 'r1', { study: 'other', method: 'spa', seed: 0, c: [4, 4, 4], rewards: [1], durationMs: 1000 });
    recordStudyRuns(otherProject, 'other', records);                           // spa-frozenlake-s0 exists: not overwritten
    const otherRecords = mkdtempSync(join(tmpdir(), 'study-records-other-'));
    recordStudyRuns(otherProject, 'other', otherRecords);
    const read = readStudyRecords([records, otherRecords], 'q');
    expect(read.runs.length).toBe(4);
    expect(read.notes).toEqual([`${otherRecords}: skipped 1 record(s) of study "other" (not "q")`]);
    expect(existsSync(join(records, 'runs', 'spa-frozenlake-s0.json'))).toBe(true);
  });

  it('the fl08 records in docs/results parse', () => {
    const read = readStudyRecords([join(ROOT, 'docs/results/spa-cpu-v1/fl08')], 'spa-cpu-v1-fl08');
    expect(read.runs.length).toBeGreaterThanOrEqual(3);
    expect(read.runs.every((r) => r.eval && r.eval.perPuzzle.length === 128 && r.config)).toBe(true);
  });
});
