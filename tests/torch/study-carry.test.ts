// docs/results/study-v4/carry.py: a study cell carried through git across machine replacements (study v4's amendment
// of 2026-12-01). Checkpoints written by the torch worker's own writer; tests/torch/study_carry_check.py does the work.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { probeTorch } from '../../core/model/torch/worker-client.js';

describe('study cell carry (pack / unpack)', () => {
  it('leaves out only base copies it rebuilds byte for byte, restores the project exactly, and refuses what it cannot check', () => {
    const probe = probeTorch();
    if (!probe.ok) throw new Error(`this test needs a Python with torch: ${probe.reason}`);
    const run = spawnSync(probe.python, [fileURLToPath(new URL('./study_carry_check.py', import.meta.url))], { encoding: 'utf8', timeout: 120_000 });
    expect(run.status, run.stderr).toBe(0);
    const r = JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    // the F32 resume point, the BF16 final checkpoint and a BF16-held base written F32 are rebuilt from the base
    expect(r.stubbed).toEqual([
      'runs/r1/checkpoints/rl-latest/model.safetensors', 'runs/r1/checkpoints/sft-epoch-1/model.safetensors',
      'runs/r1/checkpoints/sft-epoch-2/model.safetensors',
    ]);
    expect(r.vias).toEqual({
      'runs/r1/checkpoints/rl-latest/model.safetensors': 'bf16', 'runs/r1/checkpoints/sft-epoch-1/model.safetensors': 'f32',
      'runs/r1/checkpoints/sft-epoch-2/model.safetensors': 'f32',
    });
    // a trained value head and a full fine-tuning checkpoint are not the base: carried whole
    expect(r.keptWhole).toEqual(['runs/r1/checkpoints/full/model.safetensors', 'runs/r1/checkpoints/rl-critic/model.safetensors']);
    expect(r.roundTripSame).toBe(true);
    expect(r.files).toBe(10);
    expect(r.cliVerifyOkRc).toBe(0);
    for (const k of ['refuseExists', 'refuseBase', 'refuseChanged', 'refuseAlive', 'refuseSize', 'cliVerifyRc']) expect(r[k], k).toBe(2);
    expect(r.leftBehind).toEqual([]);
    expect(String(r.cliVerifyErr)).toMatch(/events\.jsonl: missing or changed/);
  });
});
