// Bounded, streaming reads for runs.import (core/interop/import-run.ts). Every file is opened only
// after lstat says it is a regular file, with O_NONBLOCK and O_NOFOLLOW, and checked again with
// fstat (a FIFO, socket or device can never block the reader in open() or read()); JSONL and log
// files are read line by line (never the whole file in memory); whole-document files (JSON, CSV,
// YAML, parquet) are read only up to a size limit. JSON is parsed with Python's json module in mind:
// the bare tokens NaN, Infinity and -Infinity it writes are accepted as those numbers, a number that
// does not fit a double (1e400) is refused naming its field, and nesting is bounded before parsing.
// Every refusal names the file, the line (0: the whole file) and the field.
import * as fs from 'node:fs';
import { WorkbenchError } from '../api/errors.js';
import { FileTooLargeError, NotRegularFileError, fileKind, openRegularFileSync, readDescriptorSync, stripBom } from '../util/regular-file.js';
import { importError } from './ragen-episodes.js';

/** What one import may read; each bound refuses with the file, the line and the field it was hit at. */
export interface ImportLimits {
  maxFileBytes: number;        // one file read line by line (JSONL, .log): larger is refused from its size, unread
  maxDocumentBytes: number;    // one file parsed whole (JSON, CSV, YAML, parquet, an export's run.json)
  maxLineBytes: number;        // one line of a JSONL or log file
  maxRows: number;             // lines, table rows and list items of all files together
  maxDepth: number;            // nesting of one JSON value (objects and arrays)
  maxWalkEntries: number;      // folder entries looked at when the source is a folder
  timeoutMs: number;           // wall time of the whole import (the host stops the import worker after it)
  heapMb: number;              // heap of the import worker (over it the worker stops, the host stays up)
}

export const IMPORT_LIMITS: Readonly<ImportLimits> = {
  maxFileBytes: 4 * 1024 ** 3,          // 4 GiB: a long verl/recorder log; read as a stream
  maxDocumentBytes: 256 * 1024 ** 2,    // 256 MiB: V8 strings stop at ~512 M characters; whole documents stay well below
  maxLineBytes: 256 * 1024 ** 2,        // 256 MiB: a recorder line with long chats (150 MB lines were seen); one string
  maxRows: 5_000_000,                   // 10^6-row verl logs import; a run of 5 M rows does not fit the worker heap anyway
  maxDepth: 64,                         // recorder lines nest ~5 deep, RAGEN configs ~8; deeper is not a SPA/RAGEN file
  maxWalkEntries: 20_000,               // a run folder holds tens of files; a walk of "/" stops here
  timeoutMs: 10 * 60_000,               // 10 min: a 10^6-row import takes ~10 s here
  heapMb: 4096,                         // 4 GiB heap for the worker
};

/** "a FIFO (named pipe)", "a socket", … (the one helper: core/util/regular-file.ts). */
export { fileKind };

/**
 * Open a regular file for reading without ever blocking (core/util/regular-file.ts: stat first,
 * so a FIFO, socket, device or link is refused unopened, then O_NONBLOCK | O_NOFOLLOW and fstat on
 * the descriptor). Refuses files over `maxBytes`. Errors name the file as the import knows it (`rel`).
 */
export function openRegular(file: string, rel: string, maxBytes: number, what: string): { fd: number; size: number } {
  try {
    return openRegularFileSync(file, { maxBytes, what, followLinks: false });
  } catch (err) {
    if (err instanceof NotRegularFileError) throw notRegular(rel, err.kind);
    if (err instanceof FileTooLargeError) throw tooLarge(rel, err.size, maxBytes, what);
    throw err;
  }
}

function notRegular(rel: string, kind: string): WorkbenchError {
  return importError(rel, 0, '', `is ${kind}; only regular files are imported (nothing was read from it)`, 'a regular file', kind);
}

function tooLarge(rel: string, size: number, max: number, what: string): WorkbenchError {
  const gib = (n: number) => (n >= 1024 ** 3 ? `${(n / 1024 ** 3).toFixed(1)} GiB` : `${Math.round(n / 1024 ** 2)} MiB`);
  return importError(rel, 0, '', `is ${gib(size)}, over the ${gib(max)} limit for ${what} (IMPORT_LIMITS); nothing was read from it`,
    `at most ${max} bytes`, size);
}

/**
 * A whole file as text (JSON, CSV, YAML documents), at most `maxDocumentBytes`. A UTF-8 byte-order
 * mark (Excel's "CSV UTF-8", Notepad) is dropped; CRLF line endings are left to the parser (JSON and
 * YAML accept them; parseCsv splits on them).
 */
export function readDocument(file: string, rel: string, limits: ImportLimits): string {
  return stripBom(readDocumentBytes(file, rel, limits).toString('utf8'));
}

export function readDocumentBytes(file: string, rel: string, limits: ImportLimits): Buffer {
  const { fd, size } = openRegular(file, rel, limits.maxDocumentBytes, 'a file parsed whole (JSON, CSV, YAML, parquet)');
  return readDescriptorSync(fd, size);
}

/**
 * The lines of a file, one at a time (one-based numbers; the newline is not included), read in
 * 1 MiB chunks. Text as users write it: LF or CRLF endings (the CR is dropped), a final newline or
 * none, and a UTF-8 byte-order mark at the start (dropped). A line longer than `maxLineBytes` is
 * refused naming the file and the line.
 */
export function* readLines(file: string, rel: string, limits: ImportLimits): Generator<{ line: number; text: string }> {
  const { fd } = openRegular(file, rel, limits.maxFileBytes, 'a file read line by line (JSONL, log)');
  try {
    const chunk = Buffer.alloc(1 << 20);
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let line = 1;
    let pos = 0;
    for (;;) {
      const n = fs.readSync(fd, chunk, 0, chunk.length, pos);
      if (n <= 0) break;
      pos += n;
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(0x0a, start);
        if (nl < 0 || nl >= n) break;
        const bytes = pendingBytes + (nl - start);
        if (bytes > limits.maxLineBytes) throw longLine(rel, line, bytes, limits);
        const text = pendingBytes === 0 ? chunk.toString('utf8', start, nl)
          : Buffer.concat([...pending, chunk.subarray(start, nl)]).toString('utf8');
        pending = []; pendingBytes = 0;
        yield { line, text: userLine(text, line) };
        line++;
        start = nl + 1;
      }
      if (start < n) {
        pendingBytes += n - start;
        if (pendingBytes > limits.maxLineBytes) throw longLine(rel, line, pendingBytes, limits);
        pending.push(Buffer.from(chunk.subarray(start, n)));   // a copy: the chunk is reused
      }
    }
    if (pendingBytes > 0) yield { line, text: userLine(Buffer.concat(pending).toString('utf8'), line) };
  } finally {
    fs.closeSync(fd);
  }
}

/** One line as users write it: the CR of a CRLF ending dropped, and the byte-order mark of line 1. */
function userLine(text: string, line: number): string {
  const t = line === 1 ? stripBom(text) : text;
  return t.endsWith('\r') ? t.slice(0, -1) : t;
}

function longLine(rel: string, line: number, bytes: number, limits: ImportLimits): WorkbenchError {
  return importError(rel, line, '', `the line is longer than ${Math.round(limits.maxLineBytes / 1024 ** 2)} MiB (IMPORT_LIMITS.maxLineBytes)`,
    `at most ${limits.maxLineBytes} bytes per line`, `over ${bytes} bytes`);
}

// Python's json.dumps writes float('nan') as NaN and the infinities as Infinity / -Infinity. They
// are swapped for these strings before JSON.parse and back to numbers after it (a control character
// cannot appear unescaped in a JSON string, so no real string equals them after parsing unless it
// was written with \u0000 escapes of exactly this text).
const SENTINEL = { NaN: '\u0000spa-json:NaN', Infinity: '\u0000spa-json:Infinity', '-Infinity': '\u0000spa-json:-Infinity' } as const;
const FROM_SENTINEL = new Map<string, number>([[SENTINEL.NaN, NaN], [SENTINEL.Infinity, Infinity], [SENTINEL['-Infinity'], -Infinity]]);

interface Scan { depth: number; tokens: { at: number; length: number; token: keyof typeof SENTINEL }[]; bigNumbers: boolean }

/** One pass over the text outside strings: nesting depth, bare NaN/Infinity tokens, numbers that may overflow a double. */
function scanJson(text: string, maxDepth: number): Scan | { tooDeep: number } {
  let depth = 0; let max = 0; let bigNumbers = false; let digits = 0;
  const tokens: Scan['tokens'] = [];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {                                     // a string: skip to its closing quote
      digits = 0;
      for (i++; i < n; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++; else if (s === 0x22) break;
      }
      continue;
    }
    if (c >= 0x30 && c <= 0x39) { if (++digits > 300) bigNumbers = true; continue; }
    if ((c === 0x65 || c === 0x45) && digits > 0) { bigNumbers = true; continue; }   // an exponent: 1e400
    if (c !== 0x2e) digits = 0;
    if (c === 0x7b || c === 0x5b) { if (++depth > max) { max = depth; if (max > maxDepth) return { tooDeep: max }; } }
    else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x4e && text.startsWith('NaN', i)) { tokens.push({ at: i, length: 3, token: 'NaN' }); i += 2; }
    else if (c === 0x49 && text.startsWith('Infinity', i)) {
      const neg = i > 0 && text.charCodeAt(i - 1) === 0x2d;
      tokens.push(neg ? { at: i - 1, length: 9, token: '-Infinity' } : { at: i, length: 8, token: 'Infinity' });
      i += 7;
    }
  }
  return { depth: max, tokens, bigNumbers };
}

/**
 * The common case without a character loop: no more brackets in the whole text than `maxDepth`
 * (so the nesting cannot be deeper), no "NaN"/"Infinity" anywhere and no exponent or 300-digit run
 * anywhere (even inside strings). Null when the text needs the full scan.
 */
function quickScan(text: string, maxDepth: number): Scan | null {
  if (text.includes('NaN') || text.includes('Infinity')) return null;
  let brackets = 0;
  for (const ch of ['{', '[']) {
    for (let i = text.indexOf(ch); i >= 0; i = text.indexOf(ch, i + 1)) if (++brackets > maxDepth) return null;
  }
  return { depth: brackets, tokens: [], bigNumbers: BIG_NUMBER.test(text) };
}
const BIG_NUMBER = /[\d.][eE]|\d{300}/;

const fieldPath = (parent: string, key: string | number): string =>
  typeof key === 'number' ? `${parent}[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? (parent ? `${parent}.${key}` : key) : `${parent}[${JSON.stringify(key)}]`;

/**
 * Parse one JSON text of file `rel` (line 0: the whole file). NaN/Infinity/-Infinity as Python
 * writes them become those numbers; a number beyond a double's range, nesting over `maxDepth` and
 * invalid JSON are refused naming the file, the line and (for a number) the field.
 */
export function parseJsonText(text: string, rel: string, line: number, limits: Pick<ImportLimits, 'maxDepth'>): unknown {
  const scan = quickScan(text, limits.maxDepth) ?? scanJson(text, limits.maxDepth);
  if ('tooDeep' in scan) throw importError(rel, line, '', `nested more than ${limits.maxDepth} levels deep (IMPORT_LIMITS.maxDepth); ` +
    'not a SPA/RAGEN record', `at most ${limits.maxDepth} levels of objects and arrays`, `over ${limits.maxDepth}`);
  let source = text;
  if (scan.tokens.length) {
    const parts: string[] = [];
    let from = 0;
    for (const t of scan.tokens) { parts.push(text.slice(from, t.at), JSON.stringify(SENTINEL[t.token])); from = t.at + t.length; }
    parts.push(text.slice(from));
    source = parts.join('');
  }
  let value: unknown;
  try { value = JSON.parse(source); } catch (err) {
    throw importError(rel, line, '', `not valid JSON (${(err as Error).message.replace(/\s+in JSON at position.*$/, '')})`, 'JSON');
  }
  if (!scan.tokens.length && !scan.bigNumbers) return value;
  // walk the value (iteratively: depth is bounded, but no recursion anyway): sentinels back to numbers, overflowed numbers refused
  if (typeof value === 'string') return FROM_SENTINEL.get(value) ?? value;
  if (typeof value === 'number') { if (!Number.isFinite(value)) throw overflow(rel, line, '(the value)'); return value; }
  const stack: { node: Record<string, unknown> | unknown[]; path: string }[] = [];
  if (value !== null && typeof value === 'object') stack.push({ node: value as Record<string, unknown>, path: '' });
  while (stack.length) {
    const { node, path } = stack.pop()!;
    const keys: (string | number)[] = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
    for (const k of keys) {
      const v = (node as Record<string | number, unknown>)[k];
      if (typeof v === 'number') { if (!Number.isFinite(v)) throw overflow(rel, line, fieldPath(path, k)); }
      else if (typeof v === 'string') { const s = FROM_SENTINEL.get(v); if (s !== undefined) (node as Record<string | number, unknown>)[k] = s; }
      else if (v !== null && typeof v === 'object') stack.push({ node: v as Record<string, unknown>, path: fieldPath(path, k) });
    }
  }
  return value;
}

function overflow(rel: string, line: number, field: string): WorkbenchError {
  return importError(rel, line, field, 'a number too large for a double (beyond ±1.8e308, e.g. 1e400); it cannot be stored, so the import ' +
    'is refused rather than dropping it', 'a finite number', 'a number that overflows to Infinity');
}

