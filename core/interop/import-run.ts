// Import a finished SPA/RAGEN run (a folder, or one file) into a project as a read-only run
// (status "imported"). What is read, best source first:
//   *.jsonl with "format": "spa-workbench.ragen-recorder"   → episodes (trace inspector, replay)
//   raw_trajectories_*.json (SPA stage 1)                   → episodes (from the chats)
//   W&B val/generations table: *.table.json / *.json {columns, data} / *.csv with step,output_1,… → episodes
//   wm_train.parquet / wm_val.parquet (SPA stage 1)          → the dataset browser
//   *.jsonl of {"step", "data"} (verl ≥ 0.6 file logger)     → metrics (charts)
//   .hydra/config.yaml, config.yaml or any *.yaml with es_manager / trainer keys → the run's config
// A folder written by `spa-workbench export RUN --out DIR/` (run.json, metrics.csv, episodes.jsonl, eval.json, events.jsonl:
// core/cli/core-commands.ts exportRun) comes back whole instead: the run's config, stages and latest values, every metric
// point, every episode and every eval file, as a read-only run (status "imported") of the importing project.
// Everything is parsed and validated first; the run folder is written in a temporary folder of the
// project and renamed into runs/ only when complete, so a bad file leaves nothing behind.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import YAML from 'yaml';
import { EpisodeRecordSchema, type EpisodeRecord, type EpisodeSummary, type MetricPoint } from '../api/records.js';
import { DEFAULT_ENV_ID, RunConfigSchema } from '../api/run-config.js';
import { WorkbenchError } from '../api/errors.js';
import { appendJsonl } from '../storage/jsonl.js';
import { writeJsonAtomicSync } from '../storage/atomic.js';
import { EVENTS_FILE, METRICS_FILE, ROLLOUT_INDEX, SFT_STATS, sftFile, writeRunRecord, type RunRecord } from '../storage/run-files.js';
import { readParquetRows } from './parquet.js';
import { episodeFromChat, episodeFromRecorderLine, envFromRagen, importError, RECORDER_FORMAT, splitDecodedChat,
  type ChatMessageIn } from './ragen-episodes.js';

export type ImportSourceKind = 'recorder' | 'raw-trajectories' | 'wandb-table' | 'sft-parquet' | 'metrics' | 'console-metrics' | 'verl-val-dump' | 'config'
  | 'workbench-run' | 'workbench-metrics' | 'workbench-episodes' | 'workbench-eval';

export interface ImportSource { file: string; kind: ImportSourceKind; count: number }

export interface ImportOptions {
  projectDir: string;        // the open project (its runs/ folder receives the run)
  source: string;            // a run folder of SPA/RAGEN, or one file
  name?: string;             // display name (default: "RAGEN · <folder name>")
  now?: number;              // ms since epoch (tests)
}

export interface ImportResult { runId: string; record: RunRecord; sources: ImportSource[]; skipped: string[]; warnings: string[] }

const MAX_DEPTH = 4;
const MAX_FILE_BYTES = 2 * 1024 ** 3;

function listFiles(dir: string, depth = 0): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && depth < MAX_DEPTH && e.name !== 'node_modules' && !e.name.startsWith('global_step_')) out.push(...listFiles(p, depth + 1));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Non-empty lines of a JSONL file, each parsed; a bad line is an error naming file and line. */
function jsonlLines(file: string, rel: string): { line: number; value: unknown }[] {
  const out: { line: number; value: unknown }[] = [];
  fs.readFileSync(file, 'utf8').split('\n').forEach((text, i) => {
    if (text.trim() === '') return;
    try { out.push({ line: i + 1, value: JSON.parse(text) }); } catch (err) {
      throw importError(rel, i + 1, '', `not valid JSON (${(err as Error).message})`, 'one JSON object per line');
    }
  });
  return out;
}

/** RFC 4180 CSV (quoted fields may hold newlines); rows with the one-based line each starts on. */
export function parseCsv(text: string, rel: string): { line: number; cells: string[] }[] {
  const rows: { line: number; cells: string[] }[] = [];
  let cells: string[] = []; let cell = ''; let quoted = false; let line = 1; let rowLine = 1; let i = 0;
  const endRow = () => { cells.push(cell); if (!(cells.length === 1 && cells[0] === '')) rows.push({ line: rowLine, cells }); cells = []; cell = ''; };
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { cell += '"'; i += 2; continue; }
      if (ch === '"') { quoted = false; i++; continue; }
      if (ch === '\n') line++;
      cell += ch; i++; continue;
    }
    if (ch === '"' && cell === '') { quoted = true; i++; continue; }
    if (ch === ',') { cells.push(cell); cell = ''; i++; continue; }
    if (ch === '\r' && text[i + 1] === '\n') { i++; continue; }
    if (ch === '\n') { endRow(); line++; rowLine = line; i++; continue; }
    cell += ch; i++;
  }
  if (quoted) throw importError(rel, rowLine, '', 'a quoted field is not closed before the end of the file', 'balanced double quotes');
  if (cell !== '' || cells.length) endRow();
  return rows;
}

interface Collected {
  episodes: EpisodeRecord[];
  metrics: MetricPoint[];
  sft: { train: Record<string, unknown>[]; val: Record<string, unknown>[] };
  config: Record<string, unknown> | null;
  configFile: string | null;
  sources: ImportSource[];
  skipped: string[];
  warnings: string[];
}

function wandbEpisodes(rel: string, columns: unknown[], data: unknown[][], firstLine: (r: number) => number, runId: string, time: number,
  c: Collected, env: string | null): number {
  const names = columns.map(String);
  const stepCol = names.indexOf('step');
  const outputs = names.map((n, i) => ({ n, i })).filter(({ n }) => /^output_\d+$/.test(n));
  if (stepCol < 0 || outputs.length === 0) throw importError(rel, firstLine(-1), 'columns',
    'not a RAGEN val/generations table: expected the columns step, input_1, output_1, score_1, …', 'step, output_i', names.slice(0, 6));
  let count = 0;
  data.forEach((row, r) => {
    if (!Array.isArray(row)) throw importError(rel, firstLine(r), `data[${r}]`, 'expected a row (list of cells)', 'array', row);
    const step = Number(row[stepCol]);
    if (!Number.isInteger(step)) throw importError(rel, firstLine(r), 'step', 'expected an integer step', 'integer', row[stepCol]);
    for (const { n, i } of outputs) {
      const text = row[i];
      if (typeof text !== 'string' || text.trim() === '') continue;
      const k = Number(n.slice('output_'.length));
      const messages = splitDecodedChat(text);
      c.episodes.push(episodeFromChat(messages, { file: rel, line: firstLine(r), field: n }, {
        runId, id: `wandb-${String(step).padStart(6, '0')}-${k}`, stage: 'val', step, env, seed: -1, group: k - 1, sample: 0, time,
      }));
      count++;
    }
  });
  return count;
}

async function readSource(file: string, rel: string, runId: string, time: number, c: Collected): Promise<void> {
  const base = path.basename(file);
  const size = fs.statSync(file).size;
  if (size > MAX_FILE_BYTES) { c.skipped.push(`${rel} (larger than 2 GiB)`); return; }
  if (base.endsWith('.jsonl')) {
    const lines = jsonlLines(file, rel);
    const first = lines[0]?.value;
    if (isObject(first) && first.format === RECORDER_FORMAT) {
      const seen = new Map<string, number>();
      for (const { line, value } of lines) {
        const v = value as Record<string, unknown>;
        const key = `${String(v?.step)}/${String(v?.tag)}/${String(v?.group_id)}`;
        const sample = seen.get(key) ?? 0;
        seen.set(key, sample + 1);
        c.episodes.push(episodeFromRecorderLine(value, rel, line, runId, sample, time));
      }
      c.sources.push({ file: rel, kind: 'recorder', count: lines.length });
      return;
    }
    if (isObject(first) && 'step' in first && isObject(first.data)) {
      const mtime = fs.statSync(file).mtimeMs;
      for (const { line, value } of lines) {
        if (!isObject(value) || typeof value.step !== 'number') throw importError(rel, line, 'step',
          'expected {"step": <number>, "data": {...}} (verl file logger)', 'number', isObject(value) ? value.step : value);
        if (!isObject(value.data)) throw importError(rel, line, 'data', 'expected an object of metric values', 'object', value.data);
        const values: Record<string, number> = {};
        for (const [k, v] of Object.entries(value.data)) if (typeof v === 'number' && Number.isFinite(v)) values[k] = v;
        c.metrics.push({ stage: 'rl', step: value.step, time: mtime, values });
      }
      c.sources.push({ file: rel, kind: 'metrics', count: lines.length });
      return;
    }
    if (isObject(first) && typeof first.output === 'string' && 'score' in first && 'step' in first) {
      // verl 1e47e412 ray_trainer.py:506-526 (_dump_generations, called by RAGEN agent_trainer.py:270-278): <dir>/<step>.jsonl of
      // {input, output, score, step, reward}; output is the whole decoded chat
      let count = 0;
      for (const { line, value } of lines) {
        if (!isObject(value) || typeof value.output !== 'string') throw importError(rel, line, 'output',
          'expected the decoded chat (verl validation dump line {input, output, score, step})', 'string', isObject(value) ? value.output : value);
        const step = value.step;
        if (typeof step !== 'number' || !Number.isInteger(step)) throw importError(rel, line, 'step', 'expected an integer step', 'integer', step);
        if (value.output.trim() === '') continue;
        c.episodes.push(episodeFromChat(splitDecodedChat(value.output), { file: rel, line, field: 'output' }, {
          runId, id: `valdump-${String(step).padStart(6, '0')}-${line}`, stage: 'val', step, env: null, seed: -1, group: line - 1, sample: 0, time,
        }));
        count++;
      }
      c.sources.push({ file: rel, kind: 'verl-val-dump', count });
      return;
    }
    c.skipped.push(`${rel} (JSONL, but neither recorder records, {"step","data"} metric lines nor a verl validation dump)`);
    return;
  }
  if (base.endsWith('.log')) {
    // verl 1e47e412's console logger (verl/utils/logger/aggregate_logger.py:23-29): "step:N - key:v.vvv - …", values rounded to 3 decimals
    const mtime = fs.statSync(file).mtimeMs;
    let count = 0;
    fs.readFileSync(file, 'utf8').split('\n').forEach((text, i) => {
      const m = /(?:^|\s)step:(\d+) - (.*)$/.exec(text);
      if (!m) return;
      const values: Record<string, number> = {};
      for (const part of m[2]!.split(' - ')) {
        const kv = /^(\S+):(-?[\d.]+(?:e[-+]?\d+)?|nan|inf|-inf)$/i.exec(part.trim());
        if (!kv) throw importError(rel, i + 1, part.trim().split(':')[0] ?? '', 'expected key:number in a verl console metrics line', 'key:value', part);
        const v = Number(kv[2]);
        if (Number.isFinite(v)) values[kv[1]!] = v;
      }
      c.metrics.push({ stage: base.startsWith('sft') ? 'sft' : 'rl', step: Number(m[1]), time: mtime, values });
      count++;
    });
    if (count === 0) { c.skipped.push(`${rel} (log without verl "step:N - key:value" lines)`); return; }
    c.sources.push({ file: rel, kind: 'console-metrics', count });
    c.warnings.push(`${rel}: metrics read from verl's console lines are rounded to 3 decimals`);
    return;
  }
  if (/^raw_trajectories.*\.json$/.test(base)) {
    let value: unknown;
    try { value = JSON.parse(fs.readFileSync(file, 'utf8')); } catch (err) { throw importError(rel, 0, '',
      `not valid JSON (${(err as Error).message})`, 'a JSON list'); }
    if (!Array.isArray(value)) throw importError(rel, 0, '', 'expected a JSON list of {id, messages_list}', 'array', typeof value);
    value.forEach((item, i) => {
      if (!isObject(item)) throw importError(rel, 0, `[${i}]`, 'expected {id, messages_list}', 'object', item);
      const list = item.messages_list;
      if (!Array.isArray(list)) throw importError(rel, 0, `[${i}].messages_list`, 'expected a list of {role, content}', 'array', list);
      list.forEach((m, j) => {
        if (!isObject(m) || typeof m.role !== 'string' || typeof m.content !== 'string') throw importError(rel, 0, `[${i}].messages_list[${j}]`,
          'expected {role, content} strings', '{role, content}', m);
      });
      const id = typeof item.id === 'number' || typeof item.id === 'string' ? String(item.id) : String(i);
      c.episodes.push(episodeFromChat(list as ChatMessageIn[], { file: rel, line: 0, field: `[${i}].messages_list` }, {
        runId, id: `selfplay-${id}`, stage: 'selfplay', step: 0, env: null, seed: -1, group: i, sample: 0, time,
      }));
    });
    c.sources.push({ file: rel, kind: 'raw-trajectories', count: value.length });
    return;
  }
  if (/^wm_(train|val)\.parquet$/.test(base)) {
    const split = base.includes('train') ? 'train' : 'val';
    let rows: Record<string, unknown>[];
    try { rows = await readParquetRows(new Uint8Array(fs.readFileSync(file))); } catch (err) { throw importError(rel, 0, '',
      `not a readable parquet file (${(err as Error).message})`, 'parquet'); }
    rows.forEach((row, i) => {
      const prompt = row.prompt;
      if (!Array.isArray(prompt) || prompt.some((m) => !isObject(m) || typeof m.role !== 'string' || typeof m.content !== 'string')) {
        throw importError(rel, i + 1, 'prompt', 'expected a list of {role, content} (row numbers count from 1)', 'list<struct<content, role>>', prompt);
      }
      if (typeof row.response !== 'string') throw importError(rel, i + 1, 'response', 'expected a string', 'string', row.response);
      const messages = prompt as ChatMessageIn[];
      const lastUser = [...messages].reverse().find((m) => m.role === 'user');
      c.sft[split].push({
        id: `${split}-${i}`, episodeId: `${split}-${i}`, seed: -1, turn: messages.filter((m) => m.role === 'assistant').length,
        prompt: lastUser?.content ?? '', original: row.response, corrected: row.response,
        messages: [...messages, { role: 'assistant', content: row.response }], dataSource: row.data_source ?? null,
      });
    });
    c.sources.push({ file: rel, kind: 'sft-parquet', count: rows.length });
    return;
  }
  if (base.endsWith('.json') || base.endsWith('.csv')) {
    if (base.endsWith('.csv')) {
      const rows = parseCsv(fs.readFileSync(file, 'utf8'), rel);
      const header = rows[0]?.cells ?? [];
      if (!header.includes('step') || !header.some((h) => /^output_\d+$/.test(h))) { c.skipped.push(`${rel} (CSV without step and output_1 columns)`); return; }
      const body = rows.slice(1);
      const n = wandbEpisodes(rel, header, body.map((r) => r.cells), (r) => (r < 0 ? 1 : body[r]!.line), runId, time, c, null);
      c.sources.push({ file: rel, kind: 'wandb-table', count: n });
      return;
    }
    let value: unknown;
    try { value = JSON.parse(fs.readFileSync(file, 'utf8')); } catch (err) { throw importError(rel, 0, '',
      `not valid JSON (${(err as Error).message})`, 'JSON'); }
    if (isObject(value) && Array.isArray(value.columns) && Array.isArray(value.data)) {
      const n = wandbEpisodes(rel, value.columns, value.data as unknown[][], () => 0, runId, time, c, null);
      c.sources.push({ file: rel, kind: 'wandb-table', count: n });
      return;
    }
    c.skipped.push(`${rel} (JSON, but not a raw_trajectories list or a W&B table)`);
    return;
  }
  if (base.endsWith('.yaml') || base.endsWith('.yml')) {
    let value: unknown;
    try { value = YAML.parse(fs.readFileSync(file, 'utf8')); } catch (err) {
      const e = err as { linePos?: { line: number }[]; message: string };
      throw importError(rel, e.linePos?.[0]?.line ?? 0, '', `not valid YAML (${e.message.split('\n')[0]})`, 'YAML');
    }
    const looksRagen = isObject(value) && ('es_manager' in value || 'agent_proxy' in value || 'trainer' in value);
    if (!looksRagen) { c.skipped.push(`${rel} (YAML without es_manager/agent_proxy/trainer keys)`); return; }
    const preferred = rel.includes('.hydra') || base === 'config.yaml';
    if (!c.config || (preferred && !(c.configFile ?? '').includes('.hydra'))) { c.config = value as Record<string, unknown>; c.configFile = rel; }
    c.sources.push({ file: rel, kind: 'config', count: 1 });
    return;
  }
  c.skipped.push(rel);
}

const at = (obj: unknown, dotted: string): unknown => dotted.split('.').reduce<unknown>((o, k) => (isObject(o) ? o[k] : undefined), obj);

function newImportId(name: string, now: number): string {
  const d = new Date(now);
  const p = (n: number) => String(n).padStart(2, '0');
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 32) || 'run';
  const stamp = `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
  return `${stamp}-imported-${slug}-${randomBytes(2).toString('hex')}`;
}

/** Writes the run in a temporary folder of the project, then renames it into runs/ (nothing is left behind on an error). */
function writeImportedRun(projectDir: string, runId: string, record: RunRecord, c: Collected, source: string, now: number,
  evals: Record<string, unknown>): void {
  const runsDir = path.join(projectDir, 'runs');
  fs.mkdirSync(runsDir, { recursive: true });
  const tmp = path.join(projectDir, `.import-${randomBytes(4).toString('hex')}`);
  try {
    fs.mkdirSync(tmp, { recursive: true });
    if (c.episodes.length) {
      const rel = 'rollouts/imported.jsonl';
      fs.mkdirSync(path.join(tmp, 'rollouts'), { recursive: true });
      const spans = appendJsonl(path.join(tmp, rel), c.episodes);
      const index: EpisodeSummary[] = c.episodes.map((e, i) => ({
        id: e.id, stage: e.stage, step: e.step, seed: e.seed, group: e.group, sample: e.sample, success: e.success, totalReward: e.totalReward,
        numTurns: e.numTurns, formatErrors: e.formatErrors, invalidActions: e.invalidActions, file: rel, offset: spans[i]!.offset, length: spans[i]!.length,
      }));
      appendJsonl(path.join(tmp, ROLLOUT_INDEX), index);
    }
    if (c.metrics.length) appendJsonl(path.join(tmp, METRICS_FILE), c.metrics);
    for (const split of ['train', 'val'] as const) if (c.sft[split].length) appendJsonl(path.join(tmp, sftFile(split)), c.sft[split]);
    if (c.sft.train.length + c.sft.val.length) writeJsonAtomicSync(path.join(tmp, SFT_STATS), { train: c.sft.train.length, val: c.sft.val.length,
      dropped: {} });
    const summary = c.sources.map((s) => `${s.kind} ${s.file} (${s.count})`).join('; ');
    appendJsonl(path.join(tmp, EVENTS_FILE), [
      { type: 'log', runId, time: now, level: 'info', message: `imported from ${source}: ${summary}` },
      ...c.skipped.map((s) => ({ type: 'log', runId, time: now, level: 'info', message: `not imported: ${s}` })),
      ...c.warnings.map((w) => ({ type: 'log', runId, time: now, level: 'warn', message: w })),
      { type: 'status', runId, time: now, status: 'imported' },
    ]);
    if (Object.keys(evals).length) fs.mkdirSync(path.join(tmp, 'eval'), { recursive: true });
    for (const [id, result] of Object.entries(evals)) writeJsonAtomicSync(path.join(tmp, 'eval', `${id}.json`), result);
    writeRunRecord(tmp, record);
    fs.renameSync(tmp, path.join(runsDir, runId));
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** Whether `dir` is a folder written by `spa-workbench export RUN --out DIR/` (core/cli/core-commands.ts exportRun). */
export function isWorkbenchExport(dir: string): boolean {
  if (!fs.existsSync(path.join(dir, 'run.json')) || !['metrics.csv', 'episodes.jsonl', 'eval.json'].some((f) => fs.existsSync(path.join(dir, f)))) return false;
  try {
    const v: unknown = JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8'));
    return isObject(v) && typeof v.id === 'string' && isObject(v.config) && Array.isArray(v.stages) && typeof v.createdAt === 'number';
  } catch { return false; }
}

/** The metric points of an exported metrics.csv (header stage, step, time, episodes, then one column per metric; empty: not logged). */
function metricsFromCsv(file: string, rel: string): MetricPoint[] {
  const rows = parseCsv(fs.readFileSync(file, 'utf8'), rel);
  const header = rows[0]?.cells ?? [];
  if (header.slice(0, 4).join(',') !== 'stage,step,time,episodes') throw importError(rel, 1, 'header',
    'expected the columns stage, step, time, episodes, then the metric names', 'stage,step,time,episodes,…', header.slice(0, 4).join(','));
  return rows.slice(1).map(({ line, cells }) => {
    const num = (i: number, what: string, optional = false): number | undefined => {
      const cell = cells[i] ?? '';
      if (cell === '' && optional) return undefined;
      const v = Number(cell);
      if (cell === '' || !Number.isFinite(v)) throw importError(rel, line, what, 'expected a number', 'number', cell);
      return v;
    };
    const values: Record<string, number> = {};
    header.slice(4).forEach((name, k) => { const v = num(k + 4, name, true); if (v !== undefined) values[name] = v; });
    const episodes = num(3, 'episodes', true);
    return { stage: cells[0] ?? '', step: num(1, 'step')!, time: num(2, 'time')!, ...(episodes !== undefined ? { episodes } : {}), values };
  });
}

/** A workbench export folder → the same run, read-only, under a new id of this project. */
function importWorkbenchExport(opts: ImportOptions, source: string, now: number): ImportResult {
  const c: Collected = { episodes: [], metrics: [], sft: { train: [], val: [] }, config: null, configFile: null, sources: [], skipped: [], warnings: [] };
  const info = JSON.parse(fs.readFileSync(path.join(source, 'run.json'), 'utf8')) as RunRecord & { dir?: string };
  const parsed = RunConfigSchema.safeParse(info.config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw importError('run.json', 0, `config.${issue?.path.join('.') ?? ''}`, `not a run config of this workbench (${issue?.message ?? 'invalid'})`,
      'the config of an exported run', info.config);
  }
  c.sources.push({ file: 'run.json', kind: 'workbench-run', count: 1 });
  const runId = newImportId(info.id, now);
  const name = opts.name ?? info.name;
  const file = (f: string) => path.join(source, f);
  if (fs.existsSync(file('metrics.csv'))) {
    c.metrics = metricsFromCsv(file('metrics.csv'), 'metrics.csv');
    c.sources.push({ file: 'metrics.csv', kind: 'workbench-metrics', count: c.metrics.length });
  }
  if (fs.existsSync(file('episodes.jsonl'))) {
    for (const { line, value } of jsonlLines(file('episodes.jsonl'), 'episodes.jsonl')) {
      const r = EpisodeRecordSchema.safeParse(value);
      if (!r.success) {
        const issue = r.error.issues[0];
        throw importError('episodes.jsonl', line, issue?.path.join('.') ?? '', `not a workbench episode (${issue?.message ?? 'invalid'})`, 'an episode record',
          isObject(value) ? value.id : value);
      }
      c.episodes.push({ ...r.data, runId });
    }
    c.sources.push({ file: 'episodes.jsonl', kind: 'workbench-episodes', count: c.episodes.length });
  }
  const evals: Record<string, unknown> = {};
  if (fs.existsSync(file('eval.json'))) {
    let v: unknown;
    try { v = JSON.parse(fs.readFileSync(file('eval.json'), 'utf8')); } catch (err) {
      throw importError('eval.json', 0, '', `not valid JSON (${(err as Error).message})`, '{<eval id>: result}');
    }
    if (!isObject(v)) throw importError('eval.json', 0, '', 'expected an object of eval results by id', 'object', v);
    for (const [id, result] of Object.entries(v)) {
      if (!/^[\w.@+-]+$/.test(id)) throw importError('eval.json', 0, id, 'expected an eval id usable as a file name', '[A-Za-z0-9_.@+-]+', id);
      if (isObject(result)) evals[id] = result; else c.skipped.push(`eval.json ${id} (not an object: the export could not read eval/${id}.json)`);
    }
    c.sources.push({ file: 'eval.json', kind: 'workbench-eval', count: Object.keys(evals).length });
  }
  if (fs.existsSync(file('events.jsonl'))) {
    c.skipped.push('events.jsonl (the source run\'s event log; its status and metrics are carried by run.json and metrics.csv)');
  }
  const record: RunRecord = {
    ...info, id: runId, name, config: { ...parsed.data, name }, status: 'imported', reason: null, progress: null,
    stages: [...info.stages, { name: 'import', title: 'Imported from a workbench export', status: 'completed', startedAt: now, finishedAt: now,
      reason: null, done: c.episodes.length, total: c.episodes.length }],
    versions: { ...(isObject(info.versions) ? info.versions : {}), importedFrom: source, originalRunId: info.id, importer: 'spa-workbench core/interop' },
  };
  delete (record as { dir?: string }).dir;
  writeImportedRun(opts.projectDir, runId, record, c, source, now, evals);
  return { runId, record, sources: c.sources, skipped: c.skipped, warnings: c.warnings };
}

/** Read, validate and write the run; returns its record (the caller adds it to the project index). */
export async function importRagenRun(opts: ImportOptions): Promise<ImportResult> {
  const source = path.resolve(opts.source);
  if (!fs.existsSync(source)) throw new WorkbenchError('NotFound', `import: ${source} does not exist`, { where: 'import path',
    expected: 'a SPA/RAGEN run folder or file', received: source });
  const now = opts.now ?? Date.now();
  const isDir = fs.statSync(source).isDirectory();
  if (isDir && isWorkbenchExport(source)) return importWorkbenchExport(opts, source, now);
  const name = opts.name ?? `RAGEN · ${path.basename(source)}`;
  const runId = newImportId(isDir ? path.basename(source) : path.basename(source, path.extname(source)), now);
  const root = isDir ? source : path.dirname(source);
  const files = isDir ? listFiles(source) : [source];
  const c: Collected = { episodes: [], metrics: [], sft: { train: [], val: [] }, config: null, configFile: null, sources: [], skipped: [], warnings: [] };
  for (const f of files) await readSource(f, path.relative(root, f) || path.basename(f), runId, now, c);
  if (c.episodes.length === 0 && c.metrics.length === 0 && c.sft.train.length + c.sft.val.length === 0) {
    throw new WorkbenchError('ValidationError',
      `import: nothing importable in ${source}; looked for recorder *.jsonl, raw_trajectories_*.json, wm_*.parquet, verl file-logger *.jsonl and W&B ` +
        `val/generations tables (.json/.csv)${c.skipped.length ? `; skipped: ${c.skipped.slice(0, 8).join(', ')}` : ''}`, {
      where: 'import path', expected: 'SPA/RAGEN run files', received: `${files.length} file(s)`,
    });
  }
  const ids = new Set<string>();
  for (const e of c.episodes) {
    let id = e.id; let k = 1;
    while (ids.has(id)) id = `${e.id}-${++k}`;
    e.id = id; ids.add(id);
  }

  // what the run was: env, method and model from the config when there is one, else from the episodes
  const cfg = c.config;
  const tags = at(cfg, 'es_manager.train.env_configs.tags');
  const firstTag = Array.isArray(tags) ? tags[0] : undefined;
  const envFromConfig = envFromRagen(at(cfg, `custom_envs.${String(firstTag)}.env_type`), firstTag);
  const env = envFromConfig ?? c.episodes[0]?.env ?? DEFAULT_ENV_ID;
  const mode = at(cfg, 'ctx_manager.mode');
  const resolvedMode = typeof mode === 'string' && !mode.includes('${') ? mode : null;   // SPA's configs leave ${oc.env:MODE} unresolved
  // only SPA's config/ writes ctx_manager.mode as ${oc.env:MODE} (its PPO runs MODE=base after world-model SFT): that is an SPA run
  const isSpaConfig = typeof mode === 'string' && mode.includes('${oc.env:MODE');
  const worldModel = resolvedMode !== null ? resolvedMode.includes('worldmodel')
    : isSpaConfig || c.episodes.some((e) => e.turns.some((t) => t.parsed.observation !== null || t.parsed.prediction !== null));
  const modelPath = at(cfg, 'model_path') ?? at(cfg, 'actor_rollout_ref.model.path');
  if (typeof mode === 'string' && mode.startsWith('${')) c.warnings.push(`ctx_manager.mode is the unresolved ${mode}` +
    (isSpaConfig ? ' (SPA\'s config/): imported as an SPA run' : '; the method was guessed from the responses'));
  const config = RunConfigSchema.parse({
    name, method: worldModel ? 'spa' : 'vanilla-rl', size: 'custom', env: { id: env, options: {} },
    ...(typeof modelPath === 'string' ? { model: { source: 'hf-folder', path: modelPath } } : {}),
    stages: { imported: { from: 'SPA/RAGEN', source, configFile: c.configFile, ragenConfig: cfg ?? {},
      files: c.sources.map((s) => `${s.kind}: ${s.file} (${s.count})`) } },
  });
  const latest: Record<string, number> = {};
  for (const p of [...c.metrics].sort((a, b) => a.step - b.step)) Object.assign(latest, p.values);
  if (c.episodes.length) latest['imported/episodes'] = c.episodes.length;
  const record: RunRecord = {
    id: runId, name, method: config.method, env, size: 'custom', preset: null, templateHash: null, status: 'imported', reason: null,
    createdAt: now, startedAt: null, finishedAt: now, durationMs: 0, attempts: 0,
    stages: [{ name: 'import', title: 'Imported from SPA/RAGEN', status: 'completed', startedAt: now, finishedAt: now, reason: null,
      done: c.episodes.length, total: c.episodes.length }],
    progress: null, latest, config, versions: { importedFrom: source, importer: 'spa-workbench core/interop' },
  };

  writeImportedRun(opts.projectDir, runId, record, c, source, now, {});
  return { runId, record, sources: c.sources, skipped: c.skipped, warnings: c.warnings };
}

