// Messages between the data-parallel coordinator and its worker threads (structured clone).
import type { ModelConfig } from '../config.js';
import type { LoraConfig } from '../transformer.js';
import type { BackendRequest } from '../backend.js';
import type { TrainBatch } from '../trainer.js';
import type { GenerateOptions, GenerationResult } from '../generate.js';

/** A tokenizer as files (tokenizer.json and tokenizer_config.json contents), rebuilt in each worker. */
export interface TokenizerFiles { json: unknown; config: Record<string, unknown> }

export interface InitMessage {
  type: 'init';
  config: ModelConfig;
  lora: LoraConfig | null;
  /** All weights (base and adapters) by HF / PEFT key. */
  weights: Array<{ name: string; shape: number[]; data: Float32Array }>;
  /** Modules to import before training (they register losses), as file URLs or package names. */
  lossModules: string[];
  backend: BackendRequest;
  /** For generation in the workers. */
  tokenizer: TokenizerFiles | null;
}

export interface StepMessage {
  type: 'step';
  id: number;
  lossName: string;
  params: Record<string, unknown>;
  batch: TrainBatch;
  /** Current values of the trainable variables, flattened in trainableNames() order (absent = unchanged). */
  trainable?: Float32Array;
}

/**
 * A shard of a pipeline step (Trainer.stepRows semantics): padded chunks, each weighted by its
 * loss tokens; the worker returns the sum of (chunk gradients × chunk weight) and each chunk's stats.
 */
export interface ChunksMessage {
  type: 'chunks';
  id: number;
  lossName: string;
  params: Record<string, unknown>;
  chunks: TrainBatch[];
  trainable?: Float32Array;
}

/** No-grad per-token statistics of padded rows (tokenScores), for a shard of a runtime's tokenStats. */
export interface ScoresMessage {
  type: 'scores';
  id: number;
  inputIds: number[][];
  attentionMask: number[][];
  values: boolean;
  chunkRows: number;
  trainable?: Float32Array;
}

export interface GenerateMessage {
  type: 'generate';
  id: number;
  prompts: number[][];
  options: GenerateOptions;
  trainable?: Float32Array;
}

export interface CloseMessage { type: 'close' }

export type ToWorker = InitMessage | StepMessage | ChunksMessage | ScoresMessage | GenerateMessage | CloseMessage;

export type FromWorker =
  | { type: 'ready'; backend: string }
  | { type: 'result'; id: number; loss: number; stats: Record<string, number>; grads: Float32Array }
  | { type: 'generated'; id: number; results: GenerationResult[] }
  | { type: 'accumulated'; id: number; grads: Float32Array; weight: number; items: Array<{ loss: number; stats: Record<string, number>; weight: number }> }
  | { type: 'scored'; id: number; logprobs: number[][]; entropies: number[][]; values: number[][] | null }
  | { type: 'error'; id: number | null; message: string };
