// Schema version of workbench.json and the migration hook. To change the stored shape: bump
// CURRENT_SCHEMA_VERSION and append a migration `{ from: N, to: N+1, migrate }`. Before
// migrating, the old file is kept as workbench.json.v<N>.bak (by the caller).

export const CURRENT_SCHEMA_VERSION = 1;

export interface Migration {
  from: number;
  to: number;
  description: string;
  migrate(data: Record<string, unknown>): Record<string, unknown>;
}

/** Registered migrations, in order. Version 1 is the first stored shape: nothing to migrate yet. */
export const migrations: Migration[] = [];

export class NewerSchemaError extends Error {
  constructor(readonly found: number, readonly supported: number, where: string) {
    super(`${where} was written by a newer SPA Workbench (schema version ${found}; this version reads up to ${supported}). Update SPA Workbench to open it.`);
    this.name = 'Conflict';
  }
}

/** Bring `data` up to CURRENT_SCHEMA_VERSION. Returns the applied steps (empty if none). */
export function migrate(
  data: Record<string, unknown>,
  where: string,
  list: readonly Migration[] = migrations,
  target = CURRENT_SCHEMA_VERSION,
): { data: Record<string, unknown>; applied: Migration[] } {
  let version = typeof data.schemaVersion === 'number' ? data.schemaVersion : 1;
  if (version > target) throw new NewerSchemaError(version, target, where);
  const applied: Migration[] = [];
  let current = data;
  while (version < target) {
    const step = list.find((m) => m.from === version);
    if (!step) throw new Error(`${where}: no migration from schema version ${version} to ${target} (a bug: every version needs a step)`);
    current = { ...step.migrate(current), schemaVersion: step.to };
    applied.push(step);
    version = step.to;
  }
  return { data: current, applied };
}
