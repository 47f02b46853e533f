// Shipped bases: the bootstrap's checkpoint for a default env, trained once by a documented command
// (`spa-workbench base build --env frozenlake`), stored in the repository under
// resources/bases/<env>/ as a checkpoint folder with F16 weights (a few hundred kB). Its
// manifest.json is the checkpoint manifest (core/model/checkpoint.ts: hashes of every file) whose
// `extra.shippedBase` holds the command, the resolved config, the data seed ranges, the gate and a
// content hash, and the match descriptor: what the base depends on (env and its options, the
// bootstrap's templates by name, response format and content hash, the model, the bootstrap's
// data/optimiser settings and the rollout shape). The bootstrap stage uses a shipped base when the
// run's descriptor equals it (any run seed: one base serves every seed and arm of a study), copies
// it into the run and skips training; otherwise it trains as before. A shipped base whose files do
// not match their hashes is refused with an error, never used.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunConfig } from '../api/run-config.js';
import { loadCheckpoint, readManifest, saveCheckpoint, verifyCheckpoint, type CheckpointManifest } from '../model/checkpoint.js';
import { templateHash, type PromptTemplate } from '../prompts/template.js';

export const SHIPPED_BASE_FORMAT = 'spa-workbench-shipped-base';

/** What a bootstrap base depends on; a run uses a shipped base only when its descriptor is equal. */
export interface BaseDescriptor {
  env: { id: string; options: Record<string, unknown> };
  templates: Array<{ name: string; responseFormat: string; hash: string }>;
  model: Record<string, unknown>;
  bootstrap: Record<string, unknown>;
  rollout: { maxTurns: number | undefined; maxActionsPerTurn: number | undefined; maxActionsPerGame: number | undefined };
}

/** The shipped-base record in manifest.json's `extra.shippedBase`. */
export interface ShippedBaseRecord {
  format: typeof SHIPPED_BASE_FORMAT;
  version: 1;
  env: string;
  /** The command that trained it (reproducible from a clean checkout). */
  command: string;
  match: BaseDescriptor;
  matchKey: string;
  /** The resolved run config of the training run. */
  config: RunConfig;
  /** Puzzle seeds the base was trained and gated on (disjoint from self-play, RL and eval). */
  dataSeeds: { games: [number, number]; drills: [number, number]; gate: [number, number] };
  gate: Record<string, unknown> | null;
  trainSeconds: number | null;
  sourceRun: string | null;
  /** sha-256 over the sorted file hashes of the folder (weights, config, tokenizer): one id for the base. */
  contentHash: string;
}

// Bootstrap settings that do not change the base (caching, checkpoint cadence, the gate, this switch).
const NOT_IN_DESCRIPTOR = new Set(['cache', 'saveEvery', 'gateTurns', 'gateObservationExact', 'gateKeepRate', 'shipped']);

/** The descriptor of the base a run's bootstrap would train (templates = the resolved bootstrap templates). */
export function baseDescriptor(config: RunConfig, templates: PromptTemplate[]): BaseDescriptor {
  const section = config.stages.bootstrap as unknown as Record<string, unknown>;
  const limits = config.stages.rollout;
  // LoRA does not change the base (the bootstrap trains it in full), nor do the memory settings (how the steps are computed)
  const { criticMode: _critic, lora: _lora, memory: _memory, ...model } = config.model;
  return {
    env: { id: config.env.id, options: sortKeys(config.env.options) as Record<string, unknown> },
    templates: templates.map((t) => ({ name: t.name, responseFormat: t.responseFormat, hash: templateHash(t) }))
      .sort((a, b) => (a.name + a.responseFormat).localeCompare(b.name + b.responseFormat)),
    model: sortKeys(model) as Record<string, unknown>,
    // (no extension phases = the key absent, so bases described before `extend` existed still match; likewise the default
    // counterfactual prediction, so bases described before `prediction` existed still match)
    bootstrap: sortKeys(Object.fromEntries(Object.entries(section)
      .filter(([k, v]) => !NOT_IN_DESCRIPTOR.has(k) && !(k === 'extend' && Array.isArray(v) && v.length === 0)
        && !(k === 'prediction' && v === 'counterfactual')))) as Record<string, unknown>,
    rollout: { maxTurns: limits.maxTurns, maxActionsPerTurn: limits.maxActionsPerTurn, maxActionsPerGame: limits.maxActionsPerGame },
  };
}

export function descriptorKey(d: BaseDescriptor): string {
  return createHash('sha256').update(JSON.stringify(sortKeys(d))).digest('hex').slice(0, 16);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.keys(value as object).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]));
  return value;
}

/**
 * Where the shipped bases live: $SPA_WORKBENCH_BASES_DIR, else resources/bases/ of the repository
 * (from core/train/ in a checkout, from dist-electron/ in a packaged app).
 */
export function shippedBasesDir(): string {
  const fromEnv = process.env.SPA_WORKBENCH_BASES_DIR;
  if (fromEnv) return fromEnv;
  const candidates = [new URL('../../resources/bases/', import.meta.url), new URL('../resources/bases/', import.meta.url)].map((u) => fileURLToPath(u));
  return candidates.find((c) => existsSync(c)) ?? candidates[0]!;
}

export class ShippedBaseError extends Error {
  constructor(message: string) { super(message); this.name = 'ShippedBaseError'; }
}

export type ShippedBaseLookup =
  | { kind: 'none'; dir: string }
  | { kind: 'mismatch'; dir: string; differs: string[] }
  | { kind: 'match'; dir: string; record: ShippedBaseRecord };

/** The parts of two descriptors that differ (top-level keys, templates by name). */
export function descriptorDifferences(want: BaseDescriptor, have: BaseDescriptor): string[] {
  const out: string[] = [];
  for (const key of ['env', 'model', 'bootstrap', 'rollout', 'templates'] as const) {
    if (JSON.stringify(sortKeys(want[key])) === JSON.stringify(sortKeys(have[key]))) continue;
    if (key === 'templates') {
      const fmt = (d: BaseDescriptor): string => d.templates.map((t) => `${t.name}/${t.responseFormat}/${t.hash.slice(0, 8)}`).join(', ');
      out.push(`templates (run: ${fmt(want)}; shipped: ${fmt(have)})`);
    } else if (key === 'bootstrap' || key === 'model' || key === 'rollout' || key === 'env') {
      const a = flatten(want[key]), b = flatten(have[key]);
      const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
      out.push(`${key}: ${keys.map((k) => `${k} ${JSON.stringify(a[k])} vs shipped ${JSON.stringify(b[k])}`).join(', ')}`);
    }
  }
  return out;
}

function flatten(value: unknown, prefix = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) Object.assign(out, flatten(v, prefix ? `${prefix}.${k}` : k));
  } else out[prefix] = value;
  return out;
}

/** The content hash of a checkpoint folder: sha-256 over its manifest's sorted file hashes. */
export function contentHash(manifest: CheckpointManifest): string {
  const entries = Object.entries({ ...manifest.files, 'model.safetensors': { sha256: manifest.weights.sha256, bytes: manifest.weights.bytes } })
    .sort((a, b) => a[0].localeCompare(b[0])).map(([name, r]) => `${name}:${r.sha256}:${r.bytes}`);
  return createHash('sha256').update(entries.join('\n')).digest('hex');
}

/**
 * Looks for the shipped base of `want.env.id` under `root`. 'none' when there is none, 'mismatch'
 * (with what differs) when its descriptor differs, 'match' when it fits and is intact. A base that
 * fits but is damaged (files not matching manifest.json, a bad manifest) throws ShippedBaseError.
 */
export async function findShippedBase(want: BaseDescriptor, root = shippedBasesDir()): Promise<ShippedBaseLookup> {
  // resources/bases/<env> and its variants resources/bases/<env>-<variant> (e.g. frozenlake-compact, the compact format's
  // base): the first whose descriptor matches; else what the plain <env> folder (or the first variant) says
  const variants = existsSync(root) ? readdirSync(root).filter((n) => n.startsWith(`${want.env.id}-`)).sort() : [];
  let first: ShippedBaseLookup | null = null;
  for (const dir of [join(root, want.env.id), ...variants.map((n) => join(root, n))]) {
    const found = await findShippedBaseIn(want, dir);
    if (found.kind === 'match') return found;
    if (!first || first.kind === 'none') first = found;
  }
  return first!;
}

async function findShippedBaseIn(want: BaseDescriptor, dir: string): Promise<ShippedBaseLookup> {
  if (!existsSync(join(dir, 'manifest.json'))) return { kind: 'none', dir };
  const hint = `restore it (git checkout -- ${dir}), rebuild it (spa-workbench base build --env ${want.env.id}), `
    + 'or train a base for this run with --set stages.bootstrap.shipped=false';
  let manifest: CheckpointManifest | null;
  try {
    manifest = await readManifest(dir);
  } catch (err) {
    throw new ShippedBaseError(`the shipped base ${dir} is damaged: ${(err as Error).message}; ${hint}`);
  }
  const record = (manifest?.extra as { shippedBase?: ShippedBaseRecord } | undefined)?.shippedBase;
  if (!manifest || !record || record.format !== SHIPPED_BASE_FORMAT || !record.match) {
    const what = `${join(dir, 'manifest.json')} has no extra.shippedBase record of format ${SHIPPED_BASE_FORMAT}`;
    throw new ShippedBaseError(`the shipped base ${dir} is damaged: ${what}; ${hint}`);
  }
  const differs = descriptorDifferences(want, record.match);
  if (differs.length > 0) return { kind: 'mismatch', dir, differs };
  const problems = await verifyCheckpoint(dir);
  if (problems.length === 0 && contentHash(manifest) !== record.contentHash) {
    problems.push(`content hash ${contentHash(manifest).slice(0, 12)}… differs from the recorded ${String(record.contentHash).slice(0, 12)}…`);
  }
  if (problems.length > 0) throw new ShippedBaseError(`the shipped base ${dir} is damaged and was not used: ${problems.join('; ')}; ${hint}`);
  return { kind: 'match', dir, record };
}

export interface ShipOptions {
  /** The trained bootstrap checkpoint (F32, with optimizer state) to ship. */
  checkpoint: string;
  /** Destination folder (resources/bases/<env>). */
  out: string;
  config: RunConfig;
  templates: PromptTemplate[];
  command: string;
  gate: Record<string, unknown> | null;
  trainSeconds: number | null;
  sourceRun: string | null;
}

/** Writes a shipped base: the checkpoint's weights as F16 (no optimizer state) and the shipped-base record. */
export async function shipBase(o: ShipOptions): Promise<ShippedBaseRecord> {
  const section = o.config.stages.bootstrap;
  const match = baseDescriptor(o.config, o.templates);
  const hasWorldModel = o.templates.some((t) => t.responseFormat === 'world-model');
  // the largest copy-drill share of any phase: the drill seeds run down from below the games' seeds
  const share = Math.max(section.copyDrills, ...(section.extend ?? []).map((p) => p.copyDrills ?? section.copyDrills));
  const drills = section.observation === 'true' && hasWorldModel ? Math.round(share * section.games) : 0;
  const start = o.config.seeds.selfplayStart;
  const loaded = await loadCheckpoint(o.checkpoint, { optimizer: false });
  let record: ShippedBaseRecord;
  try {
    const partial = {
      format: SHIPPED_BASE_FORMAT as typeof SHIPPED_BASE_FORMAT, version: 1 as const, env: o.config.env.id, command: o.command,
      match, matchKey: descriptorKey(match), config: o.config,
      dataSeeds: {
        games: [start - section.games, start - 1] as [number, number],
        drills: [start - section.games - drills, start - section.games - 1] as [number, number],
        gate: [2_900_000, 2_900_000 + section.gateTurns - 1] as [number, number],
      },
      gate: o.gate, trainSeconds: o.trainSeconds, sourceRun: o.sourceRun, contentHash: '',
    };
    const manifest = await saveCheckpoint(o.out, {
      model: loaded.model, tokenizer: loaded.tokenizer, dtype: 'F16',
      manifest: {
        step: section.steps + (section.extend ?? []).reduce((n, p) => n + p.steps, 0), stage: 'bootstrap', parent: null, extra: { shippedBase: partial },
      },
    });
    record = { ...partial, contentHash: contentHash(manifest) };
    // manifest.json is not among its own hashed files: the content hash goes in after the files are final
    const path = join(o.out, 'manifest.json');
    const written = JSON.parse(readFileSync(path, 'utf8')) as CheckpointManifest;
    writeFileSync(path, `${JSON.stringify({ ...written, extra: { ...written.extra, shippedBase: record } }, null, 2)}\n`);
  } finally {
    loaded.model.dispose();
  }
  return record;
}
