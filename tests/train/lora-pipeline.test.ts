// model.lora through the pipeline (wasm, smoke size): the bootstrap trains the full base (no
// adapters), SFT trains adapters on the frozen base (its model.safetensors equals the base's), RL
// starts from SFT's adapters and keeps them, and the run log says LoRA with the trainable count.
// Without SFT (vanilla-rl, separate critic; rwml-rl) the first finetuning stage starts the adapters.
// A bad LoRA config is refused when the run config is resolved, naming the valid targets.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readSafetensors } from '../../core/model/safetensors.js';
import { resolveRunConfig } from '../../core/engine/config.js';
import { runPreset, tempProject } from './helpers.js';

const LORA = { rank: 2, alpha: 4, targetModules: ['q_proj', 'v_proj', 'down_proj'] };

async function tensors(dir: string, file: string): Promise<Map<string, Float32Array>> {
  return new Map([...(await readSafetensors(join(dir, file)))].map(([k, v]) => [k, v.data]));
}

function sameValues(a: Float32Array, b: Float32Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

describe('model.lora in a run', () => {
  it('spa-random-action on wasm: full bootstrap, then SFT and RL train adapters on the unchanged base; the log says LoRA', async () => {
    const project = tempProject('spa-lora-run-');
    const { outcome, runDir, events } = await runPreset(project, 'spa-random-action', 'lora', {
      // optimizerState 'all': the final RL checkpoint keeps its moments, which show RL continued SFT's adapters (docs/checkpoints.md)
      env: { id: 'frozenlake' }, model: { source: 'preset', preset: 'tiny', lora: LORA, memory: { optimizerState: 'all' } },
    });
    expect(outcome).toEqual({ status: 'completed' });
    const ckpt = (name: string) => join(runDir, 'checkpoints', name);
    const names = readdirSync(join(runDir, 'checkpoints'));
    const sft = names.filter((n) => /^sft-epoch-\d+$/.test(n)).sort().pop()!;
    const rl = names.filter((n) => /^rl-\d+$/.test(n)).sort().pop()!;
    expect(sft, names.join(', ')).toBeDefined();
    expect(rl, names.join(', ')).toBeDefined();

    // the bootstrap: the full base, no adapters
    expect(existsSync(join(ckpt('bootstrap'), 'adapter_config.json'))).toBe(false);
    const base = await tensors(ckpt('bootstrap'), 'model.safetensors');

    for (const name of [sft, rl]) {
      const dir = ckpt(name);
      const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { lora: unknown };
      expect(manifest.lora, name).toEqual(LORA);
      expect(JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8')), name).toMatchObject({ r: 2, lora_alpha: 4, target_modules: LORA.targetModules });
      const adapters = await tensors(dir, 'adapter_model.safetensors');
      expect([...adapters.keys()].every((k) => /^base_model\.model\.model\.layers\.\d+\.(self_attn\.[qv]_proj|mlp\.down_proj)\.lora_[AB]\.weight$/.test(k))).toBe(true);
      // the adapters trained: some B moved off its zero start
      expect([...adapters].some(([k, v]) => k.endsWith('lora_B.weight') && v.some((x) => x !== 0)), name).toBe(true);
      // the base weights are the bootstrap's, bit for bit (RL's value head is new: the only extra weights)
      const weights = await tensors(dir, 'model.safetensors');
      for (const [k, v] of base) expect(sameValues(weights.get(k)!, v), `${name}: ${k}`).toBe(true);
      expect([...weights.keys()].filter((k) => !base.has(k)).every((k) => k.startsWith('value_head.')), name).toBe(true);
    }
    // RL continued SFT's adapters (it did not start fresh ones): the optimizer state is by adapter name
    const moments = await tensors(ckpt(rl), 'optimizer.safetensors');
    expect([...moments.keys()].some((k) => k.includes('.lora_A.weight.exp_avg'))).toBe(true);
    expect([...moments.keys()].some((k) => k.startsWith('model.'))).toBe(false);

    const logs = events.filter((e) => e.type === 'log').map((e) => (e as { message: string }).message);
    expect(logs.find((l) => l.startsWith('sft: LoRA'))).toMatch(
      /^sft: LoRA rank 2, alpha 4 \(scale 2\), targets q_proj,v_proj,down_proj; trainable parameters [\d,]+ of [\d,]+ base \([\d.]+%\) \[new adapters, base weights frozen\]$/,
    );
    expect(logs.find((l) => l.startsWith('rl policy: LoRA'))).toMatch(/adapters from the checkpoint/);
    expect(logs.some((l) => l.startsWith('bootstrap') && /LoRA/.test(l))).toBe(false);
  }, 300_000);   // hang guards: both runs passed 120 s at load 17-40

  it('vanilla-rl with a separate critic and rwml-rl: RL (and RWML) start new adapters on the bootstrap base, the critic gets its own', async () => {
    const project = tempProject('spa-lora-run-');
    for (const [preset, model, trained] of [
      ['vanilla-rl', { source: 'preset', preset: 'tiny', lora: LORA, criticMode: 'separate' }, ['rl policy', 'rl critic']],
      ['rwml-rl', { source: 'preset', preset: 'tiny', lora: LORA }, ['rwml', 'rl policy']],
    ] as const) {
      const { outcome, runDir, events } = await runPreset(project, preset, preset, { env: { id: 'frozenlake' }, model: { ...model } });
      expect(outcome, preset).toEqual({ status: 'completed' });
      const logs = events.filter((e) => e.type === 'log').map((e) => (e as { message: string }).message);
      expect(logs.find((l) => l.startsWith(`${trained[0]}: LoRA`)), preset).toMatch(/\[new adapters, base weights frozen\]$/);
      expect(logs.find((l) => l.startsWith(`${trained[1]}: LoRA`)), preset).toMatch(preset === 'rwml-rl' ? /adapters from the checkpoint/ : /new adapters/);
      const names = readdirSync(join(runDir, 'checkpoints'));
      const dirs = [names.filter((n) => /^rl-\d+$/.test(n)).sort().pop()!, ...(preset === 'vanilla-rl' ? ['rl-critic-latest'] : [])];
      const base = await tensors(join(runDir, 'checkpoints', 'bootstrap'), 'model.safetensors');
      for (const name of dirs) {
        const dir = join(runDir, 'checkpoints', name);
        expect(existsSync(join(dir, 'adapter_model.safetensors')), `${preset} ${name}`).toBe(true);
        const weights = await tensors(dir, 'model.safetensors');
        for (const [k, v] of base) expect(sameValues(weights.get(k)!, v), `${preset} ${name}: ${k}`).toBe(true);
      }
    }
  }, 300_000);

  it('a bad LoRA config is an issue of the run config that names the valid targets', () => {
    const r = resolveRunConfig({ preset: 'spa', size: 'smoke', set: { 'model.lora': { rank: 2, alpha: 4, targetModules: ['q_proj', 'qkv'] } } });
    expect(r.ok).toBe(false);
    expect(r.issues).toContainEqual({
      path: 'model.lora',
      message: 'model.lora.targetModules: expected a non-empty subset of q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj (each once); unknown "qkv"',
    });
    const zero = resolveRunConfig({ preset: 'spa', size: 'smoke', set: { 'model.lora': { rank: 0, alpha: 4, targetModules: ['q_proj'] } } });
    expect(zero.ok).toBe(false);
    expect(JSON.stringify(zero.issues)).toMatch(/model\.lora\.rank/);
    expect(resolveRunConfig({ preset: 'spa', size: 'smoke', set: { 'model.lora': LORA } }).ok).toBe(true);
  });
});
