// Errors raised by envs and their registry: what was expected, what arrived, where, and the fix.

export interface EnvErrorDetails {
  where?: string;
  expected?: string;
  received?: string;
  hint?: string;
}

export class EnvError extends Error {
  readonly details: EnvErrorDetails;
  constructor(message: string, details: EnvErrorDetails = {}) {
    const parts = [message];
    if (details.expected !== undefined) parts.push(`expected ${details.expected}`);
    if (details.received !== undefined) parts.push(`received ${details.received}`);
    if (details.hint !== undefined) parts.push(`fix: ${details.hint}`);
    super(details.where ? `${details.where}: ${parts.join('; ')}` : parts.join('; '));
    this.name = 'EnvError';
    this.details = details;
  }
}

/** Short printable form of any value for error messages. */
export function show(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  try {
    const text = JSON.stringify(value);
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  } catch {
    return String(value);
  }
}
