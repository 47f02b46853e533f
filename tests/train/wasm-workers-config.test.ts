// How many data-parallel worker threads a wasm run gets: SPA_WASM_WORKERS over the run config's
// `workers` over auto (one per further core, at most 3), with clear errors for bad values.
import { afterEach, describe, expect, it } from 'vitest';
import { availableParallelism } from 'node:os';
import { resolveWorkers } from '../../core/train/runtime.js';
import { autoWasmWorkers } from '../../core/train/compute-probe.js';
import { RunConfigSchema } from '../../core/api/run-config.js';

const saved = process.env.SPA_WASM_WORKERS;
afterEach(() => { if (saved === undefined) delete process.env.SPA_WASM_WORKERS; else process.env.SPA_WASM_WORKERS = saved; });

describe('wasm data-parallel workers', () => {
  it('auto is one per further core, at most 3', () => {
    delete process.env.SPA_WASM_WORKERS;
    expect(autoWasmWorkers()).toBe(Math.max(0, Math.min(3, availableParallelism() - 1)));
    expect(resolveWorkers(undefined)).toBe(autoWasmWorkers());
    expect(resolveWorkers('auto')).toBe(autoWasmWorkers());
    expect(resolveWorkers(0)).toBe(0);
    expect(resolveWorkers(5)).toBe(5);
  });

  it('SPA_WASM_WORKERS wins over the config, and a bad value is an error naming the variable', () => {
    process.env.SPA_WASM_WORKERS = '2';
    expect(resolveWorkers(0)).toBe(2);
    expect(resolveWorkers(0, { ignoreEnv: true })).toBe(0);
    process.env.SPA_WASM_WORKERS = 'auto';
    expect(resolveWorkers(7)).toBe(autoWasmWorkers());
    for (const bad of ['-1', 'two', '1.5', '99']) {
      process.env.SPA_WASM_WORKERS = bad;
      expect(() => resolveWorkers(undefined)).toThrow(/SPA_WASM_WORKERS: expected "auto" or a whole number 0-31/);
    }
  });

  it('the run config accepts auto or 0-31 and leaves the field out by default', () => {
    expect(RunConfigSchema.parse({}).workers).toBeUndefined();
    expect(RunConfigSchema.parse({ workers: 'auto' }).workers).toBe('auto');
    expect(RunConfigSchema.parse({ workers: 1 }).workers).toBe(1);
    expect(RunConfigSchema.safeParse({ workers: -1 }).success).toBe(false);
    expect(RunConfigSchema.safeParse({ workers: 'many' }).success).toBe(false);
  });
});
