// Where a run's bootstrap base would come from, decided before the run exists (for the New Run
// form's estimate, core/engine/run-estimate.ts) in the order the bootstrap stage tries them: the
// shipped base (resources/bases, core/train/shipped-base.ts), the project's cached base of the
// same key, else training, with the recorded training time of a shipped base as a reference.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunConfig } from '../api/run-config.js';
import { projectCacheDir } from '../storage/run-files.js';
import { builtinTemplate } from '../prompts/resolve-template.js';
import { bootstrapCacheKey, bootstrapPhases, bootstrapTemplates } from './bootstrap.js';
import { baseDescriptor, findShippedBase, shippedBasesDir, SHIPPED_BASE_FORMAT, type ShippedBaseRecord } from './shipped-base.js';

/** Where the run's bootstrap base would come from. */
export type BootstrapSource =
  | { kind: 'shipped'; dir: string }
  | { kind: 'cached'; dir: string }
  | { kind: 'train'; why: string; reference: { seconds: number; steps: number; rows: number; env: string } | null; work: { steps: number; rows: number } };

/** The bootstrap's training work: optimizer steps and training rows (steps x batch size, over its phases). */
export function bootstrapWork(config: RunConfig): { steps: number; rows: number } {
  const phases = bootstrapPhases(config.stages.bootstrap);
  return { steps: phases[phases.length - 1]!.end, rows: phases.reduce((a, p) => a + p.steps * p.batchSize, 0) };
}

/** Envs with a shipped base folder (resources/bases/<env>, variants <env>-<name> count for <env>). */
export function shippedBaseEnvs(root = shippedBasesDir()): string[] {
  let names: string[];
  try { names = fs.readdirSync(root).filter((n) => fs.existsSync(path.join(root, n, 'manifest.json'))); } catch { return []; }
  const envs = new Set<string>();
  for (const n of names) {
    const rec = shippedRecord(path.join(root, n));
    if (rec) envs.add(rec.env);
  }
  return [...envs].sort();
}

function shippedRecord(dir: string): ShippedBaseRecord | null {
  try {
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { extra?: { shippedBase?: ShippedBaseRecord } };
    const rec = m.extra?.shippedBase;
    return rec && rec.format === SHIPPED_BASE_FORMAT && typeof rec.env === 'string' ? rec : null;
  } catch { return null; }
}

/**
 * Where this config's bootstrap base would come from, as the bootstrap stage decides it (shipped
 * base, then the project's cache, then training). `projectDir` null: no project open (no cache).
 */
export async function bootstrapSource(config: RunConfig, projectDir: string | null, root = shippedBasesDir()): Promise<BootstrapSource> {
  const section = config.stages.bootstrap;
  let resolved: ReturnType<typeof bootstrapTemplates>;
  try { resolved = bootstrapTemplates(config); } catch (err) {
    // a template saved in the project (not a built-in): no shipped base is made from one; the run resolves it when it starts
    return { kind: 'train', why: `the base's templates are not all built in (${(err as Error).message})`, reference: null, work: bootstrapWork(config) };
  }
  const { names, own, templates } = resolved;
  let why = `no shipped base for ${config.env.id}`;
  if (section.shipped) {
    try {
      const found = await findShippedBase(baseDescriptor(config, templates.map((t) => (typeof t === 'string' ? builtinTemplate(t) : t))), root);
      if (found.kind === 'match') return { kind: 'shipped', dir: found.dir };
      if (found.kind === 'mismatch') why = `the shipped base ${path.basename(found.dir)} does not fit this run (${found.differs.slice(0, 2).join('; ')})`;
    } catch (err) { why = (err as Error).message; }
  } else why = 'stages.bootstrap.shipped is off';
  if (projectDir && section.cache) {
    const key = bootstrapCacheKey(config, section, config.stages.rollout, names, own);
    const dir = projectCacheDir(path.join(projectDir, 'runs', '_'), 'bootstrap', key);
    if (fs.existsSync(path.join(dir, 'config.json'))) return { kind: 'cached', dir };
  }
  // a reference for the training time: a shipped base's recorded training, the same env's first
  let reference: { seconds: number; steps: number; rows: number; env: string } | null = null;
  let folders: string[] = [];
  try { folders = fs.readdirSync(root).sort(); } catch { /* none */ }
  const records = folders.map((n) => shippedRecord(path.join(root, n))).filter((r): r is ShippedBaseRecord => !!r && typeof r.trainSeconds === 'number');
  const ref = records.find((r) => r.env === config.env.id) ?? records[0];
  if (ref) {
    try { reference = { seconds: ref.trainSeconds!, ...bootstrapWork(ref.config), env: ref.env }; } catch { reference = null; }
  }
  return { kind: 'train', why, reference, work: bootstrapWork(config) };
}
