// The default env is written once, in the run-config schema (DEFAULT_ENV_ID); the engine, the presets,
// a config without an env and `start --run`'s demo (START_RUN_ENV, read by the CLI and the desktop app)
// all get it from there (issue 36: `run spa --size quick` plays what `npm start` plays). No default-env
// literal elsewhere.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ENV_ID, EnvConfigSchema, RunConfigSchema, type Size } from '../../core/api/run-config.js';
import { resolveRunConfig } from '../../core/engine/config.js';
import '../../core/engine/presets.js';
import { presetConfig } from '../../core/train/presets.js';
import { START_RUN_ENV } from '../../core/host/startup-run.js';

describe('the default env comes from the schema', () => {
  it('schema, engine and presets agree', () => {
    expect(RunConfigSchema.parse({}).env.id).toBe(DEFAULT_ENV_ID);
    expect(EnvConfigSchema.parse({}).id).toBe(DEFAULT_ENV_ID);
    const r = resolveRunConfig({ config: {} });
    expect(r.issues).toEqual([]);
    expect(r.config!.env.id).toBe(DEFAULT_ENV_ID);
    expect(resolveRunConfig({ config: { env: { options: {} } } }).config!.env.id).toBe(DEFAULT_ENV_ID);
    expect(presetConfig('spa', 'quick').name).toBe(`spa ${DEFAULT_ENV_ID} quick`);
  });

  it('no other file writes a default env literal', () => {
    const literal = /(\?\?|=|,)\s*'(sokoban|frozenlake)'/;
    for (const file of ['core/engine/config.ts', 'core/train/presets.ts', 'core/interop/import-run.ts', 'core/cli/core-commands.ts', 'electron/main.ts',
      'core/host/startup-run.ts']) {
      const hits = readFileSync(file, 'utf8').split('\n').filter((l) => literal.test(l));
      expect({ file, hits }).toEqual({ file, hits: [] });
    }
    expect(readFileSync('core/cli/core-commands.ts', 'utf8')).toContain(', START_RUN_ENV)');
    expect(readFileSync('electron/main.ts', 'utf8')).toContain('env = START_RUN_ENV]');
    expect(START_RUN_ENV).toBe(DEFAULT_ENV_ID);
    expect(DEFAULT_ENV_ID).toBe('frozenlake');   // the default env has a shipped base (resources/bases/frozenlake)
    // `run spa --size quick` (the README's example) resolves to the env and base npm start uses
    expect(resolveRunConfig({ preset: 'spa', size: 'quick' }).config!.env).toEqual({ id: START_RUN_ENV, options: { randomStartGoal: true, successRate: 0.8 } });
    // ... and `start --run PRESET` asks for env.id START_RUN_ENV (core/cli/core-commands.ts), which changes nothing in it
    expect(resolveRunConfig({ preset: 'spa', size: 'quick' }).config).toEqual(resolveRunConfig({ preset: 'spa', size: 'quick', set: { 'env.id': START_RUN_ENV } }).config);
  });

  it('npm start runs spa-teacher at quick size on the default env (docs/results/mainjob-v3, teacher3)', () => {
    const start = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts.start!;
    const m = /\bstart --run (\S+) --size (\S+)$/.exec(start);
    expect(m?.slice(1)).toEqual(['spa-teacher', 'quick']);
    const [preset, size] = [m![1]!, m![2] as Size];
    const spec = resolveRunConfig({ preset, size, set: { 'env.id': START_RUN_ENV } });
    expect(spec.issues).toEqual([]);
    expect(spec.config).toEqual(resolveRunConfig({ preset, size }).config);
    expect(spec.config!.env).toEqual(resolveRunConfig({ preset: 'spa', size: 'quick' }).config!.env);
  });
});
