// A project folder: workbench.json (lowdb 7, single writer: this process, guarded by the project
// lock) holding project metadata, the run index (summaries for the run table) and the template
// index; runs/<id>/ folders (run.json is the source of truth, the index is a cache rebuilt from
// them when missing or corrupt); templates/<name>@<hash>.json immutable template versions.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Low, type Adapter } from 'lowdb';
import type { ProjectInfo, RunSummary, TemplateVersion, TemplateVersionMeta } from '../api/contract.js';
import { RunSummarySchema, TemplateVersionSchema } from '../api/contract.js';
import { WorkbenchError } from '../api/errors.js';
import { isReadOnlyError, moveAside, readJsonOrMoveAside, writeFileAtomic, writeJsonAtomicSync } from './atomic.js';
import { acquireProjectLock, holderSignalProblem, type LockInfo, type ProjectLock } from './lock.js';
import { CURRENT_SCHEMA_VERSION, migrate } from './migrations.js';
import { readRunRecord, upgradeRunRecord, type RunRecord } from './run-files.js';
import { cleanTempLeftovers } from './temp-files.js';

export const WORKBENCH_JSON = 'workbench.json';

export interface WorkbenchData {
  schemaVersion: number;
  project: { id: string; name: string; createdAt: number };
  runs: RunSummary[];                                   // newest last
  templates: Record<string, TemplateVersionMeta[]>;     // name → saved versions, oldest first
}

/** lowdb adapter: atomic whole-file writes (temp + fsync + rename), serialised; strict reads. */
/** lowdb adapter of a read-only project: writing is a bug (the dispatcher refuses writes first). */
class ReadOnlyAdapter implements Adapter<WorkbenchData> {
  constructor(private readonly initial: WorkbenchData) {}
  async read(): Promise<WorkbenchData | null> { return this.initial; }
  write(): Promise<void> {
    const message = 'the project is open read-only (another process holds it); nothing can be written';
    return Promise.reject(new WorkbenchError('ReadOnly', message, { where: 'workbench.json' }));
  }
}

class AtomicJsonAdapter implements Adapter<WorkbenchData> {
  private queue: Promise<void> = Promise.resolve();
  constructor(private readonly file: string, private readonly initial: WorkbenchData) {}
  async read(): Promise<WorkbenchData | null> { return this.initial; }   // parsed and validated by open()
  write(data: WorkbenchData): Promise<void> {
    const text = `${JSON.stringify(data, null, 2)}\n`;       // snapshot now; write in order
    const next = this.queue.then(() => writeFileAtomic(this.file, text));
    this.queue = next.catch(() => undefined);
    return next;
  }
}

function validateWorkbench(v: unknown): Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('expected a JSON object');
  const d = v as Record<string, unknown>;
  const p = d.project as Record<string, unknown> | undefined;
  if (!p || typeof p.id !== 'string' || typeof p.name !== 'string') throw new Error('expected "project": { id, name, createdAt }');
  if (!Array.isArray(d.runs)) throw new Error('expected "runs": [...]');
  const t = d.templates;
  if (t !== undefined && (typeof t !== 'object' || t === null || Array.isArray(t))) throw new Error('expected "templates": {...}');
  return d;
}

/**
 * The template index as a prototype-free map: a template named `constructor` or `__proto__` is
 * an ordinary key, never Object.prototype's. Entries that are not version lists are dropped (reported).
 */
function templateIndex(raw: unknown, warnings: string[]): Record<string, TemplateVersionMeta[]> {
  const out = Object.create(null) as Record<string, TemplateVersionMeta[]>;
  if (!raw || typeof raw !== 'object') return out;
  for (const [name, list] of Object.entries(raw as Record<string, unknown>)) {
    if (!Array.isArray(list)) {
      warnings.push(`workbench.json: templates.${name} is not a list of versions; left out (the template files are re-read)`);
      continue;
    }
    const metas = list.filter((m): m is TemplateVersionMeta => !!m && typeof m === 'object' && typeof (m as TemplateVersionMeta).hash === 'string');
    if (metas.length !== list.length) warnings.push(`workbench.json: ${list.length - metas.length} damaged entr(ies) in templates.${name}; left out`);
    Object.defineProperty(out, name, { value: metas, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** A lock stand-in for a project opened read-only (nothing to release). */
function readOnlyLock(dir: string): ProjectLock {
  return { file: path.join(dir, '.workbench.lock'), info: { pid: process.pid, host: '', startedAt: Date.now(), token: 'read-only', purpose: 'read-only' },
    tookOver: null, release() { /* none held */ } };
}

/** A run folder whose run.json is missing or damaged: kept visible (index summary if any) and reported on every open. */
export interface DamagedRun { id: string; problem: 'missing' | 'corrupt'; error: string | null; movedAside: string[] }

function templateFile(dir: string, name: string, hash: string): string {
  return path.join(dir, 'templates', `${name}@${hash}.json`);
}

export interface CreateOptions { name?: string; purpose?: string }
export interface OpenOptions {
  purpose?: string;
  /** Open without taking the lock and without writing anything (set automatically on a read-only file system). */
  readOnly?: boolean;
}

export class ProjectStore {
  readonly warnings: string[] = [];
  /** Run folders without a readable run.json (see DamagedRun); `doctor` lists and repairs them. */
  readonly damagedRuns: DamagedRun[] = [];
  private closed = false;

  /** Set when opened read-only (another process holds the lock): who holds it. */
  private holder: LockInfo | null = null;
  /** Read-only: run.json modification times seen by refresh(). */
  private readonly seen = new Map<string, number>();

  private constructor(readonly dir: string, readonly lock: ProjectLock, private readonly db: Low<WorkbenchData>,
    /** Opened on a read-only filesystem (listing and reading only). */
    private readonly readOnlyFs = false) {}

  get readOnly(): boolean { return this.readOnlyFs || this.holder !== null; }
  get lockHolder(): LockInfo | null { return this.holder; }
  /** Read-only: another process now holds the lock (the one watched ended, a new one took it); the watcher follows it. */
  followHolder(holder: LockInfo): void { if (this.holder) this.holder = holder; }

  /**
   * Open a project that another process holds, to watch it: nothing is written, moved aside or
   * locked. The run index is built from the run folders' run.json (refresh() re-reads changed ones).
   */
  static async openReadOnly(dir: string, holder: LockInfo): Promise<ProjectStore> {
    const abs = path.resolve(dir);
    const file = path.join(abs, WORKBENCH_JSON);
    let raw: Record<string, unknown> | null = null;
    try { raw = validateWorkbench(JSON.parse(fs.readFileSync(file, 'utf8'))); } catch { raw = null; }
    const project = (raw?.project as WorkbenchData['project'] | undefined) ?? { id: 'unknown', name: path.basename(abs), createdAt: 0 };
    const data: WorkbenchData = {
      schemaVersion: typeof raw?.schemaVersion === 'number' ? raw.schemaVersion : CURRENT_SCHEMA_VERSION,
      project, runs: [], templates: (raw?.templates as WorkbenchData['templates'] | undefined) ?? {},
    };
    const lock: ProjectLock = { file: path.join(abs, '.workbench.lock'), info: holder, tookOver: null, release: () => undefined };
    const store = new ProjectStore(abs, lock, new Low(new ReadOnlyAdapter(data), data));
    store.holder = holder;
    store.refresh();
    return store;
  }

  /** Read-only: re-read the run.json files that changed since the last call; returns the ids of changed, added or removed runs. */
  refresh(): string[] {
    const runsDir = path.join(this.dir, 'runs');
    const ids = fs.existsSync(runsDir) ? fs.readdirSync(runsDir) : [];
    const changed: string[] = [];
    const byId = new Map(this.data.runs.map((r) => [r.id, r]));
    for (const id of ids) {
      let mtime: number;
      try { mtime = fs.statSync(path.join(runsDir, id, 'run.json')).mtimeMs; } catch { continue; }
      if (this.seen.get(id) === mtime) continue;
      try {
        const summary = RunSummarySchema.safeParse(JSON.parse(fs.readFileSync(path.join(runsDir, id, 'run.json'), 'utf8')));
        if (!summary.success) continue;
        byId.set(id, summary.data);
        this.seen.set(id, mtime);
        changed.push(id);
      } catch { /* being replaced: the next refresh reads it */ }
    }
    for (const id of [...byId.keys()]) if (!ids.includes(id)) { byId.delete(id); this.seen.delete(id); changed.push(id); }
    if (changed.length) this.data.runs = [...byId.values()].sort((a, b) => a.createdAt - b.createdAt);
    return changed;
  }

  get data(): WorkbenchData { return this.db.data; }

  /** Create a project in an empty or absent folder, and open it. */
  static async create(dir: string, options: CreateOptions = {}): Promise<ProjectStore> {
    return pathErrors('projects.create path', dir, () => ProjectStore.createIn(dir, options));
  }

  private static async createIn(dir: string, options: CreateOptions): Promise<ProjectStore> {
    const abs = path.resolve(dir);
    if (fs.existsSync(path.join(abs, WORKBENCH_JSON))) {
      throw new WorkbenchError('Conflict', `${abs} already holds a project (workbench.json exists); open it instead of creating one`, {
        where: 'projects.create path', expected: 'an empty or new folder', received: abs,
      });
    }
    if (fs.existsSync(abs)) {
      if (!fs.statSync(abs).isDirectory())
        throw new WorkbenchError('ValidationError', `${abs} is a file, not a folder`, {
          where: 'projects.create path',
          expected: 'a folder path',
          received: 'a file',
        });
      const entries = fs.readdirSync(abs).filter((e) => !e.startsWith('.'));
      if (entries.length > 0) {
        throw new WorkbenchError('Conflict', `${abs} is not empty (${entries.slice(0, 5).join(', ')}${entries.length > 5 ? ', ...' : ''}); choose ` +
          `an empty or new folder for a project`, {
          where: 'projects.create path', expected: 'an empty or new folder', received: `${entries.length} entries`,
        });
      }
    }
    fs.mkdirSync(path.join(abs, 'runs'), { recursive: true });
    fs.mkdirSync(path.join(abs, 'templates'), { recursive: true });
    const lock = acquireProjectLock(abs, options.purpose);
    try {
      const data: WorkbenchData = {
        schemaVersion: CURRENT_SCHEMA_VERSION,
        project: { id: randomBytes(8).toString('hex'), name: options.name ?? path.basename(abs), createdAt: Date.now() },
        runs: [],
        templates: Object.create(null) as WorkbenchData['templates'],
      };
      writeJsonAtomicSync(path.join(abs, WORKBENCH_JSON), data);
      const db = new Low(new AtomicJsonAdapter(path.join(abs, WORKBENCH_JSON), data), data);
      await db.read();
      return new ProjectStore(abs, lock, db);
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  /** Open an existing project: lock, read (moving a corrupt file aside), migrate, reconcile runs. */
  static async open(dir: string, options: OpenOptions = {}): Promise<ProjectStore> {
    return pathErrors('projects.open path', dir, () => ProjectStore.openIn(dir, options));
  }

  private static async openIn(dir: string, options: OpenOptions): Promise<ProjectStore> {
    const abs = path.resolve(dir);
    const file = path.join(abs, WORKBENCH_JSON);
    if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory()) {
      throw new WorkbenchError('NotFound', `no project folder at ${abs}`, {
        where: 'projects.open path',
        expected: 'a project folder (with workbench.json)',
        received: abs,
      });
    }
    if (!fs.existsSync(file) && !fs.existsSync(path.join(abs, 'runs'))) {
      throw new WorkbenchError('NotFound', `${abs} is not a SPA Workbench project (no workbench.json); create a project there instead`, {
        where: 'projects.open path', expected: 'a folder with workbench.json', received: abs,
      });
    }
    const warnings: string[] = [];
    let readOnly = options.readOnly === true;
    let lock: ProjectLock;
    if (readOnly) lock = readOnlyLock(abs);
    else {
      try {
        lock = acquireProjectLock(abs, options.purpose);
      } catch (err) {
        // "Reading needs no lock": a project on a read-only file system (or without write
        // permission) opens read-only; every write is refused with a clear error.
        if (!isReadOnlyError(err)) throw err;
        readOnly = true;
        lock = readOnlyLock(abs);
        const code = (err as NodeJS.ErrnoException).code;
        warnings.push(`the project folder cannot be written (${code}): opened read-only; runs and templates can be viewed, not changed`);
      }
    }
    if (lock.tookOver) warnings.push(`took over a stale lock of process ${lock.tookOver.pid} (${lock.tookOver.host}), which is no longer running`);
    try {
      let raw: Record<string, unknown> | null = null;
      const r = readJsonOrMoveAside(file, validateWorkbench);
      if (r.status === 'ok') raw = r.value;
      else if (r.status === 'corrupt') {
        warnings.push(`workbench.json could not be read (${r.error}); ${movedText(r.movedTo)} and the run index was rebuilt from the run folders`);
      }
      else warnings.push('workbench.json was missing; the run index was rebuilt from the run folders');

      let data: WorkbenchData;
      if (raw) {
        const version = typeof raw.schemaVersion === 'number' ? raw.schemaVersion : 1;
        const m = migrate(raw, file);
        if (m.applied.length > 0 && !readOnly) {
          fs.copyFileSync(file, `${file}.v${version}.bak`);
          warnings.push(`migrated workbench.json from schema ${version} to ${CURRENT_SCHEMA_VERSION} (backup: workbench.json.v${version}.bak)`);
        }
        data = m.data as unknown as WorkbenchData;
        data.templates = templateIndex(data.templates, warnings);
      } else {
        data = {
          schemaVersion: CURRENT_SCHEMA_VERSION,
          project: { id: randomBytes(8).toString('hex'), name: path.basename(abs), createdAt: Date.now() },
          runs: [], templates: Object.create(null) as WorkbenchData['templates'],
        };
      }
      const store = new ProjectStore(abs, lock, new Low(new AtomicJsonAdapter(file, data), data), readOnly);
      await store.db.read();
      store.warnings.push(...warnings);
      store.reconcile();
      if (!readOnly) {
        // leftovers of writes cut by a crash (checkpoint temp folders, temp files): clean what is safe
        const cleaned = cleanTempLeftovers(abs);
        const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
        const removed = cleaned.removed;
        if (removed.length) {
          const names = `${removed.slice(0, 3).map((t) => t.relPath).join(', ')}${removed.length > 3 ? ', ...' : ''}`;
          const size = mb(removed.reduce((a, t) => a + t.bytes, 0));
          store.warnings.push(`removed ${removed.length} unfinished temp file(s)/folder(s) left by interrupted writes (${size}): ${names}`);
        }
        for (const t of cleaned.restored) {
          store.warnings.push(`restored the checkpoint ${path.relative(abs, t.target!)} from ${t.relPath} (a swap cut by a crash)`);
        }
        for (const e of cleaned.errors) store.warnings.push(`could not clean a leftover temp file: ${e}`);
        await store.db.write();
      }
      return store;
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  /** Make the index agree with the run folders and the template files (run.json wins). */
  private reconcile(): void {
    const runsDir = path.join(this.dir, 'runs');
    if (!this.readOnly) fs.mkdirSync(runsDir, { recursive: true });
    const folders = new Set(fs.existsSync(runsDir) ? fs.readdirSync(runsDir).filter((e) => isDir(path.join(runsDir, e))) : []);
    const byId = new Map<string, RunSummary>();
    this.data.runs.forEach((s, i) => {
      const ok = RunSummarySchema.safeParse(s);
      if (!ok.success) { this.warnings.push(`workbench.json: runs[${i}] is not a run summary (${describe(s)}); rebuilt from the run folders`); return; }
      if (folders.has(ok.data.id)) byId.set(ok.data.id, ok.data);
      else this.warnings.push(`run ${ok.data.id} is in the index but its folder is gone; removed from the index`);
    });
    for (const id of folders) {
      const runDir = path.join(runsDir, id);
      const r = readRunRecord(runDir);
      if (r.status === 'ok') {
        const summary = RunSummarySchema.safeParse(r.value);
        if (summary.success) {
          if (!byId.has(id)) this.warnings.push(`run ${id} was missing from the index; added from its run.json`);
          byId.set(id, summary.data);   // run.json is the source of truth
          continue;
        }
        this.noteDamaged(byId, { id, problem: 'corrupt', error: `run.json does not look like a run record (${summary.error.issues[0]?.message})`,
          movedAside: movedAsideFiles(runDir, 'run.json') });
        continue;
      }
      const movedAside = movedAsideFiles(runDir, 'run.json');
      if (r.status === 'corrupt') this.noteDamaged(byId, { id, problem: 'corrupt', error: r.error, movedAside: r.movedTo ? [...new Set([...movedAside,
        path.basename(r.movedTo)])] : movedAside });
      else if (movedAside.length > 0 || byId.has(id)) this.noteDamaged(byId, { id, problem: 'missing', error: null, movedAside });
      else this.warnings.push(`runs/${id} has no run.json (an interrupted run creation?); it is not listed. \`spa-workbench doctor\` shows what it holds`);
    }
    this.data.runs = [...byId.values()].sort((a, b) => a.createdAt - b.createdAt);
    // Templates: add versions found on disk but missing in the index.
    const tdir = path.join(this.dir, 'templates');
    if (fs.existsSync(tdir)) {
      for (const f of fs.readdirSync(tdir)) {
        const m = /^([a-z0-9][a-z0-9-]*)@([A-Za-z0-9]+)\.json$/.exec(f);
        if (!m) continue;
        const [, name, hash] = m as unknown as [string, string, string];
        const list = this.templateList(name, true);
        if (list.some((v) => v.hash === hash)) continue;
        const t = readJsonOrMoveAside(path.join(tdir, f), (v) => TemplateVersionSchema.parse(v));
        if (t.status === 'ok') { list.push(metaOf(t.value)); list.sort((a, b) => a.createdAt - b.createdAt); }
        else if (t.status === 'corrupt') this.warnings.push(`templates/${f} could not be read (${t.error}); ${movedText(t.movedTo)}`);
      }
    }
  }

  /**
   * A run whose run.json is missing or damaged stays visible: the index summary (if there is one)
   * is kept, marked failed with the reason; the warning repeats on every open until it is repaired.
   */
  private noteDamaged(byId: Map<string, RunSummary>, d: DamagedRun): void {
    this.damagedRuns.push(d);
    const what = d.problem === 'missing' ? 'is missing' : `could not be read (${d.error})`;
    const aside = d.movedAside.length ? `; the damaged file is kept as ${d.movedAside.join(', ')}` : '';
    const fix = '`spa-workbench doctor --project <folder> --repair` rebuilds it from the index and the run\'s checkpoints where it can';
    const prev = byId.get(d.id);
    if (prev) {
      byId.set(d.id, { ...prev, status: isActive(prev.status) ? 'failed' : prev.status, reason: `run.json ${what}${aside}` });
      this.warnings.push(`runs/${d.id}/run.json ${what}${aside}; the run is listed from the index, its details are unavailable. ${fix}`);
    } else {
      this.warnings.push(`runs/${d.id}/run.json ${what}${aside}; the run cannot be listed (it is not in the index either). ${fix}`);
    }
  }

  /** The version list of a template name (own key only), optionally created. */
  private templateList(name: string, create: true): TemplateVersionMeta[];
  private templateList(name: string, create?: false): TemplateVersionMeta[] | undefined;
  private templateList(name: string, create = false): TemplateVersionMeta[] | undefined {
    const t = this.data.templates;
    if (Object.prototype.hasOwnProperty.call(t, name)) return t[name];
    if (!create) return undefined;
    const list: TemplateVersionMeta[] = [];
    Object.defineProperty(t, name, { value: list, enumerable: true, writable: true, configurable: true });
    return list;
  }

  /** Persist the index (atomic, serialised). */
  async flush(): Promise<void> { this.assertWritable(); await this.db.write(); }

  info(): ProjectInfo {
    return {
      id: this.data.project.id, name: this.data.project.name, path: this.dir, createdAt: this.data.project.createdAt,
      schemaVersion: this.data.schemaVersion, runCount: this.data.runs.length, readOnly: this.readOnly, warnings: [...this.warnings],
      holder: this.holder ? {
        pid: this.holder.pid, host: this.holder.host, purpose: this.holder.purpose ?? 'workbench', startedAt: this.holder.startedAt,
        canStop: holderCanStop(this.holder),
      } : null,
    };
  }

  runDir(runId: string): string { return path.join(this.dir, 'runs', runId); }

  listRuns(): RunSummary[] { return this.data.runs; }
  getRun(runId: string): RunSummary | undefined { return this.data.runs.find((r) => r.id === runId); }

  /** Insert or replace a run's summary in the index (call flush() to persist). */
  putRun(summary: RunSummary): void {
    this.assertWritable();
    const i = this.data.runs.findIndex((r) => r.id === summary.id);
    if (i >= 0) this.data.runs[i] = summary; else this.data.runs.push(summary);
  }

  removeRun(runId: string): boolean {
    this.assertWritable();
    const before = this.data.runs.length;
    this.data.runs = this.data.runs.filter((r) => r.id !== runId);
    return this.data.runs.length !== before;
  }

  /** Full run record from run.json (source of truth). */
  readRun(runId: string): RunRecord | null {
    if (this.readOnly) {   // never move a file aside in another process's project
      try { return upgradeRunRecord(JSON.parse(fs.readFileSync(path.join(this.runDir(runId), 'run.json'), 'utf8')) as RunRecord); } catch { return null; }
    }
    const r = readRunRecord(this.runDir(runId));
    if (r.status === 'ok') return r.value;
    if (r.status === 'corrupt') {
      this.warnings.push(`runs/${runId}/run.json could not be read (${r.error}); ${movedText(r.movedTo)}`);
      throw new WorkbenchError('CorruptData', `runs/${runId}/run.json could not be read (${r.error}); ${movedText(r.movedTo)}`,
        { where: `runs/${runId}/run.json` });
    }
    const damaged = this.damagedRuns.find((d) => d.id === runId);
    if (damaged) {
      throw new WorkbenchError('CorruptData', `runs/${runId}/run.json ${damaged.problem === 'missing' ? 'is missing' : `could not be read (${damaged.error})`}`
        + `${damaged.movedAside.length ? ` (kept as ${damaged.movedAside.join(', ')})` : ''}; run \`spa-workbench doctor --repair\` to rebuild it`,
          { where: `runs/${runId}/run.json` });
    }
    return null;
  }

  // ── templates ──

  savedTemplates(): { name: string; versions: TemplateVersionMeta[] }[] {
    return Object.entries(this.data.templates).map(([name, versions]) => ({ name, versions }));
  }

  templateVersions(name: string): TemplateVersionMeta[] { return [...(this.templateList(name) ?? [])].reverse(); }

  readTemplate(name: string, hash?: string): TemplateVersion | null {
    const versions = this.templateList(name) ?? [];
    const meta = hash ? versions.find((v) => v.hash === hash || v.hash.startsWith(hash)) : versions[versions.length - 1];
    if (!meta) return null;
    const r = readJsonOrMoveAside(templateFile(this.dir, name, meta.hash), (v) => TemplateVersionSchema.parse(v));
    if (r.status === 'ok') return r.value;
    if (r.status === 'corrupt') throw new WorkbenchError('CorruptData',
      `templates/${name}@${meta.hash}.json could not be read (${r.error}); ${movedText(r.movedTo)}`, { where: `templates/${name}@${meta.hash}.json` });
    throw new WorkbenchError('NotFound', `templates/${name}@${meta.hash}.json is missing on disk although the index lists it`, {
      where: `templates/${name}@${meta.hash}.json`,
    });
  }

  /** Save an immutable version; identical content (same hash) returns the existing one. */
  async saveTemplate(version: TemplateVersion): Promise<{ version: TemplateVersion; created: boolean }> {
    this.assertWritable();
    const existing = (this.templateList(version.name) ?? []).find((v) => v.hash === version.hash);
    if (existing) {
      const stored = this.readTemplate(version.name, version.hash);
      if (stored) return { version: stored, created: false };
    }
    const file = templateFile(this.dir, version.name, version.hash);
    if (!fs.existsSync(file)) writeJsonAtomicSync(file, version);   // never overwrite a version
    const list = this.templateList(version.name, true);
    if (!list.some((v) => v.hash === version.hash)) list.push(metaOf(version));
    await this.flush();
    return { version, created: true };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.lock.release();
  }

  get isClosed(): boolean { return this.closed; }

  private assertOpen(): void {
    if (this.holder) {
      const who = `process ${this.holder.pid} on ${this.holder.host} (${this.holder.purpose ?? 'workbench'})`;
      const message = `project ${this.dir} is open read-only: ${who} holds it; make changes there, or after it exits`;
      throw new WorkbenchError('ReadOnly', message, { where: 'project store' });
    }
    if (this.closed) throw new WorkbenchError('NoProject', `project ${this.dir} is closed`, { where: 'project store' });
  }

  /** Writes need an open project that is not read-only. */
  assertWritable(where = 'project store'): void {
    this.assertOpen();
    if (this.readOnly) {
      throw new WorkbenchError('Conflict', `project ${this.dir} is open read-only (its folder cannot be written); copy it to a writable place to change it`, {
        where, expected: 'a writable project', received: 'read-only',
      });
    }
  }
}

/** File-system errors about the path itself (too long, not a folder, no permission) become ValidationErrors naming it. */
async function pathErrors<T>(where: string, dir: string, fn: () => Promise<T>): Promise<T> {
  if (typeof dir !== 'string' || dir.includes('\u0000')) {
    throw new WorkbenchError('ValidationError', `${where}: expected a folder path without NUL characters`, { where, expected: 'a folder path',
      received: JSON.stringify(String(dir).slice(0, 80)) });
  }
  try { return await fn(); } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why: Record<string, string> = {
      ENAMETOOLONG: 'the path (or one of its names) is too long for this file system', ENOTDIR: 'a part of the path is a file, not a folder',
      EACCES: 'no permission to use this folder', EPERM: 'no permission to use this folder', ELOOP: 'too many symbolic links in the path',
      EINVAL: 'the path is not valid on this file system',
    };
    if (!(err instanceof WorkbenchError) && code && why[code]) {
      throw new WorkbenchError('ValidationError', `${where}: ${why[code]}: ${path.resolve(dir).slice(0, 300)}`, { where, expected: 'a usable folder path',
        received: code });
    }
    throw err;
  }
}

function isDir(p: string): boolean { try { return fs.statSync(p).isDirectory(); } catch { return false; } }

function isActive(status: string): boolean { return status === 'running' || status === 'queued' || status === 'stopping'; }

function describe(v: unknown): string { return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v; }

function movedText(movedTo: string | null): string {
  return movedTo ? `it was moved to ${path.basename(movedTo)}` : 'it could not be moved aside (read-only) and was left in place';
}

/** Files `<name>.corrupt-*` in a folder (what earlier opens moved aside). */
export function movedAsideFiles(dir: string, name: string): string[] {
  try { return fs.readdirSync(dir).filter((f) => f.startsWith(`${name}.corrupt-`)).sort(); } catch { return []; }
}

/**
 * Can this process stop the holder's runs, the way `spa-workbench stop` does (SIGINT to a CLI run on this machine)?
 * Only when the lock's process is verified to be that CLI run (lock.ts holderSignalProblem): a planted lock naming any
 * live pid never gets that pid a signal.
 */
export function holderCanStop(holder: LockInfo): boolean {
  return holder.host === os.hostname() && (holder.purpose === 'cli run' || holder.purpose === 'cli study run') && holderSignalProblem(holder) === null;
}

function metaOf(v: TemplateVersion): TemplateVersionMeta {
  return { name: v.name, hash: v.hash, createdAt: v.createdAt, description: v.description, parent: v.parent };
}

export { moveAside };
