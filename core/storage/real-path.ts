// Real paths for the guards that keep exports out of the project and imports out of its run
// folders (core/cli export, core/host runs.exportBundle / runs.import): links are resolved first,
// so a symbolic link cannot lead a write (or a read) past the guard.
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The real path of `p`, links resolved, also when `p` (or its last parts) does not exist yet: the
 * nearest existing folder above it is resolved and the rest appended; a dangling link is followed
 * to where it points. The export and import guards compare these, so a link cannot lead a write or
 * a read into a folder the guard protects.
 */
export function realPathOf(p: string, hops = 0): string {
  const abs = path.resolve(p);
  try { return fs.realpathSync(abs); } catch { /* missing, or a dangling link */ }
  const st = fs.lstatSync(abs, { throwIfNoEntry: false });
  if (st?.isSymbolicLink() && hops < 40) return realPathOf(path.resolve(path.dirname(abs), fs.readlinkSync(abs)), hops + 1);
  const parent = path.dirname(abs);
  if (parent === abs) return abs;
  return path.join(realPathOf(parent, hops), path.basename(abs));
}

/** Whether `inner` is `outer` or inside it (both real paths). */
export function isInside(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(outer.endsWith(path.sep) ? outer : outer + path.sep);
}
