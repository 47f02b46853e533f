// LoRA in the pipeline (run config `model.lora`): the finetuning stages (SFT, RWML, RL) train
// low-rank adapters on a frozen base instead of every weight. The bootstrap always trains the full
// base (a LoRA request must not train adapters over a randomly initialised preset model), so LoRA
// starts at the first stage after it; a stage that loads a checkpoint which already holds adapters
// (RL after a LoRA SFT, a resumed stage) keeps them. Backend-neutral: TF.js (CausalLM.enableLora)
// and torch (TorchRuntime.enableLora) compute the same adapters and write the same PEFT files.
import type { StageContext } from '../api/stage.js';
import { TfjsRuntime, type ModelRuntime } from '../model/runtime.js';
import { TorchRuntime } from '../model/torch/runtime.js';
import { checkLoraConfig, type LoraConfig } from '../model/lora-config.js';

export { LORA_TARGETS, loraConfigProblems, type LoraConfig } from '../model/lora-config.js';

/**
 * Turn LoRA on for a runtime: base weights frozen (a value head stays trainable), adapters on the
 * target modules (A from `seed`, B zero, so the model's function is unchanged), and the optimizer
 * rebuilt over the adapters at the next step (any AdamW state, restored or not, is dropped: it was
 * over the base weights). Throws on a bad config (naming the valid targets), on a runtime that
 * already has adapters, and on a runtime of neither backend.
 */
export async function applyLora(runtime: ModelRuntime, lora: LoraConfig, seed: number): Promise<void> {
  checkLoraConfig(lora, 'model.lora');
  if (runtime instanceof TfjsRuntime) {
    runtime.model.enableLora(lora, seed);
    await runtime.modelChanged();   // optimizer over the adapters at the next step; data-parallel replicas restart with them
    runtime.restoredOptimizerState = null;
    return;
  }
  if (runtime instanceof TorchRuntime) {
    await runtime.enableLora(lora, { seed });
    return;
  }
  throw new Error(`applyLora: a runtime of backend ${runtime.info.backend} (neither TfjsRuntime nor TorchRuntime) cannot take LoRA adapters`);
}

/** The runtime's LoRA settings (null: no adapters, or a runtime of neither backend). */
export function runtimeLora(runtime: ModelRuntime): LoraConfig | null {
  if (runtime instanceof TfjsRuntime) return runtime.model.getLoraConfig();
  if (runtime instanceof TorchRuntime) return runtime.lora;
  return null;
}

/** How many values an optimizer step of the runtime updates, of how many base parameters (null for other runtimes). */
export async function trainableParameterCount(runtime: ModelRuntime): Promise<{ trainable: number; parameters: number } | null> {
  if (runtime instanceof TfjsRuntime) {
    return { trainable: runtime.model.trainableVariables().reduce((a, v) => a + v.size, 0), parameters: runtime.model.parameterCount() };
  }
  if (runtime instanceof TorchRuntime) return runtime.trainableParameters();
  return null;
}

function describe(lora: LoraConfig): string {
  return `rank ${lora.rank}, alpha ${lora.alpha} (scale ${+(lora.alpha / lora.rank).toFixed(4)}), targets ${lora.targetModules.join(',')}`;
}

/**
 * A finetuning stage's model under the run's `model.lora`: adapters enabled when the config asks
 * for LoRA and the loaded model has none (kept when it has them). Logs one line when the model
 * trains under LoRA (settings and trainable parameter count). `role` names the model in the log
 * ('sft', 'rl policy', 'rl critic').
 */
export async function loraForStage(ctx: Pick<StageContext, 'config' | 'log'>, runtime: ModelRuntime, role: string): Promise<void> {
  const wanted = ctx.config.model.lora;
  const had = runtimeLora(runtime);
  if (!wanted && !had) return;
  if (wanted && !had) await applyLora(runtime, wanted, ctx.config.seeds.base);
  const lora = runtimeLora(runtime);
  if (!lora) return;
  const counts = await trainableParameterCount(runtime);
  const share = counts ? `; trainable parameters ${counts.trainable.toLocaleString('en-US')} of ${counts.parameters.toLocaleString('en-US')} base `
    + `(${((100 * counts.trainable) / Math.max(1, counts.parameters)).toFixed(2)}%)` : '';
  const source = had ? 'adapters from the checkpoint' : 'new adapters, base weights frozen';
  ctx.log('info', `${role}: LoRA ${describe(lora)}${share} [${source}]`);
  if (wanted && had && JSON.stringify(wanted) !== JSON.stringify(had)) {
    ctx.log('warn', `${role}: the checkpoint's adapters (${describe(had)}) differ from model.lora (${describe(wanted)}); the checkpoint's are kept`);
  }
}
