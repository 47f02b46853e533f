// The reference shape's training setup shared by the TF.js profiling benches (bench/profile-model.ts,
// bench/profile-wasm-step.ts): vocab 64, hidden 128, intermediate 352, 4 layers, 4 heads, context 256, batch 16 (the
// reference shape of bench/model.ts), a seeded model, a constant-lr Trainer and one fixed batch of random tokens.
// Call after initBackend.
import { parseModelConfig } from '../core/model/config.js';
import { CausalLM } from '../core/model/transformer.js';
import { Trainer } from '../core/model/trainer.js';

export function referenceStep() {
  const s = { vocab: 64, hidden: 128, intermediate: 352, layers: 4, heads: 4, kvHeads: 4, context: 256, batch: 16 };
  const config = parseModelConfig({ vocab_size: s.vocab, hidden_size: s.hidden, intermediate_size: s.intermediate, num_hidden_layers: s.layers,
    num_attention_heads: s.heads, num_key_value_heads: s.kvHeads, max_position_embeddings: s.context + 64, tie_word_embeddings: true });
  const model = new CausalLM(config, { seed: 0 });
  const trainer = new Trainer(model, { schedule: { lr: 1e-3, kind: 'constant' } });
  let seed = 1;
  const rnd = () => { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return seed / 4294967296; };
  const inputIds = Array.from({ length: s.batch }, () => Array.from({ length: s.context }, () => Math.floor(rnd() * s.vocab)));
  const batch = { inputIds, lossMask: inputIds.map((r) => r.map((_, t) => (t > 0 ? 1 : 0))) };
  return { s, model, trainer, inputIds, batch };
}
