// Issue 36 (one run spec): every field of the run config is described in the schema; the sizes are listed once; the memory
// model and the run table read the resolved spec; the engine's runner reports what ran a run (provenance).
import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import {
  MEMORY_DEFAULTS, PRESET_SIZES, RUN_SIZES, RunConfigSchema, SizeSchema, StageSectionSchemas,
} from '../../core/api/run-config.js';
import type { RunEvent } from '../../core/api/records.js';
import { DEFAULT_MEMORY } from '../../core/model/memory.js';
import { resolveRunConfig } from '../../core/engine/config.js';
import { configParams } from '../../core/engine/config-params.js';
import { planFromConfig } from '../../core/engine/memory-model.js';
import { listPresets } from '../../core/engine/presets.js';
import { executeRun } from '../../core/engine/runner.js';
import { SIZE_SETTINGS } from '../../core/train/presets.js';
import { recordCompute } from '../../core/train/compute-record.js';

/** Dotted paths of the object fields under a zod schema that have no description (unwrapping defaults, optionals, nullables). */
function undescribed(schema: z.ZodType, prefix: string): string[] {
  const out: string[] = [];
  const shape = (schema as unknown as { shape?: Record<string, z.ZodType> }).shape;
  if (!shape) return out;
  for (const [key, field] of Object.entries(shape)) {
    const p = prefix ? `${prefix}.${key}` : key;
    if (!field.description) out.push(p);
    let inner: z.ZodType = field;
    for (let i = 0; i < 5; i++) {
      const def = (inner as unknown as { def: { innerType?: z.ZodType } }).def;
      if (!def?.innerType) break;
      inner = def.innerType;
    }
    out.push(...undescribed(inner, p));
  }
  return out;
}

describe('the run spec', () => {
  it('describes every field of every stage section (units, source) in the schema', () => {
    for (const [name, schema] of Object.entries(StageSectionSchemas)) expect(undescribed(schema, `stages.${name}`)).toEqual([]);
    const all = Object.values(StageSectionSchemas).reduce((n, s) => n + Object.keys(s.shape).length, 0);
    expect(all).toBeGreaterThan(90);
    // every description names where its default comes from
    for (const [name, schema] of Object.entries(StageSectionSchemas)) {
      for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
        expect(field.description, `stages.${name}.${key}`).toMatch(/source: \S/);
      }
    }
  });

  it('lists the sizes once: the API enum, the preset sizes and their settings come from RUN_SIZES', () => {
    expect(SizeSchema.options).toEqual(RUN_SIZES.map((s) => s.id));
    expect(PRESET_SIZES).toEqual(RUN_SIZES.filter((s) => s.preset).map((s) => s.id));
    expect(Object.keys(SIZE_SETTINGS).sort()).toEqual([...PRESET_SIZES].sort());
    for (const p of listPresets()) for (const s of p.sizes) expect(SizeSchema.options, `${p.id} ${s}`).toContain(s);
  });

  it('keeps the runtimes\' memory defaults equal to the ones the schema documents (MEMORY_DEFAULTS)', () => {
    expect(DEFAULT_MEMORY).toEqual(MEMORY_DEFAULTS);
  });

  it('the memory model sees the rollout the run uses (review 4b: a config without sections was 2,048 / 400 / 256)', () => {
    const config = resolveRunConfig({ config: { method: 'spa' } }).config!;
    const plan = planFromConfig(config);
    expect(config.stages.rollout).toMatchObject({ maxContextTokens: 1024, maxNewTokens: 160, batchSize: 32 });
    expect(plan).toMatchObject({ newTokens: 160, promptTokens: 1024 - 160, rolloutRows: 32, tokenBudget: MEMORY_DEFAULTS.tokensPerMicroBatch });
  });

  it('run table params stay the differences from the defaults, though the stored spec is complete', () => {
    const plain = resolveRunConfig({ preset: 'spa', size: 'smoke' }).config!;
    expect(plain.stages.rl.lr).toBe(1e-4);
    expect(configParams(plain)).not.toHaveProperty(['stages.rl.lr']);
    expect(configParams(plain)['stages.rl.steps']).toBe(1);
    const set = resolveRunConfig({ preset: 'spa', size: 'smoke', set: { 'stages.rl.lr': 3e-4 } }).config!;
    expect(configParams(set)['stages.rl.lr']).toBe(3e-4);
  });

  it('the runner resolves the config once for its stages and reports backend, device and code version once a stage chose them', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-runspec-'));
    const events: RunEvent[] = [];
    const sparse = { method: 'spa', stages: { rl: { steps: 3 } } } as unknown as z.infer<typeof RunConfigSchema>;   // as an old run.json
    let seen: unknown = null;
    const outcome = await executeRun({
      runId: 'r1', runDir: dir, config: sparse, stages: ['s'], attempt: 1, signal: new AbortController().signal, send: (e) => events.push(e),
      loadStage: async () => ({
        name: 's', title: 's',
        run: async (ctx) => {
          seen = { lr: ctx.config.stages.rl.lr, steps: ctx.config.stages.rl.steps };
          recordCompute({ backend: 'wasm', device: 'CPU (2 threads)' });   // what chooseCompute records
          ctx.log('info', 'Compute backend: TF.js wasm');
          return {};
        },
      }),
    });
    expect(outcome.status).toBe('completed');
    expect(seen).toEqual({ lr: 1e-4, steps: 3 });
    const provenance = events.filter((e) => e.type === 'provenance');
    expect(provenance).toHaveLength(1);
    expect(provenance[0]).toMatchObject({ provenance: { backend: 'wasm', device: 'CPU (2 threads)' } });
    expect((provenance[0] as Extract<RunEvent, { type: 'provenance' }>).provenance.codeVersion).toMatch(/^(git:[0-9a-f]{40}(-dirty)?|package:\S+)$/);
    expect(fs.readFileSync(path.join(dir, 'events.jsonl'), 'utf8')).toContain('"type":"provenance"');
  });

  it('a run config the schema refuses fails the run naming the key', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-runspec-'));
    const outcome = await executeRun({
      runId: 'r1', runDir: dir, config: { stages: { rl: { stepz: 3 } } } as never, stages: ['s'], attempt: 1, signal: new AbortController().signal,
      send: () => undefined, loadStage: async () => { throw new Error('not reached'); },
    });
    expect(outcome.status).toBe('failed');
    expect(outcome.reason).toMatch(/stages\.rl: Unrecognized key: "stepz"/);
  });
});

describe("Compare's config diff shows the values the runs used", () => {
  it('a key one run left at its default is compared by value, not shown as missing', async () => {
    const { compareFlat, flatten } = await import('../../renderer/src/components/diff.js');
    const a = resolveRunConfig({ preset: 'spa', size: 'smoke' }).config!;                                   // rl.lr not set: the default
    const b = resolveRunConfig({ preset: 'spa', size: 'smoke', set: { 'stages.rl.lr': 3e-4 } }).config!;
    const rows = compareFlat([flatten(a), flatten(b)]);
    expect(rows.find((r) => r.path === 'stages.rl.lr')).toEqual({ path: 'stages.rl.lr', values: ['0.0001', '0.0003'], differs: true });
    expect(rows.find((r) => r.path === 'stages.rl.clipHigh')).toMatchObject({ values: ['0.28', '0.28'], differs: false });
  });
});
