// Errors that cross the API arrive as plain `{ name, message, details }` (ApiError). The client
// rethrows them as ApiClientError so views can show what was expected, what arrived and where.
import type { ApiError } from '../../../core/api/contract.js';

export class ApiClientError extends Error {
  readonly details: ApiError['details'];
  readonly method: string;
  constructor(error: ApiError, method: string) {
    super(error.message);
    this.name = error.name || 'ApiError';
    this.details = error.details;
    this.method = method;
  }
  /** Plain copy for display or logging. */
  toJSON(): ApiError & { method: string } {
    return { name: this.name, message: this.message, details: this.details, method: this.method };
  }
}

/** Normalise anything thrown or received into ApiError shape. */
export function toApiError(value: unknown): ApiError {
  if (value instanceof ApiClientError) return { name: value.name, message: value.message, details: value.details };
  if (value && typeof value === 'object' && typeof (value as { message?: unknown }).message === 'string') {
    const v = value as { name?: unknown; message: string; details?: unknown };
    return {
      name: typeof v.name === 'string' ? v.name : 'Error',
      message: v.message,
      ...(v.details && typeof v.details === 'object' ? { details: v.details as ApiError['details'] } : {}),
    };
  }
  return { name: 'Error', message: String(value) };
}

/** One-paragraph human text of an error: message plus expected / received / where / issues. */
export function describeError(value: unknown): { title: string; details: string } {
  const e = toApiError(value);
  const lines: string[] = [];
  const d = e.details;
  if (d?.where) lines.push(`where: ${d.where}`);
  if (d?.expected) lines.push(`expected: ${d.expected}`);
  if (d?.received) lines.push(`received: ${d.received}`);
  for (const issue of d?.issues ?? []) lines.push(`${issue.path || '(root)'}: ${issue.message}`);
  return { title: `${e.name === 'Error' ? '' : `${e.name}: `}${e.message}`, details: lines.join('\n') };
}
