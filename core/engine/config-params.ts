// A run's config as table columns: the leaves of its resolved config that differ from the config
// defaults (RunConfigSchema), flattened to dotted paths ("stages.rl.lr": 0.0003). Kept in the run
// summary (the run index), so the run table can show and group by config without reading every
// run.json. Only differences are kept, so the index stays small.
import { RunConfigSchema, type RunConfig } from '../api/run-config.js';

export type ParamValue = string | number | boolean | null;

function flatten(value: unknown, prefix: string, out: Record<string, ParamValue>): void {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix) {
    out[prefix] = value === undefined ? null : typeof value === 'object' ? JSON.stringify(value) : (value as ParamValue);
  }
}

let defaults: Record<string, ParamValue> | null = null;

/** Flattened config defaults (memoised). */
export function defaultParams(): Record<string, ParamValue> {
  if (!defaults) { defaults = {}; flatten(RunConfigSchema.parse({}), '', defaults); }
  return defaults;
}

/** Run table columns already: not repeated as params. */
const COLUMNS = new Set(['name', 'method', 'size', 'env.id']);

/** Dotted config paths whose value differs from the defaults (name, method, size and env are columns already). */
export function configParams(config: RunConfig): Record<string, ParamValue> {
  const flat: Record<string, ParamValue> = {};
  flatten(config, '', flat);
  const base = defaultParams();
  const out: Record<string, ParamValue> = {};
  for (const [k, v] of Object.entries(flat)) if (!COLUMNS.has(k) && base[k] !== v) out[k] = v;
  return out;
}
