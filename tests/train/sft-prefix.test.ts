// SFT rows and state perplexity are tokenised with the forced `<think>` prefix of generation
// (audit B9): with BPE, `<think><observation>` encoded whole can merge `><`, so a row formatted
// without the prefix trains on a segmentation the model never produced.
import { describe, expect, it, vi } from 'vitest';

const seen: Array<string | undefined> = [];
vi.mock('../../core/model/chat.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../core/model/chat.js')>();
  return { ...actual, formatChat: (messages: never, tokenizer: never, options?: { generationPrefix?: string }) => { seen.push(options?.generationPrefix); return actual.formatChat(messages, tokenizer, options); } };
});

const { RunConfigSchema } = await import('../../core/api/run-config.js');
const { createRuntime } = await import('../../core/train/runtime.js');
const { toTrainRows } = await import('../../core/train/sft.js');
const { statePerplexity } = await import('../../core/train/perplexity.js');

const messages = [
  { role: 'system', content: 's' },
  { role: 'user', content: 'state' },
  { role: 'assistant', content: '<think><observation>\nP_\n</observation>x<prediction>\n_P\n</prediction></think><answer>Right</answer>' },
];

describe('SFT and perplexity tokenise with the generation prefix', () => {
  const config = RunConfigSchema.parse({ model: { overrides: { hidden_size: 8, intermediate_size: 16, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 2, max_position_embeddings: 512 } } });
  it('toTrainRows and statePerplexity pass <think> to formatChat', async () => {
    const runtime = await createRuntime(config, { seed: 1, valueHead: false });
    seen.length = 0;
    const rows = toTrainRows(runtime, [{ messages }], 512, false);
    expect(rows).toHaveLength(1);
    expect(seen).toContain('<think>');
    seen.length = 0;
    const ppl = await statePerplexity(runtime, [{ messages }], 512);
    expect(ppl.rows).toBe(1);
    expect(seen).toContain('<think>');
    runtime.dispose();
  });
});
