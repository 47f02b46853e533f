// Recently opened projects: <home>/recent.json, newest first, at most 20. Atomic writes; a file
// that fails to parse is moved aside (and the list starts empty).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readJsonOrMoveAside, writeJsonAtomicSync } from './atomic.js';
import { workbenchHome } from './home.js';

export interface RecentEntry { path: string; name: string; openedAt: number }
const MAX_RECENT = 20;

function recentFile(): string { return path.join(workbenchHome(), 'recent.json'); }

function validate(v: unknown): RecentEntry[] {
  const list = (v as { projects?: unknown })?.projects;
  if (!Array.isArray(list)) throw new Error('expected { projects: [...] }');
  return list.filter((e): e is RecentEntry => !!e && typeof e === 'object'
    && typeof (e as RecentEntry).path === 'string' && typeof (e as RecentEntry).name === 'string' && typeof (e as RecentEntry).openedAt === 'number');
}

export function readRecent(): { projects: (RecentEntry & { exists: boolean })[]; warning: string | null } {
  const r = readJsonOrMoveAside(recentFile(), validate);
  const warning = r.status === 'corrupt' ? `recent projects list was unreadable (${r.error}); ${r.movedTo ? `moved to ${r.movedTo}` : 'left in place'}` : null;
  const list = r.status === 'ok' ? r.value : [];
  return { projects: list.map((e) => ({ ...e, exists: fs.existsSync(path.join(e.path, 'workbench.json')) })), warning };
}

export function addRecent(projectPath: string, name: string): void {
  const abs = path.resolve(projectPath);
  const current = readRecent().projects.filter((e) => e.path !== abs).map(({ exists: _e, ...rest }) => rest);
  const projects = [{ path: abs, name, openedAt: Date.now() }, ...current].slice(0, MAX_RECENT);
  writeJsonAtomicSync(recentFile(), { version: 1, projects });
}
