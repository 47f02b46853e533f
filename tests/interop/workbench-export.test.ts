// Issue 21 item 5: a run exported with `spa-workbench export RUN --out DIR/` (the workbench's own folder: run.json,
// metrics.csv, episodes.jsonl, eval.json, events.jsonl) imports back into another project whole — config, metrics,
// episodes and eval, read through the API of both projects and compared.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { appendJsonl } from '../../core/storage/jsonl.js';
import { writeJsonAtomicSync } from '../../core/storage/atomic.js';
import { makeWorkbenchRun, type FixtureRun } from './workbench-run.js';

const bin = fileURLToPath(new URL('../../bin/spa-workbench.mjs', import.meta.url));
const METRICS = [
  { stage: 'rl', step: 1, time: 1_700_000_001_000, episodes: 8, values: { 'charts/success': 0.125, 'losses/policy': 0.1 + 0.2 } },
  { stage: 'rl', step: 2, time: 1_700_000_002_000, episodes: 16, values: { 'charts/success': 0.375, 'losses/policy': -1.234567890123e-7 } },
  { stage: 'sft', step: 5, time: 1_700_000_000_500, values: { 'losses/sft': 2.5 } },   // no episodes, other names: empty cells
];
const EVAL = { stage: 'eval', step: 2, successRate: 0.4375, puzzles: 16, perSeed: [{ seed: 1000, success: true }] };

let tmp: string;
let run: FixtureRun;
let exported: string;

interface Seen { metrics: Record<string, number[]>; episodes: unknown[]; evals: unknown[]; config: unknown }

/** What the API of a project shows of a run: metric series, every episode (without its run id) and eval results. */
async function seen(d: Dispatcher, runId: string): Promise<Seen> {
  const m = await d.api.metrics.query({ runIds: [runId], names: ['charts/success', 'losses/policy', 'losses/sft'] });
  const metrics = Object.fromEntries(m.series.map((s) => [`${s.stage}:${s.name}`, s.y]));
  const page = await d.api.rollouts.query({ runId });
  const episodes = [];
  for (const e of [...page.episodes].sort((a, b) => a.id.localeCompare(b.id))) {
    const { runId: _r, ...ep } = await d.api.rollouts.get({ runId, id: e.id });
    episodes.push(ep);
  }
  const evals = (await d.api.evals.list({ runId })).results.map(({ id, result }) => ({ id, result }));
  const { name: _n, ...config } = (await d.api.runs.get({ runId })).config;
  return { metrics, episodes, evals, config };
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-wb-export-'));
  const a = path.join(tmp, 'a');
  const d = createDispatcher({ host: 'in-process' });
  await d.api.projects.create({ path: a });
  await d.dispose();
  run = await makeWorkbenchRun(a, { games: 4 });
  appendJsonl(path.join(run.runDir, 'metrics.jsonl'), METRICS);
  fs.mkdirSync(path.join(run.runDir, 'eval'));
  writeJsonAtomicSync(path.join(run.runDir, 'eval', 'final.json'), EVAL);
  exported = path.join(tmp, 'moved', 'run-folder');
  const r = spawnSync(process.execPath, [bin, 'export', run.runId, '--project', a, '--out', `${exported}/`],
    { encoding: 'utf8', env: { ...process.env, SPA_WORKBENCH_HOME: path.join(tmp, 'home') }, timeout: 300_000 });
  if (r.status !== 0) throw new Error(`export failed (${r.status}): ${r.stderr}`);
}, 400_000);

afterAll(() => { fs.rmSync(tmp, { recursive: true, force: true }); });

describe('workbench export folder → import into another project', () => {
  it('the export folder holds what the import reads', () => {
    expect(fs.readdirSync(exported).sort()).toEqual(['episodes.jsonl', 'eval.json', 'events.jsonl', 'metrics.csv', 'run.json']);
  });

  it('arrives whole: the same config, metrics, episodes and eval through the API; read-only', async () => {
    const da = createDispatcher({ host: 'in-process' });
    let before: Seen;
    try {
      await da.api.projects.open({ path: path.join(tmp, 'a') });
      before = await seen(da, run.runId);
    } finally { await da.dispose(); }
    expect(before.episodes.length).toBe(4);
    expect(before.metrics['rl:losses/policy']).toEqual([0.1 + 0.2, -1.234567890123e-7]);

    const db = createDispatcher({ host: 'in-process' });
    try {
      await db.api.projects.create({ path: path.join(tmp, 'b') });
      const r = await db.api.runs.import({ path: exported });
      expect(r.run.status).toBe('imported');
      expect(r.run.name).toBe(`fixture ${run.episodes[0]!.env}`);
      expect(r.run.method).toBe('spa');
      expect(Object.fromEntries(r.sources.map((s) => [s.kind, s.count]))).toEqual({
        'workbench-run': 1, 'workbench-metrics': 3, 'workbench-episodes': 4, 'workbench-eval': 1,
      });
      const after = await seen(db, r.run.id);
      expect(after.metrics).toEqual(before.metrics);
      expect(after.episodes).toEqual(before.episodes);
      expect(after.evals).toEqual(before.evals);
      expect(after.evals[0]).toEqual({ id: 'final', result: EVAL });
      expect(after.config).toEqual(before.config);
      const ep = await db.api.rollouts.get({ runId: r.run.id, id: run.episodes[0]!.id });
      expect(ep.runId).toBe(r.run.id);
      expect(ep.turns.map((t) => t.response)).toEqual(run.episodes[0]!.turns.map((t) => t.response));
      await expect(db.api.runs.start({ runId: r.run.id })).rejects.toThrow(/imported/);
      await expect(db.api.runs.resume({ runId: r.run.id })).rejects.toThrow(/imported/);
    } finally { await db.dispose(); }
  });

  it('a damaged metrics.csv is refused naming the file, line and column, and leaves no run behind', async () => {
    const bad = path.join(tmp, 'bad');
    fs.cpSync(exported, bad, { recursive: true });
    const csv = fs.readFileSync(path.join(bad, 'metrics.csv'), 'utf8').split('\n');
    csv[1] = csv[1]!.replace(/^rl,1,/, 'rl,one,');
    fs.writeFileSync(path.join(bad, 'metrics.csv'), csv.join('\n'));
    const db = createDispatcher({ host: 'in-process' });
    try {
      await db.api.projects.create({ path: path.join(tmp, 'c') });
      await expect(db.api.runs.import({ path: bad })).rejects.toThrow(/metrics\.csv:2 step/);
      expect((await db.api.runs.list({})).runs).toEqual([]);
    } finally { await db.dispose(); }
  });
});
