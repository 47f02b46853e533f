// Public surface of the model engine (core/model). Only core/model and core/train import TF.js.
export * from './backend.js';
export * from './config.js';
export * from './transformer.js';
export * from './generate.js';
export * from './optim.js';
export * from './losses.js';
export * from './trainer.js';
export { linear, rmsNorm, swiglu, rope, tokenStats, attentionReference, attentionBias } from './kernels.js';
