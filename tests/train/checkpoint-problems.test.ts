// D11: a damaged cached checkpoint (the bootstrap cache) is detected before reuse: the files are
// checked against the hashes in manifest.json.
import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-cpu';
import { RunConfigSchema } from '../../core/api/run-config.js';
import { createRuntime, saveRuntime } from '../../core/train/runtime.js';
import { checkpointProblems } from '../../core/train/stage-utils.js';
import { tempDir } from '../api/helpers.js';

await tf.setBackend('cpu');

describe('checkpointProblems (D11)', () => {
  it('an intact checkpoint has none; a flipped byte, a truncated file or a missing config are found', async () => {
    const config = RunConfigSchema.parse({ model: { source: 'preset', preset: 'tiny', overrides: { num_hidden_layers: 1, hidden_size: 32, intermediate_size: 64, num_attention_heads: 2, num_key_value_heads: 2 } } });
    const runtime = await createRuntime(config, { seed: 1, valueHead: false });
    const dir = path.join(tempDir(), 'cache', 'bootstrap', 'k');
    await saveRuntime(runtime, dir, { stage: 'bootstrap', step: 1, parent: null });
    runtime.dispose();
    expect(await checkpointProblems(dir)).toEqual([]);
    const weights = path.join(dir, 'model.safetensors');
    const bytes = fs.readFileSync(weights);
    bytes[bytes.length - 1] ^= 0xff;
    fs.writeFileSync(weights, bytes);
    expect((await checkpointProblems(dir)).join('\n')).toMatch(/model\.safetensors: sha-256 .* does not match/);
    fs.writeFileSync(weights, bytes.subarray(0, 100));
    expect((await checkpointProblems(dir)).length).toBeGreaterThan(0);
    fs.rmSync(path.join(dir, 'config.json'));
    expect((await checkpointProblems(dir)).join('\n')).toMatch(/config\.json: missing/);
  });
});
