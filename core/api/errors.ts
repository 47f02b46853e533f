// Errors that cross the API: `{ name, message, details: { where, expected, received, issues } }`.
// No Node imports (shared by the renderer's clients through type-only use and by all hosts).
import type { z } from 'zod';
import type { ApiError } from './records.js';

export type ApiErrorName =
  | 'ValidationError'   // the request (or a config) does not match its schema
  | 'NotFound'          // no such run / template / episode / method
  | 'Conflict'          // wrong state: run already running, project locked by another process
  | 'NoProject'         // the method needs an open project
  | 'Unavailable'       // a capability is not installed or not built yet
  | 'Timeout'           // the engine did not answer in time
  | 'TransportError'    // the connection to the host broke
  | 'CorruptData'       // a file failed to parse (moved aside)
  | 'InternalError';    // a bug

export type ApiErrorDetails = NonNullable<ApiError['details']>;

/** An error with a stable name and structured details; serialises to ApiError. */
export class WorkbenchError extends Error {
  readonly details: ApiErrorDetails;
  constructor(name: ApiErrorName | string, message: string, details: ApiErrorDetails = {}) {
    super(message);
    this.name = name;
    this.details = details;
  }
  toJSON(): ApiError { return { name: this.name, message: this.message, details: this.details }; }
}

export const notFound = (what: string, where: string, hint?: string) =>
  new WorkbenchError('NotFound', `${what} not found${hint ? ` (${hint})` : ''}`, { where, received: what });
export const conflict = (message: string, where: string, details: ApiErrorDetails = {}) =>
  new WorkbenchError('Conflict', message, { where, ...details });

/** Describe a value briefly for "received" fields. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `array(${value.length})`;
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (typeof value === 'object') {
    const keys = Object.keys(value as object);
    return `object {${keys.slice(0, 8).join(', ')}${keys.length > 8 ? ', ...' : ''}}`;
  }
  return `${typeof value} ${String(value)}`;
}

function pathText(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out || '(root)';
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

/** A ValidationError from a zod error: where (method + path), what was expected, what arrived. */
export function validationError(where: string, error: z.ZodError, input: unknown, hint?: string): WorkbenchError {
  const issues = error.issues.map((i) => ({ path: pathText(i.path), message: i.message }));
  const first = error.issues[0];
  const firstPath = first ? pathText(first.path) : '(root)';
  const received = first ? describeValue(valueAt(input, first.path)) : describeValue(input);
  const expected = first ? first.message : 'a valid value';
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more issue${issues.length > 2 ? 's' : ''})` : '';
  const message = `${where}: invalid ${firstPath}: ${expected}; received ${received}${more}${hint ? `. ${hint}` : ''}`;
  return new WorkbenchError('ValidationError', message, { where: `${where} ${firstPath}`, expected, received, issues });
}

/** Any thrown value → ApiError (plain JSON). Unknown errors become InternalError with their message. */
export function toApiError(err: unknown, where?: string): ApiError {
  if (err instanceof WorkbenchError) return err.toJSON();
  if (err instanceof Error) {
    const e = err as Error & { code?: string; details?: ApiErrorDetails };
    const details: ApiErrorDetails = { ...(e.details ?? {}), ...(where ? { where } : {}) };
    if (e.code) (details as Record<string, unknown>).code = e.code;
    const name = e.name && e.name !== 'Error' ? e.name : 'InternalError';
    return { name, message: e.message, details };
  }
  return { name: 'InternalError', message: String(err), details: where ? { where } : {} };
}

/** ApiError (from the wire) → a throwable WorkbenchError on the client side. */
export function fromApiError(error: ApiError): WorkbenchError {
  return new WorkbenchError(error.name, error.message, error.details ?? {});
}
