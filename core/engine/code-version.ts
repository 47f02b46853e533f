// The version of the code that runs a run, for its provenance (run.json `provenance.codeVersion`):
// the git commit of the checkout when the app runs from one ("git:<40 hex>", "-dirty" appended when
// tracked files differ from it), else the package version ("package:<version>", e.g. an installed
// app). Computed once per process.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | null = null;

/** The folder holding the app's package.json, walking up from this file (core/engine → the repo or app root). */
function appRoot(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return null;
}

function git(root: string, args: string[]): string | null {
  try {
    return execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim();
  } catch { return null; }
}

/** "git:<commit>[-dirty]" from the app's own checkout, else "package:<version>", else "unknown". */
export function codeVersion(): string {
  if (cached !== null) return cached;
  const root = appRoot();
  cached = 'unknown';
  if (!root) return cached;
  // only the app's own repository counts (a checkout that merely contains the app folder would name another commit)
  const top = git(root, ['rev-parse', '--show-toplevel']);
  const commit = top !== null && existsSync(join(top, 'package.json')) && samePath(top, root) ? git(root, ['rev-parse', 'HEAD']) : null;
  if (commit && /^[0-9a-f]{40}$/.test(commit)) {
    const status = git(root, ['status', '--porcelain', '--untracked-files=no']);
    cached = `git:${commit}${status ? '-dirty' : ''}`;
    return cached;
  }
  try {
    const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown }).version;
    if (typeof version === 'string' && version) cached = `package:${version}`;
  } catch { /* unknown */ }
  return cached;
}

function samePath(a: string, b: string): boolean {
  const norm = (p: string) => p.replace(/[\\/]+$/, '');
  return norm(a) === norm(b);
}
