// Sizes for real models (issue 20): gpu-24g and gpu-80g are the paper size's recipe on a model folder with memory settings
// that fit the card (checked with the memory model when the run is resolved); quick and standard are tiny-model sizes and
// refuse a model folder, naming the sizes to use.
import { RunConfigSchema } from '../../core/api/run-config.js';
import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { resolveRunConfig } from '../../core/engine/config.js';
import { getPreset, GPU_SIZE_MEMORY, GPU_SIZES, listPresets } from '../../core/engine/presets.js';
import { presetConfig } from '../../core/train/presets.js';
import { SizeSchema } from '../../core/api/contract.js';

const QWEN = {
  architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', num_key_value_heads: 2, vocab_size: 151936, max_position_embeddings: 32768,
  rope_theta: 1000000, rms_norm_eps: 1e-6, tie_word_embeddings: true, torch_dtype: 'bfloat16', hidden_act: 'silu',
};
const QWEN_05B = { ...QWEN, hidden_size: 896, intermediate_size: 4864, num_hidden_layers: 24, num_attention_heads: 14 };
const QWEN_15B = { ...QWEN, hidden_size: 1536, intermediate_size: 8960, num_hidden_layers: 28, num_attention_heads: 12 };

/** A model folder with only its config.json (resolving a run reads the config; the weights are read when the run loads them). */
function folder(config: Record<string, unknown>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-gpu-size-'));
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  return dir;
}
const q05 = folder(QWEN_05B), q15 = folder(QWEN_15B);
const LORA = { rank: 16, alpha: 32, targetModules: ['q_proj', 'v_proj'] };

function resolve(size: string, set: Record<string, unknown>, preset = 'spa') {
  return resolveRunConfig({ preset, size: size as never, set });
}

describe('GPU sizes', () => {
  it('are sizes of the API, offered with every method preset that has the paper size (the New Run form and `presets` list them)', () => {
    expect(SizeSchema.options).toEqual(expect.arrayContaining(['gpu-24g', 'gpu-80g']));
    for (const p of listPresets()) {
      if (p.sizes.includes('paper')) expect(p.sizes).toEqual(expect.arrayContaining([...GPU_SIZES]));
      else for (const s of GPU_SIZES) expect(p.sizes).not.toContain(s);
    }
    expect(getPreset('spa-drills')!.sizes).not.toContain('gpu-24g');   // no paper recipe to scale
  });

  it("run the paper size's recipe and release templates on the model folder, with the size's memory settings", () => {
    const paper = RunConfigSchema.parse(presetConfig('spa', 'paper'));   // the resolved spec: every section with its defaults
    for (const size of GPU_SIZES) {
      const r = resolve(size, { 'model.path': q05 });
      expect(r.issues).toEqual([]);
      const c = r.config!;
      expect(c.size).toBe(size);
      expect(c.name).toMatch(new RegExp(`^spa \\w+ ${size}$`));
      expect(c.template.preset).toBe('spa');   // the release's template, not tiny-compact
      expect(c.model).toMatchObject({ source: 'hf-folder', path: q05, criticMode: 'separate', memory: GPU_SIZE_MEMORY[size] });
      expect(c.stages.selfplay).toEqual(paper.stages.selfplay);
      expect(c.stages.sft).toEqual(paper.stages.sft);
      expect(c.stages.rl).toEqual(paper.stages.rl);
      expect(c.stages.rollout).toEqual(paper.stages.rollout);
      expect(c.stages.eval).toEqual(paper.stages.eval);
    }
    expect(resolve('gpu-24g', { 'model.path': q05 }, 'vanilla-rl').config!.template.preset).toBe('vanilla');
  });

  it('gpu-24g holds 0.5B full fine-tuning and 1.5B with LoRA; 1.5B full fine-tuning is refused with its peak and the LoRA to set', () => {
    expect(resolve('gpu-24g', { 'model.path': q05 }).ok).toBe(true);
    expect(resolve('gpu-24g', { 'model.path': q15, 'model.lora': LORA }).ok).toBe(true);
    const full = resolve('gpu-24g', { 'model.path': q15 });
    expect(full.ok).toBe(false);
    expect(full.issues).toHaveLength(1);
    expect(full.issues[0]!.path).toBe('model.lora');
    expect(full.issues[0]!.message).toMatch(/1536 wide, 28 layers, vocab 151936\) fully fine-tuned needs about (\d+\.\d) GiB at its peak \(.+\) at size gpu-24g by the memory model, (\d+\.\d) GiB with the 1\.25x a GPU run measured above it, more than 95% of a 24 GiB card/);
    const [, estimate, withMargin] = /needs about (\d+\.\d) GiB.* (\d+\.\d) GiB with the/.exec(full.issues[0]!.message)!;
    expect(Number(withMargin)).toBeCloseTo(Number(estimate) * 1.25, 0);
    expect(full.issues[0]!.message).toMatch(/set model\.lora \(e\.g\. --set 'model\.lora=\{"rank":16.*\}': about \d+\.\d GiB\)/);
    expect(resolve('gpu-80g', { 'model.path': q15 }).ok).toBe(true);   // the paper's 1.5B, full fine-tuning, separate critic
  });

  it('need a model folder', () => {
    const r = resolve('gpu-80g', {});
    expect(r.ok).toBe(false);
    expect(r.issues).toEqual([{ path: 'model.path', message: expect.stringMatching(/size gpu-80g runs a local pretrained model: set model\.source to hf-folder/) }]);
  });
});

describe('quick and standard with a model folder', () => {
  it('are refused as tiny-model sizes, naming the sizes to use', () => {
    for (const size of ['quick', 'standard']) {
      const r = resolve(size, { 'model.source': 'hf-folder', 'model.path': q05 });
      expect(r.ok).toBe(false);
      const issue = r.issues.find((i) => i.path === 'size');
      expect(issue?.message).toMatch(new RegExp(`size "${size}" is a tiny-model size .* use size gpu-24g .* gpu-80g .* paper .* smoke`));
    }
  });
  it('smoke and paper still take a model folder; quick still takes the tiny model', () => {
    expect(resolve('smoke', { 'model.source': 'hf-folder', 'model.path': q05 }).ok).toBe(true);
    expect(resolve('paper', { 'model.source': 'hf-folder', 'model.path': q15 }).ok).toBe(true);
    expect(resolve('quick', {}).ok).toBe(true);
  });
});

describe('the CLI', () => {
  it('`presets` lists the GPU sizes and `run --size` accepts them', () => {
    const cli = (...args: string[]) => spawnSync(process.execPath, ['bin/spa-workbench.mjs', ...args], { encoding: 'utf8', timeout: 120_000 });
    const presets = cli('presets', '--json');
    expect(presets.status).toBe(0);
    const spa = (JSON.parse(presets.stdout) as Array<{ id: string; sizes: string[] }>).find((p) => p.id === 'spa')!;
    expect(spa.sizes).toEqual(expect.arrayContaining(['gpu-24g', 'gpu-80g']));
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-gpu-size-cli-'));
    const run = cli('run', 'spa', '--size', 'gpu-24g', '--project', project);   // accepted as a size; refused for the missing folder
    expect(run.status).not.toBe(0);
    expect(run.stderr).not.toMatch(/--size: expected/);
    expect(run.stderr).toMatch(/model\.path.*size gpu-24g runs a local pretrained model/);
  }, 240_000);
});
