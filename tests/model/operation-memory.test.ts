// What `model generate / score / export` need on TF.js wasm (core/train/auto-backend.ts operationBytes): the operation's own
// memory, never a training step's gradients and moments (issue 35 item 1). Hand-computed on a small config, and the verdicts for
// SmolLM2-135M (generation fits wasm; a training step does not) and Qwen2.5-0.5B (a long text's logits do not).
import { describe, expect, it } from 'vitest';
import { parseModelConfig, countParameters } from '../../core/model/config.js';
import { wasmFitProblem } from '../../core/model/memory.js';
import { operationBytes, operationFitProblem } from '../../core/train/auto-backend.js';

const small = parseModelConfig({
  vocab_size: 100, hidden_size: 8, intermediate_size: 16, num_hidden_layers: 2, num_attention_heads: 2, num_key_value_heads: 1,
  max_position_embeddings: 64, tie_word_embeddings: true,
});
const smollm2 = parseModelConfig({
  model_type: 'llama', vocab_size: 49152, hidden_size: 576, intermediate_size: 1536, num_hidden_layers: 30, num_attention_heads: 9,
  num_key_value_heads: 3, max_position_embeddings: 8192, tie_word_embeddings: true, rope_theta: 100000,
});
const qwen05 = parseModelConfig({
  vocab_size: 151936, hidden_size: 896, intermediate_size: 4864, num_hidden_layers: 24, num_attention_heads: 14, num_key_value_heads: 2,
  max_position_embeddings: 32768, tie_word_embeddings: true, attention_bias: true, rope_theta: 1e6,
});

describe('operationBytes', () => {
  it('generation = weights + K/V cache + one step of logits + the prefill activations (hand-computed)', () => {
    const w = countParameters(small) * 4;
    // 3 rows, 20 tokens each (12 prompt): K/V 3*20*2 layers*2*(1 head*4 dims)*4 B; logits 3*100*4*2; prefill 3*12*(8*8+16*3)*4
    const kv = 3 * 20 * 2 * 2 * 4 * 4;
    const logits = 3 * 100 * 4 * 2;
    const prefill = 3 * 12 * (8 * 8 + 16 * 3) * 4;
    expect(operationBytes(small, 'generate', { rows: 3, tokens: 20, promptTokens: 12 })).toEqual({ weights: w, working: kv + logits + prefill, total: w + kv + logits + prefill });
    expect(operationBytes(small, 'score', { rows: 1, tokens: 10 }).working).toBe(10 * 100 * 4 * 2 + 10 * (8 * 8 + 16 * 3) * 4);
    expect(operationBytes(small, 'export', { rows: 0, tokens: 0 }).working).toBe(100 * 8 * 4);
  });

  it("judges SmolLM2's generation by its own need (fits wasm) where a training step's estimate refuses it", () => {
    expect(wasmFitProblem(smollm2, { trainable: true })).toMatch(/gradients and AdamW moments/);
    expect(operationFitProblem(smollm2, 'generate', { rows: 1, tokens: 512, promptTokens: 448 })).toBeNull();
    expect(operationFitProblem(smollm2, 'export', { rows: 0, tokens: 0 })).toBeNull();
    const big = operationFitProblem(qwen05, 'score', { rows: 1, tokens: 8000 });
    expect(big).toMatch(/^score with this model needs about \d+\.\d GB .* use the torch backend \(--backend torch/);
    expect(big).not.toMatch(/gradients|moments/);
  });
});
