// Declarative env options: each option has a type, a default and a one-line doc.
// validateOptions() resolves user input against a spec and fails with a clear message.
import { EnvError, show } from './errors.js';

export type OptionType = 'integer' | 'number' | 'boolean' | 'string' | 'enum' | 'stringList';

export interface OptionSpec {
  name: string;
  type: OptionType;
  /** Default value; null means "not set". */
  default: unknown;
  doc: string;
  min?: number;
  max?: number;
  values?: readonly (string | number)[];   // for 'enum'
  nullable?: boolean;                       // null is accepted (and means "not set")
  /** Longest accepted text: characters of a 'string', rows of a 'stringList' (defaults below). */
  maxLength?: number;
}

/** Defaults for text options without their own maxLength: a level file or map is far smaller. */
export const MAX_STRING_CHARS = 1_000_000;
export const MAX_LIST_ROWS = 1_000;

export type ResolvedOptions = Record<string, unknown>;

function describe(spec: OptionSpec): string {
  switch (spec.type) {
    case 'integer':
    case 'number': {
      const range = spec.min !== undefined || spec.max !== undefined
        ? ` in ${spec.min ?? '-inf'}..${spec.max ?? 'inf'}` : '';
      return `${spec.type === 'integer' ? 'an integer' : 'a number'}${range}${spec.nullable ? ' or null' : ''}`;
    }
    case 'boolean': return 'true or false';
    case 'string': return `a string${spec.nullable ? ' or null' : ''}`;
    case 'enum': return `one of ${spec.values!.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'stringList': return `an array of strings (or one string with rows separated by newlines)${spec.nullable ? ' or null' : ''}`;
  }
}

function tooLong(envId: string, spec: OptionSpec, length: number, unit: string): never {
  const limit = spec.type === 'stringList' && unit === 'rows' ? spec.maxLength ?? MAX_LIST_ROWS : spec.maxLength ?? MAX_STRING_CHARS;
  throw new EnvError('option value too long', {
    where: `env "${envId}" option "${spec.name}"`, expected: `at most ${limit} ${unit}`, received: `${length} ${unit}`, hint: spec.doc,
  });
}

function coerce(envId: string, spec: OptionSpec, value: unknown): unknown {
  const where = `env "${envId}" option "${spec.name}"`;
  const fail = (): never => {
    throw new EnvError('invalid option value', { where, expected: describe(spec), received: show(value), hint: spec.doc });
  };
  if (value === null) {
    if (spec.nullable) return null;
    fail();
  }
  switch (spec.type) {
    case 'integer':
    case 'number': {
      let n = value;
      if (typeof n === 'string' && n.trim() !== '' && !Number.isNaN(Number(n))) n = Number(n);
      if (typeof n !== 'number' || !Number.isFinite(n)) return fail();
      if (spec.type === 'integer' && !Number.isInteger(n)) return fail();
      if (spec.min !== undefined && n < spec.min) return fail();
      if (spec.max !== undefined && n > spec.max) return fail();
      return n;
    }
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (value === 'true') return true;
      if (value === 'false') return false;
      return fail();
    case 'string':
      if (typeof value !== 'string') return fail();
      if (value.length > (spec.maxLength ?? MAX_STRING_CHARS)) return tooLong(envId, spec, value.length, 'characters');
      return value;
    case 'enum': {
      const hit = spec.values!.find((v) => v === value || String(v) === String(value));
      if (hit === undefined) return fail();
      return hit;
    }
    case 'stringList': {
      if (typeof value === 'string' && value.length > MAX_STRING_CHARS) return tooLong(envId, spec, value.length, 'characters');
      const rows = typeof value === 'string' ? value.split(/\r?\n/).map((s) => s.trim()).filter((s) => s.length > 0) : value;
      if (!Array.isArray(rows) || !rows.every((v) => typeof v === 'string')) return fail();
      if (rows.length > (spec.maxLength ?? MAX_LIST_ROWS)) return tooLong(envId, spec, rows.length, 'rows');
      return [...rows];
    }
  }
}

/** Resolve `input` against `specs`: defaults filled in, types checked, unknown keys rejected. */
export function validateOptions(envId: string, specs: readonly OptionSpec[], input: Record<string, unknown> | undefined | null): ResolvedOptions {
  if (input !== undefined && input !== null && (typeof input !== 'object' || Array.isArray(input))) {
    throw new EnvError('invalid options', { where: `env "${envId}"`, expected: 'an object of options', received: show(input) });
  }
  const known = new Map(specs.map((s) => [s.name, s]));
  const out: ResolvedOptions = {};
  for (const key of Object.keys(input ?? {})) {
    if (!known.has(key)) {
      throw new EnvError(`unknown option "${key}"`, {
        where: `env "${envId}"`,
        expected: `one of ${specs.map((s) => s.name).join(', ')}`,
        received: show(key),
        hint: 'check the spelling; `spa-workbench env list` shows each env\'s options',
      });
    }
  }
  for (const spec of specs) {
    const value = input?.[spec.name];
    out[spec.name] = value === undefined ? spec.default : coerce(envId, spec, value);
  }
  return out;
}
