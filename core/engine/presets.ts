// The registry of run presets (id × size → a RunConfig input) that runs.presets, runs.create and
// studies read: the diagnostic presets defined here, then one entry per method preset of
// core/train/presets.ts (its MethodPreset rows), each offered at every preset size, and at the GPU
// sizes for a real pretrained model (gpu-24g, gpu-80g: the paper size's recipe with memory settings
// that fit the card, checked against core/engine/memory-model.ts when the run is resolved).
import { existsSync } from 'node:fs';
import { readRegularTextSync } from '../util/regular-file.js';
import { join } from 'node:path';
import { PRESET_SIZES, type Method, type RunConfig, type RunConfigInput, type Size } from '../api/run-config.js';
import { PRESET_DEFINITIONS, mergeConfig, presetConfig as pipelinePresetConfig } from '../train/presets.js';
import {
  CARD_USABLE, CUDA_PATH, ENGINE_MEASURED_MARGIN, fitsCard, gib, planFromConfig, runPeak, shapeFromHfConfig, stagePeaks, STAGE_TITLES,
} from './memory-model.js';

/** A registered preset: what the API lists, and how to build its config for one of its sizes. */
export interface PresetDefinition {
  id: string;
  title: string;
  description: string;
  method: Method;
  sizes: Size[];                       // first = default
  config(size: Size): RunConfigInput;  // the config for that size (validated by the caller)
}

const presets = new Map<string, PresetDefinition>();

export function registerPreset(p: PresetDefinition): void {
  if (p.sizes.length === 0) throw new Error(`registerPreset(${p.id}): needs at least one size`);
  presets.set(p.id, p);
}
export function listPresets(): PresetDefinition[] { return [...presets.values()]; }
export function getPreset(id: string): PresetDefinition | undefined { return presets.get(id); }

// ── diagnostic presets (engine tests, smoke checks of a host) ──
registerPreset({
  id: 'diagnostic',
  title: 'Diagnostic: wait',
  description: 'Ticks progress and logs metrics without training; checks that the engine, storage and UI plumbing work.',
  method: 'sft-only',
  sizes: ['smoke', 'quick'],
  config: (size) => ({
    name: 'diagnostic',
    method: 'sft-only',
    size,
    stages: {
      plan: { order: ['diag-wait', 'diag-episodes'] },
      'diag-wait': { steps: size === 'smoke' ? 5 : 50, delayMs: size === 'smoke' ? 10 : 100 },
      'diag-episodes': { count: size === 'smoke' ? 4 : 24 },
    },
  }),
});

// ── sizes for a real pretrained model on one GPU (issue 20) ──
// The paper size's recipe (the release's templates: spa / vanilla, its self-play, SFT, PPO and eval settings, a separate
// critic as the reference used) on a local model folder, with the memory settings (model.memory) that make one card hold
// it: a token budget per micro-batch with gradient accumulation (the recipe's batches stay), gradient checkpointing, the
// rollout generated a row chunk at a time, frozen weights in bf16, checkpoints without optimizer moments except the resume
// point. Peak memory per stage for Qwen2.5-0.5B / 1.5B: docs/compute.md (core/engine/memory-model.ts).
export const GPU_SIZES = ['gpu-24g', 'gpu-80g'] as const;
export type GpuSize = (typeof GPU_SIZES)[number];

/** The card each GPU size is planned for, GiB of device memory. */
export const GPU_SIZE_CARD_GIB: Record<GpuSize, number> = { 'gpu-24g': 24, 'gpu-80g': 80 };

/** model.memory of each GPU size. */
export const GPU_SIZE_MEMORY: Record<GpuSize, Record<string, unknown>> = {
  // 24 GB (RTX 3090 / 4090, A5000): Qwen2.5-0.5B full fine-tuning peaks at ~14 GiB by the memory model, ~17 with the measured
  // margin (the RL rollout); Qwen2.5-1.5B needs model.lora (~15 / ~19 GiB; full fine-tuning ~36 / ~44)
  'gpu-24g': {
    tokensPerMicroBatch: 4096, gradientCheckpointing: true, generationRows: 32, frozenDtype: 'bf16', checkpointDtype: 'bf16', optimizerState: 'resume',
  },
  // 80 GB (A100 / H100): Qwen2.5-1.5B full fine-tuning with the separate critic peaks at ~38 GiB (~48 with the margin), 0.5B at ~17 (~22)
  'gpu-80g': {
    tokensPerMicroBatch: 8192, gradientCheckpointing: true, generationRows: 64, frozenDtype: 'bf16', checkpointDtype: 'bf16', optimizerState: 'resume',
  },
};

/** A method preset at a GPU size: its paper config on a model folder (model.path is the user's), with the size's memory settings. */
function gpuSizeConfig(id: string, size: GpuSize): RunConfigInput {
  const paper = pipelinePresetConfig(id, 'paper') as Record<string, unknown>;
  const name = typeof paper.name === 'string' ? paper.name.replace(/ paper$/, ` ${size}`) : undefined;
  return mergeConfig(paper, {
    size, ...(name ? { name } : {}), model: { source: 'hf-folder', criticMode: 'separate', memory: GPU_SIZE_MEMORY[size] },
  }) as RunConfigInput;
}

const isGpuSize = (size: string): size is GpuSize => (GPU_SIZES as readonly string[]).includes(size);

/** The LoRA setting the GPU sizes suggest when full fine-tuning does not fit (adapters on every attention projection). */
export const SUGGESTED_LORA = { rank: 16, alpha: 32, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'] };

/**
 * What is wrong with a run's size for its model (empty: nothing): quick and standard are tiny-model sizes and refuse a
 * pretrained model folder; cpu-real and the GPU sizes need a model folder, and a folder whose run would not fit the size's card (by the
 * memory model) is refused with the peak, the stage and what would fit.
 */
export function sizeIssues(config: RunConfig): Array<{ path: string; message: string }> {
  const size = config.size;
  if ((size === 'quick' || size === 'standard') && config.model.source === 'hf-folder') {
    return [{ path: 'size', message: `size "${size}" is a tiny-model size (settings and the compact tiny-compact template made for a ` +
      '2-layer width-64 character model on a CPU), not for a pretrained model folder; use size gpu-24g (a 24 GB GPU: 0.5B full ' +
      'fine-tuning, 1.5B with model.lora), gpu-80g (the paper\'s recipe on one 80 GB GPU), paper (the reference settings as published) ' +
      'or smoke (a seconds-long plumbing check)' }];
  }
  if (size === 'cpu-real' && (config.model.source !== 'hf-folder' || !config.model.path)) {
    return [{ path: 'model.path', message: 'size cpu-real runs a small local pretrained model folder on a CPU: set model.path to it (e.g. ' +
      '`spa-workbench model import SmolLM2-135M-Instruct.Q4_1.gguf --out DIR`, then --set model.path=DIR); got model.source ' +
      `${config.model.source}${config.model.path ? '' : ' and no model.path'}` }];
  }
  if (!isGpuSize(size)) return [];
  if (config.model.source === 'preset' || !config.model.path) {
    return [{ path: 'model.path', message: `size ${size} runs a local pretrained model: set model.source to hf-folder and model.path to its ` +
      `folder (e.g. --set model.source=hf-folder --set model.path=/models/Qwen2.5-0.5B-Instruct); got model.source ${config.model.source}` +
      `${config.model.path ? '' : ' and no model.path'}` }];
  }
  const file = join(config.model.path, 'config.json');
  if (!existsSync(file)) return [];   // the folder's own check names what is missing when the run loads it
  let raw: unknown;
  // a regular file of at most 1 MiB only: a FIFO named config.json froze the serve host (N3, core/util/regular-file.ts)
  try { raw = JSON.parse(readRegularTextSync(file, { maxBytes: 1024 ** 2, what: 'config.json' })); } catch { return []; }
  const shape = raw && typeof raw === 'object' && !Array.isArray(raw) ? shapeFromHfConfig(raw as Record<string, unknown>, file) : null;
  if (!shape) return [];
  const card = GPU_SIZE_CARD_GIB[size];
  const plan = planFromConfig(config);
  const peak = runPeak(stagePeaks(shape, plan, CUDA_PATH));
  if (fitsCard(peak.bytes, card)) return [];
  const lora = runPeak(stagePeaks(shape, { ...plan, lora: true }, CUDA_PATH));
  const hint = !plan.lora && fitsCard(lora.bytes, card)
    ? `set model.lora (e.g. --set 'model.lora=${JSON.stringify(SUGGESTED_LORA)}': about ${gib(lora.bytes).toFixed(1)} GiB)`
    : size === 'gpu-24g' ? 'use size gpu-80g on a larger card' : 'lower model.memory.tokensPerMicroBatch and model.memory.generationRows, or set model.lora';
  return [{ path: plan.lora ? 'size' : 'model.lora', message: `${config.model.path} (${shape.hidden} wide, ${shape.layers} layers, vocab ${shape.vocab}) ` +
    `${plan.lora ? 'with LoRA' : 'fully fine-tuned'} needs about ${gib(peak.bytes).toFixed(1)} GiB at its peak (${STAGE_TITLES[peak.stage]}) at size ` +
    `${size} by the memory model, ${gib(peak.bytes * ENGINE_MEASURED_MARGIN).toFixed(1)} GiB with the ${ENGINE_MEASURED_MARGIN}x a GPU run measured ` +
    `above it, more than ${(CARD_USABLE * 100).toFixed(0)}% of a ${card} GiB card (docs/compute.md, memory per stage); ${hint}` }];
}

// ── the SPA method presets and ablations (core/train/presets.ts) ──
for (const def of PRESET_DEFINITIONS) {
  const sizes: Size[] = def.sizes ?? ['quick', ...PRESET_SIZES.filter((s) => s !== 'quick')];   // first = the default
  registerPreset({
    id: def.id, title: def.title, description: def.description, method: def.method,
    sizes: sizes.includes('paper') ? [...sizes, ...GPU_SIZES] : sizes,
    config: (size) => (isGpuSize(size) ? gpuSizeConfig(def.id, size) : pipelinePresetConfig(def.id, size === 'custom' ? 'quick' : size)),
  });
}
