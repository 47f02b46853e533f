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
import { moveAside, readJsonOrMoveAside, writeFileAtomic, writeJsonAtomicSync } from './atomic.js';
import { acquireProjectLock, type LockInfo, type ProjectLock } from './lock.js';
import { CURRENT_SCHEMA_VERSION, migrate } from './migrations.js';
import { readRunRecord, type RunRecord } from './run-files.js';

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
  if (d.templates !== undefined && (typeof d.templates !== 'object' || d.templates === null)) throw new Error('expected "templates": {...}');
  return d;
}

function templateFile(dir: string, name: string, hash: string): string {
  return path.join(dir, 'templates', `${name}@${hash}.json`);
}

export interface CreateOptions { name?: string; purpose?: string }
export interface OpenOptions { purpose?: string }

export class ProjectStore {
  readonly warnings: string[] = [];
  private closed = false;

  /** Set when opened read-only (another process holds the lock): who holds it. */
  private holder: LockInfo | null = null;
  /** Read-only: run.json modification times seen by refresh(). */
  private readonly seen = new Map<string, number>();

  private constructor(readonly dir: string, readonly lock: ProjectLock, private readonly db: Low<WorkbenchData>) {}

  get readOnly(): boolean { return this.holder !== null; }
  get lockHolder(): LockInfo | null { return this.holder; }

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
    const abs = path.resolve(dir);
    if (fs.existsSync(path.join(abs, WORKBENCH_JSON))) {
      throw new WorkbenchError('Conflict', `${abs} already holds a project (workbench.json exists); open it instead of creating one`, {
        where: 'projects.create path', expected: 'an empty or new folder', received: abs,
      });
    }
    if (fs.existsSync(abs)) {
      if (!fs.statSync(abs).isDirectory()) throw new WorkbenchError('ValidationError', `${abs} is a file, not a folder`, { where: 'projects.create path', expected: 'a folder path', received: 'a file' });
      const entries = fs.readdirSync(abs).filter((e) => !e.startsWith('.'));
      if (entries.length > 0) {
        throw new WorkbenchError('Conflict', `${abs} is not empty (${entries.slice(0, 5).join(', ')}${entries.length > 5 ? ', ...' : ''}); choose an empty or new folder for a project`, {
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
        templates: {},
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
    const abs = path.resolve(dir);
    const file = path.join(abs, WORKBENCH_JSON);
    if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory()) {
      throw new WorkbenchError('NotFound', `no project folder at ${abs}`, { where: 'projects.open path', expected: 'a project folder (with workbench.json)', received: abs });
    }
    if (!fs.existsSync(file) && !fs.existsSync(path.join(abs, 'runs'))) {
      throw new WorkbenchError('NotFound', `${abs} is not a SPA Workbench project (no workbench.json); create a project there instead`, {
        where: 'projects.open path', expected: 'a folder with workbench.json', received: abs,
      });
    }
    const lock = acquireProjectLock(abs, options.purpose);
    const warnings: string[] = [];
    if (lock.tookOver) warnings.push(`took over a stale lock of process ${lock.tookOver.pid} (${lock.tookOver.host}), which is no longer running`);
    try {
      let raw: Record<string, unknown> | null = null;
      const r = readJsonOrMoveAside(file, validateWorkbench);
      if (r.status === 'ok') raw = r.value;
      else if (r.status === 'corrupt') warnings.push(`workbench.json could not be read (${r.error}); it was moved to ${path.basename(r.movedTo)} and the run index was rebuilt from the run folders`);
      else warnings.push('workbench.json was missing; the run index was rebuilt from the run folders');

      let data: WorkbenchData;
      if (raw) {
        const version = typeof raw.schemaVersion === 'number' ? raw.schemaVersion : 1;
        const m = migrate(raw, file);
        if (m.applied.length > 0) {
          fs.copyFileSync(file, `${file}.v${version}.bak`);
          warnings.push(`migrated workbench.json from schema ${version} to ${CURRENT_SCHEMA_VERSION} (backup: workbench.json.v${version}.bak)`);
        }
        data = m.data as unknown as WorkbenchData;
        data.templates ??= {};
      } else {
        data = {
          schemaVersion: CURRENT_SCHEMA_VERSION,
          project: { id: randomBytes(8).toString('hex'), name: path.basename(abs), createdAt: Date.now() },
          runs: [], templates: {},
        };
      }
      const store = new ProjectStore(abs, lock, new Low(new AtomicJsonAdapter(file, data), data));
      await store.db.read();
      store.warnings.push(...warnings);
      store.reconcile();
      await store.db.write();
      return store;
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  /** Make the index agree with the run folders and the template files (run.json wins). */
  private reconcile(): void {
    const runsDir = path.join(this.dir, 'runs');
    fs.mkdirSync(runsDir, { recursive: true });
    const folders = new Set(fs.readdirSync(runsDir).filter((e) => fs.existsSync(path.join(runsDir, e, 'run.json')) || fs.statSync(path.join(runsDir, e)).isDirectory()));
    const byId = new Map<string, RunSummary>();
    for (const s of this.data.runs) {
      const ok = RunSummarySchema.safeParse(s);
      if (ok.success && folders.has(s.id)) byId.set(s.id, ok.data);
      else if (!folders.has(s.id)) this.warnings.push(`run ${s.id} is in the index but its folder is gone; removed from the index`);
    }
    for (const id of folders) {
      const r = readRunRecord(path.join(runsDir, id));
      if (r.status === 'corrupt') { this.warnings.push(`runs/${id}/run.json could not be read (${r.error}); moved to ${path.basename(r.movedTo)}`); byId.delete(id); continue; }
      if (r.status === 'missing') { byId.delete(id); continue; }
      const summary = RunSummarySchema.safeParse(r.value);
      if (!summary.success) { this.warnings.push(`runs/${id}/run.json does not look like a run record (${summary.error.issues[0]?.message}); left out of the index`); byId.delete(id); continue; }
      if (!byId.has(id)) this.warnings.push(`run ${id} was missing from the index; added from its run.json`);
      byId.set(id, summary.data);   // run.json is the source of truth
    }
    this.data.runs = [...byId.values()].sort((a, b) => a.createdAt - b.createdAt);
    // Templates: add versions found on disk but missing in the index.
    const tdir = path.join(this.dir, 'templates');
    if (fs.existsSync(tdir)) {
      for (const f of fs.readdirSync(tdir)) {
        const m = /^([a-z0-9][a-z0-9-]*)@([A-Za-z0-9]+)\.json$/.exec(f);
        if (!m) continue;
        const [, name, hash] = m as unknown as [string, string, string];
        const list = (this.data.templates[name] ??= []);
        if (list.some((v) => v.hash === hash)) continue;
        const t = readJsonOrMoveAside(path.join(tdir, f), (v) => TemplateVersionSchema.parse(v));
        if (t.status === 'ok') { list.push(metaOf(t.value)); list.sort((a, b) => a.createdAt - b.createdAt); }
        else if (t.status === 'corrupt') this.warnings.push(`templates/${f} could not be read (${t.error}); moved aside`);
      }
    }
  }

  /** Persist the index (atomic, serialised). */
  async flush(): Promise<void> { this.assertOpen(); await this.db.write(); }

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
    this.assertOpen();
    const i = this.data.runs.findIndex((r) => r.id === summary.id);
    if (i >= 0) this.data.runs[i] = summary; else this.data.runs.push(summary);
  }

  removeRun(runId: string): boolean {
    this.assertOpen();
    const before = this.data.runs.length;
    this.data.runs = this.data.runs.filter((r) => r.id !== runId);
    return this.data.runs.length !== before;
  }

  /** Full run record from run.json (source of truth). */
  readRun(runId: string): RunRecord | null {
    if (this.readOnly) {   // never move a file aside in another process's project
      try { return JSON.parse(fs.readFileSync(path.join(this.runDir(runId), 'run.json'), 'utf8')) as RunRecord; } catch { return null; }
    }
    const r = readRunRecord(this.runDir(runId));
    if (r.status === 'ok') return r.value;
    if (r.status === 'corrupt') {
      this.warnings.push(`runs/${runId}/run.json could not be read (${r.error}); moved to ${path.basename(r.movedTo)}`);
      throw new WorkbenchError('CorruptData', `runs/${runId}/run.json could not be read (${r.error}); it was moved to ${r.movedTo}`, { where: `runs/${runId}/run.json` });
    }
    return null;
  }

  // ── templates ──

  savedTemplates(): { name: string; versions: TemplateVersionMeta[] }[] {
    return Object.entries(this.data.templates).map(([name, versions]) => ({ name, versions }));
  }

  templateVersions(name: string): TemplateVersionMeta[] { return [...(this.data.templates[name] ?? [])].reverse(); }

  readTemplate(name: string, hash?: string): TemplateVersion | null {
    const versions = this.data.templates[name] ?? [];
    const meta = hash ? versions.find((v) => v.hash === hash || v.hash.startsWith(hash)) : versions[versions.length - 1];
    if (!meta) return null;
    const r = readJsonOrMoveAside(templateFile(this.dir, name, meta.hash), (v) => TemplateVersionSchema.parse(v));
    if (r.status === 'ok') return r.value;
    if (r.status === 'corrupt') throw new WorkbenchError('CorruptData', `templates/${name}@${meta.hash}.json could not be read (${r.error}); moved to ${r.movedTo}`, { where: `templates/${name}@${meta.hash}.json` });
    throw new WorkbenchError('NotFound', `templates/${name}@${meta.hash}.json is missing on disk although the index lists it`, { where: `templates/${name}@${meta.hash}.json` });
  }

  /** Save an immutable version; identical content (same hash) returns the existing one. */
  async saveTemplate(version: TemplateVersion): Promise<{ version: TemplateVersion; created: boolean }> {
    this.assertOpen();
    const existing = (this.data.templates[version.name] ?? []).find((v) => v.hash === version.hash);
    if (existing) {
      const stored = this.readTemplate(version.name, version.hash);
      if (stored) return { version: stored, created: false };
    }
    const file = templateFile(this.dir, version.name, version.hash);
    if (!fs.existsSync(file)) writeJsonAtomicSync(file, version);   // never overwrite a version
    const list = (this.data.templates[version.name] ??= []);
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
}

/** Can this process stop the holder's runs, the way `spa-workbench stop` does (SIGINT to a CLI run on this machine)? */
export function holderCanStop(holder: LockInfo): boolean {
  return holder.host === os.hostname() && (holder.purpose === 'cli run' || holder.purpose === 'cli study run');
}

function metaOf(v: TemplateVersion): TemplateVersionMeta {
  return { name: v.name, hash: v.hash, createdAt: v.createdAt, description: v.description, parent: v.parent };
}

export { moveAside };
