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
// project, fsynced, and renamed into runs/ only when complete, so a bad file leaves nothing behind.
// Reads are bounded (IMPORT_LIMITS in core/interop/import-read.ts: file and line sizes, rows, JSON
// nesting, folder entries): JSONL and logs are streamed line by line, only regular files are opened
// (a FIFO, socket or device is refused from lstat, never opened), links inside a folder are not
// followed (each is listed in `skipped`). Over the API the import runs in a worker thread
// (core/host/import-pool.ts), so the host keeps answering while it reads.
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
import { fileKind, IMPORT_LIMITS, type ImportLimits, parseJsonText, readDocument, readDocumentBytes, readLines } from './import-read.js';
import { stripBom } from '../util/regular-file.js';
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
  limits?: Partial<ImportLimits>;   // tighter (or looser) bounds than IMPORT_LIMITS (tests, the host)
  tempName?: string;         // name of the temporary folder in the project (the host picks it, to remove it if the import is stopped)
}

export interface ImportResult { runId: string; record: RunRecord; sources: ImportSource[]; skipped: string[]; warnings: string[] }

const MAX_DEPTH = 4;

/**
 * The regular files under `root` (4 folders deep), sorted. Links are not followed and other
 * non-regular entries (FIFOs, sockets, devices) are not opened: each is named in `skipped`, as is a
 * folder that cannot be read. More than `limits.maxWalkEntries` entries is refused.
 */
function listFiles(root: string, limits: ImportLimits, skipped: string[]): string[] {
  const out: string[] = [];
  let seen = 0;
  const walk = (dir: string, depth: number) => {
    let entries: fs.Dirent[];
    try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (dir === root) throw new WorkbenchError('ValidationError', `import: the folder ${root} cannot be read (${e.code ?? e.message})`, {
        where: 'import path', expected: 'a readable SPA/RAGEN run folder', received: root });
      skipped.push(`${path.relative(root, dir)}/ (the folder cannot be read: ${e.code ?? e.message})`);
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (++seen > limits.maxWalkEntries) {
        throw new WorkbenchError('ValidationError', `import: more than ${limits.maxWalkEntries} entries under ${root} (IMPORT_LIMITS.maxWalkEntries); ` +
          'point the import at one run\'s output folder', { where: 'import path', expected: `a run folder of at most ${limits.maxWalkEntries} entries`,
          received: root });
      }
      const p = path.join(dir, e.name);
      const rel = path.relative(root, p);
      if (e.isDirectory()) {
        if (depth < MAX_DEPTH && e.name !== 'node_modules' && !e.name.startsWith('global_step_')) walk(p, depth + 1);
      } else if (e.isFile()) out.push(p);
      else if (e.isSymbolicLink()) skipped.push(`${rel} (a symbolic link; links are not followed: import the folder it points to)`);
      else skipped.push(`${rel} (${fileKind(e)}; only regular files are imported)`);
    }
  };
  walk(root, 0);
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Non-empty lines of a JSONL file, each parsed as it is read (a stream); a bad line is an error naming file and line. */
function* jsonlLines(file: string, rel: string, c: Collected): Generator<{ line: number; value: unknown }> {
  for (const { line, text } of readLines(file, rel, c.limits)) {
    if (text.trim() === '') continue;
    countRow(c, rel, line);
    yield { line, value: parseJsonText(text, rel, line, c.limits) };
  }
}

/** One more row read; refuses past `limits.maxRows`. */
function countRow(c: Collected, rel: string, line: number): void {
  if (++c.rows > c.limits.maxRows) throw importError(rel, line, '', `the import holds more than ${c.limits.maxRows} rows (IMPORT_LIMITS.maxRows); ` +
    'import fewer files at once', `at most ${c.limits.maxRows} rows`);
}

/** An episode into the run, its id made unique in linear time: a repeated id gets the next free "-k" suffix of that id. */
function addEpisode(c: Collected, e: EpisodeRecord): void {
  if (c.ids.has(e.id)) {
    const base = e.id;
    let k = c.nextSuffix.get(base) ?? 2;
    while (c.ids.has(`${base}-${k}`)) k++;
    c.nextSuffix.set(base, k + 1);
    e.id = `${base}-${k}`;
  }
  c.ids.add(e.id);
  c.episodes.push(e);
}

/** Metric values of one point: finite numbers; NaN and infinities (Python writes them) are counted per name and reported, not charted. */
function finiteValues(c: Collected, rel: string, data: Record<string, unknown>): Record<string, number> {
  const values: Record<string, number> = {};
  for (const [k, v] of Object.entries(data)) {
    if (typeof v !== 'number') continue;
    if (Number.isFinite(v)) values[k] = v;
    else { const key = `${rel}\u0000${k}`; c.nonFinite.set(key, (c.nonFinite.get(key) ?? 0) + 1); }
  }
  return values;
}

/** The warnings of non-finite metric values, one per file and metric name. */
function nonFiniteWarnings(c: Collected): void {
  for (const [key, n] of c.nonFinite) {
    const [file, name] = key.split('\u0000') as [string, string];
    c.warnings.push(`${file}: ${n} value(s) of ${name} were NaN or infinite (as Python writes them); the points are kept, those values are not charted`);
  }
}

/** RFC 4180 CSV (quoted fields may hold newlines); rows with the one-based line each starts on. */
export function parseCsv(source: string, rel: string): { line: number; cells: string[] }[] {
  const text = stripBom(source);                       // Excel's "CSV UTF-8" starts with a byte-order mark
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
  limits: ImportLimits;
  rows: number;                       // rows read so far (limits.maxRows)
  ids: Set<string>;                   // episode ids taken
  nextSuffix: Map<string, number>;    // next "-k" to try for a repeated id
  nonFinite: Map<string, number>;     // "<file>\0<metric>" → NaN/infinite values seen
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
    countRow(c, rel, firstLine(r));
    if (!Array.isArray(row)) throw importError(rel, firstLine(r), `data[${r}]`, 'expected a row (list of cells)', 'array', row);
    const step = Number(row[stepCol]);
    if (!Number.isInteger(step)) throw importError(rel, firstLine(r), 'step', 'expected an integer step', 'integer', row[stepCol]);
    for (const { n, i } of outputs) {
      const text = row[i];
      if (typeof text !== 'string' || text.trim() === '') continue;
      const k = Number(n.slice('output_'.length));
      const messages = splitDecodedChat(text);
      addEpisode(c, episodeFromChat(messages, { file: rel, line: firstLine(r), field: n }, {
        runId, id: `wandb-${String(step).padStart(6, '0')}-${k}`, stage: 'val', step, env, seed: -1, group: k - 1, sample: 0, time,
      }));
      count++;
    }
  });
  return count;
}

async function readSource(file: string, rel: string, runId: string, time: number, c: Collected): Promise<void> {
  const base = path.basename(file);
  if (base.endsWith('.jsonl')) {
    const lines = jsonlLines(file, rel, c);
    try {
      return readJsonlSource(lines, file, rel, runId, time, c);
    } finally {
      lines.return(undefined);   // closes the file when only the first line was needed
    }
  }
  return readOtherSource(file, base, rel, runId, time, c);
}

function readJsonlSource(lines: Generator<{ line: number; value: unknown }>, file: string, rel: string, runId: string, time: number,
  c: Collected): void {
  const head = lines.next();
  if (head.done) { c.skipped.push(`${rel} (an empty JSONL file)`); return; }
  const first = head.value.value;
  // the rest of the file is read as it is used (one line in memory at a time)
  const all = (function* () { yield head.value; yield* lines; })();
  if (isObject(first) && first.format === RECORDER_FORMAT) {
    const seen = new Map<string, number>();
    let count = 0;
    for (const { line, value } of all) {
      const v = value as Record<string, unknown>;
      const key = `${String(v?.step)}/${String(v?.tag)}/${String(v?.group_id)}`;
      const sample = seen.get(key) ?? 0;
      seen.set(key, sample + 1);
      addEpisode(c, episodeFromRecorderLine(value, rel, line, runId, sample, time));
      count++;
    }
    c.sources.push({ file: rel, kind: 'recorder', count });
    return;
  }
  if (isObject(first) && 'step' in first && isObject(first.data)) {
    const mtime = fs.lstatSync(file).mtimeMs;
    let count = 0;
    for (const { line, value } of all) {
      if (!isObject(value) || typeof value.step !== 'number' || !Number.isFinite(value.step)) throw importError(rel, line, 'step',
        'expected {"step": <finite number>, "data": {...}} (verl file logger)', 'number', isObject(value) ? value.step : value);
      if (!isObject(value.data)) throw importError(rel, line, 'data', 'expected an object of metric values', 'object', value.data);
      c.metrics.push({ stage: 'rl', step: value.step, time: mtime, values: finiteValues(c, rel, value.data) });
      count++;
    }
    c.sources.push({ file: rel, kind: 'metrics', count });
    return;
  }
  if (isObject(first) && typeof first.output === 'string' && 'score' in first && 'step' in first) {
    // verl 1e47e412 ray_trainer.py:506-526 (_dump_generations, called by RAGEN agent_trainer.py:270-278): <dir>/<step>.jsonl of
    // {input, output, score, step, reward}; output is the whole decoded chat
    let count = 0;
    for (const { line, value } of all) {
      if (!isObject(value) || typeof value.output !== 'string') throw importError(rel, line, 'output',
        'expected the decoded chat (verl validation dump line {input, output, score, step})', 'string', isObject(value) ? value.output : value);
      const step = value.step;
      if (typeof step !== 'number' || !Number.isInteger(step)) throw importError(rel, line, 'step', 'expected an integer step', 'integer', step);
      if (value.output.trim() === '') continue;
      addEpisode(c, episodeFromChat(splitDecodedChat(value.output), { file: rel, line, field: 'output' }, {
        runId, id: `valdump-${String(step).padStart(6, '0')}-${line}`, stage: 'val', step, env: null, seed: -1, group: line - 1, sample: 0, time,
      }));
      count++;
    }
    c.sources.push({ file: rel, kind: 'verl-val-dump', count });
    return;
  }
  c.skipped.push(`${rel} (JSONL, but neither recorder records, {"step","data"} metric lines nor a verl validation dump)`);
}

async function readOtherSource(file: string, base: string, rel: string, runId: string, time: number, c: Collected): Promise<void> {
  if (base.endsWith('.log')) {
    // verl 1e47e412's console logger (verl/utils/logger/aggregate_logger.py:23-29): "step:N - key:v.vvv - …", values rounded to 3 decimals
    const mtime = fs.lstatSync(file).mtimeMs;
    let count = 0;
    for (const { line, text } of readLines(file, rel, c.limits)) {
      const m = /(?:^|\s)step:(\d+) - (.*)$/.exec(text);
      if (!m) continue;
      countRow(c, rel, line);
      const data: Record<string, number> = {};
      for (const part of m[2]!.split(' - ')) {
        const kv = /^(\S+):(-?[\d.]+(?:e[-+]?\d+)?|nan|inf|-inf)$/i.exec(part.trim());
        if (!kv) throw importError(rel, line, part.trim().split(':')[0] ?? '', 'expected key:number in a verl console metrics line', 'key:value', part);
        const token = kv[2]!.toLowerCase();
        const v = token === 'nan' ? NaN : token === 'inf' ? Infinity : token === '-inf' ? -Infinity : Number(token);
        if (!Number.isFinite(v) && /\d/.test(token)) throw importError(rel, line, kv[1]!, 'a number too large for a double (beyond ±1.8e308); it ' +
          'cannot be stored, so the import is refused rather than dropping it', 'a finite number', token);
        data[kv[1]!] = v;
      }
      const step = Number(m[1]);
      if (!Number.isSafeInteger(step)) throw importError(rel, line, 'step', 'expected an integer step', 'integer', m[1]);
      c.metrics.push({ stage: base.startsWith('sft') ? 'sft' : 'rl', step, time: mtime, values: finiteValues(c, rel, data) });
      count++;
    }
    if (count === 0) { c.skipped.push(`${rel} (log without verl "step:N - key:value" lines)`); return; }
    c.sources.push({ file: rel, kind: 'console-metrics', count });
    c.warnings.push(`${rel}: metrics read from verl's console lines are rounded to 3 decimals`);
    return;
  }
  if (/^raw_trajectories.*\.json$/.test(base)) {
    const value = parseJsonText(readDocument(file, rel, c.limits), rel, 0, c.limits);
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
      countRow(c, rel, 0);
      addEpisode(c, episodeFromChat(list as ChatMessageIn[], { file: rel, line: 0, field: `[${i}].messages_list` }, {
        runId, id: `selfplay-${id}`, stage: 'selfplay', step: 0, env: null, seed: -1, group: i, sample: 0, time,
      }));
    });
    c.sources.push({ file: rel, kind: 'raw-trajectories', count: value.length });
    return;
  }
  if (/^wm_(train|val)\.parquet$/.test(base)) {
    const split = base.includes('train') ? 'train' : 'val';
    let rows: Record<string, unknown>[];
    const bytes = readDocumentBytes(file, rel, c.limits);
    try { rows = await readParquetRows(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)); } catch (err) { throw importError(rel, 0, '',
      `not a readable parquet file (${(err as Error).message})`, 'parquet'); }
    rows.forEach((row, i) => {
      countRow(c, rel, i + 1);
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
      const rows = parseCsv(readDocument(file, rel, c.limits), rel);
      const header = rows[0]?.cells ?? [];
      if (!header.includes('step') || !header.some((h) => /^output_\d+$/.test(h))) { c.skipped.push(`${rel} (CSV without step and output_1 columns)`); return; }
      const body = rows.slice(1);
      const n = wandbEpisodes(rel, header, body.map((r) => r.cells), (r) => (r < 0 ? 1 : body[r]!.line), runId, time, c, null);
      c.sources.push({ file: rel, kind: 'wandb-table', count: n });
      return;
    }
    const value = parseJsonText(readDocument(file, rel, c.limits), rel, 0, c.limits);
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
    try { value = YAML.parse(readDocument(file, rel, c.limits)); } catch (err) {
      if (err instanceof WorkbenchError) throw err;
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

/** fsync a folder (its entries: new files, a rename); best effort where folders cannot be opened (Windows). */
function fsyncDir(dir: string): void {
  let fd: number;
  try { fd = fs.openSync(dir, 'r'); } catch { return; }
  try { fs.fsyncSync(fd); } catch { /* not supported for folders here */ } finally { fs.closeSync(fd); }
}

/** The temporary folder's name: the host's choice (so it can remove it if the import is stopped) or a fresh one. */
export function importTempName(given?: string): string {
  if (given === undefined) return `.import-${randomBytes(4).toString('hex')}`;
  if (!/^\.import-[0-9a-f]{8,32}$/.test(given)) throw new Error(`import: temporary folder name ${JSON.stringify(given)} is not .import-<hex>`);
  return given;
}

/** appendJsonl in batches (a 10^6-row import is not one 80 MB buffer), fsynced once at the end; the spans of all rows. */
function appendBatched(file: string, rows: readonly unknown[], batch = 50_000): { offset: number; length: number }[] {
  const spans: { offset: number; length: number }[] = [];
  for (let i = 0; i < rows.length; i += batch) {
    for (const span of appendJsonl(file, rows.slice(i, i + batch), { sync: i + batch >= rows.length })) spans.push(span);
  }
  return spans;
}

/**
 * Writes the run in a temporary folder of the project, fsyncs every file and folder, then renames it
 * into runs/ and fsyncs runs/ (SQLite's standard: after a power loss the run is whole or absent).
 * Nothing is left behind on an error.
 */
function writeImportedRun(projectDir: string, runId: string, record: RunRecord, c: Collected, source: string, now: number,
  evals: Record<string, unknown>, tempName?: string): void {
  const runsDir = path.join(projectDir, 'runs');
  fs.mkdirSync(runsDir, { recursive: true });
  const tmp = path.join(projectDir, importTempName(tempName));
  const sync = { sync: true };
  try {
    fs.mkdirSync(tmp, { recursive: true });
    if (c.episodes.length) {
      const rel = 'rollouts/imported.jsonl';
      fs.mkdirSync(path.join(tmp, 'rollouts'), { recursive: true });
      const spans = appendBatched(path.join(tmp, rel), c.episodes);
      const index: EpisodeSummary[] = c.episodes.map((e, i) => ({
        id: e.id, stage: e.stage, step: e.step, seed: e.seed, group: e.group, sample: e.sample, success: e.success, totalReward: e.totalReward,
        numTurns: e.numTurns, formatErrors: e.formatErrors, invalidActions: e.invalidActions, file: rel, offset: spans[i]!.offset, length: spans[i]!.length,
      }));
      appendBatched(path.join(tmp, ROLLOUT_INDEX), index);
    }
    if (c.metrics.length) appendBatched(path.join(tmp, METRICS_FILE), c.metrics);
    for (const split of ['train', 'val'] as const) if (c.sft[split].length) appendBatched(path.join(tmp, sftFile(split)), c.sft[split]);
    if (c.sft.train.length + c.sft.val.length) writeJsonAtomicSync(path.join(tmp, SFT_STATS), { train: c.sft.train.length, val: c.sft.val.length,
      dropped: {} });
    const summary = c.sources.map((s) => `${s.kind} ${s.file} (${s.count})`).join('; ');
    appendJsonl(path.join(tmp, EVENTS_FILE), [
      { type: 'log', runId, time: now, level: 'info', message: `imported from ${source}: ${summary}` },
      ...c.skipped.map((s) => ({ type: 'log', runId, time: now, level: 'info', message: `not imported: ${s}` })),
      ...c.warnings.map((w) => ({ type: 'log', runId, time: now, level: 'warn', message: w })),
      { type: 'status', runId, time: now, status: 'imported' },
    ], sync);
    if (Object.keys(evals).length) fs.mkdirSync(path.join(tmp, 'eval'), { recursive: true });
    for (const [id, result] of Object.entries(evals)) writeJsonAtomicSync(path.join(tmp, 'eval', `${id}.json`), result);
    writeRunRecord(tmp, record);
    for (const dir of fs.readdirSync(tmp, { withFileTypes: true })) if (dir.isDirectory()) fsyncDir(path.join(tmp, dir.name));
    fsyncDir(tmp);
    fs.renameSync(tmp, path.join(runsDir, runId));
    fsyncDir(runsDir);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** Whether `dir` is a folder written by `spa-workbench export RUN --out DIR/` (core/cli/core-commands.ts exportRun). */
export function isWorkbenchExport(dir: string, limits: ImportLimits = IMPORT_LIMITS): boolean {
  if (!fs.existsSync(path.join(dir, 'run.json')) || !['metrics.csv', 'episodes.jsonl', 'eval.json'].some((f) => fs.existsSync(path.join(dir, f)))) return false;
  try {
    const v: unknown = parseJsonText(readDocument(path.join(dir, 'run.json'), 'run.json', limits), 'run.json', 0, limits);
    return isObject(v) && typeof v.id === 'string' && isObject(v.config) && Array.isArray(v.stages) && typeof v.createdAt === 'number';
  } catch { return false; }
}

/** The metric points of an exported metrics.csv (header stage, step, time, episodes, then one column per metric; empty: not logged). */
function metricsFromCsv(file: string, rel: string, c: Collected): MetricPoint[] {
  const rows = parseCsv(readDocument(file, rel, c.limits), rel);
  const header = rows[0]?.cells ?? [];
  if (header.slice(0, 4).join(',') !== 'stage,step,time,episodes') throw importError(rel, 1, 'header',
    'expected the columns stage, step, time, episodes, then the metric names', 'stage,step,time,episodes,…', header.slice(0, 4).join(','));
  return rows.slice(1).map(({ line, cells }) => {
    countRow(c, rel, line);
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
function importWorkbenchExport(opts: ImportOptions, source: string, now: number, c: Collected): ImportResult {
  const info = parseJsonText(readDocument(path.join(source, 'run.json'), 'run.json', c.limits), 'run.json', 0, c.limits) as RunRecord & { dir?: string };
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
    c.metrics = metricsFromCsv(file('metrics.csv'), 'metrics.csv', c);
    c.sources.push({ file: 'metrics.csv', kind: 'workbench-metrics', count: c.metrics.length });
  }
  if (fs.existsSync(file('episodes.jsonl'))) {
    for (const { line, value } of jsonlLines(file('episodes.jsonl'), 'episodes.jsonl', c)) {
      const r = EpisodeRecordSchema.safeParse(value);
      if (!r.success) {
        const issue = r.error.issues[0];
        throw importError('episodes.jsonl', line, issue?.path.join('.') ?? '', `not a workbench episode (${issue?.message ?? 'invalid'})`, 'an episode record',
          isObject(value) ? value.id : value);
      }
      addEpisode(c, { ...r.data, runId });
    }
    c.sources.push({ file: 'episodes.jsonl', kind: 'workbench-episodes', count: c.episodes.length });
  }
  const evals: Record<string, unknown> = {};
  if (fs.existsSync(file('eval.json'))) {
    const v = parseJsonText(readDocument(file('eval.json'), 'eval.json', c.limits), 'eval.json', 0, c.limits);
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
  writeImportedRun(opts.projectDir, runId, record, c, source, now, evals, opts.tempName);
  return { runId, record, sources: c.sources, skipped: c.skipped, warnings: c.warnings };
}

/**
 * The real path of the import source (links resolved, so the guards apply to what is read); a
 * missing source or a dangling link is NotFound.
 */
export function realSource(given: string): string {
  try { return fs.realpathSync(given); } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT' || e.code === 'ENOTDIR') throw new WorkbenchError('NotFound', `import: ${given} does not exist` +
      (fs.lstatSync(given, { throwIfNoEntry: false })?.isSymbolicLink() ? ' (a link to a missing target)' : ''), { where: 'import path',
      expected: 'a SPA/RAGEN run folder or file', received: given });
    throw new WorkbenchError('ValidationError', `import: ${given} cannot be read (${e.code ?? e.message})`, { where: 'import path',
      expected: 'a readable SPA/RAGEN run folder or file', received: given });
  }
}

/** Read, validate and write the run; returns its record (the caller adds it to the project index). */
export async function importRagenRun(opts: ImportOptions): Promise<ImportResult> {
  const given = path.resolve(opts.source);
  const source = realSource(given);
  const now = opts.now ?? Date.now();
  const c: Collected = { limits: { ...IMPORT_LIMITS, ...(opts.limits ?? {}) }, rows: 0, ids: new Set(), nextSuffix: new Map(), nonFinite: new Map(),
    episodes: [], metrics: [], sft: { train: [], val: [] }, config: null, configFile: null, sources: [], skipped: [], warnings: [] };
  const st = fs.statSync(source);
  const isDir = st.isDirectory();
  if (!isDir && !st.isFile()) throw new WorkbenchError('ValidationError', `import: ${given} is ${fileKind(st)}, not a run folder or a regular file; ` +
    'nothing was read from it', { where: 'import path', expected: 'a SPA/RAGEN run folder or file', received: `${given} (${fileKind(st)})` });
  if (isDir && isWorkbenchExport(source, c.limits)) return importWorkbenchExport(opts, source, now, c);
  const name = opts.name ?? `RAGEN · ${path.basename(given)}`;
  const runId = newImportId(isDir ? path.basename(given) : path.basename(given, path.extname(given)), now);
  const root = isDir ? source : path.dirname(source);
  const files = isDir ? listFiles(source, c.limits, c.skipped) : [source];
  for (const f of files) await readSource(f, path.relative(root, f) || path.basename(f), runId, now, c);
  nonFiniteWarnings(c);
  if (c.episodes.length === 0 && c.metrics.length === 0 && c.sft.train.length + c.sft.val.length === 0) {
    throw new WorkbenchError('ValidationError',
      `import: nothing importable in ${source}; looked for recorder *.jsonl, raw_trajectories_*.json, wm_*.parquet, verl file-logger *.jsonl and W&B ` +
        `val/generations tables (.json/.csv)${c.skipped.length ? `; skipped: ${c.skipped.slice(0, 8).join(', ')}` : ''}`, {
      where: 'import path', expected: 'SPA/RAGEN run files', received: `${files.length} file(s)`,
    });
  }
  // episode ids were made unique as they were added (addEpisode: a Set and a next-suffix map, linear time)

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

  writeImportedRun(opts.projectDir, runId, record, c, source, now, {}, opts.tempName);
  return { runId, record, sources: c.sources, skipped: c.skipped, warnings: c.warnings };
}

