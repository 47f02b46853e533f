// Whole-file writes that leave either the old or the new file, never a mix (temp + fsync +
// rename), and reads that move a file that fails to parse aside instead of overwriting it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';

function tempName(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
}

function fsyncDir(dir: string): void {
  // Persist the rename itself. Not supported on every platform (Windows): best effort.
  try {
    const fd = fs.openSync(dir, 'r');
    try { fs.fsyncSync(fd); } finally { fs.closeSync(fd); }
  } catch { /* directories cannot be fsynced here */ }
}

/** Write `data` to `file` atomically: readers see the old content or the new, never a mix. */
export function writeFileAtomicSync(file: string, data: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = tempName(file);
  let fd: number | null = fs.openSync(tmp, 'w', 0o644);
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = null;
    fs.renameSync(tmp, file);
  } catch (err) {
    if (fd !== null) try { fs.closeSync(fd); } catch { /* already failing */ }
    try { fs.unlinkSync(tmp); } catch { /* not created */ }
    throw err;
  }
  fsyncDir(path.dirname(file));
}

/** Async variant (same guarantees). */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  const tmp = tempName(file);
  const handle = await fs.promises.open(tmp, 'w', 0o644);
  try {
    await handle.writeFile(data);
    await handle.sync();
    await handle.close();
    await fs.promises.rename(tmp, file);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await fs.promises.unlink(tmp).catch(() => undefined);
    throw err;
  }
  fsyncDir(path.dirname(file));
}

export function writeJsonAtomicSync(file: string, value: unknown): void {
  writeFileAtomicSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** Errors that mean "this file system (or folder) cannot be written": read-only mount, permissions. */
export function isReadOnlyError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === 'EROFS' || code === 'EACCES' || code === 'EPERM';
}

/** `name.corrupt-<time>`: where a file that failed to parse is moved. */
export function moveAside(file: string): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  let target = `${file}.corrupt-${stamp}`;
  for (let i = 1; fs.existsSync(target); i++) target = `${file}.corrupt-${stamp}-${i}`;
  fs.renameSync(file, target);
  return target;
}

export type JsonReadResult<T> =
  | { status: 'ok'; value: T }
  | { status: 'missing' }
  | { status: 'corrupt'; movedTo: string | null; error: string };   // movedTo null: could not be moved (read-only)

/**
 * Read a JSON file. Missing → `missing`. Unparseable (or rejected by `validate`, which should
 * throw with a message) → the file is moved aside (`name.corrupt-<time>`) and reported as `corrupt`.
 */
export function readJsonOrMoveAside<T = unknown>(file: string, validate?: (value: unknown) => T): JsonReadResult<T> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'missing' };
    throw err;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
    if (validate) value = validate(value);
  } catch (err) {
    let movedTo: string | null = null;
    try { movedTo = moveAside(file); } catch (moveErr) {
      if (!isReadOnlyError(moveErr)) throw moveErr;   // a read-only project: report it, leave the file where it is
    }
    return { status: 'corrupt', movedTo, error: (err as Error).message };
  }
  return { status: 'ok', value: value as T };
}

/** Read JSON, or null if absent; throws (without moving anything) when it does not parse. */
export function readJsonIfExists<T = unknown>(file: string): T | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new Error(`${file}: not valid JSON (${(err as Error).message}); expected a JSON document`);
  }
}
