// Public surface of the model engine (core/model). Only core/model and core/train import TF.js.
// Compute core: backend, config, transformer, kernels, generation, optimisation, training.
export * from './backend.js';
export * from './config.js';
export * from './transformer.js';
export * from './inference.js';
export * from './score.js';
export * from './generate.js';
export * from './optim.js';
export * from './losses.js';
export * from './trainer.js';
export { DataParallelTrainer, type DataParallelOptions } from './workers/data-parallel.js';
export { linear, rmsNorm, swiglu, rope, tokenStats, attentionReference, attentionBias, embedding } from './kernels.js';
export { attentionFast } from './attention.js';
// IO: tokenizers, chat formatting with role spans, safetensors, checkpoints, HF folder loading.
export * from './tokenizer.js';
export * from './chat.js';
export * from './safetensors.js';
export * from './checkpoint.js';
export * from './hf-load.js';
