// LoRA settings and their check, shared by the TF.js model (transformer.ts), the torch backend
// (torch/runtime.ts) and the run-config check (core/engine/config.ts). Pure: no TF.js, no fs.
// The adapters themselves: W x + (alpha / rank) B A x on each target linear layer, A [rank, in]
// drawn uniform in ±1/sqrt(in), B [out, rank] zero (so a fresh adapter changes nothing), stored
// under PEFT's names `base_model.model.<module>.lora_A.weight` / `.lora_B.weight`.

/** LoRA settings (rank, alpha, which linear layers get adapters). */
export interface LoraConfig {
  rank: number;
  alpha: number;
  /** Names of the linear modules: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj. */
  targetModules: string[];
}

/** The linear modules of a Qwen2 layer that can carry an adapter (Hugging Face / PEFT names). */
export const LORA_TARGETS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;

/** What is wrong with a LoRA config (empty = usable); each problem names the key, what was expected and what arrived. */
export function loraConfigProblems(lora: LoraConfig, where = 'lora'): string[] {
  const problems: string[] = [];
  if (!Number.isInteger(lora.rank) || lora.rank < 1) problems.push(`${where}.rank: expected a positive integer, got ${JSON.stringify(lora.rank)}`);
  if (typeof lora.alpha !== 'number' || !(lora.alpha > 0)) problems.push(`${where}.alpha: expected a positive number, got ${JSON.stringify(lora.alpha)}`);
  const targets = Array.isArray(lora.targetModules) ? lora.targetModules : [];
  const unknown = targets.filter((m) => !(LORA_TARGETS as readonly string[]).includes(m));
  const twice = targets.filter((m, i) => targets.indexOf(m) !== i);
  if (!Array.isArray(lora.targetModules) || targets.length === 0 || unknown.length > 0 || twice.length > 0) {
    const what = unknown.length > 0 ? `unknown ${unknown.map((m) => JSON.stringify(m)).join(', ')}`
      : twice.length > 0 ? `${twice.map((m) => JSON.stringify(m)).join(', ')} given twice` : `got ${JSON.stringify(lora.targetModules)}`;
    problems.push(`${where}.targetModules: expected a non-empty subset of ${LORA_TARGETS.join(', ')} (each once); ${what}`);
  }
  return problems;
}

/** Throws the problems of a LoRA config as one error. */
export function checkLoraConfig(lora: LoraConfig, where = 'lora'): void {
  const problems = loraConfigProblems(lora, where);
  if (problems.length > 0) throw new Error(problems.join('; '));
}

/** PEFT key stem of a base weight: `model.layers.0.self_attn.q_proj.weight` → `base_model.model.model.layers.0.self_attn.q_proj`. */
export function loraStem(baseWeight: string): string {
  return `base_model.model.${baseWeight.replace(/\.weight$/, '')}`;
}
