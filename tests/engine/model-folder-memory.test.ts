// New Run's memory estimate for a model folder (issue 37 item 4): the memory model's peak per stage
// for the folder's config.json and the run's settings, the cards and the smallest GPU size that fit;
// null for a preset model, a missing or unreadable config.json. And system.importModel's checks
// before it starts a child: a missing file, a file that is not .gguf, an existing folder.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunConfigSchema } from '../../core/api/run-config.js';
import { modelFolderMemory } from '../../core/engine/model-folder-memory.js';
import { defaultImportFolder, ModelImportRunner } from '../../core/host/model-import-child.js';

const QWEN05 = { model_type: 'qwen2', hidden_size: 896, intermediate_size: 4864, num_hidden_layers: 24, num_attention_heads: 14, num_key_value_heads: 2, vocab_size: 151936, tie_word_embeddings: true };

function folderWith(config: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'spa-mem-'));
  writeFileSync(join(dir, 'config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  return dir;
}

const configFor = (path: string | null, extra: Record<string, unknown> = {}) =>
  RunConfigSchema.parse({ method: 'spa', env: { id: 'frozenlake' }, model: path ? { source: 'hf-folder', path, ...extra } : { source: 'preset' } });

describe('modelFolderMemory', () => {
  it('gives the peak per stage, the cards and the smallest GPU size that fits', () => {
    const m = modelFolderMemory(configFor(folderWith(QWEN05)))!;
    expect(m.model).toMatch(/^896 wide, 24 layers, vocab 151936 \(\d+\.\dM parameters\)$/);
    expect(m.stages.map((s) => s.title)).toContain('SFT step');
    expect(m.peak.gib).toBe(Math.max(...m.stages.map((s) => s.gib)));
    expect(m.peak.withMarginGib).toBeGreaterThan(m.peak.gib);
    expect(m.cards.map((c) => c.gib)).toEqual([24, 48, 80]);
    // the size named is the smallest whose card fits
    const fit = m.cards.find((c) => c.fits);
    expect(m.fitsSize).toBe(fit === undefined ? null : fit.gib <= 24 ? 'gpu-24g' : 'gpu-80g');
  });

  it('is null without a folder to read', () => {
    expect(modelFolderMemory(configFor(null))).toBeNull();
    expect(modelFolderMemory(configFor(join(tmpdir(), 'no-such-model-folder-xyz')))).toBeNull();
    expect(modelFolderMemory(configFor(folderWith('{not json')))).toBeNull();
    expect(modelFolderMemory(configFor(folderWith({ hidden_size: 64 })))).toBeNull();   // no shape: the folder check says what is missing
  });
});

describe('system.importModel checks', () => {
  const runner = new ModelImportRunner();
  it('refuses a missing file, a non-.gguf file and an existing folder before starting anything', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spa-imp-'));
    await expect(runner.run({ file: join(dir, 'none.gguf') })).rejects.toThrow(/does not exist; expected a \.gguf file/);
    writeFileSync(join(dir, 'model.bin'), 'x');
    await expect(runner.run({ file: join(dir, 'model.bin') })).rejects.toThrow(/is not a \.gguf file/);
    writeFileSync(join(dir, 'm.Q4.gguf'), 'x');
    mkdirSync(join(dir, 'm.Q4'));
    await expect(runner.run({ file: join(dir, 'm.Q4.gguf') })).rejects.toThrow(/m\.Q4 already exists/);
    expect(defaultImportFolder('/models/SmolLM2-135M.Q4_1.gguf')).toBe('/models/SmolLM2-135M.Q4_1');
  });
});
