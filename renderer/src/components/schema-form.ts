// Helpers for forms generated from a JSON Schema (the run config's, from runs.configSchema):
// walk the schema, read/write values by dotted path, parse typed input with clear messages.
export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  title?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  definitions?: Record<string, JsonSchema>;
  /** Set by objectFields on a field resolved from a nullable union (resolveNode drops the null branch). */
  nullable?: boolean;
};

/** Resolve local $refs and single-branch unions to the node that describes the field. */
export function resolveNode(node: JsonSchema | undefined, root: JsonSchema): JsonSchema | undefined {
  let n = node;
  for (let guard = 0; n && guard < 20; guard++) {
    if (n.$ref) {
      const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(n.$ref);
      const defs = m ? (m[1] === '$defs' ? root.$defs : root.definitions) : undefined;
      n = m && defs ? { ...defs[decodeURIComponent(m[2]!)], ...withoutRef(n) } : undefined;
      continue;
    }
    const branches = (n.anyOf ?? n.oneOf)?.filter((b) => b.type !== 'null');
    if (branches && branches.length === 1) { n = { ...branches[0], ...withoutUnion(n) }; continue; }
    if (n.allOf && n.allOf.length === 1) { n = { ...n.allOf[0], ...withoutAllOf(n) }; continue; }
    return n;
  }
  return n;
}
function withoutRef(n: JsonSchema): JsonSchema { const { $ref: _r, ...rest } = n; return rest; }
function withoutUnion(n: JsonSchema): JsonSchema { const { anyOf: _a, oneOf: _o, ...rest } = n; return rest; }
function withoutAllOf(n: JsonSchema): JsonSchema { const { allOf: _a, ...rest } = n; return rest; }

export function schemaType(node: JsonSchema | undefined): string | undefined {
  if (!node) return undefined;
  if (node.enum) return 'enum';
  const t = Array.isArray(node.type) ? node.type.find((x) => x !== 'null') : node.type;
  if (t) return t;
  if (node.properties) return 'object';
  return undefined;
}

/** The schema node at a dotted path (descending into properties / additionalProperties). */
export function nodeAt(root: JsonSchema, path: string): JsonSchema | undefined {
  let n = resolveNode(root, root);
  for (const part of path.split('.').filter(Boolean)) {
    if (!n) return undefined;
    const next: JsonSchema | undefined = n.properties?.[part]
      ?? (typeof n.additionalProperties === 'object' ? n.additionalProperties : undefined);
    n = resolveNode(next, root);
  }
  return n;
}

export function getPath(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const part of path.split('.').filter(Boolean)) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** Kind of input for a value when the schema says nothing (stage sections are free records). */
export function valueKind(v: unknown): 'number' | 'boolean' | 'string' | 'object' | 'json' {
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'string') return 'string';
  if (v && typeof v === 'object' && !Array.isArray(v)) return 'object';
  return 'json';
}

export type Parsed = { ok: true; value: unknown } | { ok: false; message: string };

/** Parse what the user typed for a field, checking the schema's type and bounds. */
export function parseInput(text: string, kind: 'integer' | 'number' | 'string' | 'json', node?: JsonSchema): Parsed {
  if (kind === 'string') {
    if (node?.minLength !== undefined && text.length < node.minLength) return { ok: false, message: `expected at least ${node.minLength} character(s), got ${text.length}` };
    if (node?.maxLength !== undefined && text.length > node.maxLength) return { ok: false, message: `expected at most ${node.maxLength} characters, got ${text.length}` };
    return { ok: true, value: text };
  }
  if (kind === 'json') {
    try { return { ok: true, value: JSON.parse(text) }; } catch (e) { return { ok: false, message: `expected JSON, e.g. [1, 2] or {"a": 1}: ${(e as Error).message}` }; }
  }
  const t = text.trim();
  if (t === '') return { ok: false, message: `expected ${kind === 'integer' ? 'an integer' : 'a number'}, got an empty field` };
  const v = Number(t);
  if (!Number.isFinite(v)) return { ok: false, message: `expected ${kind === 'integer' ? 'an integer' : 'a number'}, got "${text}"` };
  if (kind === 'integer' && !Number.isInteger(v)) return { ok: false, message: `expected an integer, got ${t}` };
  if (node?.minimum !== undefined && v < node.minimum) return { ok: false, message: `expected ≥ ${node.minimum}, got ${t}` };
  if (node?.maximum !== undefined && v > node.maximum) return { ok: false, message: `expected ≤ ${node.maximum}, got ${t}` };
  if (node?.exclusiveMinimum !== undefined && v <= node.exclusiveMinimum) return { ok: false, message: `expected > ${node.exclusiveMinimum}, got ${t}` };
  if (node?.exclusiveMaximum !== undefined && v >= node.exclusiveMaximum) return { ok: false, message: `expected < ${node.exclusiveMaximum}, got ${t}` };
  return { ok: true, value: v };
}

/** Issues whose path is this field (or, for `prefix`, inside it). */
export function issuesAt(issues: Array<{ path: string; message: string }>, path: string, prefix = false): string[] {
  return issues.filter((i) => i.path === path || (prefix && i.path.startsWith(`${path}.`))).map((i) => i.message);
}

/** Turn a camelCase key into a label ("maxTurns" → "max turns"). */
export function labelOf(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z])([A-Z][a-z])/g, '$1 $2').replace(/[-_]/g, ' ').toLowerCase();
}

/** The fields of the object node at a dotted path, in schema order: [key, node] (an empty list when it is not an object). */
export function objectFields(root: JsonSchema, path: string): Array<[string, JsonSchema]> {
  const node = nodeAt(root, path);
  return Object.entries(node?.properties ?? {}).map(([k, n]) => {
    const resolved = resolveNode(n, root) ?? n;
    return [k, isNullable(n) ? { ...resolved, nullable: true } : resolved];
  });
}

/** The stage sections the schema types (RunConfig.stages.<name>, core/api/run-config.ts), in schema order. */
export function typedStageSections(root: JsonSchema): string[] {
  return Object.keys(nodeAt(root, 'stages')?.properties ?? {});
}

/** One line on what a field accepts and its default, e.g. "number > 0 · default 0.0001", "integer ≥ 1 · default 4", "one of a | b". */
export function boundsText(node: JsonSchema | undefined): string {
  if (!node) return '';
  const parts: string[] = [];
  const type = schemaType(node);
  const nullable = isNullable(node);
  if (type === 'enum') parts.push(`one of ${(node.enum ?? []).map((e) => String(e)).join(' | ')}`);
  else if (type) {
    // zod's int() carries ±Number.MAX_SAFE_INTEGER as bounds: not a bound a reader needs
    const real = (v: number | undefined) => (v !== undefined && Math.abs(v) < Number.MAX_SAFE_INTEGER ? v : undefined);
    const [min, max, xmin, xmax] = [real(node.minimum), real(node.maximum), real(node.exclusiveMinimum), real(node.exclusiveMaximum)];
    const bounds = [
      xmin !== undefined ? `> ${xmin}` : min !== undefined ? `≥ ${min}` : '',
      xmax !== undefined ? `< ${xmax}` : max !== undefined ? `≤ ${max}` : '',
    ].filter(Boolean).join(', ');
    parts.push(`${type}${bounds ? ` ${bounds}` : ''}`);
  }
  if (nullable) parts.push('null = off');
  if (node.default !== undefined) parts.push(`default ${JSON.stringify(node.default)}`);
  return parts.join(' · ');
}

/** Whether the field accepts null (a nullable union, or a type list with "null"). */
export function isNullable(node: JsonSchema | undefined): boolean {
  return !!node && (node.nullable === true || !!(node.anyOf ?? node.oneOf)?.some((b) => b.type === 'null')
    || (Array.isArray(node.type) && node.type.includes('null')));
}

/** Whether a resolved value equals the schema's default (deep, for arrays such as k or adamBetas). */
export function isDefaultValue(node: JsonSchema | undefined, value: unknown): boolean {
  return node?.default !== undefined && JSON.stringify(node.default) === JSON.stringify(value);
}
