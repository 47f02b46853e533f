// Memory settings of a run (RunConfig.model.memory) as the model runtimes read them, and the
// check that a model fits the TF.js wasm backend's memory before it is loaded there.
//
// The settings are set once per run by the pipeline (core/train/runtime.ts useBackend) and read
// by the runtimes when they start a worker, save a checkpoint or split a training step.
import { countParameters, type ModelConfig } from './config.js';
import { DEFAULT_TOKEN_BUDGET } from './trainer.js';

export interface MemorySettings {
  /** Padded tokens per micro-batch of a training step; gradients accumulate over the micro-batches, one optimizer step per step. */
  tokenBudget: number;
  /** Recompute each decoder layer's activations in the backward pass (torch): activation memory ~1 layer instead of all. */
  gradientCheckpointing: boolean;
  /** Rows prefilled and decoded together in one generation call (torch); a rollout batch is generated in chunks of this many rows. */
  generationRows: number;
  /** Weights of frozen models (KL reference, LoRA base) on the torch worker: bf16 where the device has it (auto: GPUs with bf16), else f32. */
  frozenDtype: 'auto' | 'bf16' | 'f32';
  /** Weight dtype of checkpoints written during training (auto: bf16 for models loaded from bf16/f16 folders, else f32). */
  checkpointDtype: 'auto' | 'bf16' | 'f16' | 'f32';
  /** AdamW moments in checkpoints: 'resume' writes them only into the resume point (rl-latest / a stage's last checkpoint); 'all'; 'none'. */
  optimizerState: 'resume' | 'all' | 'none';
}

export const DEFAULT_MEMORY: MemorySettings = {
  tokenBudget: DEFAULT_TOKEN_BUDGET, gradientCheckpointing: false, generationRows: 64, frozenDtype: 'auto', checkpointDtype: 'auto', optimizerState: 'all',
};

let current: MemorySettings = { ...DEFAULT_MEMORY };

/** Set the run's memory settings (missing fields: defaults). */
export function setMemorySettings(settings: Partial<MemorySettings> | undefined): MemorySettings {
  current = { ...DEFAULT_MEMORY, ...(settings ?? {}) };
  if (!Number.isInteger(current.tokenBudget) || current.tokenBudget < 1) {
    throw new Error(`model.memory.tokenBudget: expected a positive whole number of tokens, got ${JSON.stringify(current.tokenBudget)}`);
  }
  if (!Number.isInteger(current.generationRows) || current.generationRows < 1) {
    throw new Error(`model.memory.generationRows: expected a positive whole number of rows, got ${JSON.stringify(current.generationRows)}`);
  }
  return { ...current };
}

export function memorySettings(): MemorySettings { return { ...current }; }

/** The wasm backend's heap: wasm32 addresses 4 GiB. */
export const WASM_HEAP_BYTES = 4 * 1024 ** 3;

/**
 * Bytes a TF.js model needs at its peak, roughly: f32 weights (+ gradients and two AdamW moments
 * when it trains) and the LM head's f32 [tokens, vocab] tensors over one chunk (log-softmax, its
 * exp and the gradient when training: 3; scoring: 2).
 */
export function tfjsPeakBytes(config: ModelConfig, opts: { trainable: boolean; tokenBudget: number; statsBudget?: number }): {
  total: number; state: number; head: number;
} {
  const params = countParameters(config);
  const state = params * 4 * (opts.trainable ? 4 : 1);
  const head = opts.trainable ? opts.tokenBudget * config.vocab_size * 4 * 3 : (opts.statsBudget ?? 8192) * config.vocab_size * 4 * 2;
  return { total: state + head, state, head };
}

const gb = (b: number): string => `${(b / 1e9).toFixed(1)} GB`;

/** Why this model cannot run on wasm (null when it fits): the reason with the sizes, and what to do. */
export function wasmFitProblem(config: ModelConfig, opts: { trainable: boolean; tokenBudget?: number }): string | null {
  const tokenBudget = opts.tokenBudget ?? current.tokenBudget;
  const need = tfjsPeakBytes(config, { trainable: opts.trainable, tokenBudget });
  if (need.total <= WASM_HEAP_BYTES * 0.9) return null;
  const perToken = config.vocab_size * 4 * 3;
  const fitBudget = Math.floor((WASM_HEAP_BYTES * 0.9 - need.state) / perToken);
  const fix = opts.trainable && fitBudget >= 64 && need.state < WASM_HEAP_BYTES * 0.5
    ? `set model.memory.tokenBudget to ${fitBudget} or less, or use the torch backend`
    : 'use the torch backend (install PyTorch for a Python 3: pip install torch, or apt install python3-torch; SPA_PYTHON points at it)';
  return `the model does not fit the wasm backend's ${gb(WASM_HEAP_BYTES)} of memory: it needs about ${gb(need.total)} ` +
    `(${countParameters(config).toLocaleString('en-US')} parameters: ${gb(need.state)} of f32 weights` +
    `${opts.trainable ? ', gradients and AdamW moments' : ''}; ` +
    `${gb(need.head)} for the LM head's [tokens x ${config.vocab_size}] log-softmax over a ${opts.trainable ? tokenBudget : 8192}-token chunk); ${fix}`;
}
