// Append-only JSONL: one JSON value per line. Appends return the byte offset and length of each
// line (for indexes); reads are tolerant: a line that does not parse (a torn last line after a
// crash, or garbage) is skipped and reported, never fatal, and never rewritten.
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface LineSpan { offset: number; length: number }   // bytes; length excludes the newline
export interface SkippedLine { line: number; offset: number; reason: string; torn: boolean }

const NL = 0x0a;

/** True when the file is non-empty and does not end in a newline (a torn last line). */
function endsTorn(fd: number, size: number): boolean {
  if (size === 0) return false;
  const b = Buffer.alloc(1);
  fs.readSync(fd, b, 0, 1, size - 1);
  return b[0] !== NL;
}

/**
 * Append rows to a JSONL file. If the file ends with a torn line (a crash mid-append), a newline
 * is written first so the new rows never merge with the fragment (which then reads as one bad line).
 * `sync: true` fsyncs the file before returning (the rows survive a power loss; imports use it).
 */
export function appendJsonl(file: string, rows: readonly unknown[], opts: { sync?: boolean } = {}): LineSpan[] {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'a+');
  try {
    const spans = appendToFd(fd, rows, file);
    if (opts.sync) fsyncFile(fd, file);
    return spans;
  } finally {
    fs.closeSync(fd);
  }
}

function appendToFd(fd: number, rows: readonly unknown[], file?: string): LineSpan[] {
  const size = fs.fstatSync(fd).size;
  let offset = size;
  const parts: Buffer[] = [];
  if (endsTorn(fd, size)) { parts.push(Buffer.from('\n')); offset += 1; }
  const spans: LineSpan[] = [];
  for (const [i, row] of rows.entries()) {
    let text: string | undefined;
    try {
      text = JSON.stringify(row);
    } catch (err) {
      // a value nested deeper than the stack allows (or too long for one string): say so, never a raw RangeError
      const why = err instanceof RangeError ? 'it is nested too deeply or is too large to write as one JSON line' : (err as Error).message;
      throw Object.assign(new Error(`appendJsonl${file ? ` (${file})` : ''}: row ${i + 1} of ${rows.length} cannot be written: ${why}`), { code: 'EJSONROW' });
    }
    if (text === undefined) throw new Error(`appendJsonl: a row is not JSON-serialisable (received ${typeof row})`);
    const buf = Buffer.from(`${text}\n`, 'utf8');
    spans.push({ offset, length: buf.length - 1 });
    offset += buf.length;
    parts.push(buf);
  }
  // One buffer: a crash leaves at most one torn line at the end. A short write (a full disk) is
  // continued; if the disk refuses the rest, the file is cut back to where it was, so no half row
  // stays behind to be read later, and the error is raised.
  const buf = Buffer.concat(parts);
  let written = 0;
  try {
    while (written < buf.length) {
      const n = fs.writeSync(fd, buf, written, buf.length - written);
      if (n <= 0) throw Object.assign(new Error(`no progress writing ${buf.length - written} bytes (disk full?)`), { code: 'ENOSPC' });
      written += n;
    }
  } catch (err) {
    try { fs.ftruncateSync(fd, size); } catch { /* the reader skips a torn line anyway */ }
    const e = err as NodeJS.ErrnoException;
    throw Object.assign(new Error(`could not append ${rows.length} row(s) (${buf.length} bytes) to a JSONL file: ${e.message}`), { code: e.code });
  }
  return spans;
}

/** fsync, with the file named in the error (EIO, ENOSPC on some file systems). */
function fsyncFile(fd: number, file: string): void {
  try { fs.fsyncSync(fd); } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw Object.assign(new Error(`could not fsync ${file}: ${e.message}`), { code: e.code });
  }
}

/**
 * Keeps the file open for many appends (the engine's metrics and rollouts). Appends are not
 * fsynced one by one (a step writes many rows); `sync()` makes everything appended so far durable,
 * and the engine calls it at each stage boundary (core/engine/stage-context.ts RunWriters.syncAll).
 */
export class JsonlWriter {
  private fd: number | null;
  private dirty = false;
  constructor(readonly file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.fd = fs.openSync(file, 'a+');
  }
  append(rows: readonly unknown[]): LineSpan[] {
    if (this.fd === null) throw new Error(`JsonlWriter(${this.file}): append after close`);
    const spans = appendToFd(this.fd, rows, this.file);
    this.dirty = true;
    return spans;
  }
  /** fsync what was appended since the last sync (nothing to do when nothing was). */
  sync(): void {
    if (this.fd === null || !this.dirty) return;
    fsyncFile(this.fd, this.file);
    this.dirty = false;
  }
  close(): void {
    if (this.fd !== null) { fs.closeSync(this.fd); this.fd = null; }
  }
}

export interface JsonlReadResult<T> {
  rows: T[];
  spans: LineSpan[];          // span of each row in `rows`
  skipped: SkippedLine[];     // lines that did not parse or validate
  endOffset: number;          // bytes consumed (end of the last complete line)
}

/**
 * Parse lines of a buffer that starts at byte `base` of the file. A last line without a newline is
 * parsed if it is valid JSON (the writer may not have finished the newline) unless `final` is false,
 * in which case it is left for the next read.
 */
function parseBuffer<T>(
  buf: Buffer,
  base: number,
  firstLine: number,
  validate: ((v: unknown) => T) | undefined,
  final: boolean,
): JsonlReadResult<T> & { lines: number } {
  const rows: T[] = [];
  const spans: LineSpan[] = [];
  const skipped: SkippedLine[] = [];
  let start = 0;
  let line = firstLine;
  let endOffset = base;
  while (start < buf.length) {
    let end = buf.indexOf(NL, start);
    const complete = end >= 0;
    if (!complete) {
      if (!final) break;
      end = buf.length;
    }
    const length = end - start;
    const text = buf.toString('utf8', start, end).trim();
    if (text.length > 0) {
      try {
        const value = JSON.parse(text) as unknown;
        rows.push(validate ? validate(value) : (value as T));
        spans.push({ offset: base + start, length });
      } catch (err) {
        skipped.push({ line, offset: base + start, reason: (err as Error).message.slice(0, 300), torn: !complete });
      }
    }
    line++;
    start = end + 1;
    endOffset = base + Math.min(start, buf.length);
  }
  return { rows, spans, skipped, endOffset, lines: line - firstLine };
}

/** Read a whole JSONL file tolerantly. Missing file → no rows. */
export function readJsonl<T = unknown>(file: string, validate?: (v: unknown) => T): JsonlReadResult<T> {
  let buf: Buffer;
  try { buf = fs.readFileSync(file); } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { rows: [], spans: [], skipped: [], endOffset: 0 };
    throw err;
  }
  const r = parseBuffer(buf, 0, 1, validate, true);
  return { rows: r.rows, spans: r.spans, skipped: r.skipped, endOffset: r.endOffset };
}

/** Read one line by byte span (from an index) and parse it. */
export function readLineAt<T = unknown>(file: string, span: LineSpan): T {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(span.length);
    const n = fs.readSync(fd, buf, 0, span.length, span.offset);
    if (n !== span.length) throw new Error(`${file}: expected ${span.length} bytes at offset ${span.offset}, file has only ${n} there (index out ` +
      `of date or file truncated)`);
    return JSON.parse(buf.toString('utf8')) as T;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Incremental tolerant reader: each `read()` parses only what was appended since the last call,
 * so polling a live file (metrics, events, the rollout index) costs the new bytes only. An
 * incomplete last line is left until its newline arrives; `skipped` accumulates bad lines.
 */
export class JsonlTail<T = unknown> {
  rows: T[] = [];
  spans: LineSpan[] = [];
  skipped: SkippedLine[] = [];
  private consumed = 0;
  private lineNo = 1;
  private identity = '';

  constructor(readonly file: string, private readonly validate?: (v: unknown) => T) {}

  /** Bring rows up to date; returns the rows appended since the previous call. */
  read(): T[] {
    let stat: fs.Stats;
    try { stat = fs.statSync(this.file); } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') { this.reset(''); return []; }
      throw err;
    }
    const identity = `${stat.dev}:${stat.ino}`;
    if (identity !== this.identity || stat.size < this.consumed) this.reset(identity); // replaced or truncated
    if (stat.size === this.consumed) return [];
    const fd = fs.openSync(this.file, 'r');
    let buf: Buffer;
    try {
      buf = Buffer.alloc(stat.size - this.consumed);
      const n = fs.readSync(fd, buf, 0, buf.length, this.consumed);
      buf = buf.subarray(0, n);
    } finally {
      fs.closeSync(fd);
    }
    // A trailing fragment is complete only once a newline follows it.
    const r = parseBuffer(buf, this.consumed, this.lineNo, this.validate, false);
    this.consumed = r.endOffset;
    this.lineNo += r.lines;
    for (const row of r.rows) this.rows.push(row);
    for (const s of r.spans) this.spans.push(s);
    for (const s of r.skipped) this.skipped.push(s);
    return r.rows;
  }

  /** The incomplete bytes at the end right now (a torn last line if the writer is gone). */
  pendingBytes(): number {
    try { return Math.max(0, fs.statSync(this.file).size - this.consumed); } catch { return 0; }
  }

  private reset(identity: string): void {
    this.rows = []; this.spans = []; this.skipped = []; this.consumed = 0; this.lineNo = 1; this.identity = identity;
  }
}

/**
 * Line offsets of a JSONL file, updated incrementally, for paging rows without parsing the file
 * (datasets). Only complete lines count.
 */
export class LineIndex {
  spans: LineSpan[] = [];
  private consumed = 0;
  private identity = '';
  constructor(readonly file: string) {}

  update(): LineSpan[] {
    let stat: fs.Stats;
    try { stat = fs.statSync(this.file); } catch { this.spans = []; this.consumed = 0; this.identity = ''; return this.spans; }
    const identity = `${stat.dev}:${stat.ino}`;
    if (identity !== this.identity || stat.size < this.consumed) { this.spans = []; this.consumed = 0; this.identity = identity; }
    if (stat.size === this.consumed) return this.spans;
    const fd = fs.openSync(this.file, 'r');
    try {
      const chunk = Buffer.alloc(1 << 20);
      let pos = this.consumed;
      let lineStart = this.consumed;
      while (pos < stat.size) {
        const n = fs.readSync(fd, chunk, 0, Math.min(chunk.length, stat.size - pos), pos);
        if (n <= 0) break;
        for (let i = 0; i < n; i++) {
          if (chunk[i] === NL) {
            const end = pos + i;
            if (end > lineStart) this.spans.push({ offset: lineStart, length: end - lineStart });
            lineStart = end + 1;
          }
        }
        pos += n;
      }
      this.consumed = lineStart;
    } finally {
      fs.closeSync(fd);
    }
    return this.spans;
  }
}
