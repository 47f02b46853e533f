// A data-parallel worker thread: holds a replica of the model, computes gradients for its shard
// of each batch with its own wasm backend, and returns them flattened.
import { parentPort } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../backend.js';
import { CausalLM } from '../transformer.js';
import { Trainer, lossTokens } from '../trainer.js';
import { tokenScores } from '../score.js';
import type { FromWorker, ToWorker } from './protocol.js';
import { flattenGradients, unflattenInto } from './flat.js';
import { generate, type GenerationTokenizer } from '../generate.js';
import { CharTokenizer } from '../tokenizer-char.js';
import { HfTokenizer } from '../tokenizer-hf.js';

if (!parentPort) throw new Error('dp-worker must run in a worker thread');
const port = parentPort;
let model: CausalLM | null = null;
let trainer: Trainer | null = null;
let tokenizer: GenerationTokenizer | null = null;

function send(message: FromWorker, transfer: ArrayBuffer[] = []): void { port.postMessage(message, transfer); }

port.on('message', async (message: ToWorker) => {
  try {
    if (message.type === 'init') {
      const report = await initBackend({ backend: message.backend, ignoreEnv: true });
      for (const m of message.lossModules) await import(m);
      model = new CausalLM(message.config, { init: 'zeros' });
      if (message.lora) model.enableLora(message.lora);
      model.loadWeights(new Map(message.weights.map((w) => [w.name, { shape: w.shape, data: w.data }])), { where: 'data-parallel init' });
      trainer = new Trainer(model, { schedule: { lr: 0, kind: 'constant' } });
      if (message.tokenizer) {
        const { json, config } = message.tokenizer;
        const marker = config.spa_workbench as { kind?: string } | undefined;
        tokenizer = marker?.kind === 'char'
          ? CharTokenizer.fromJson(json, config, 'data-parallel tokenizer')
          : await HfTokenizer.fromJson(json, config, 'data-parallel tokenizer');
      }
      send({ type: 'ready', backend: report.backend });
      return;
    }
    if (message.type === 'close') {
      trainer?.dispose();
      model?.dispose();
      port.close();
      return;
    }
    if (!model || !trainer) throw new Error('worker received a step before init');
    if (message.trainable) unflattenInto(model, trainer.trainableNames(), message.trainable);
    if (message.type === 'generate') {
      if (!tokenizer) throw new Error('generation in workers needs the tokenizer: pass `tokenizer` to DataParallelTrainer.create');
      send({ type: 'generated', id: message.id, results: generate(model, tokenizer, message.prompts, message.options) });
      return;
    }
    if (message.type === 'scores') {
      const s = tokenScores(model, message.inputIds, { attentionMask: message.attentionMask, values: message.values, chunkRows: message.chunkRows });
      send({ type: 'scored', id: message.id, logprobs: s.logprobs, entropies: s.entropies, values: s.values });
      return;
    }
    if (message.type === 'chunks') {
      // sum over chunks of (gradients × loss tokens), as Trainer.stepRows accumulates them
      let sum: Float32Array | null = null;
      let weight = 0;
      const items: Array<{ loss: number; stats: Record<string, number>; weight: number }> = [];
      for (const chunk of message.chunks) {
        const w = lossTokens(chunk);
        const r = trainer.computeGradients(message.lossName, message.params, chunk);
        const flat = flattenGradients(r.grads, trainer.trainableNames(), model);
        for (const g of r.grads.values()) g.dispose();
        if (!sum) sum = new Float32Array(flat.length);
        for (let i = 0; i < flat.length; i++) sum[i] = sum[i]! + flat[i]! * w;
        weight += w;
        items.push({ loss: r.loss, stats: r.stats, weight: w });
      }
      const grads = sum ?? new Float32Array(0);
      send({ type: 'accumulated', id: message.id, grads, weight, items }, [grads.buffer as ArrayBuffer]);
      return;
    }
    const { grads, loss, stats } = trainer.computeGradients(message.lossName, message.params, message.batch);
    const flat = flattenGradients(grads, trainer.trainableNames(), model);
    for (const g of grads.values()) g.dispose();
    send({ type: 'result', id: message.id, loss, stats, grads: flat }, [flat.buffer as ArrayBuffer]);
  } catch (error) {
    send({
      type: 'error',
      id: 'id' in message ? message.id : null,
      message: error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error),
    });
  }
});
void tf; // TF.js is initialised by initBackend
