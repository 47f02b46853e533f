// The PyTorch worker's Qwen2 against Hugging Face transformers' own Qwen2ForCausalLM (PyPI,
// test-only) on the committed fixtures: logits within 1e-4 in float32. The interpreter is
// SPA_TEST_HF_PYTHON, else /usr/bin/python3 (.ci/run installs transformers there). Skipped, with
// the reason printed, only when that Python cannot import transformers.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const python = process.env.SPA_TEST_HF_PYTHON ?? '/usr/bin/python3';
const script = fileURLToPath(new URL('./hf_parity.py', import.meta.url));
const run = existsSync(python) || !python.startsWith('/') ? spawnSync(python, [script], { encoding: 'utf8', timeout: 240_000 }) : null;
const out = run && run.status === 0 ? JSON.parse(run.stdout.trim().split('\n').pop()!) as { skip?: string; results?: Record<string, number> } : null;
if (out?.skip) console.warn(`\n*** SKIPPED worker-vs-transformers parity: ${out.skip}. Install it: ${python} -m pip install --break-system-packages 'transformers==4.40.2' ***\n`);

describe.skipIf(Boolean(out?.skip))('torch worker Qwen2 vs transformers Qwen2ForCausalLM', () => {
  it('logits agree within 1e-4 on the f32 GQA, bf16 tied and f16 sharded fixtures', () => {
    expect(run, `${python} not found`).not.toBeNull();
    expect(run!.status, run!.stderr).toBe(0);
    const results = out!.results!;
    expect(Object.keys(results).sort()).toEqual(['qwen2-f32', 'qwen2-sharded-f16', 'qwen2-tied-bf16']);
    for (const [name, diff] of Object.entries(results)) expect(diff, name).toBeLessThan(1e-4);
  });
});
