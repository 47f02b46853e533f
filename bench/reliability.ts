// Reliability figures (issue 10), re-measured after the fixes. Prints JSON:
//   api:     malformed + type-correct edge requests to every API method (in-process): sent, answered
//            with a result, clear (named) errors, unnamed errors, hangs, writes outside the project
//   server:  hostile HTTP/WebSocket traffic to `serve` on 127.0.0.1: requests, frames, failures, leaks
//   kills:   kill -9 of the engine process mid-run, then resume: trials, recovered (completed, every
//            step logged once or more, no step lost)
//   damage:  damaged-file cases applied to a project: handled (opens, warns, keeps the data; doctor
//            repairs or explains), out of all cases
// Run: node bin/run-ts.mjs bench/reliability.ts [--seeds 3] [--per-method 100] [--server-rounds 3] [--kills 5]
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createDispatcher } from '../core/host/dispatcher.js';
import { createInProcessClient } from '../core/host/in-process.js';
import { ENGINE_PID_FILE } from '../core/engine/run-host.js';
import { readJsonl } from '../core/storage/jsonl.js';
import { runDoctor } from '../core/storage/doctor.js';
import { ProjectStore } from '../core/storage/project-store.js';
import { LOCK_FILE, processStartTime } from '../core/storage/lock.js';
import { RunData } from '../core/storage/run-data.js';
import { runApiFuzz } from '../tests/fuzz/api-fuzz.js';
import { runServerFuzz } from '../tests/fuzz/server-fuzz.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const tmp = (p: string) => fs.mkdtempSync(path.join(os.tmpdir(), p));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(fn: () => T | null | undefined | false | Promise<T | null | undefined | false>, ms: number): Promise<T | null> {
  const end = Date.now() + ms;
  for (;;) { const v = await fn(); if (v) return v; if (Date.now() > end) return null; await sleep(50); }
}

// ── 1. API fuzz ──
async function apiFigures() {
  const seeds = arg('seeds', 3);
  const total = { sent: 0, ok: 0, namedErrors: 0, unnamed: 0, hangs: 0, outside: 0, methods: 0, seconds: 0, examples: [] as unknown[] };
  for (let seed = 1; seed <= seeds; seed++) {
    const r = await runApiFuzz({ seed, perMethod: arg('per-method', 100), hangMs: 30_000 });
    total.sent += r.tally.sent; total.ok += r.tally.ok; total.namedErrors += r.tally.namedErrors; total.unnamed += r.tally.unnamed.length;
    total.hangs += r.tally.hangs.length; total.outside += r.outside.length; total.methods = r.methods; total.seconds += r.seconds;
    total.examples.push(...r.tally.unnamed.slice(0, 3), ...r.tally.hangs.slice(0, 3), ...r.outside.slice(0, 3));
  }
  return total;
}

// ── 2. server fuzz ──
async function serverFigures() {
  const r = await runServerFuzz({ seed: 7, rounds: arg('server-rounds', 3) });
  return { httpRequests: r.httpRequests, wsConnections: r.wsConnections, wsFrames: r.wsFrames, bytesSent: r.bytesSent, statuses: r.statuses,
    failures: r.failures.length, leaks: r.leaks.length, aliveChecks: r.aliveChecks, examples: [...r.failures, ...r.leaks].slice(0, 5), seconds: r.seconds };
}

// ── 3. kill -9 of the engine mid-run, then resume ──
async function killFigures() {
  const trials = arg('kills', 5);
  const home = tmp('spa-rel-home-');
  process.env.SPA_WORKBENCH_HOME = home;
  const d = createDispatcher({ host: 'in-process' });
  const api = createInProcessClient(d);
  const project = path.join(tmp('spa-rel-kill-'), 'p');
  await api.projects.create({ path: project });
  let recovered = 0;
  const notes: string[] = [];
  const STEPS = 30;
  for (let t = 0; t < trials; t++) {
    const run = await api.runs.create({ config: { name: `kill-${t}`, method: 'sft-only', size: 'smoke', stages: { plan: { order: ['diag-wait'] }, 'diag-wait': { steps: STEPS, delayMs: 60 } } }, start: true });
    const runDir = path.join(project, 'runs', run.id);
    const metricsFile = path.join(runDir, 'metrics.jsonl');
    // kill once a few steps are logged (a different point each trial)
    const killAfter = 3 + ((t * 7) % 20);
    const pid = await waitFor(() => {
      if (readJsonl(metricsFile).rows.length < killAfter) return null;
      try { return (JSON.parse(fs.readFileSync(path.join(runDir, ENGINE_PID_FILE), 'utf8')) as { pid: number }).pid; } catch { return null; }
    }, 120_000);
    if (!pid) { notes.push(`trial ${t}: the run never reached step ${killAfter}`); continue; }
    try { process.kill(pid, 'SIGKILL'); } catch { notes.push(`trial ${t}: engine ${pid} already gone`); }
    const failed = await waitFor(async () => (await api.runs.get({ runId: run.id })).status === 'failed', 60_000);
    if (!failed) { notes.push(`trial ${t}: not marked failed after the kill`); continue; }
    await api.runs.resume({ runId: run.id });
    const done = await waitFor(async () => { const s = (await api.runs.get({ runId: run.id })).status; return s === 'completed' || s === 'failed' ? s : null; }, 120_000);
    const steps = new Set(readJsonl<{ step: number }>(metricsFile).rows.map((r) => r.step));
    const complete = steps.size === STEPS;   // every step logged (a resumed step may be logged twice, never lost)
    if (done === 'completed' && complete) recovered++;
    else notes.push(`trial ${t}: after resume ${done}, ${steps.size}/${STEPS} steps`);
  }
  await d.dispose({ kill: true });
  return { trials, recovered, notes };
}

// ── 4. damaged-file cases ──
async function damageFigures() {
  process.env.SPA_WORKBENCH_HOME = tmp('spa-rel-home-');
  const cases: Array<{ name: string; handled: boolean; detail: string }> = [];
  const deadPid = () => Number(spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout.trim());
  /** A fresh project with one run; `damage` changes it; `check` says whether the result is handled. */
  const trial = async (name: string, damage: (dir: string, runDir: string, runId: string) => void, check: (dir: string, runDir: string, runId: string) => Promise<string | true>) => {
    const dir = path.join(tmp('spa-rel-dmg-'), 'p');
    const d = createDispatcher({ host: 'in-process' });
    const api = createInProcessClient(d);
    await api.projects.create({ path: dir });
    const run = await api.runs.create({ config: { name, method: 'sft-only', size: 'smoke', stages: { plan: { order: ['diag-wait'] }, 'diag-wait': { steps: 2, delayMs: 1 } } } });
    fs.writeFileSync(path.join(dir, 'runs', run.id, 'metrics.jsonl'), '{"stage":"diag-wait","step":0,"time":1,"values":{"a":1}}\n');
    await d.dispose();
    const runDir = path.join(dir, 'runs', run.id);
    try {
      damage(dir, runDir, run.id);
      const r = await check(dir, runDir, run.id);
      cases.push({ name, handled: r === true, detail: r === true ? 'ok' : r });
    } catch (err) {
      cases.push({ name, handled: false, detail: `threw ${(err as Error).name}: ${(err as Error).message.slice(0, 200)}` });
    }
  };
  const opens = async (dir: string, expectWarning: RegExp, extra?: (s: ProjectStore) => string | true): Promise<string | true> => {
    const s = await ProjectStore.open(dir);
    try {
      if (!expectWarning.test(s.warnings.join('\n'))) return `no warning matching ${expectWarning}: ${s.warnings.join(' | ').slice(0, 200)}`;
      return extra ? extra(s) : true;
    } finally { s.close(); }
  };
  await trial('torn run.json', (_d, runDir) => fs.writeFileSync(path.join(runDir, 'run.json'), '{"id": "x'), async (dir, _r, id) => {
    const first = await opens(dir, /run\.json could not be read/, (s) => (s.listRuns().some((r) => r.id === id) ? true : 'run hidden'));
    if (first !== true) return first;
    const second = await opens(dir, /run\.json/);               // warned again on the second open
    if (second !== true) return `second open: ${second}`;
    return runDoctor(dir, { repair: true }).runs.damaged[0]?.repaired === false ? true : 'unexpected repair without a config source';
  });
  await trial('missing run.json', (_d, runDir) => fs.rmSync(path.join(runDir, 'run.json')), async (dir, _r, id) =>
    opens(dir, /run\.json is missing/, (s) => (s.listRuns().some((r) => r.id === id) ? true : 'run hidden')));
  await trial('null in the run index', (dir) => { const f = path.join(dir, 'workbench.json'); const w = JSON.parse(fs.readFileSync(f, 'utf8')); w.runs.push(null); fs.writeFileSync(f, JSON.stringify(w)); },
    async (dir) => opens(dir, /not a run summary/));
  await trial('unparseable workbench.json', (dir) => fs.writeFileSync(path.join(dir, 'workbench.json'), '{"proj'), async (dir, _r, id) =>
    opens(dir, /workbench\.json could not be read/, (s) => (s.listRuns().some((r) => r.id === id) ? true : 'run lost')));
  await trial('template file constructor@x', (dir) => fs.writeFileSync(path.join(dir, 'templates', 'constructor@abc.json'), JSON.stringify({ name: 'constructor', hash: 'abc', createdAt: 1, description: '', parent: null, source: '{}' })),
    async (dir) => { const s = await ProjectStore.open(dir); s.close(); return true; });
  await trial('stale lock (dead pid)', (dir) => fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: deadPid(), host: os.hostname(), startedAt: 1, token: 't', purpose: 'x' })),
    async (dir) => opens(dir, /stale lock/));
  await trial('stale lock (pid reused)', (dir) => fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: process.ppid, host: os.hostname(), startedAt: 1, token: 't', purpose: 'x', procStart: (processStartTime(process.ppid) ?? 0) + 1 })),
    async (dir) => opens(dir, /stale lock/));
  await trial('interrupted checkpoint temp folder', (_d, runDir) => fs.mkdirSync(path.join(runDir, 'checkpoints', `.rl-1.tmp-${deadPid()}-x1`), { recursive: true }),
    async (dir, runDir) => { const r = await opens(dir, /removed 1 unfinished temp/); return r === true && fs.readdirSync(path.join(runDir, 'checkpoints')).length === 0 ? true : `${r}`; });
  await trial('checkpoint swap cut between renames', (_d, runDir) => { const o = path.join(runDir, 'checkpoints', `.rl-1.old-${deadPid()}-x2`); fs.mkdirSync(o, { recursive: true }); fs.writeFileSync(path.join(o, 'config.json'), '{}'); },
    async (dir, runDir) => { const r = await opens(dir, /restored the checkpoint/); return r === true && fs.existsSync(path.join(runDir, 'checkpoints', 'rl-1', 'config.json')) ? true : `${r}`; });
  await trial('torn last metrics line', (_d, runDir) => fs.appendFileSync(path.join(runDir, 'metrics.jsonl'), '{"stage":"diag-wait","st'),
    async (_dir, runDir) => { const m = new RunData('r', runDir).metricPoints(); return m.length === 1 ? true : `${m.length} points`; });
  await trial('metric row of the wrong shape', (_d, runDir) => fs.appendFileSync(path.join(runDir, 'metrics.jsonl'), '5\n{"stage":7}\n'),
    async (_dir, runDir) => { const m = new RunData('r', runDir).metricPoints(); return m.length === 1 ? true : `${m.length} points`; });
  await trial('SFT row of the wrong shape', (_d, runDir) => { fs.mkdirSync(path.join(runDir, 'datasets'), { recursive: true }); fs.writeFileSync(path.join(runDir, 'datasets', 'sft-train.jsonl'), '{"id":1}\nnull\n'); },
    async (_dir, runDir) => { const p = new RunData('r', runDir).datasetPage('train', 0, 10); return p.skipped === 2 ? true : `skipped ${p.skipped}`; });
  await trial('damaged stage state.json', (_d, runDir) => { fs.mkdirSync(path.join(runDir, 'stages', 'diag-wait'), { recursive: true }); fs.writeFileSync(path.join(runDir, 'stages', 'diag-wait', 'state.json'), '{"ne'); },
    async (dir) => (runDoctor(dir).stageMarkers.length === 1 ? true : 'not reported'));
  await trial('done.json naming a missing checkpoint', (_d, runDir, id) => { fs.mkdirSync(path.join(runDir, 'stages', 'sft'), { recursive: true }); fs.writeFileSync(path.join(runDir, 'stages', 'sft', 'done.json'), JSON.stringify({ stage: 'sft', completedAt: 1, attempt: 1, output: { checkpoint: `runs/${id}/checkpoints/gone` } })); },
    async (dir) => (runDoctor(dir).stageMarkers.some((m) => /missing/.test(m.problem)) ? true : 'not reported'));
  await trial('moved-aside file left by an earlier open', (dir) => fs.writeFileSync(path.join(dir, 'workbench.json.corrupt-2026-01-01T00-00-00-000Z'), 'x'),
    async (dir) => (runDoctor(dir, { repair: true }).movedAside.length === 1 && fs.existsSync(path.join(dir, 'workbench.json.corrupt-2026-01-01T00-00-00-000Z')) ? true : 'not kept/reported'));
  return { cases: cases.length, handled: cases.filter((c) => c.handled).length, failures: cases.filter((c) => !c.handled) };
}

const started = Date.now();
const api = await apiFigures();
const server = await serverFigures();
const damage = await damageFigures();
const kills = await killFigures();
process.stdout.write(`${JSON.stringify({ api, server, kills, damage, seconds: (Date.now() - started) / 1000 }, null, 2)}\n`);
