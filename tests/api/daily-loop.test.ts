// The researcher's daily loop (issue 12): start-up without duplicate runs, the whole-run ETA,
// links that survive restarts, JSON errors by line and column, option suggestions, runs.update,
// and the run's time as soon as it stops.
import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command } from 'commander';
import type { RunSummary, StageState } from '../../core/api/contract.js';
import { startupRunAction } from '../../core/host/startup-run.js';
import { estimateRunEta, formatRunEta } from '../../core/engine/run-eta.js';
import { chooseToken, checkToken, rememberLink, rememberedLink } from '../../core/cli/serve-link.js';
import { describeJsonError, lineColumn } from '../../core/cli/json-error.js';
import { firstUnknownOption } from '../../core/cli/option-suggest.js';
import { createDispatcher } from '../../core/host/dispatcher.js';
import { diagConfig, isolateHome, tempDir, waitFor } from './helpers.js';

const stage = (name: string, status: StageState['status'], startedAt: number | null = null, finishedAt: number | null = null): StageState =>
  ({ name, title: name, status, startedAt, finishedAt, reason: null, done: 0, total: 0 });
type R = Pick<RunSummary, 'id' | 'preset' | 'size' | 'method' | 'env' | 'status' | 'stages' | 'progress' | 'createdAt'>;
const run = (id: string, status: RunSummary['status'], createdAt: number, extra: Partial<R> = {}): R => ({
  id, preset: 'spa', size: 'quick', method: 'spa', env: 'sokoban', status, stages: [], progress: null, createdAt, ...extra,
});

describe('start --run: the demo run is created once', () => {
  it('creates on an empty project, resumes an unfinished demo run, starts a created one, and otherwise opens the newest', () => {
    expect(startupRunAction([], 'spa', 'quick')).toEqual({ kind: 'create' });
    expect(startupRunAction([run('a', 'completed', 1), run('b', 'stopped', 2)], 'spa', 'quick')).toEqual({ kind: 'resume', runId: 'b' });
    expect(startupRunAction([run('a', 'failed', 1)], 'spa', 'quick')).toEqual({ kind: 'resume', runId: 'a' });
    expect(startupRunAction([run('a', 'created', 1)], 'spa', 'quick')).toEqual({ kind: 'start', runId: 'a' });
    expect(startupRunAction([run('a', 'completed', 1)], 'spa', 'quick')).toMatchObject({ kind: 'open', runId: 'a' });
    expect(startupRunAction([run('x', 'stopped', 5, { preset: 'vanilla-rl' })], 'spa', 'quick')).toMatchObject({ kind: 'open', runId: 'x' });
  });
});

describe('whole-run ETA', () => {
  it('adds the running stage ETA and the median past time of each stage to come; stages never seen are counted, not guessed', () => {
    const past = (id: string, sp: number, rl: number) => run(id, 'completed', 0, { stages: [stage('selfplay', 'completed', 0, sp * 1000), stage('rl', 'completed', 0, rl * 1000)] });
    const live = run('now', 'running', 10, {
      stages: [stage('selfplay', 'running', 0), stage('rl', 'pending'), stage('eval', 'pending')],
      progress: { stage: 'selfplay', done: 1, total: 4, etaSeconds: 30 },
    });
    const eta = estimateRunEta(live, [past('p1', 10, 100), past('p2', 20, 200), past('p3', 30, 300), live], 0);
    expect(eta).toEqual({ seconds: 30 + 200, unestimated: 1 });
    expect(formatRunEta(eta, (ms) => `${ms / 1000}s`)).toBe('run ETA 230s + 1 stage not measured yet');
    expect(formatRunEta(estimateRunEta({ ...live, progress: null }, []), String)).toBe('3 stages not measured yet');
    expect(formatRunEta({ seconds: 0, unestimated: 2 }, String)).toBe('2 stages not measured yet');   // never "run ETA 0s + 2 stages"
    // other presets or envs are not comparable
    expect(estimateRunEta(live, [{ ...past('p1', 10, 100), env: 'sudoku' }], 0)).toEqual({ seconds: 30, unestimated: 2 });
  });
});

describe('serve links survive restarts', () => {
  it('remembers the token and port per project; --token and --new-token win', () => {
    isolateHome();
    const project = '/some/project';
    const first = chooseToken(project, undefined, false);
    expect(checkToken(first)).toBeNull();
    rememberLink(project, { token: first, port: 43210 });
    expect(rememberedLink(project)).toEqual({ token: first, port: 43210 });
    expect(chooseToken(project, undefined, false)).toBe(first);
    expect(chooseToken(project, undefined, true)).not.toBe(first);
    expect(chooseToken(project, 'my-own-token-123456', false)).toBe('my-own-token-123456');
    expect(rememberedLink('/other')).toBeNull();
    expect(checkToken('short')).toMatch(/16 to 128 characters/);
    expect(checkToken('has spaces in it, sixteen+')).toMatch(/other characters/);
  });
});

describe('JSON errors and option typos', () => {
  it('gives line and column with the line itself instead of a byte position', () => {
    const text = '{\n  "method": "spa",\n  "size": "smoke",\n}\n';
    let err: unknown;
    try { JSON.parse(text); } catch (e) { err = e; }
    const message = describeJsonError(text, err);
    expect(message).toMatch(/^line 4, column 1: /);
    expect(message).not.toMatch(/position/);
    expect(message).toContain('\n    }\n    ^');
    expect(lineColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
  });

  it('finds the mistyped long option of a command (commander then suggests the right one)', () => {
    const program = new Command();
    const list = program.command('list').requiredOption('--project <dir>').option('--json').option('--no-open');
    expect(firstUnknownOption(list, ['--projct', 'x'])).toBe('--projct');
    expect(firstUnknownOption(list, ['--project=x', '--json', '--no-open', '--open'])).toBeNull();
    expect(firstUnknownOption(list, ['--', '--anything'])).toBeNull();
  });
});

describe('runs.update and the run time at stop', () => {
  it('renames, tags and annotates a run (also while it runs); the stopped run already has its time', async () => {
    isolateHome();
    const d = createDispatcher({ host: 'cli' });
    try {
      await d.api.projects.create({ path: path.join(tempDir(), 'p') });
      const r = await d.api.runs.create({ config: diagConfig({ 'diag-wait': { steps: 2000, delayMs: 20 } }) });
      let atStop: { status: string; durationMs: number } | null = null;
      d.subscribe({ kind: 'run', runId: r.id }, (e) => {
        // read run.json as written right at the stop event (before the engine process has exited)
        if (e.kind === 'run' && e.event.type === 'status' && e.event.status === 'stopped') queueMicrotask(() => { atStop = JSON.parse(fs.readFileSync(path.join(r.dir, 'run.json'), 'utf8')); });
      });
      await d.api.runs.start({ runId: r.id });
      await waitFor('running', async () => (await d.api.runs.get({ runId: r.id })).stages[0]!.done > 3, 30_000);
      const updated = await d.api.runs.update({ runId: r.id, name: '  lr 3e-4  ', tags: ['baseline', ' sweep ', 'baseline'], notes: 'first try' });
      expect(updated).toMatchObject({ name: 'lr 3e-4', tags: ['baseline', 'sweep'], notes: 'first try' });
      await d.api.runs.stop({ runId: r.id });
      await d.waitForRun(r.id);
      const info = await d.api.runs.get({ runId: r.id });
      expect(info).toMatchObject({ status: 'stopped', name: 'lr 3e-4', tags: ['baseline', 'sweep'], notes: 'first try' });   // kept by the run host's writes
      expect(atStop).toMatchObject({ status: 'stopped' });
      expect(atStop!.durationMs).toBeGreaterThan(0);
      expect(info.durationMs).toBe(atStop!.durationMs);                       // counted once
      await expect(d.api.runs.update({ runId: r.id, tags: ['a,b'] })).rejects.toThrow(/without commas/);
    } finally { await d.dispose({ kill: true }); }
  }, 180_000);
});

describe('evaluation metrics over zero well-formed turns', () => {
  it('logs eval/wmTurns = 0 and leaves the world-model accuracies out instead of reporting 0', async () => {
    const { summarizeEpisodes, summaryMetrics } = await import('../../core/train/summary.js');
    const m = summaryMetrics(summarizeEpisodes([], [1]));
    expect(m['eval/wmTurns']).toBe(0);
    for (const k of ['eval/wmPredictionCellAccuracy', 'eval/wmObservationExact', 'eval/wmPredictionEntityF1']) expect(m[k], k).toBeUndefined();
  });
});

describe('terminal output', () => {
  it('run prints its headline numbers at the end, labelled eval or training rollouts, n/a over 0 well-formed turns', async () => {
    const { finalMetricLines } = await import('../../core/cli/core-commands.js');
    expect(finalMetricLines({ 'eval/success': 0.25, 'eval/passAt1': 0.25, 'eval/passAt4': 0.5, 'eval/formatErrorRate': 0.1, 'eval/wmPredictionCellAccuracy': 0.6, 'eval/wmTurns': 12, 'rollout/success': 1 }))
      .toEqual(['  final evaluation: success 25.0%, Pass@1 25.0%, Pass@4 50.0%, format errors 10.0%, prediction cell accuracy, eval episodes 60.0% (n = 12 well-formed turns)']);
    expect(finalMetricLines({ 'eval/success': 0, 'eval/formatErrorRate': 1, 'eval/wmTurns': 0 })).toEqual(['  final evaluation: success 0.0%, format errors 100.0%, prediction cell accuracy, eval episodes n/a (0 well-formed turns)']);
    expect(finalMetricLines({ 'rollout/success': 0.5 })).toEqual(['  training rollouts (no evaluation ran): success 50.0%']);
    expect(finalMetricLines({ 'diag/value': 1 })).toEqual([]);
    // the eval stage's chance and oracle rows, on the same puzzles, under the model's line
    expect(finalMetricLines({ 'eval/passAt1': 0.25, 'eval/chance/passAt4': 0.2, 'eval/chance/passAt1': 0.0625, 'eval/oracle/passAt1': 1 }))
      .toEqual(['  final evaluation: Pass@1 25.0%', '  chance (same puzzles): Pass@1 6.3%, Pass@4 20.0%', '  oracle (same puzzles): Pass@1 100.0%']);
  });

  it('the backend line is short and logged once per engine process, the backends not taken at debug', async () => {
    const { backendLogLines } = await import('../../core/train/stage-utils.js');
    const long = `TF.js backend: wasm (simd=true, threads=false); not used: ${'tensorflow: libtensorflow is not installed (npm rebuild …); '.repeat(5)}`;
    const first = backendLogLines(long);
    expect(first.map(([level]) => level)).toEqual(['info', 'debug']);
    expect(first[0]![1].length).toBeLessThan(120);
    expect(backendLogLines(long)).toEqual([]);                       // the next stage of the same process
  });
});
