// backend 'auto' never lands on a backend that cannot hold the run's model (issue 20): when no Python with torch answers,
// auto falls back to TF.js, and TF.js on wasm addresses 4 GiB, less than a model with a 150k vocabulary needs for one
// training chunk. Such a run is refused when the backend is chosen, before any stage works, with why torch was not
// taken and the model's sizes (core/model/memory.ts wasmFitProblem), instead of crashing later with
// "memory access out of bounds".
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RunConfig } from '../api/run-config.js';
import { hfConfigToModelConfig } from '../model/hf-load.js';
import { presetConfig, type ModelConfig } from '../model/config.js';
import { buildCharTokenizer } from '../model/tokenizer.js';
import { wasmFitProblem } from '../model/memory.js';

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
