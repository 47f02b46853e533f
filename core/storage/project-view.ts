// A lock-free, read-only view of a project folder, for readers that must not take the project
// lock (the template-perplexity child runs while the API host holds it). It never writes: a file
// that does not parse is skipped and listed in `problems` (the lock holder's ProjectStore is the
// one that moves damaged files aside).
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface StoredCheckpoint {
  name: string;                 // folder name under runs/<runId>/checkpoints/
  dir: string;                  // absolute folder
  manifest: { stage?: unknown; step?: unknown; created?: unknown } | null;
  mtimeMs: number;
}

export interface StoredTemplateVersion { hash: string; createdAt: number; source: string; file: string }

export class ProjectView {
  readonly dir: string;
  /** Files that could not be read or parsed (relative to the project), with the reason. */
  readonly problems: string[] = [];

  constructor(project: string) {
    this.dir = path.resolve(project);
  }

  exists(): boolean {
    return fs.existsSync(this.dir) && fs.statSync(this.dir).isDirectory();
  }

  /** Names of the run folders under runs/, sorted. */
  runIds(): string[] {
    const runs = path.join(this.dir, 'runs');
    return fs.existsSync(runs) ? fs.readdirSync(runs).filter((n) => !n.startsWith('.')).sort() : [];
  }

  /** The run's folder, or null when it does not exist (the id is not validated here). */
  runDir(runId: string): string | null {
    const dir = path.join(this.dir, 'runs', runId);
    return fs.existsSync(dir) && fs.statSync(dir).isDirectory() ? dir : null;
  }

  /** Checkpoint folders of a run (with config.json; temp folders starting with "." skipped), unsorted. */
  checkpoints(runDir: string): StoredCheckpoint[] {
    const dir = path.join(runDir, 'checkpoints');
    if (!fs.existsSync(dir)) return [];
    const out: StoredCheckpoint[] = [];
    for (const name of fs.readdirSync(dir)) {
      if (name.startsWith('.')) continue;
      const folder = path.join(dir, name);
      const stat = fs.statSync(folder);
      if (!stat.isDirectory() || !fs.existsSync(path.join(folder, 'config.json'))) continue;
      const manifest = this.readJson(path.join(folder, 'manifest.json')) as StoredCheckpoint['manifest'];
      out.push({ name, dir: folder, manifest, mtimeMs: stat.mtimeMs });
    }
    return out;
  }

  /** The run's run.json (null when absent or unreadable). */
  runRecord(runDir: string): { config?: Record<string, unknown> } | null {
    return this.readJson(path.join(runDir, 'run.json')) as { config?: Record<string, unknown> } | null;
  }

  /** Saved versions of a template (templates/<name>@<hash>.json), oldest first. */
  templateVersions(name: string): StoredTemplateVersion[] {
    const dir = path.join(this.dir, 'templates');
    if (!fs.existsSync(dir)) return [];
    const out: StoredTemplateVersion[] = [];
    for (const f of fs.readdirSync(dir)) {
      if (!f.startsWith(`${name}@`) || !f.endsWith('.json')) continue;
      const v = this.readJson(path.join(dir, f)) as { hash?: unknown; createdAt?: unknown; source?: unknown } | null;
      if (v && typeof v.hash === 'string' && typeof v.source === 'string') {
        out.push({ hash: v.hash, createdAt: typeof v.createdAt === 'number' ? v.createdAt : 0, source: v.source, file: f });
      } else if (v) {
        this.problems.push(`templates/${f}: not a template version (hash and source expected)`);
      }
    }
    return out.sort((a, b) => a.createdAt - b.createdAt);
  }

  /** A JSON file, or null when absent; a file that does not parse is null and listed in `problems`. */
  private readJson(file: string): unknown {
    let text: string;
    try { text = fs.readFileSync(file, 'utf8'); } catch { return null; }
    try { return JSON.parse(text); } catch (err) {
      this.problems.push(`${path.relative(this.dir, file)}: ${(err as Error).message}`);
      return null;
    }
  }
}
