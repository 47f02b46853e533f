// Memory settings of a run (RunConfig.model.memory) as the model runtimes read them, and the
// check that a model fits the TF.js wasm backend's memory before it is loaded there.
//
// The settings are set once per run by the pipeline (core/train/runtime.ts useBackend) and read
// by the runtimes when they start a worker, save a checkpoint or split a training step.
import { countParameters, type ModelConfig } from './config.js';
import { DEFAULT_TOKEN_BUDGET } from './trainer.js';

export interface MemorySettings {
  /** Padded tokens per micro-batch of a training step; gradients accumulate over the micro-batches, one optimizer step per step. */
  tokensPerMicroBatch: number;
  /** Recompute each decoder layer's activations in the backward pass (torch): activation memory ~1 layer instead of all; auto: real models. */
  gradientCheckpointing: boolean | 'auto';
  /** Rows prefilled and decoded together in one generation call (torch); a rollout batch is generated in chunks of this many rows. */
  generationRows: number;
  /** Storage of frozen weights (KL reference, LoRA base) on the torch worker; auto: bf16 for real models. CPUs compute them in f32. */
  frozenDtype: 'auto' | 'bf16' | 'f32';
  /** Weight dtype of checkpoints without optimizer moments (milestones, a stage's final one); auto: bf16 for real models, else f32. */
  checkpointDtype: 'auto' | 'bf16' | 'f16' | 'f32';
  /** Storage of AdamW moments in memory and in resume points (torch): auto: bf16 for real models (updated in f32, stored with
   *  stochastic rounding: 4 instead of 8 bytes per trained value and slot), f32 for tiny ones; the wasm backend keeps f32. */
  optimizerDtype: 'auto' | 'bf16' | 'f32';
  /** AdamW moments in checkpoints: 'resume' only in a stage's resume point (with f32 weights, so resuming is exact); 'all'; 'none'. */
  optimizerState: 'resume' | 'all' | 'none';
  /** RL milestones (rl-<n>) kept on disk besides the final one: the newest this many (null: all). */
  keepMilestones: number | null;
  /** Minutes of wall time between SFT's mid-epoch resume points (sft-latest with moments, written after a step), so a hard kill
   *  (SIGKILL, a machine's end) loses at most about this much of an epoch; 0: only at a stop and at each epoch's end. */
  resumePointMinutes: number;
}

/** A model of this many parameters or more is a "real" model for the auto settings (the tiny presets are far below it). */
export const REAL_MODEL_PARAMETERS = 100_000_000;

export const DEFAULT_MEMORY: MemorySettings = {
  tokensPerMicroBatch: DEFAULT_TOKEN_BUDGET, gradientCheckpointing: 'auto', generationRows: 64, frozenDtype: 'auto', checkpointDtype: 'auto',
  optimizerDtype: 'auto', optimizerState: 'resume', keepMilestones: 5, resumePointMinutes: 20,
};

let current: MemorySettings = { ...DEFAULT_MEMORY };

/** Set the run's memory settings (RunConfig.model.memory; missing fields: defaults). Bad values throw naming the field. */
export function setMemorySettings(settings: Partial<MemorySettings> | undefined): MemorySettings {
  const next = { ...DEFAULT_MEMORY, ...Object.fromEntries(Object.entries(settings ?? {}).filter(([, v]) => v !== undefined)) } as MemorySettings;
  const whole = (key: 'tokensPerMicroBatch' | 'generationRows', what: string): void => {
    if (!Number.isInteger(next[key]) || next[key] < 1) {
      throw new Error(`model.memory.${key}: expected a positive whole number of ${what}, got ${JSON.stringify(next[key])}`);
    }
  };
  whole('tokensPerMicroBatch', 'tokens');
  whole('generationRows', 'rows');
  const oneOf = (key: keyof MemorySettings, allowed: readonly unknown[]): void => {
    if (!allowed.includes(next[key])) {
      throw new Error(`model.memory.${key}: expected one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}, got ${JSON.stringify(next[key])}`);
    }
  };
  oneOf('gradientCheckpointing', [true, false, 'auto']);
  oneOf('frozenDtype', ['auto', 'bf16', 'f32']);
  oneOf('checkpointDtype', ['auto', 'bf16', 'f16', 'f32']);
  oneOf('optimizerDtype', ['auto', 'bf16', 'f32']);
  oneOf('optimizerState', ['resume', 'all', 'none']);
  if (typeof next.resumePointMinutes !== 'number' || !Number.isFinite(next.resumePointMinutes) || next.resumePointMinutes < 0) {
    throw new Error(`model.memory.resumePointMinutes: expected minutes >= 0 (0: no timed resume point), got ${JSON.stringify(next.resumePointMinutes)}`);
  }
  if (next.keepMilestones !== null && (!Number.isInteger(next.keepMilestones) || next.keepMilestones < 0)) {
    throw new Error(`model.memory.keepMilestones: expected a whole number >= 0 or null (keep all), got ${JSON.stringify(next.keepMilestones)}`);
  }
  current = next;
  return { ...current };
}

export function memorySettings(): MemorySettings { return { ...current }; }

/** The settings resolved for a model of `parameters` parameters ('auto' decided: on / bf16 for real models, off / f32 for tiny ones). */
export function resolvedMemory(parameters: number, settings: MemorySettings = current): {
  gradientCheckpointing: boolean; frozenDtype: 'bf16' | 'f32'; checkpointDtype: 'bf16' | 'f16' | 'f32'; optimizerDtype: 'bf16' | 'f32';
} {
  const real = parameters >= REAL_MODEL_PARAMETERS;
  return {
    optimizerDtype: settings.optimizerDtype === 'auto' ? (real ? 'bf16' : 'f32') : settings.optimizerDtype,
    gradientCheckpointing: settings.gradientCheckpointing === 'auto' ? real : settings.gradientCheckpointing,
    frozenDtype: settings.frozenDtype === 'auto' ? (real ? 'bf16' : 'f32') : settings.frozenDtype,
    checkpointDtype: settings.checkpointDtype === 'auto' ? (real ? 'bf16' : 'f32') : settings.checkpointDtype,
  };
}

/** Whether a checkpoint carries the AdamW moments: `resumePoint` = a stage resumes from it (not its final one, not a milestone). */
export function writesMoments(resumePoint: boolean, settings: MemorySettings = current): boolean {
  return settings.optimizerState === 'all' || (settings.optimizerState === 'resume' && resumePoint);
}

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
  const tokenBudget = opts.tokenBudget ?? current.tokensPerMicroBatch;
  const need = tfjsPeakBytes(config, { trainable: opts.trainable, tokenBudget });
  if (need.total <= WASM_HEAP_BYTES * 0.9) return null;
  const perToken = config.vocab_size * 4 * 3;
  const fitBudget = Math.floor((WASM_HEAP_BYTES * 0.9 - need.state) / perToken);
  const fix = opts.trainable && fitBudget >= 64 && need.state < WASM_HEAP_BYTES * 0.5
    ? `set model.memory.tokensPerMicroBatch to ${fitBudget} or less, or use the torch backend`
    : 'use the torch backend (install PyTorch for a Python 3: pip install torch, or apt install python3-torch; SPA_PYTHON points at it)';
  return `the model does not fit the wasm backend's ${gb(WASM_HEAP_BYTES)} of memory: it needs about ${gb(need.total)} ` +
    `(${countParameters(config).toLocaleString('en-US')} parameters: ${gb(need.state)} of f32 weights` +
    `${opts.trainable ? ', gradients and AdamW moments' : ''}; ` +
    `${gb(need.head)} for the LM head's [tokens x ${config.vocab_size}] log-softmax over a ${opts.trainable ? tokenBudget : 8192}-token chunk); ${fix}`;
}
