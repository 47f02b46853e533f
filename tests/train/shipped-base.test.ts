// The shipped base (core/train/shipped-base.ts): a bootstrap run is shipped as F16 with a manifest
// (command, config, data seeds, gate, content hash); a later run whose env, templates, model and
// bootstrap settings match uses it instead of training (any arm, any run seed); a run that differs
// (model, templates) trains its own; a damaged shipped base is refused with a clear error.
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runPreset, tempProject } from './helpers.js';
import { RunConfigSchema } from '../../core/api/run-config.js';
import { mergeConfig, presetConfig } from '../../core/train/presets.js';
import { bootstrapTemplates } from '../../core/train/bootstrap.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import { baseDescriptor, findShippedBase, shipBase, type ShippedBaseRecord } from '../../core/train/shipped-base.js';
import { readManifest } from '../../core/model/checkpoint.js';

const ONLY_BOOTSTRAP = { env: { id: 'frozenlake' }, stages: { plan: { order: ['bootstrap'] }, bootstrap: { steps: 2, cache: false, gateTurns: 2 } } };

function configOf(preset: string, extra: Record<string, unknown> = {}) {
  return RunConfigSchema.parse(mergeConfig(presetConfig(preset, 'smoke', ONLY_BOOTSTRAP) as Record<string, unknown>, ONLY_BOOTSTRAP, extra));
}
function descriptorOf(preset: string, extra: Record<string, unknown> = {}) {
  const config = configOf(preset, extra);
  return baseDescriptor(config, bootstrapTemplates(config).templates.map((t) => (typeof t === 'string' ? builtinTemplate(t) : t)));
}

const saved = process.env.SPA_WORKBENCH_BASES_DIR;
afterEach(() => { if (saved === undefined) delete process.env.SPA_WORKBENCH_BASES_DIR; else process.env.SPA_WORKBENCH_BASES_DIR = saved; });

describe('shipped base', () => {
  it('is written as F16 with its record, used by a matching run of another arm and seed, not by a differing one, refused when damaged', async () => {
    const project = tempProject();
    const bases = join(project, 'bases');
    // 1. train a base (the shipped base is switched off for it) and ship it
    const trained = await runPreset(project, 'vanilla-rl', 'train', { ...ONLY_BOOTSTRAP, stages: { ...ONLY_BOOTSTRAP.stages, bootstrap: { ...ONLY_BOOTSTRAP.stages.bootstrap, shipped: false } } });
    expect(trained.outcome.status).toBe('completed');
    const { templates } = bootstrapTemplates(trained.config, trained.runDir);
    const record = await shipBase({
      checkpoint: join(trained.runDir, 'checkpoints', 'bootstrap'), out: join(bases, 'frozenlake'), config: trained.config,
      templates: templates.map((t) => (typeof t === 'string' ? builtinTemplate(t) : t)), command: 'spa-workbench base build --env frozenlake --size smoke',
      gate: JSON.parse(readFileSync(join(trained.runDir, 'bootstrap', 'gate.json'), 'utf8')) as Record<string, unknown>, trainSeconds: 1, sourceRun: 'train',
    });
    const manifest = await readManifest(join(bases, 'frozenlake'));
    expect(manifest!.weights.dtype).toBe('F16');
    expect(existsSync(join(bases, 'frozenlake', 'optimizer.safetensors'))).toBe(false);
    const stored = (manifest!.extra as { shippedBase: ShippedBaseRecord }).shippedBase;
    expect(stored.contentHash).toBe(record.contentHash);
    expect(stored.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.command).toContain('base build --env frozenlake');
    expect(stored.dataSeeds.games).toEqual([1_000_000 - 2, 999_999]); // smoke: 2 games below the self-play seeds
    expect(stored.gate).not.toBeNull();

    // 2. a matching run of another arm (spa: its own template is tiny-spa) and another seed uses it: no training step
    process.env.SPA_WORKBENCH_BASES_DIR = bases;
    const used = await runPreset(project, 'spa', 'uses', { ...ONLY_BOOTSTRAP, seeds: { base: 1 } });
    expect(used.outcome.status).toBe('completed');
    expect(used.events.some((e) => e.type === 'log' && /bootstrap: using the shipped base .*frozenlake .*bootstrap gate (PASSED|FAILED)/.test(e.message))).toBe(true);
    // a shipped base whose gate failed is used with a warning, not silently
    const usedLine = used.events.find((e) => e.type === 'log' && /bootstrap: using the shipped base/.test(e.message));
    expect(usedLine && usedLine.type === 'log' && usedLine.level).toBe((stored.gate as { passed: boolean }).passed ? 'info' : 'warn');
    expect(used.events.some((e) => e.type === 'metric' && e.point.stage === 'bootstrap' && 'losses/bootstrap' in e.point.values)).toBe(false);
    expect(existsSync(join(used.runDir, 'checkpoints', 'bootstrap', 'model.safetensors'))).toBe(true);
    expect(existsSync(join(used.runDir, 'bootstrap', 'gate.json'))).toBe(true);

    // 3. a different model or template set does not match (and says what differs); a differing run trains its own base
    expect((await findShippedBase(descriptorOf('spa'), bases)).kind).toBe('match');
    // memory settings (how steps are computed) and LoRA do not change the base: still a match
    const otherMemory = descriptorOf('spa', { model: { memory: { tokensPerMicroBatch: 2048, optimizerDtype: 'f32' }, lora: { rank: 4, alpha: 8, targetModules: ['q_proj'] } } });
    expect((await findShippedBase(otherMemory, bases)).kind).toBe('match');
    const otherModel = await findShippedBase(descriptorOf('spa', { model: { overrides: { hidden_size: 24 } } }), bases);
    expect(otherModel.kind).toBe('mismatch');
    expect(otherModel.kind === 'mismatch' && otherModel.differs.join(' ')).toMatch(/model: overrides\.hidden_size 24 vs shipped 16/);
    const otherTemplates = await findShippedBase(descriptorOf('spa', { stages: { bootstrap: { templates: ['tiny-spa'] } } }), bases);
    expect(otherTemplates.kind).toBe('mismatch');
    expect(otherTemplates.kind === 'mismatch' && otherTemplates.differs.join(' ')).toMatch(/templates/);
    const plainSpa = await findShippedBase(descriptorOf('state-estimation-rl-plain'), bases);
    expect(plainSpa.kind).toBe('mismatch'); // tiny-spa in the plain format is another base
    expect((await findShippedBase(descriptorOf('spa', { env: { options: { isSlippery: false } } }), bases)).kind).toBe('mismatch');
    const differs = await runPreset(project, 'spa', 'differs', { ...ONLY_BOOTSTRAP, model: { overrides: { hidden_size: 24, num_attention_heads: 2, num_key_value_heads: 2 } } });
    expect(differs.outcome.status).toBe('completed');
    expect(differs.events.some((e) => e.type === 'log' && /the shipped base .* does not fit this run \(model: /.test(e.message))).toBe(true);
    expect(differs.events.some((e) => e.type === 'metric' && e.point.stage === 'bootstrap' && 'losses/bootstrap' in e.point.values)).toBe(true);

    // 4. a damaged shipped base is refused with a clear error, never used
    const weights = join(bases, 'frozenlake', 'model.safetensors');
    const bytes = readFileSync(weights);
    bytes[bytes.length - 1] ^= 0xff;
    writeFileSync(weights, bytes);
    await expect(findShippedBase(descriptorOf('spa'), bases)).rejects.toThrow(/shipped base .*frozenlake is damaged and was not used: .*model\.safetensors: sha-256 .* does not match/);
    const refused = await runPreset(project, 'spa', 'refused', ONLY_BOOTSTRAP);
    expect(refused.outcome.status).toBe('failed');
    expect(JSON.stringify(refused.events)).toMatch(/shipped base .* is damaged and was not used.*stages\.bootstrap\.shipped=false/);
  }, 240_000);
});
