// backend 'auto' never lands on a backend that cannot hold the run's model (issue 20): when no Python with torch answers,
// auto falls back to TF.js, and TF.js on wasm addresses 4 GiB, less than a model with a 150k vocabulary needs for one
// training chunk. Such a run is refused when the backend is chosen, before any stage works, with why torch was not
// taken and the model's sizes (core/model/memory.ts wasmFitProblem), instead of crashing later with
// "memory access out of bounds".
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RunConfig } from '../api/run-config.js';
import { hfConfigToModelConfig } from '../model/hf-load.js';
import { countParameters, headDim, presetConfig, type ModelConfig } from '../model/config.js';
import { buildCharTokenizer } from '../model/tokenizer.js';
import { WASM_HEAP_BYTES, wasmFitProblem } from '../model/memory.js';

/** The decoder config the run will load: the folder's config.json (hf-folder, checkpoint) or the preset's (char vocabulary). */
export function runModelConfig(config: RunConfig): ModelConfig | null {
  if (config.model.source === 'preset') {
    return presetConfig(config.model.preset, { ...(config.model.overrides ?? {}), vocab_size: buildCharTokenizer().vocabSize });
  }
  const path = config.model.path;
  if (!path || !existsSync(join(path, 'config.json'))) return null;   // the folder's own check reports it when the model loads
  const file = join(path, 'config.json');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: not valid JSON (${(err as Error).message})`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${file}: expected a JSON object`);
  return hfConfigToModelConfig(raw as Record<string, unknown>, file);
}

/**
 * Why `auto` must not run this model on the backend it chose (null: it may). Only the automatic choice is judged: an
 * explicit backend request is the user's (and wasm refuses a model it cannot hold when it loads it).
 */
export function autoBackendProblem(
  config: RunConfig, choice: { requested: string; backend: string; torch: { ok: boolean; reason?: string } | null },
): string | null {
  if (choice.requested !== 'auto' || choice.backend !== 'wasm') return null;
  const model = runModelConfig(config);
  if (!model) return null;
  const problem = wasmFitProblem(model, { trainable: true });
  if (!problem) return null;
  const where = config.model.source === 'preset' ? `model preset ${JSON.stringify(config.model.preset)}` : config.model.path;
  const why = choice.torch && !choice.torch.ok ? `torch is not available (${choice.torch.reason ?? 'no Python with torch found'})` : 'torch was not chosen';
  return `backend "auto" will not run ${where} on TF.js wasm: ${why}, and ${problem}`;
}

/** What a command does with a model: its memory need differs (training: weights, gradients, AdamW moments and a training chunk). */
export type ModelOperation = 'generate' | 'score' | 'export';

/**
 * Bytes an inference-only operation needs on TF.js (f32 everywhere), roughly:
 *   generate  weights + K/V cache (rows x (prompt + new) tokens x layers x 2 x kv heads x head dim) + one step's logits (rows x vocab, twice)
 *             + the prefill's activations (rows x prompt tokens x (hidden x 8 + MLP x 3))
 *   score     weights + the text's [tokens x vocab] log-softmax and its exp + its activations
 *   export    weights + the largest tensor's copy being written (the embedding)
 * `rows` and `tokens` describe the request (generate: prompts and prompt + new tokens per row; score: rows and tokens per row).
 * Never gradients or moments: those belong to training (core/model/memory.ts tfjsPeakBytes with trainable).
 */
export function operationBytes(config: ModelConfig, op: ModelOperation, request: { rows: number; tokens: number; promptTokens?: number }): {
  total: number; weights: number; working: number;
} {
  const weights = countParameters(config) * 4;
  const { rows, tokens } = request;
  const kv = config.num_key_value_heads * headDim(config);
  const activations = (n: number) => rows * n * (config.hidden_size * 8 + config.intermediate_size * 3) * 4;
  let working: number;
  if (op === 'generate') {
    const prompt = request.promptTokens ?? tokens;
    working = rows * tokens * config.num_hidden_layers * 2 * kv * 4 + rows * config.vocab_size * 4 * 2 + activations(prompt);
  } else if (op === 'score') {
    working = rows * tokens * config.vocab_size * 4 * 2 + activations(tokens);
  } else {
    working = config.vocab_size * config.hidden_size * 4;
  }
  return { total: weights + working, weights, working };
}

/**
 * Why this operation cannot run on TF.js wasm (null: it fits in the 4 GiB heap with a 10% margin), judged by the operation's own
 * need (operationBytes), not a training step's. The message says what it needs and what to do.
 */
export function operationFitProblem(
  config: ModelConfig, op: ModelOperation, request: { rows: number; tokens: number; promptTokens?: number },
): string | null {
  const need = operationBytes(config, op, request);
  if (need.total <= WASM_HEAP_BYTES * 0.9) return null;
  const gb = (b: number) => `${(b / 1e9).toFixed(1)} GB`;
  const what = op === 'generate' ? 'K/V cache and logits' : op === 'score' ? "the text's [tokens x vocab] log-softmax" : 'a tensor being written';
  return `${op} with this model needs about ${gb(need.total)} (${gb(need.weights)} of f32 weights, ${gb(need.working)} for ${what}), ` +
    `more than the wasm backend's ${gb(WASM_HEAP_BYTES)}; use the torch backend (--backend torch; install PyTorch for a Python 3 and point SPA_PYTHON at it)`;
}
