// The one way a file a user names (a model folder's config.json, tokenizer.json, chat template,
// safetensors shards, a GGUF file, an imported run's files) is opened: it must be a regular file.
// A FIFO, socket or device is refused before open() can block on it (stat first), then the file is
// opened with O_NONBLOCK (a FIFO swapped in between the stat and the open never blocks the open) and
// checked again with fstat on the descriptor, which is what every later read uses. A size limit is
// checked on the descriptor too, so a 200 MB config.json is refused without being read.
//
// Links: model folders from the Hugging Face cache are links into its blob store, so links are
// followed by default (the target must be a regular file); `followLinks: false` refuses them
// unopened (run imports, core/interop/import-read.ts).
import * as fs from 'node:fs';
import { open, stat, lstat, type FileHandle } from 'node:fs/promises';

const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0;
const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;

/** A path that names something other than a regular file (FIFO, socket, device, folder, link where links are refused). */
export class NotRegularFileError extends Error {
  constructor(readonly path: string, readonly kind: string) {
    super(`${path}: is ${kind}, not a regular file; nothing was read from it`);
    this.name = 'NotRegularFileError';
  }
}

/** A regular file over the caller's size limit (bytes). */
export class FileTooLargeError extends Error {
  constructor(readonly path: string, readonly size: number, readonly maxBytes: number, readonly what: string) {
    super(`${path}: is ${formatBytes(size)}, over the ${formatBytes(maxBytes)} limit for ${what}; nothing was read from it`);
    this.name = 'FileTooLargeError';
  }
}

/** "12 KiB", "3.4 MiB", "1.2 GiB". */
export function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)} GiB`;
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KiB`;
  return `${n} bytes`;
}

/** "a FIFO (named pipe)", "a socket", … for messages about non-regular files. */
export function fileKind(st: fs.Stats | fs.Dirent): string {
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a folder';
  return st.isFile() ? 'a regular file' : 'not a regular file';
}

export interface RegularFileOptions {
  /** Refuse files larger than this many bytes (default: no limit). */
  maxBytes?: number;
  /** What the file is, for the size message (e.g. "config.json"). */
  what?: string;
  /** Follow a symbolic link to a regular file (default true); false refuses links unopened. */
  followLinks?: boolean;
}

function check(path: string, st: fs.Stats, options: RegularFileOptions): void {
  if (!st.isFile()) throw new NotRegularFileError(path, fileKind(st));
  if (options.maxBytes !== undefined && st.size > options.maxBytes) {
    throw new FileTooLargeError(path, st.size, options.maxBytes, options.what ?? 'this file');
  }
}

function flags(options: RegularFileOptions): number {
  return fs.constants.O_RDONLY | O_NONBLOCK | (options.followLinks === false ? O_NOFOLLOW : 0);
}

/**
 * Opens a regular file for reading without ever blocking (see the header). Throws
 * NotRegularFileError, FileTooLargeError, or the fs error (ENOENT, EACCES) of stat/open.
 */
export function openRegularFileSync(path: string, options: RegularFileOptions = {}): { fd: number; size: number } {
  check(path, options.followLinks === false ? fs.lstatSync(path) : fs.statSync(path), options);
  const fd = fs.openSync(path, flags(options));
  try {
    const st = fs.fstatSync(fd);
    check(path, st, options);
    return { fd, size: st.size };
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

/** openRegularFileSync without blocking the event loop: a FileHandle and the size seen by fstat. */
export async function openRegularFile(path: string, options: RegularFileOptions = {}): Promise<{ handle: FileHandle; size: number }> {
  check(path, options.followLinks === false ? await lstat(path) : await stat(path), options);
  const handle = await open(path, flags(options));
  try {
    const st = await handle.stat();
    check(path, st, options);
    return { handle, size: st.size };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** Reads up to `size` bytes of an open descriptor from offset 0 and closes it (a file that shrank gives what is left). */
export function readDescriptorSync(fd: number, size: number): Buffer {
  try {
    const buf = Buffer.alloc(size);
    let got = 0;
    while (got < size) {
      const n = fs.readSync(fd, buf, got, size - got, got);
      if (n <= 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    fs.closeSync(fd);
  }
}

/** A whole regular file's bytes (at most `maxBytes`), read from the checked descriptor. */
export function readRegularFileSync(path: string, options: RegularFileOptions = {}): Buffer {
  const { fd, size } = openRegularFileSync(path, options);
  return readDescriptorSync(fd, size);
}

/** readRegularFileSync without blocking the event loop. */
export async function readRegularFile(path: string, options: RegularFileOptions = {}): Promise<Buffer> {
  const { handle, size } = await openRegularFile(path, options);
  try {
    const buf = Buffer.alloc(size);
    let got = 0;
    while (got < size) {
      const { bytesRead } = await handle.read(buf, got, size - got, got);
      if (bytesRead <= 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await handle.close();
  }
}

/**
 * Text as users write it: UTF-8 with or without a byte-order mark (Excel and Notepad write one);
 * the mark is dropped. Line endings are left alone (see splitTextLines).
 */
export function decodeUserText(bytes: Uint8Array): string {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  return stripBom(text);
}

/** `text` without a leading U+FEFF byte-order mark. */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Lines of a text file as users write it: LF or CRLF (or a lone CR, old Mac) endings, with or
 * without a final newline; a leading byte-order mark is dropped. A final newline does not make an
 * extra empty line.
 */
export function splitTextLines(text: string): string[] {
  const lines = stripBom(text).split(/\r\n|\r|\n/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** A whole regular file as user text (BOM dropped), at most `maxBytes`, without blocking the event loop. */
export async function readRegularText(path: string, options: RegularFileOptions = {}): Promise<string> {
  return decodeUserText(await readRegularFile(path, options));
}

/** readRegularText, synchronously (CLI and worker code). */
export function readRegularTextSync(path: string, options: RegularFileOptions = {}): string {
  return decodeUserText(readRegularFileSync(path, options));
}
