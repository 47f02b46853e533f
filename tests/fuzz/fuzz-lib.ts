// Malformed-input generators and a harness shared by the fuzz tests (tests/fuzz/*.test.ts, small
// bounded counts, run in CI) and the measurement script (bench/reliability.ts, larger counts).
// Deterministic: every value comes from a seeded generator, so a failure names its seed and
// request and replays exactly.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EngineExit, EngineProcess, LaunchOptions, ProcessLauncher } from '../../core/engine/launcher.js';
import type { EngineMessage, HostMessage } from '../../core/engine/protocol.js';
import { z } from 'zod';
import { apiContract } from '../../core/api/contract.js';
import { createRng } from '../../core/util/rng.js';

/** A seeded uniform [0, 1) stream: the workbench's one RNG (core/util/rng.ts). */
export const rng: (seed: number) => () => number = createRng;

export type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** Strings that have broken parsers, path handling and object lookups before. */
export const NASTY_STRINGS = [
  '', ' ', 'constructor', '__proto__', 'prototype', 'toString', 'hasOwnProperty', 'valueOf',
  '../../../../etc/passwd', '..', '.', '/', '\\\\..\\\\..\\\\windows', '%2e%2e%2f', '%E0%A4%A', 'a/../../b',
  'null', 'undefined', 'NaN', '-1', '1e309', '0x10', '{}', '[]', '"', "'", '`', '\\', '\u0000', '\u0000abc', '\ud800', '\uffff', '🙂',
  'runs.list', 'spa', 'tiny-spa', 'sokoban', 'frozen-lake', 'sudoku', 'x'.repeat(300), 'y'.repeat(70_000),
  '{% for i in (1..4000000) %}x{% endfor %}', '{{ a | no_such_filter }}', '<script>alert(1)</script>', '$(rm -rf /)', 'a\nb\r\nc',
];

export const NASTY_NUMBERS = [0, -0, 1, -1, 0.5, -0.5, 2 ** 31, -(2 ** 31), 2 ** 53, -(2 ** 53), 1e308, -1e308, 5e-324, 123456789];

/** A random JSON value of bounded size (depth, breadth). `extra` adds context strings (real ids). */
export function randomValue(r: Rand, depth = 0, extra: readonly string[] = []): unknown {
  const k = r();
  if (k < 0.12) return null;
  if (k < 0.2) return r() < 0.5;
  if (k < 0.38) return pick(r, NASTY_NUMBERS);
  if (k < 0.62) return extra.length && r() < 0.35 ? pick(r, extra) : pick(r, NASTY_STRINGS);
  if (depth >= 3) return pick(r, NASTY_STRINGS);
  if (k < 0.78) return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1, extra));
  const obj: Record<string, unknown> = {};
  for (let i = Math.floor(r() * 4); i > 0; i--) {
    const key = r() < 0.5 ? pick(r, ['constructor', '__proto__', 'toString', 'id', 'name', 'path', 'options', 'x']) : pick(r, NASTY_STRINGS).slice(0, 40);
    Object.defineProperty(obj, key, { value: randomValue(r, depth + 1, extra), enumerable: true, writable: true, configurable: true });
  }
  return obj;
}

/** The request field names of a method, read from its zod schema (z.object shape), or []. */
export function requestKeys(method: string): string[] {
  const [ns, m] = method.split('.') as [string, string];
  const spec = (apiContract as unknown as Record<string, Record<string, { request: unknown }>>)[ns]?.[m];
  const def = (spec?.request as { shape?: Record<string, unknown>; def?: { shape?: Record<string, unknown> } } | undefined);
  const shape = def?.shape ?? def?.def?.shape;
  return shape ? Object.keys(shape) : [];
}

type JsonSchema = {
  type?: string | string[]; enum?: unknown[]; const?: unknown; properties?: Record<string, JsonSchema>; required?: string[];
  items?: JsonSchema; anyOf?: JsonSchema[]; oneOf?: JsonSchema[]; allOf?: JsonSchema[]; minimum?: number; maximum?: number;
  exclusiveMinimum?: number; exclusiveMaximum?: number; minItems?: number; maxItems?: number; $ref?: string;
};
const schemaCache = new Map<string, JsonSchema | null>();

function requestSchema(method: string): JsonSchema | null {
  if (!schemaCache.has(method)) {
    const [ns, m] = method.split('.') as [string, string];
    const spec = (apiContract as unknown as Record<string, Record<string, { request: z.ZodType }>>)[ns]?.[m];
    let js: JsonSchema | null = null;
    try { js = spec ? (z.toJSONSchema(spec.request, { unrepresentable: 'any', io: 'input' }) as JsonSchema) : null; } catch { js = null; }
    schemaCache.set(method, js);
  }
  return schemaCache.get(method)!;
}

/** A value that satisfies the JSON schema's types (edge values: bounds, real ids, nasty strings), so handlers are reached. */
function fromSchema(s: JsonSchema | undefined, r: Rand, extra: readonly string[], depth: number): unknown {
  if (!s || depth > 5 || s.$ref) return randomValue(r, 2, extra);
  if (s.const !== undefined) return s.const;
  if (s.enum) return pick(r, s.enum);
  const alts = s.anyOf ?? s.oneOf;
  if (alts?.length) return fromSchema(pick(r, alts), r, extra, depth + 1);
  if (s.allOf?.length) return fromSchema(s.allOf[0], r, extra, depth + 1);
  const type = Array.isArray(s.type) ? pick(r, s.type) : s.type;
  switch (type) {
    case 'string': return extra.length && r() < 0.5 ? pick(r, extra) : pick(r, NASTY_STRINGS);
    case 'integer':
    case 'number': {
      const lo = s.minimum ?? s.exclusiveMinimum;
      const hi = s.maximum ?? s.exclusiveMaximum;
      const edges = [lo, hi, lo !== undefined ? lo + 1 : undefined, hi !== undefined ? hi - 1 : undefined].filter((x): x is number => typeof x === 'number');
      const v = edges.length && r() < 0.5 ? pick(r, edges) : pick(r, NASTY_NUMBERS);
      return type === 'integer' ? Math.trunc(v) : v;
    }
    case 'boolean': return r() < 0.5;
    case 'null': return null;
    case 'array': {
      const n = Math.min(s.maxItems ?? 4, Math.max(s.minItems ?? 0, Math.floor(r() * 4)));
      return Array.from({ length: n }, () => fromSchema(s.items, r, extra, depth + 1));
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(s.properties ?? {})) if ((s.required ?? []).includes(k) || r() < 0.5) out[k] = fromSchema(v, r, extra, depth + 1);
      return out;
    }
    default: return randomValue(r, 2, extra);
  }
}

/** A request that passes (most of) the schema: right types, edge values. One field is sometimes broken. */
export function typedRequest(r: Rand, method: string, extra: readonly string[]): unknown {
  const v = fromSchema(requestSchema(method) ?? undefined, r, extra, 0);
  if (v && typeof v === 'object' && !Array.isArray(v) && r() < 0.25) {
    const keys = Object.keys(v);
    if (keys.length) (v as Record<string, unknown>)[pick(r, keys)] = randomValue(r, 1, extra);
  }
  return v;
}

/**
 * A malformed (or occasionally valid) request for `method`: random params, the method's own keys
 * with random values, a valid-looking request with one field broken, or not an object at all.
 */
export function randomRequest(r: Rand, method: string, extra: readonly string[]): unknown {
  const keys = requestKeys(method);
  const k = r();
  if (k < 0.15) return randomValue(r, 2, extra);                     // anything at all
  const obj: Record<string, unknown> = {};
  for (const key of keys) if (r() < 0.7) obj[key] = randomValue(r, 1, extra);
  if (k > 0.85) Object.defineProperty(obj, pick(r, ['constructor', '__proto__', 'extra', 'toString']), { value: randomValue(r, 2, extra), enumerable: true });
  return obj;
}

/** Error names a request may end in; anything else (TypeError, RangeError, InternalError) is a defect. */
export const NAMED_ERRORS = new Set(['ValidationError', 'NotFound', 'Conflict', 'NoProject', 'Unavailable', 'Timeout', 'CorruptData']);

export interface Tally { sent: number; ok: number; namedErrors: number; unnamed: Array<{ method: string; request: string; error: string }>; hangs: Array<{ method: string; request: string }> }
export const newTally = (): Tally => ({ sent: 0, ok: 0, namedErrors: 0, unnamed: [], hangs: [] });

/** Call once, classify: ok, a named error, an unnamed error (a defect) or a hang (no answer in `hangMs`). */
export async function probe(t: Tally, method: string, request: unknown, call: () => Promise<unknown>, hangMs: number): Promise<void> {
  t.sent++;
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<'hang'>((resolve) => { timer = setTimeout(() => resolve('hang'), hangMs); });
  const outcome = await Promise.race([call().then(() => 'ok' as const, (e: unknown) => e), hang]);
  clearTimeout(timer);
  const show = () => { try { return JSON.stringify(request).slice(0, 300); } catch { return String(request); } };
  if (outcome === 'ok') t.ok++;
  else if (outcome === 'hang') t.hangs.push({ method, request: show() });
  else {
    const e = outcome as { name?: string; message?: string };
    if (e && typeof e.name === 'string' && NAMED_ERRORS.has(e.name) && typeof e.message === 'string' && e.message.length > 0) t.namedErrors++;
    else t.unnamed.push({ method, request: show(), error: `${e?.name}: ${e?.message}`.slice(0, 400) });
  }
}

/** An engine launcher that never starts a process: every engine "exits" at once with code 1. */
export class NoEngineLauncher implements ProcessLauncher {
  readonly kind = 'fuzz-no-engine';
  launched = 0;
  launch(_o: LaunchOptions): EngineProcess {
    this.launched++;
    const exitListeners: Array<(e: EngineExit) => void> = [];
    setTimeout(() => { for (const l of exitListeners) l({ code: 1, signal: null, stderrTail: ['fuzz: no engine process'] }); }, 5);
    return {
      pid: undefined,
      send(_m: HostMessage) { /* dropped */ },
      onMessage(_l: (m: EngineMessage) => void) { /* never */ },
      onExit(l) { exitListeners.push(l); },
      kill() { /* nothing runs */ },
    };
  }
}

/** Every file below `dir` (relative paths), for "nothing written outside" checks. */
export function listTree(dir: string, limit = 20_000): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: fs.Dirent[];
    try { entries = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      if (out.length >= limit) return;
      const full = path.join(d, e.name);
      out.push(path.relative(dir, full));
      if (e.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return out.sort();
}
